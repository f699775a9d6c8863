"""Freezing a full-scale release: wall time against 15 s and against a floor.

The floor is the least any freeze must do: one query for all gold rows (with
their skeletons and key layouts), each row put in release order by the
exporter, and the clips serialised to JSONL once. The freeze does that plus
splits, six task instance sets, statistics and baselines, the agreement
report, figures, the card, Croissant metadata, the manifest, the read-only
folder and the database record (moving every clip to ``released``).

Runs, in one process and on the same data, ``--trials`` times each (3 by
default), every run just after a measurement of the floor: this machine's
timings wander by a third from one run to the next, so the ratios printed
are the best run over the best of the floors measured beside those runs,
and the median of each run over the floor measured just before it; the
target holds when both are within 4x.
  1. the floor, before every run below;
  2. ``freeze`` of a new version, cold every time: before each trial the
     released clips are reopened (back to ``adjudicated``, as a lead does) and
     the project's stored agreement reports are dropped, so every freeze
     computes the agreement report and moves every clip (on an existing
     project, ``--project SLUG --reset`` does the same to that project: it
     reopens its released clips and drops its stored agreement reports, so
     use a copy, never a project people work on);
  3. ``reproduce`` of the last release into another folder (the agreement
     report comes from its cache, no state changes) and a byte comparison.
Targets: the freeze under 15 s; within 4x of the floor (printed for both,
with and without the agreement step, which belongs to the agreement
capability).

A large freeze computes the agreement report and draws the figures in forked
child processes while it builds the rest (``annotation/releases/background``),
so its ``agreement`` and ``figures`` stages are the time left waiting for
them, and "without the agreement report" subtracts only that wait. The CPU
lines show the whole work: this process (its threads included) and the
children.

    .venv/bin/python bench/bench_release.py                       # generates a 191-clip synthetic project
    .venv/bin/python bench/bench_release.py --project SLUG --reset   # an existing (throw-away) project
    DATABASE_URL=postgres://... .venv/bin/python bench/bench_release.py
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

TARGET_SECONDS = 15.0
TARGET_RATIO = 4.0


def floor_seconds(project) -> tuple[float, int]:
    from annotation.models import Gold
    from annotation.rescue_format.exporter import dumps_clip, release_clip, release_row

    started = time.perf_counter()
    clips = {c.pk: c for c in project.clips.all()}
    rows: dict[int, list] = {}
    query = (
        Gold.objects.filter(row__clip__project=project)
        .order_by("row__clip__sample_id", "row__row_index")
        .values_list(
            "row__clip_id",
            "row__start_time",
            "row__end_time",
            "row__primary_speaker",
            "row__dialogue_cleaned",
            "row__row_index",
            "content",
            "layout",
        )
    )
    for clip_id, start, end, speaker, dialogue, index, content, layout in query.iterator(chunk_size=2000):
        skeleton = {
            "start_time": start,
            "end_time": end,
            "primary_speaker": speaker,
            "dialogue_cleaned": dialogue,
            "row_index": index,
        }
        rows.setdefault(clip_id, []).append(release_row(skeleton, content, layout))
    text = "".join(dumps_clip(release_clip(clips[pk], r)) + "\n" for pk, r in rows.items())
    return time.perf_counter() - started, len(text.encode("utf-8"))


def cpu_seconds() -> tuple[float, float]:
    """CPU time (user + system) of this process and of its reaped children so far."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


def _cpu_delta(before: tuple[float, float], after: tuple[float, float]) -> tuple[float, float]:
    return after[0] - before[0], after[1] - before[1]


