"""Freezing a full-scale release: wall time against 15 s and against a floor.

The floor is the least any freeze must do: one query for all gold rows (with
their skeletons and key layouts), each row put in release order by the
exporter, and the clips serialised to JSONL once. The freeze does that plus
splits, six task instance sets, statistics and baselines, the agreement
report, figures, the card, Croissant metadata, the manifest, the read-only
folder and the database record (moving every clip to ``released``).

Runs, in one process and on the same data:
  1. the floor (best of three);
  2. ``freeze`` of a new version (on a freshly generated project this is
     cold: the agreement report is computed, every clip changes state);
  3. ``reproduce`` of that release into another folder (the agreement report
     comes from its cache, no state changes) and a byte comparison.
Targets: the freeze under 15 s; within 4x of the floor (printed for both
runs, with and without the agreement step, which belongs to the agreement
capability).

A large freeze computes the agreement report and draws the figures in forked
child processes while it builds the rest (``annotation/releases/background``),
so its ``agreement`` and ``figures`` stages are the time left waiting for
them, and "without the agreement report" subtracts only that wait. The CPU
lines show the whole work: this process (its threads included) and the
children.

    .venv/bin/python bench/bench_release.py                       # generates a 191-clip synthetic project
    .venv/bin/python bench/bench_release.py --project SLUG        # an existing project
    DATABASE_URL=postgres://... .venv/bin/python bench/bench_release.py
"""

from __future__ import annotations

import argparse
import os
import resource
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


def main(argv=None) -> int:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "rescue_annot.settings")
    import django

    django.setup()
    from django.db import connection

    from annotation.audit import audit_source
    from annotation.models import Project
    from annotation.releases.freeze import freeze, reproduce
    from annotation.releases.manifest import remove_tree
    from annotation.services import create_project
    from annotation.synthetic import RELEASE_CLIPS, generate

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--project", help="freeze this existing project instead of generating one")
    parser.add_argument("--clips", type=int, default=RELEASE_CLIPS)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--keep", action="store_true", help="keep the release folders")
    args = parser.parse_args(argv)

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

        floors = [floor_seconds(project) for _ in range(3)]
        floor, data_bytes = min(floors)

        work = Path(tempfile.mkdtemp(prefix="bench-release-"))
        version = f"bench-{uuid.uuid4().hex[:6]}"
        cpu = [cpu_seconds()]
        started = time.perf_counter()
        release, built = freeze(project, version=version, seed=args.seed, out_dir=work / "frozen")
        cold = time.perf_counter() - started
        cpu.append(cpu_seconds())
        started = time.perf_counter()
        again, verification = reproduce(release, work / "reproduced")
        warm = time.perf_counter() - started
        cpu.append(cpu_seconds())

    identical = verification.ok and all((work / "frozen" / p).read_bytes() == b for p, b in again.files.items())
    total_bytes = sum(len(b) for b in built.files.values())
    agreement_first = built.timings.get("agreement", 0.0)
    agreement_again = again.timings.get("agreement", 0.0)

    def ratio(seconds: float) -> str:
        return f"{seconds / floor:4.1f}x floor"

    def line(label: str, seconds: float, agreement: float) -> str:
        return f"{label:<22}{seconds:6.2f} s  {ratio(seconds)}; without the agreement report {seconds - agreement:5.2f} s  {ratio(seconds - agreement)}"

    print(f"database              {vendor}")
    print(f"project               {project.slug} ({generated})")
    print(f"released              {len(built.clip_ids)} clips, {built.rows} rows; {len(built.files)} files, {total_bytes / 1e6:.1f} MB (data/all.jsonl {data_bytes / 1e6:.1f} MB)")
    print(f"floor                 {floor:6.2f} s  (one query for all gold rows, JSONL once; best of 3: {', '.join(f'{f:.2f}' for f, _ in floors)})")
    print(line("freeze", cold, agreement_first))
    print(line("re-freeze (reproduce)", warm, agreement_again))
    print("stages, freeze        " + ", ".join(f"{k} {v:.2f}" for k, v in built.timings.items()))
    print("stages, re-freeze     " + ", ".join(f"{k} {v:.2f}" for k, v in again.timings.items()))
    for label, (before, after) in (("cpu, freeze", cpu[0:2]), ("cpu, re-freeze", cpu[1:3])):
        print(f"{label:<22}this process {after[0] - before[0]:5.2f} s, child processes {after[1] - before[1]:5.2f} s")
    print(f"byte-identical        {'yes' if identical else 'NO: ' + '; '.join(verification.lines())}")
    under = max(cold, warm) < TARGET_SECONDS
    print(
        f"targets               {'under' if under else 'OVER'} {TARGET_SECONDS:.0f} s; "
        f"freeze {'within' if cold <= TARGET_RATIO * floor else 'OVER'} {TARGET_RATIO:.0f}x floor, "
        f"re-freeze {'within' if warm <= TARGET_RATIO * floor else 'OVER'} {TARGET_RATIO:.0f}x floor"
    )
    if not args.keep:
        remove_tree(work / "frozen")
        remove_tree(work / "reproduced")
        work.rmdir()
    return 0 if under and identical else 1


if __name__ == "__main__":
    sys.exit(main())
