"""The per-annotator dashboard at full scale: the worker's computation, and the lead's first response
from the stored report against the 300 ms target.

Generates a fresh synthetic project (191 clips, 7,079 rows, 3 annotators with gold; generation is not
timed) into the database DATABASE_URL names (SQLite by default; it must be migrated), spreads the
coders' work over four weeks of a study (so that the drift figures have weeks), then:

1. ``dashboard.build`` for each scenario (what the Celery task does): wall time;
2. the stored report, then the page as a lead meets it (in-process Django client, the full middleware
   stack and template): the first response and the best / median of --runs more, per scenario;
3. the same for the API endpoint.

    .venv/bin/python bench/bench_record.py [--clips 191] [--runs 10]
    DATABASE_URL=postgres://... .venv/bin/python bench/bench_record.py
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time
import uuid
from pathlib import Path

PAGE_TARGET_MS = 300.0


def main(argv=None) -> int:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "rescue_annot.settings")
    import django

    django.setup()
    from datetime import timedelta

    from django.db import connection
    from django.test import Client
    from django.test.utils import setup_test_environment
    from django.utils import timezone

    from annotation.audit import audit_source
    from annotation.models import Assignment, Revision
    from annotation.record import dashboard
    from annotation.services import create_project, create_user
    from annotation.synthetic import RELEASE_CLIPS, generate

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clips", type=int, default=RELEASE_CLIPS)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--project", help="reuse this project (made by an earlier run) instead of generating one")
    args = parser.parse_args(argv)
    setup_test_environment()  # the in-process client's host name
    print(f"database            {connection.vendor} ({connection.settings_dict['NAME']})")
    with audit_source("cli"):
        lead = create_user(f"lead-{uuid.uuid4().hex[:6]}", "lead", password=uuid.uuid4().hex)[0]
        if args.project:
            from annotation.models import Project

            project = Project.objects.get(slug=args.project)
            slug = project.slug
            print(f"project             {slug} (reused)")
        else:
            slug = f"bench-record-{uuid.uuid4().hex[:8]}"
            project = create_project(slug, name="record benchmark")
            started = time.perf_counter()
            counts = generate(project, clips=args.clips, annotators=3, seed=args.seed)
            print(
                f"project             {slug}: {counts['clips']} clips, {counts['rows']} rows, 3 coders (generated in "
                f"{time.perf_counter() - started:.1f} s, not timed)"
            )
    now = timezone.now()
    Assignment.objects.filter(clip__project=project).update(created_at=now - timedelta(days=28))
    for week, clips in enumerate([project.clips.order_by("sample_id")[i::4] for i in range(4)]):
        Revision.objects.filter(row__clip__in=list(clips)).update(updated_at=now - timedelta(days=27 - 7 * week))
    ok = True
    client = Client()
    client.force_login(lead)
    for scenario in ("couple", "family"):
        t = time.perf_counter()
        stored = dashboard.compute_and_store(project, scenario)
        build_s = time.perf_counter() - t
        size = len(str(stored.report)) // 1024
        print(
            f"{scenario:8s} build       {build_s:6.2f} s (the worker's time), report {size} KB, "
            f"{len(stored.report['weeks'])} weeks"
        )
        for label, url in (
            ("page", f"/projects/{slug}/record/?scenario={scenario}"),
            ("api ", f"/api/v1/projects/{slug}/record/?scenario={scenario}"),
        ):
            times = []
            for _ in range(args.runs + 1):
                t = time.perf_counter()
                response = client.get(url)
                times.append((time.perf_counter() - t) * 1000)
                assert response.status_code == 200, response.status_code
            first, rest = times[0], times[1:]
            verdict = "ok" if first < PAGE_TARGET_MS else "OVER"
            ok &= first < PAGE_TARGET_MS
            print(
                f"{scenario:8s} {label}        first {first:6.1f} ms, best {min(rest):6.1f} ms, median "
                f"{statistics.median(rest):6.1f} ms "
                f"(target {PAGE_TARGET_MS:.0f} ms: {verdict})"
            )
    print(
        "result              " + ("every first response under the target" if ok else "a first response over the target")
    )
    # Without a broker the page started the free-text part in a thread (jobs.in_thread_when_eager): let it finish,
    # or the interpreter exits under a daemon thread that is inside torch, which aborts the process (status 134).
    for thread in threading.enumerate():
        if thread.name.startswith("jobs-"):
            thread.join()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