def main(argv=None) -> int:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "rescue_annot.settings")
    import django

    django.setup()
    from django.db import connection

    from annotation.audit import audit_source
    from annotation.models import AgreementReport, ClipState, Project
    from annotation.releases.freeze import freeze, reproduce
    from annotation.releases.manifest import remove_tree
    from annotation.services import create_project, transition_many
    from annotation.synthetic import RELEASE_CLIPS, generate

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--project", help="freeze this existing project instead of generating one")
    parser.add_argument("--clips", type=int, default=RELEASE_CLIPS)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--trials", type=int, default=3, help="measurements of each kind (best and median printed)")
    parser.add_argument(
        "--reset",
        action="store_true",
        help="with --project: before each freeze, reopen the project's released clips and drop its stored agreement reports",
    )
    parser.add_argument("--keep", action="store_true", help="keep the last freeze's and the last re-freeze's folders")
    args = parser.parse_args(argv)
    if args.project and not args.reset:
        parser.error("--project needs --reset: every freeze here is cold, so the project's released clips are reopened and its stored agreement reports dropped")

    vendor = f"{connection.vendor} ({connection.settings_dict['NAME']})"
    with audit_source("cli"):
        if args.project:
            project = Project.objects.get(slug=args.project)
            generated = "existing project"
        else:
            project = create_project(f"bench-release-{uuid.uuid4().hex[:8]}", name="Release benchmark (synthetic)")
            t0 = time.perf_counter()
            counts = generate(project, clips=args.clips, annotators=3, seed=args.seed)
            generated = f"generated {counts['clips']} clips / {counts['rows']} rows in {time.perf_counter() - t0:.1f} s"

        work = Path(tempfile.mkdtemp(prefix="bench-release-"))
        stamp = uuid.uuid4().hex[:6]
        floors, colds, warms, cpu_cold, cpu_warm = [], [], [], [], []
        for trial in range(args.trials):
            # Cold every time: the clips back to adjudicated, no stored agreement report
            # (nothing to undo before the first freeze of a generated project).
            transition_many(project.clips.filter(state=ClipState.RELEASED), ClipState.ADJUDICATED, reason="benchmark: freeze again")
            AgreementReport.objects.filter(project=project).delete()
            remove_tree(work / "frozen")
            floors.append(floor_seconds(project))
            before = cpu_seconds()
            started = time.perf_counter()
            release, built = freeze(project, version=f"bench-{stamp}-{trial}", seed=args.seed, out_dir=work / "frozen")
            colds.append((time.perf_counter() - started, built))
            cpu_cold.append(_cpu_delta(before, cpu_seconds()))
        for trial in range(args.trials):
            remove_tree(work / "reproduced")
            floors.append(floor_seconds(project))
            before = cpu_seconds()
            started = time.perf_counter()
            again, verification = reproduce(release, work / "reproduced")
            warms.append((time.perf_counter() - started, again))
            cpu_warm.append(_cpu_delta(before, cpu_seconds()))

    identical = verification.ok and all((work / "frozen" / p).read_bytes() == b for p, b in again.files.items())
    data_bytes = floors[0][1]
    floor_times = [f for f, _ in floors]
    total_bytes = sum(len(b) for b in colds[0][1].files.values())

    def report(label: str, runs: list, paired_floors: list[float]) -> tuple[float, float]:
        """Print the best run against the best of the floors measured beside these runs
        (as many as there are runs), and the median of each run over the floor measured just before it."""
        floor = min(paired_floors)
        seconds, result = min(runs, key=lambda r: r[0])
        agreement = result.timings.get("agreement", 0.0)
        paired = [t / f for (t, _), f in zip(runs, paired_floors)]
        print(
            f"{label:<22}{seconds:6.2f} s  {seconds / floor:4.1f}x floor ({floor:.2f} s); "
            f"without the agreement report {seconds - agreement:5.2f} s  {(seconds - agreement) / floor:4.1f}x"
        )
        print(f"{'':<22}each run over the floor measured just before it: median {statistics.median(paired):.1f}x (runs {', '.join(f'{t:.2f}' for t, _ in runs)} s)")
        return seconds / floor, statistics.median(paired)

    print(f"database              {vendor}")
    print(f"project               {project.slug} ({generated})")
    print(f"released              {len(colds[0][1].clip_ids)} clips, {colds[0][1].rows} rows; {len(colds[0][1].files)} files, {total_bytes / 1e6:.1f} MB (data/all.jsonl {data_bytes / 1e6:.1f} MB)")
    print(f"floor                 {min(floor_times):6.2f} s  (one query for all gold rows, JSONL once; best of {len(floors)}, median {statistics.median(floor_times):.2f} s)")
    cold_best, cold_paired = report("freeze (cold)", colds, floor_times[: args.trials])
    warm_best, warm_paired = report("re-freeze (reproduce)", warms, floor_times[args.trials :])
    best_cold = min(colds, key=lambda r: r[0])[1]
    best_warm = min(warms, key=lambda r: r[0])[1]
    print("stages, best freeze   " + ", ".join(f"{k} {v:.2f}" for k, v in best_cold.timings.items()))
    print("stages, best re-freeze " + ", ".join(f"{k} {v:.2f}" for k, v in best_warm.timings.items()))
    for label, spent in (("cpu, freeze", cpu_cold), ("cpu, re-freeze", cpu_warm)):
        own = statistics.median(c[0] for c in spent)
        children = statistics.median(c[1] for c in spent)
        print(f"{label:<22}median: this process {own:5.2f} s, child processes {children:5.2f} s")
    print(f"byte-identical        {'yes' if identical else 'NO: ' + '; '.join(verification.lines())}")
    under = max(t for t, _ in colds + warms) < TARGET_SECONDS

    def within(best: float, paired: float) -> str:
        return f"{'within' if max(best, paired) <= TARGET_RATIO else 'OVER'} {TARGET_RATIO:.0f}x floor"

    print(
        f"targets               every run {'under' if under else 'OVER'} {TARGET_SECONDS:.0f} s; "
        f"freeze {within(cold_best, cold_paired)}, re-freeze {within(warm_best, warm_paired)} (best over best, and median of paired runs)"
    )
    if not args.keep:
        remove_tree(work / "frozen")
        remove_tree(work / "reproduced")
        work.rmdir()
    return 0 if under and identical else 1


if __name__ == "__main__":
    sys.exit(main())
