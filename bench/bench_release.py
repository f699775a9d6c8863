"""Freezing a release, plainly and sequentially: wall time at full scale and at 10x.

The freeze runs in one process, one step after another (no forked children,
no threads): reading the gold, splits, the six task instance sets,
statistics and baselines, the agreement report, figures, the card, Croissant
metadata, the manifest, the read-only folder and the database record (moving
every clip to ``released``). This script measures it on synthetic projects
from ``generate_synthetic``:

  1. full scale: 191 clips, 7,079 rows (the public release's size);
  2. 10x: 1,910 clips, 70,790 rows.

Every freeze is cold: before each trial the released clips are reopened (back
to ``adjudicated``, as a lead does) and the project's stored agreement reports
are dropped, so every freeze computes the agreement report and moves every
clip. After the trials, ``reproduce`` rebuilds the last release into another
folder and compares bytes. For context (not a target) it also prints the
floor: one query for all gold rows, each put in release order by the
exporter, the clips serialised to JSONL once.

Target: the 10x freeze under 30 s (the bar below which the freeze needs no
parallel machinery at all).

The projects are named ``bench-release-<clips>``; a later run reuses them
(reopened as above) instead of generating them again, which takes minutes at
10x. Give it a fresh database the first time: history tables and dead rows
left by other runs slow its queries.

    .venv/bin/python bench/bench_release.py                    # both scales, three freezes each
    .venv/bin/python bench/bench_release.py --scales 1 --trials 3
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

TARGET_10X_SECONDS = 30.0


def floor_seconds(project) -> float:
    from annotation.models import Gold
    from annotation.rescue_format.exporter import ROW_FIELDS, dumps_clip, release_clip, release_row, row_skeleton

    started = time.perf_counter()
    clips = {c.pk: c for c in project.clips.all()}
    rows: dict[int, list] = {}
    query = (
        Gold.objects.filter(row__clip__project=project)
        .order_by("row__clip__sample_id", "row__row_index")
        .values_list(
            *ROW_FIELDS,
            "content",
            "layout",
        )
    )
    for clip_id, start, end, speaker, dialogue, index, content, layout in query.iterator(chunk_size=2000):
        row = row_skeleton(start, end, speaker, dialogue, index)
        rows.setdefault(clip_id, []).append(release_row(row, content, layout))
    "".join(dumps_clip(release_clip(clips[pk], r)) + "\n" for pk, r in rows.items())
    return time.perf_counter() - started


def measure(clips: int, *, seed: int, trials: int, work: Path) -> dict:
    """Cold freezes of the ``clips``-clip project, then one reproduce; the figures."""
    from annotation.models import AgreementReport, ClipState, Project
    from annotation.releases.freeze import freeze, reproduce
    from annotation.releases.manifest import remove_tree
    from annotation.services import create_project, transition_many
    from annotation.synthetic import generate

    slug = f"bench-release-{clips}"
    project = Project.objects.filter(slug=slug).first()
    if project is None:
        project = create_project(slug, name=f"Release benchmark, {clips} synthetic clips")
        started = time.perf_counter()
        counts = generate(project, clips=clips, annotators=3, seed=seed)
        source = f"generated {counts['clips']} clips / {counts['rows']:,} rows in {time.perf_counter() - started:.0f} s"
    else:
        source = f"reused {project.clips.count()} clips"
    stamp = uuid.uuid4().hex[:6]
    runs, cpus = [], []
    for trial in range(trials):
        transition_many(
            project.clips.filter(state=ClipState.RELEASED), ClipState.ADJUDICATED, reason="benchmark: freeze again"
        )
        AgreementReport.objects.filter(project=project).delete()
        remove_tree(work / "frozen")
        cpu = resource.getrusage(resource.RUSAGE_SELF)
        started = time.perf_counter()
        release, built = freeze(project, version=f"bench-{stamp}-{trial}", seed=seed, out_dir=work / "frozen")
        runs.append((time.perf_counter() - started, built))
        after = resource.getrusage(resource.RUSAGE_SELF)
        cpus.append(after.ru_utime + after.ru_stime - cpu.ru_utime - cpu.ru_stime)
    remove_tree(work / "reproduced")
    started = time.perf_counter()
    again, verification = reproduce(release, work / "reproduced")
    reproduced = time.perf_counter() - started
    identical = verification.ok and all((work / "frozen" / p).read_bytes() == b for p, b in again.files.items())
    floor = floor_seconds(project)
    for folder in ("frozen", "reproduced"):
        remove_tree(work / folder)
    seconds, best = min(runs, key=lambda r: r[0])
    return {
        "clips": len(best.clip_ids),
        "rows": best.rows,
        "source": source,
        "best": seconds,
        "median": statistics.median(t for t, _ in runs),
        "cpu": min(cpus),
        "runs": [t for t, _ in runs],
        "stages": best.timings,
        "reproduce": reproduced,
        "identical": identical,
        "problems": verification.lines(),
        "floor": floor,
        "megabytes": sum(len(b) for b in best.files.values()) / 1e6,
    }


def main(argv=None) -> int:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "rescue_annot.settings")
    import django

    django.setup()
    from django.db import connection

    from annotation.audit import audit_source
    from annotation.synthetic import RELEASE_CLIPS

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scales", default="1,10", help="multiples of the release's 191 clips (default 1,10)")
    parser.add_argument("--trials", type=int, default=3, help="cold freezes per scale (best and median printed)")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    scales = [int(s) for s in args.scales.split(",")]

    print(
        f"database              {connection.vendor} ({connection.settings_dict['NAME']}); load average "
        f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"
    )
    work = Path(tempfile.mkdtemp(prefix="bench-release-"))
    results = {}
    with audit_source("cli"):
        for scale in scales:
            results[scale] = figures = measure(RELEASE_CLIPS * scale, seed=args.seed, trials=args.trials, work=work)
            print(
                f"\n{scale}x: {figures['clips']:,} clips, {figures['rows']:,} rows ({figures['source']}); "
                f"{figures['megabytes']:.0f} MB of files"
            )
            every = ", ".join(f"{t:.2f}" for t in figures["runs"])
            print(
                f"  freeze (cold, sequential)  {figures['best']:6.2f} s  (median {figures['median']:.2f} s of "
                f"{len(figures['runs'])}: {every}; CPU of this process {figures['cpu']:.2f} s)"
            )
            print(
                "  peak memory of this process so far  "
                f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB"
            )
            print("  stages of the best freeze  " + ", ".join(f"{k} {v:.2f}" for k, v in figures["stages"].items()))
            print(
                f"  reproduce                  {figures['reproduce']:6.2f} s, byte-identical: "
                f"{'yes' if figures['identical'] else 'NO: ' + '; '.join(figures['problems'])}"
            )
            print(
                f"  floor (context)            {figures['floor']:6.2f} s  one query for all gold rows, JSONL once; "
                f"freeze / floor = {figures['best'] / figures['floor']:.1f}"
            )
    work.rmdir()
    ok = all(f["identical"] for f in results.values())
    if 10 in results:
        under = results[10]["best"] < TARGET_10X_SECONDS
        print(
            f"\ntarget                  the 10x freeze under {TARGET_10X_SECONDS:.0f} s: {'yes' if under else 'NO'} "
            f"({results[10]['best']:.1f} s)"
        )
        ok = ok and under
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
