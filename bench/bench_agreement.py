"""Agreement report on the full-scale synthetic project: wall time against the 10 s target,
and our alpha against the krippendorff package on the same prepared matrices (1.5x target).

Generates a fresh synthetic project (191 clips, 7,079 rows, 3 annotators + the
LLM draft; generation is not timed) into the database DATABASE_URL names
(SQLite by default; it must be migrated), or reuses one with --project. Then:

1. the full report (``compute_project_report``, 1,000 bootstrap resamples per
   figure): best and median of --runs runs, with extraction / computation split;
2. alpha alone: our coincidence-matrix alpha and ``krippendorff.alpha`` on
   every distinct coder-by-unit matrix the report uses (values must agree);
3. the same report after moving --calibration clips to calibration
   (from-empty) assignments, so that every slice has data;
4. the fingerprint (cache check) and the dashboard's plots for one slice.

    .venv/bin/python bench/bench_agreement.py [--clips 191] [--seed 0] [--runs 3] [--calibration 20]
    DATABASE_URL=postgres://... .venv/bin/python bench/bench_agreement.py
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import uuid
from pathlib import Path

REPORT_TARGET_SECONDS = 10.0
ALPHA_RATIO_TARGET = 1.5


def _timed(fn, *args, **kwargs):
    started = time.perf_counter()
    value = fn(*args, **kwargs)
    return time.perf_counter() - started, value


def main(argv=None) -> int:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "rescue_annot.settings")
    import django

    django.setup()
    import numpy as np
    from django.db import connection

    from annotation.agreement import compute_project_report
    from annotation.agreement.alpha import compute_alpha, distance_matrix, library_alpha, pairable
    from annotation.agreement.extract import extract, scope_clips
    from annotation.agreement.plots import slice_plots
    from annotation.agreement.report import prepared_matrices, report_from_extraction
    from annotation.agreement.services import Params, fingerprint
    from annotation.audit import audit_source
    from annotation.models import Assignment, AssignmentMode, Project
    from annotation.services import create_project
    from annotation.synthetic import RELEASE_CLIPS, generate

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clips", type=int, default=RELEASE_CLIPS)
    parser.add_argument("--seed", type=int, default=0, help="synthetic generator seed")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--calibration", type=int, default=20, help="clips moved to calibration for the second measurement (0: skip)"
    )
    parser.add_argument("--project", help="reuse this project instead of generating one")
    args = parser.parse_args(argv)

    print(f"database            {connection.vendor} ({connection.settings_dict['NAME']})")
    if args.project:
        project = Project.objects.get(slug=args.project)
    else:
        slug = f"bench-agreement-{uuid.uuid4().hex[:8]}"
        with audit_source("cli"):
            project = create_project(slug, name="agreement benchmark")
            gen_seconds, _ = _timed(generate, project, clips=args.clips, annotators=3, seed=args.seed)
        print(f"project             {slug} (generated in {gen_seconds:.1f} s, not timed below)")

    # 1. The full report.
    walls = []
    for _ in range(args.runs):
        seconds, report = _timed(compute_project_report, project, resamples=1000, seed=0)
        walls.append(seconds)
    t_extract, ex = _timed(extract, scope_clips(project))
    t_compute, _ = _timed(report_from_extraction, ex, project=project.slug, scope={}, resamples=1000, seed=0)
    slices = [s for s in report["slices"] if not s["empty"]]
    figures = sum(1 + (m["with_llm"] is not None) + len(m["pairs"]) for s in slices for m in s["measures"].values())
    c = report["counts"]
    print(
        f"scope               {c['clips']} clips, {c['rows']} rows, {c['annotators']} annotators + LLM draft, {c['revisions']} revisions"
    )
    print(f"figures             {figures} in {len(slices)} non-empty slices, 1,000 bootstrap resamples each")
    print(
        f"full report         best {min(walls):.2f} s, median {statistics.median(walls):.2f} s over {len(walls)} runs  [target < {REPORT_TARGET_SECONDS:.0f} s: {'met' if max(walls) < REPORT_TARGET_SECONDS else 'NOT MET'}]"
    )
    print(f"  extraction        {t_extract:.2f} s (database -> coder-by-unit matrices)")
    print(
        f"  computation       {t_compute:.2f} s (alpha, bootstrap, confusion, edit rates; identical figures computed once)"
    )

    # 2. Alpha alone, ours against the package, on the same prepared matrices.
    matrices = prepared_matrices(ex)
    deltas = {}
    for measure, _codes in matrices:
        key = (measure.source, measure.level)
        if key not in deltas:
            deltas[key] = distance_matrix(measure.level, ex.values[measure.source].domain)

    def kind_of(measure) -> str:
        return f"target sets, {measure.level}" if measure.source in ("target", "support_target") else measure.level

    ours, ours_time = [], {}
    for measure, codes in matrices:
        started = time.perf_counter()
        data = pairable(codes, len(ex.values[measure.source].domain))
        result = compute_alpha(data, deltas[(measure.source, measure.level)][np.ix_(data.present, data.present)])
        ours_time[kind_of(measure)] = ours_time.get(kind_of(measure), 0.0) + time.perf_counter() - started
        ours.append(result.alpha)
    theirs, lib_time = [], {}
    for (measure, codes), mine in zip(matrices, ours):
        if mine is None:  # undefined: the package raises instead
            theirs.append(None)
            continue
        seconds, value = _timed(library_alpha, codes, ex.values[measure.source].domain, measure.level)
        lib_time[kind_of(measure)] = lib_time.get(kind_of(measure), 0.0) + seconds
        theirs.append(value)
    t_ours, t_lib = sum(ours_time.values()), sum(lib_time.values())
    worst = max(abs(a - b) for a, b in zip(ours, theirs) if a is not None)
    ratio = t_ours / t_lib
    print(f"alpha on {len(matrices)} distinct prepared matrices: ours (coincidences by bincount) vs krippendorff.alpha")
    for kind in sorted(lib_time):
        print(
            f"  {kind:24s} ours {ours_time[kind]:7.3f} s   package {lib_time[kind]:7.3f} s   ratio {ours_time[kind] / lib_time[kind]:.3f}x"
        )
    verdict = "met" if ratio <= ALPHA_RATIO_TARGET else "NOT MET"
    print(
        f"  {'all':24s} ours {t_ours:7.3f} s   package {t_lib:7.3f} s   ratio {ratio:.3f}x  [target <= {ALPHA_RATIO_TARGET}x: {verdict}]"
    )
    print(f"  largest difference between the two alphas: {worst:.1e}")

    # 3. With calibration clips, every slice has data.
    if args.calibration:
        clip_ids = list(project.clips.order_by("sample_id").values_list("id", flat=True)[: args.calibration])
        Assignment.objects.filter(clip_id__in=clip_ids).update(mode=AssignmentMode.FROM_EMPTY)
        seconds, report2 = _timed(compute_project_report, project, resamples=1000, seed=0)
        slices2 = [s for s in report2["slices"] if not s["empty"]]
        print(
            f"with {args.calibration} calibration clips: full report {seconds:.2f} s ({len(slices2)} non-empty slices)"
        )
        Assignment.objects.filter(clip_id__in=clip_ids).update(mode=AssignmentMode.FROM_DRAFT)

    # 4. Cache check and plots.
    t_fp, _ = _timed(fingerprint, project, Params())
    t_plots, plots = _timed(slice_plots, report, "all/all")
    print(f"fingerprint         {t_fp:.2f} s (what every page view and API call pays when the report is cached)")
    print(
        f"plots, one slice    {t_plots:.2f} s for {len(plots)} SVG plots, {sum(len(p['uri']) for p in plots) / 1024:.0f} KiB inline (cached per report)"
    )
    ok = max(walls) < REPORT_TARGET_SECONDS and ratio <= ALPHA_RATIO_TARGET and worst < 1e-9
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
