"""Full-scale synthetic generation: wall time against the 60 s target.

Creates a fresh project (unique slug) and generates the release-sized
benchmark into it: 191 clips, ~7,079 rows, 3 annotators (~35k documents plus
their history). Uses whatever database DATABASE_URL names (SQLite by default);
the database must be migrated. The project is left in place for inspection.

    .venv/bin/python bench/bench_synthetic.py [--clips 191] [--annotators 3] [--seed 0]
    DATABASE_URL=postgres://... .venv/bin/python bench/bench_synthetic.py
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import uuid
from pathlib import Path

TARGET_SECONDS = 60.0


def main(argv=None) -> int:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "rescue_annot.settings")
    import django

    django.setup()
    from django.db import connection

    from annotation.audit import audit_source
    from annotation.services import create_project
    from annotation.synthetic import RELEASE_CLIPS, build_clips, check_generated, generate

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clips", type=int, default=RELEASE_CLIPS)
    parser.add_argument("--annotators", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    vendor = f"{connection.vendor} ({connection.settings_dict['NAME']})"
    t0 = time.perf_counter()
    built = build_clips(clips=args.clips, annotators=args.annotators, seed=args.seed)
    t_build = time.perf_counter() - t0
    problems = check_generated(built)
    t_check = time.perf_counter() - t0 - t_build

    slug = f"bench-synthetic-{uuid.uuid4().hex[:8]}"
    with audit_source("cli"):
        project = create_project(slug, name="synthetic generation benchmark")
        started = time.perf_counter()
        counts = generate(project, clips=args.clips, annotators=args.annotators, seed=args.seed)
        wall = time.perf_counter() - started

    ok = wall < TARGET_SECONDS
    print(f"database            {vendor}")
    print(f"project             {slug}")
    print(f"pure build          {t_build:6.2f} s  ({len(built)} clips, no database)")
    print(f"check_clip, all     {t_check:6.2f} s  ({len(problems)} issues)")
    print(f"generate (total)    {wall:6.2f} s  (build + check + writes, one transaction)")
    print(
        f"clips / rows        {counts['clips']} ({counts['couple_clips']} couple, "
        f"{counts['family_clips']} family) / {counts['rows']}"
    )
    print(
        f"documents           {counts['documents']} ({counts['drafts']} drafts, {counts['revisions']} revisions, "
        f"{counts['gold']} gold) + {counts['assignments']} assignments, {counts['cues']} cues"
    )
    print(f"rows/s              {counts['rows'] / wall:,.0f}   documents/s {counts['documents'] / wall:,.0f}")
    print(f"target              {'under' if ok else 'OVER'} {TARGET_SECONDS:.0f} s")
    return 0 if ok and not problems else 1


if __name__ == "__main__":
    sys.exit(main())
