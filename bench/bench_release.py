"""Freezing a release: wall time at full scale and at 10x, sequential and with the agreement alongside.

A freeze reads the gold, splits, the six task instance sets, statistics and
baselines, the agreement reports, figures, the card, Croissant metadata, the
manifest, the read-only folder and the database record (moving every clip to
``released``). This script measures it on synthetic projects from
``generate_synthetic``:

  1. full scale: 191 clips, 7,079 rows (the public release's size);
  2. 10x: 1,910 clips, 70,790 rows.

Each scale is frozen two ways, the same bytes:

  sequential          every step in one thread, one after another (``alongside=False``);
  agreement alongside the platform's freeze: the agreement reports computed in one
                      ``concurrent.futures`` thread beside the gold, data, tasks and
                      statistics (``freeze._agreement_alongside``); no process is forked.

Every freeze is cold: before each trial the released clips are reopened (back
to ``adjudicated``, as a lead does) and the project's stored agreement reports
are dropped, so every freeze computes the agreement reports and moves every
clip (the embedding cache is kept: a first trial on a new project also embeds
every text, and is not the figure). After the trials, ``reproduce`` rebuilds
the last release into another folder and compares bytes. For context (not a
target) it also prints the floor: one query for all gold rows, each put in
release order by the exporter, the clips serialised to JSONL once.

Target: the 10x freeze (the platform's, agreement alongside) under 30 s; the
sequential figure says what the thread buys.

The projects are named ``bench-release-<clips>``; a later run reuses them
(reopened as above) instead of generating them again, which takes minutes at
10x. Give it a fresh database the first time: history tables and dead rows
left by other runs slow its queries.

    .venv/bin/python bench/bench_release.py                    # both scales, 2 trials of each way
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
SEQUENTIAL, PLATFORM = "sequential", "agreement alongside"
WAYS = {SEQUENTIAL: False, PLATFORM: None}  # freeze(alongside=...)


def floor_seconds(project) -> float:
    from annotation.models import Gold
    from annotation.rescue_format.exporter import dumps_clip, release_clip, release_row

    started = time.perf_counter()
    clips = {c.pk: c for c in project.clips.all()}
    rows: dict[int, list] = {}
    query = (
        Gold.objects.filter(row__clip__project=project)
        .order_by("row__clip__sample_id", "row__row_index")
        .values_list("row__clip_id", "row__start_time", "row__end_time", "row__primary_speaker", "row__dialogue_cleaned", "row__row_index", "content", "layout")
    )
    for clip_id, start, end, speaker, dialogue, index, content, layout in query.iterator(chunk_size=2000):
        skeleton = {"start_time": start, "end_time": end, "primary_speaker": speaker, "dialogue_cleaned": dialogue, "row_index": index}
        rows.setdefault(clip_id, []).append(release_row(skeleton, content, layout))
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
    ways = {}
    digests = set()
    for way, alongside in WAYS.items():
        runs, cpus = [], []
        for trial in range(trials):
            transition_many(project.clips.filter(state=ClipState.RELEASED), ClipState.ADJUDICATED, reason="benchmark: freeze again")
            AgreementReport.objects.filter(project=project).delete()
            remove_tree(work / "frozen")
            cpu = resource.getrusage(resource.RUSAGE_SELF)
            started = time.perf_counter()
            release, built = freeze(project, version=f"bench-{stamp}-{way[:3]}-{trial}", seed=seed, out_dir=work / "frozen", alongside=alongside)
            runs.append((time.perf_counter() - started, built))
            after = resource.getrusage(resource.RUSAGE_SELF)
            cpus.append(after.ru_utime + after.ru_stime - cpu.ru_utime - cpu.ru_stime)
            # The version is in the card and the manifest; every other file must be the same whichever way.
            digests.add(tuple(sorted((p, d) for p, d in built.digests.items() if p not in ("README.md", "croissant.json"))))
        seconds, best = min(runs, key=lambda r: r[0])
        ways[way] = {"best": seconds, "median": statistics.median(t for t, _ in runs), "cpu": min(cpus), "runs": [t for t, _ in runs], "stages": best.timings, "built": best}
    remove_tree(work / "reproduced")
    started = time.perf_counter()
    again, verification = reproduce(release, work / "reproduced")
    reproduced = time.perf_counter() - started
    identical = verification.ok and all((work / "frozen" / p).read_bytes() == b for p, b in again.files.items())
    floor = floor_seconds(project)
    for folder in ("frozen", "reproduced"):
        remove_tree(work / folder)
    best = ways[PLATFORM]["built"]
    return {
        "clips": len(best.clip_ids),
        "rows": best.rows,
        "source": source,
        "ways": ways,
        "same_bytes": len(digests) == 1,
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
    parser.add_argument("--trials", type=int, default=2, help="cold freezes per scale and way (best and median printed)")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    scales = [int(s) for s in args.scales.split(",")]

    print(f"database              {connection.vendor} ({connection.settings_dict['NAME']}); load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    work = Path(tempfile.mkdtemp(prefix="bench-release-"))
    results = {}
    with audit_source("cli"):
        for scale in scales:
            results[scale] = figures = measure(RELEASE_CLIPS * scale, seed=args.seed, trials=args.trials, work=work)
            print(f"\n{scale}x: {figures['clips']:,} clips, {figures['rows']:,} rows ({figures['source']}); {figures['megabytes']:.0f} MB of files")
            for way, w in figures["ways"].items():
                print(f"  freeze, {way:<19} {w['best']:6.2f} s  (median {w['median']:.2f} s of {len(w['runs'])}; CPU of this process {w['cpu']:.2f} s)")
                print("    stages of the best       " + ", ".join(f"{k} {v:.2f}" for k, v in w["stages"].items()))
            print(f"  both ways the same files   {'yes' if figures['same_bytes'] else 'NO'}")
            print(f"  reproduce                  {figures['reproduce']:6.2f} s, byte-identical: {'yes' if figures['identical'] else 'NO: ' + '; '.join(figures['problems'])}")
            print(f"  floor (context)            {figures['floor']:6.2f} s  one query for all gold rows, JSONL once; freeze / floor = {figures['ways'][PLATFORM]['best'] / figures['floor']:.1f}")
    work.rmdir()
    ok = all(f["identical"] and f["same_bytes"] for f in results.values())
    if 10 in results:
        ways = results[10]["ways"]
        under = ways[PLATFORM]["best"] < TARGET_10X_SECONDS
        print(
            f"\ntarget                  the 10x freeze under {TARGET_10X_SECONDS:.0f} s: {'yes' if under else 'NO'} "
            f"({ways[PLATFORM]['best']:.1f} s with the agreement alongside; {ways[SEQUENTIAL]['best']:.1f} s sequential)"
        )
        ok = ok and under
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
