"""Load test: simulated annotators working through their clips on gunicorn + PostgreSQL.

    DATABASE_URL=postgres://... python bench/bench_load.py [--users 50] [--seconds 60]

Builds a throw-away project (one assigned clip per simulated annotator), starts
gunicorn on 127.0.0.1, runs bench/locustfile.py headless (loopback only,
bounded in time), then checks the database: every save the server acknowledged
is there (content and version, through the audit trail), and every deliberate
stale save got a 409. Prints requests, failures, p50 and p95 per request type.
Exit status 0 only when there are no unexpected failures and no lost saves
(and, unless --no-latency-target, the p95 of row saves is under 100 ms).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "rescue_annot.settings")

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402

from annotation.models import Revision  # noqa: E402
from bench.bench_workspace import Gunicorn, require_postgres  # noqa: E402
from bench.workspace_data import assign, drop, make_annotators, make_family_clip, new_project  # noqa: E402

SAVE_P95_TARGET_MS = 100
# Every simulated annotator starts at once and opens a clip first: the first
# seconds are a burst of clip openings that the rest of the run does not see.
STARTUP_SECONDS = 5


def print_phases(timings: Path, startup: float) -> None:
    """p50 and p95 per request type, for the start-up burst and for the rest of the run apart."""
    entries = [line.split("\t") for line in timings.read_text(encoding="utf-8").splitlines() if line]
    if not entries:
        return
    first = min(float(e[1]) for e in entries)
    phases: dict[tuple[str, bool], list[float]] = {}
    for name, start, ms in entries:
        phases.setdefault((name, float(start) - first >= startup), []).append(float(ms))
    # Locust's table misses some of the requests that finish while the run stops (its
    # grace period, --stop-timeout); the locustfile's own record has every one, as the
    # database check does (their counts of acknowledged saves agree).
    print(
        f"\n{'request, by phase':32} {'requests':>9} {'p50 ms':>8} {'p95 ms':>8}   (every request, the stop included)"
    )
    for (name, steady), values in sorted(phases.items()):
        label = f"{name} ({'after' if steady else 'first'} {startup:.0f} s)"
        p50, p95 = np.percentile(values, [50, 95])
        print(f"{label:32} {len(values):>9} {p50:>8.0f} {p95:>8.0f}")


def build(users: int, rows: int):
    project = new_project("bench-load")
    annotators, tokens = make_annotators(project, users)
    identities = []
    for k, user in enumerate(annotators):
        clip = make_family_clip(project, rows, seed=k)
        assign(clip, [user])
        identities.append({"token": tokens[user.pk], "clip": clip.pk})
    return project, annotators, identities


def check_database(log_path: Path) -> dict:
    saves, conflicts = [], []
    for line in log_path.read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        (saves if entry["kind"] == "save" else conflicts).append(entry)
    lost = []
    # The audit trail keeps every version: each acknowledged (version, content) must be in it.
    by_revision: dict[int, dict[int, str]] = {}
    for rec in Revision.history.model.objects.filter(id__in={s["revision"] for s in saves}).values(
        "id", "version", "content"
    ):
        by_revision.setdefault(rec["id"], {})[rec["version"]] = rec["content"].get("tone_of_voice")
    for s in saves:
        if by_revision.get(s["revision"], {}).get(s["version"]) != s["tone"]:
            lost.append(s)
    latest = {}
    for s in saves:
        latest[s["revision"]] = max(latest.get(s["revision"], 0), s["version"])
    current = dict(Revision.objects.filter(pk__in=latest).values_list("pk", "version"))
    behind = [pk for pk, v in latest.items() if current.get(pk, 0) < v]
    return {
        "acknowledged saves": len(saves),
        "lost saves": len(lost) + len(behind),
        "deliberate conflicts": len(conflicts),
        "conflicts answered 409": sum(c["status"] == 409 for c in conflicts),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--users", type=int, default=50)
    parser.add_argument("--seconds", type=int, default=60)
    parser.add_argument("--rows", type=int, default=30, help="rows per clip")
    parser.add_argument("--workers", type=int, default=4, help="gunicorn workers")
    parser.add_argument("--conflict-rate", type=float, default=0.1)
    parser.add_argument(
        "--no-latency-target", action="store_true", help="judge failures and lost saves only (CI smoke run)"
    )
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args(argv)
    require_postgres()
    call_command("migrate", verbosity=0)
    t0 = time.monotonic()
    project, annotators, identities = build(args.users, args.rows)
    print(
        f"built {len(identities)} clips of {args.rows} rows for {args.users} annotators in {time.monotonic() - t0:.1f} "
        "s"
    )
    server = Gunicorn(workers=args.workers, worker_class="sync", threads=1)
    work = Path(tempfile.mkdtemp(prefix="bench-load-"))
    (work / "identities.json").write_text(json.dumps(identities), encoding="utf-8")
    log_path = work / "saves.jsonl"
    log_path.touch()
    try:
        server.wait_ready(identities[0]["token"])
        env = dict(
            os.environ,
            LOAD_IDENTITIES=str(work / "identities.json"),
            LOAD_LOG=str(log_path),
            LOAD_TIMINGS=str(work / "timings.tsv"),
            LOAD_CONFLICT_RATE=str(args.conflict_rate),
        )
        locust = [
            str(Path(sys.executable).with_name("locust")),
            "-f",
            str(ROOT / "bench" / "locustfile.py"),
            "--headless",
            "-u",
            str(args.users),
            "-r",
            str(args.users),
            "-t",
            f"{args.seconds}s",
            "--host",
            f"http://127.0.0.1:{server.port}",
            "--csv",
            str(work / "run"),
            "--only-summary",
            "--stop-timeout",
            "10",
            "--loglevel",
            "WARNING",
        ]
        subprocess.run(locust, env=env, cwd=work, timeout=args.seconds + 120, capture_output=True, text=True)
    finally:
        server.stop()
    rows = list(csv.DictReader(open(work / "run_stats.csv", encoding="utf-8")))
    print(f"\n{'request':32} {'requests':>9} {'failures':>9} {'p50 ms':>8} {'p95 ms':>8} {'req/s':>7}")
    save_p95 = None
    failures = 0
    for r in rows:
        print(
            f"{r['Name']:32} {r['Request Count']:>9} {r['Failure Count']:>9} {r['50%']:>8} {r['95%']:>8} "
            f"{float(r['Requests/s']):>7.1f}"
        )
        if r["Name"] == "save row":
            save_p95 = float(r["95%"])
        if r["Name"] != "Aggregated":
            failures += int(r["Failure Count"])
    print_phases(work / "timings.tsv", STARTUP_SECONDS)
    result = check_database(log_path)
    print()
    for key, value in result.items():
        print(f"{key:24} {value}")
    ok_latency = args.no_latency_target or (save_p95 is not None and save_p95 < SAVE_P95_TARGET_MS)
    print(
        f"\ntargets: unexpected failures {failures} (0), lost saves {result['lost saves']} (0), "
        f"conflicts all 409 {result['conflicts answered 409'] == result['deliberate conflicts']}, "
        f"save p95 {save_p95} ms (< {SAVE_P95_TARGET_MS}){' [not judged]' if args.no_latency_target else ''}"
    )
    if not args.keep:
        drop(project, annotators)
    ok = (
        failures == 0
        and result["lost saves"] == 0
        and result["acknowledged saves"] > 0
        and result["conflicts answered 409"] == result["deliberate conflicts"]
        and ok_latency
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
