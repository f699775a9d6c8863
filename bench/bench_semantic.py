"""Semantic agreement of the free-text fields at full scale: cold (empty embedding cache) and warm (1% of the
texts changed), each computed by a real Celery worker with progress, as the agreement page starts it.

Generates a synthetic project (191 clips, 7,079 rows, 3 annotators + the LLM draft; not timed) into the database
DATABASE_URL names, or reuses one with --project; needs PostgreSQL and CELERY_BROKER_URL (a worker is started).
Prints, for each run: wall time on the worker (job created -> report stored), texts embedded and per second, the
share of the time spent embedding, the worker's peak memory (resident set of the process that computed, sampled
every 0.2 s), and the ratio to the floor measured in the same run: the label report (``compute_project_report``)
of the same project, computed in this process. Targets: cold under 10 minutes, warm under 10 s, memory under 1 GB.

    DATABASE_URL=postgres://... CELERY_BROKER_URL=redis://... .venv/bin/python bench/bench_semantic.py [--clips 191]
    ... bench/bench_semantic.py --project bench-semantic-<id> --warm-only   # the warm run again, cache kept
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COLD_TARGET, WARM_TARGET, MEMORY_TARGET_MB = 600.0, 10.0, 1024.0


def main(argv=None) -> int:
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(ROOT / "bench"))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "rescue_annot.settings")
    import django

    django.setup()
    import psutil
    from bench_agreement import _Worker
    from django.conf import settings
    from django.db import connection

    from annotation.agreement import services
    from annotation.agreement.embeddings import current_provider
    from annotation.agreement.report import compute_project_report
    from annotation.audit import audit_source
    from annotation.models import AgreementReport, Job, Project, Revision, TextEmbedding
    from annotation.services import create_project
    from annotation.synthetic import RELEASE_CLIPS, generate

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clips", type=int, default=RELEASE_CLIPS)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--changed", type=float, default=0.01, help="share of the texts changed for the warm run")
    parser.add_argument("--project", help="reuse this project instead of generating one")
    parser.add_argument(
        "--distinct",
        action="store_true",
        help="make every free-text value of every revision and draft a text of its own before the cold run: the "
        "generator reuses phrases, real coders rarely do (the worst case for the cold run)",
    )
    parser.add_argument(
        "--warm-only",
        action="store_true",
        help="skip the cold run: keep the embedding cache an earlier run of the same project filled (the warm "
        "figure again, in a minute instead of several)",
    )
    args = parser.parse_args(argv)
    if connection.vendor != "postgresql" or not os.environ.get("CELERY_BROKER_URL"):
        print("needs PostgreSQL (DATABASE_URL) and a broker (CELERY_BROKER_URL): the runs are on a real worker")
        return 2

    print(f"database            {connection.vendor} ({connection.settings_dict['NAME']})")
    if args.project:
        project = Project.objects.get(slug=args.project)
    else:
        slug = f"bench-semantic-{uuid.uuid4().hex[:8]}"
        with audit_source("cli"):
            project = create_project(slug, name="semantic agreement benchmark")
            generate(project, clips=args.clips, annotators=3, seed=args.seed)
        print(f"project             {slug} (generated, not timed)")
    provider = current_provider()
    print(
        f"model               {provider.describe()['model']} ({provider.describe()['version']}; "
        f"{provider.describe()['runtime']})"
    )

    started = time.perf_counter()
    compute_project_report(project, resamples=1000, seed=0)
    floor = time.perf_counter() - started
    print(f"floor               {floor:.2f} s: the label report of the same project, in this process")

    if args.distinct:
        started = time.perf_counter()
        made = make_texts_distinct(project)
        print(
            f"distinct            {made:,} free-text values made distinct in {time.perf_counter() - started:.0f} s "
            "(not timed)"
        )
    worker = _Worker(settings.EMBEDDINGS_QUEUE)  # the queue free-text reports go to
    try:
        # A report stored by an earlier run of this project would answer at once: every run computes.
        AgreementReport.objects.filter(project=project).delete()
        if args.warm_only:
            cold = None
        else:
            TextEmbedding.objects.filter(model=provider.id).delete()
            cold = run_on_worker(project, services, Job, psutil, worker, "cold (empty cache)")
        if cold is None and not TextEmbedding.objects.filter(model=provider.id).exists():
            raise SystemExit("--warm-only needs the cache an earlier run filled; it is empty")
        if cold is None:
            # As after a cold run, the measured warm run finds the model loaded: a first warm run loads it.
            change_texts(project, Revision, args.changed)
            run_on_worker(project, services, Job, psutil, worker, "warm-up (the worker loads the model; not a figure)")
        changed = change_texts(project, Revision, args.changed)
        print(
            f"changed             {changed} revision texts (tone of voice) of "
            f"{Revision.objects.filter(row__clip__project=project).count()} revisions"
        )
        warm = run_on_worker(project, services, Job, psutil, worker, f"warm ({args.changed:.0%} changed)")
    finally:
        worker.stop()

    ok = True
    for name, run, target in (("cold", cold, COLD_TARGET), ("warm", warm, WARM_TARGET)):
        if run is None:
            print(f"{name:<19} not run (--warm-only)")
            continue
        met = run["seconds"] < target and run["peak_mb"] < MEMORY_TARGET_MB
        ok &= met
        print(
            f"{name:<19} {run['seconds']:.1f} s ({run['seconds'] / floor:.1f}x the floor), peak {run['peak_mb']:.0f} MB"
            f"  [target < {target:.0f} s and < {MEMORY_TARGET_MB:.0f} MB: {'met' if met else 'NOT MET'}]"
        )
    return 0 if ok else 1


def run_on_worker(project, services, Job, psutil, worker, name: str) -> dict:
    """Start the semantic report's job as the page does, follow its progress, sample the worker's memory."""
    params = services.Params()
    started = time.perf_counter()
    state = services.ensure_report(project, params, kind=services.TEXTS, compute=services.Compute.AS_JOB)
    job = state.job
    if job is None:
        raise RuntimeError(f"no job started ({state.status})")
    main = psutil.Process(worker.proc.pid)
    peak, last_print, first_progress = 0.0, 0.0, None
    while True:
        job.refresh_from_db()
        try:
            rss = sum(p.memory_info().rss for p in main.children(recursive=True)) or main.memory_info().rss
        except psutil.Error:
            rss = 0
        peak = max(peak, rss / 2**20)
        now = time.perf_counter() - started
        if job.progress_done and first_progress is None:
            first_progress = now
        if now - last_print >= 10:
            print(
                f"  {name}: {now:5.0f} s  {job.state:<9} progress {job.progress_done}/{job.progress_total}"
                f"  worker {rss / 2**20:.0f} MB"
            )
            last_print = now
        if job.state in ("succeeded", "failed"):
            break
        time.sleep(0.2)
    seconds = time.perf_counter() - started
    time.sleep(1.0)
    try:
        idle = sum(p.memory_info().rss for p in main.children(recursive=True)) / 2**20
    except psutil.Error:
        idle = 0.0
    if job.state == "failed":
        raise RuntimeError(f"the job failed: {job.error}")
    run = job.result.get("run", {})
    embedded, spent = run.get("embedded", 0), run.get("seconds_embedding", 0.0)
    rate = f"{embedded / spent:.0f} texts/s" if spent else "–"
    print(
        f"{name:<19} {seconds:.1f} s on the worker (first progress after {first_progress or 0:.1f} s); "
        f"{embedded} texts embedded ({rate}), {run.get('from_cache', 0)} from the cache; "
        f"embedding {spent:.1f} s = {spent / seconds:.0%} of the time; worker peak {peak:.0f} MB, "
        f"{idle:.0f} MB a second after"
    )
    return {"seconds": seconds, "peak_mb": peak}


def make_texts_distinct(project) -> int:
    """Append a marker of its document to every free-text value of the project's revisions and drafts."""
    from annotation.models import Draft, Revision
    from annotation.schema import REQUIRED_ENTRY_TEXT

    made = 0
    for model in (Revision, Draft):
        docs = list(model.objects.filter(row__clip__project=project).only("id", "content"))
        for doc in docs:
            content, tag = doc.content, f" ({model.__name__[0].lower()}{doc.pk})"
            for key in ("tone_of_voice", "relation_pattern_reason", "relation_cycle_reason"):
                if content.get(key):
                    content[key] += tag
                    made += 1
            for list_key, text_keys in REQUIRED_ENTRY_TEXT.items():
                if list_key == "background_dialogue":  # transcribed speech, not measured
                    continue
                for i, entry in enumerate(content.get(list_key) or []):
                    for text_key in text_keys:
                        if isinstance(entry, dict) and entry.get(text_key):
                            entry[text_key] += f"{tag[:-1]}.{i})"
                            made += 1
        model.objects.bulk_update(docs, ["content"], batch_size=2000)
    return made


def change_texts(project, Revision, share: float) -> int:
    """Rewrite the tone of voice of ``share`` of the project's revisions (new words, saved as a lead's correction)."""
    ids = list(Revision.objects.filter(row__clip__project=project).order_by("id").values_list("id", flat=True))
    step = max(1, round(1 / share))
    run = uuid.uuid4().hex[:8]  # new words on every run, also of a project an earlier run changed
    changed = 0
    for revision in Revision.objects.filter(id__in=ids[::step]):
        revision.content = {
            **revision.content,
            "tone_of_voice": f"changed for the benchmark (run {run}), take {revision.pk}",
        }
        revision.version += 1
        revision.save()
        changed += 1
    return changed


if __name__ == "__main__":
    sys.exit(main())
