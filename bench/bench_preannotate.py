"""Pre-annotation throughput: 191 synthetic clips, fake Gemini with 1 s latency, concurrency 8.

Builds the release-sized synthetic benchmark's clips (``annotation.synthetic``'s
pure builder) as *transcripts only* — Clip + one Cue per row, no rows, no
drafts — in a fresh project, starts the fake Gemini server in this process
(every answer takes ``--latency`` seconds), starts one real Celery worker with
``-c 8`` on the real Redis broker and PostgreSQL, pre-annotates every clip and
prints:

- wall time against the floor ``clips x latency / concurrency`` (191 x 1 s / 8),
  and the ratio (target: within 1.25x);
- the most requests the fake server saw in any window of the rate limit's
  length, against the configured limit (target: never above it);
- where the machine's CPU went during the run (Linux only): the worker, this
  process, PostgreSQL for the benchmark's database, and everything else. On a
  2-core machine the ratio depends on the last figure: read it before
  comparing runs.

With the default window (82 cues, sized from the output budget) the 3 longest
clips are asked in two windows each (194 requests), side by side, so each still
costs about one answer's time of its worker; ``--window-cues 60`` gives the
earlier 13 split clips (204 requests).

    DATABASE_URL=postgres://... CELERY_BROKER_URL=redis://... .venv/bin/python bench/bench_preannotate.py
    ... --limit 50 --window 10     # a limit that binds: 191 requests need at least 3 windows

The database must be migrated; the project is left in place for inspection.
Without PostgreSQL and Redis there is no worker to measure: tasks would run one
after another inside this process, so the benchmark explains that and stops.
"""

from __future__ import annotations

import argparse
import os
import resource
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TARGET_RATIO = 1.25


def _needs_services() -> str | None:
    if not os.environ.get("DATABASE_URL", "").startswith("postgres"):
        return "DATABASE_URL is not a PostgreSQL URL"
    if not os.environ.get("CELERY_BROKER_URL", "").startswith("redis"):
        return "CELERY_BROKER_URL is not a Redis URL"
    return None


def build_transcripts(project, clips: int, seed: int) -> int:
    """Clips with cues only (what ingest leaves), from the synthetic generator. Returns the cue count."""
    from annotation.synthetic import build_clips, store_transcripts

    built = build_clips(clips=clips, annotators=1, seed=seed, taxonomy_version=project.taxonomy_version)
    return store_transcripts(project, built)


def start_worker(env: dict, queue: str, concurrency: int, pool: str, log_path: Path) -> subprocess.Popen:
    from rescue_annot.celery import app

    name = f"bench-preannotate-{os.getpid()}"
    command = [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "tests.fakes.celery_app",
        "worker",
        "--loglevel=WARNING",
        f"--concurrency={concurrency}",
        f"--pool={pool}",
        "-Q",
        queue,
        "-n",
        f"{name}@%h",
    ]
    with open(log_path, "w") as log:  # the worker keeps its own descriptor
        proc = subprocess.Popen(
            command, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
    node = f"{name}@{socket.gethostname()}"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"worker exited with {proc.returncode}; see {log_path}")
        if app.control.ping(destination=[node], timeout=0.5):
            return proc
    os.killpg(proc.pid, signal.SIGKILL)
    raise SystemExit("worker did not answer a ping within 90 s")


def machine_busy() -> float | None:
    """CPU seconds the whole machine has been busy since boot, all cores together (Linux /proc/stat)."""
    try:
        fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]
    except OSError:
        return None
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(x) for x in fields)
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def database_cpu(name: str) -> dict[int, float]:
    """CPU seconds so far of each PostgreSQL backend serving database ``name`` on this machine, by pid."""
    found = {}
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if f" {name} " not in cmdline.read_bytes().decode(errors="replace"):
                continue
            fields = (cmdline.parent / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        found[int(cmdline.parent.name)] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return found


def tree_cpu(pid: int) -> float | None:
    """CPU seconds used so far by process ``pid`` and its descendants (Linux /proc)."""
    ticks, parents = {}, {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # the process ended meanwhile
            continue
        proc = int(stat.parent.name)
        parents[proc] = int(fields[1])
        ticks[proc] = int(fields[11]) + int(fields[12])  # utime + stime
    if pid not in ticks:
        return None
    family, grew = {pid}, True
    while grew:
        grew = False
        for proc, parent in parents.items():
            if parent in family and proc not in family:
                family.add(proc)
                grew = True
    return sum(ticks[p] for p in family) / os.sysconf("SC_CLK_TCK")


def main(argv=None) -> int:
    sys.path.insert(0, str(REPO))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clips", type=int, default=191)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--latency", type=float, default=1.0, help="seconds the fake server takes per answer")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--pool", default="prefork", choices=["prefork", "threads"], help="Celery worker pool")
    parser.add_argument(
        "--limit", type=int, default=600, help="requests allowed per rate window (default 600 per 60 s)"
    )
    parser.add_argument("--window", type=float, default=60.0, help="rate-limit window in seconds")
    parser.add_argument("--margin", type=float, default=1.0, help="safety margin added to the window")
    parser.add_argument(
        "--window-cues",
        type=int,
        default=None,
        help=(
            "cues per request (PREANNOTATE_WINDOW_CUES; default: the platform's, sized from the output budget: 82 cues)"
        ),
    )
    parser.add_argument("--dump", help="write the request arrival times (JSON) to this file")
    args = parser.parse_args(argv)

    missing = _needs_services()
    if missing:
        print(
            f"bench_preannotate needs PostgreSQL and Redis ({missing}).\n"
            "It measures pre-annotation on Celery worker processes sharing a database and a broker;\n"
            "without them tasks run eagerly, one after another, in this process, and there is no\n"
            "concurrency to measure. Set DATABASE_URL=postgres://... and CELERY_BROKER_URL=redis://...\n"
            "(a migrated database) and run it again. SKIPPED."
        )
        return 0

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "rescue_annot.settings")
    import django

    django.setup()
    from django.conf import settings
    from django.db import connection

    from annotation.audit import audit_source
    from annotation.models import Draft, Job, JobState, Row
    from annotation.preannotate.services import start_preannotation
    from annotation.services import create_project
    from tests.fakes.gemini_server import FakeGemini, forget_queue

    fake = FakeGemini(latency=args.latency).start()
    queue = f"bench-preannotate-{uuid.uuid4().hex[:8]}"
    settings.PREANNOTATE_QUEUE = queue
    settings.GEMINI_API_KEY = "bench-key"
    settings.GEMINI_BASE_URL = fake.url
    worker_env = {
        **os.environ,
        "GEMINI_API_KEY": "bench-key",
        "GEMINI_BASE_URL": fake.url,
        "GEMINI_RPM": str(args.limit),
        "PREANNOTATE_RATE_WINDOW_SECONDS": str(args.window),
        "PREANNOTATE_RATE_MARGIN_SECONDS": str(args.margin),
        "PREANNOTATE_RATE_KEY": f"bench:rate:{queue}",
    }
    if args.window_cues:
        worker_env["PREANNOTATE_WINDOW_CUES"] = str(args.window_cues)
    (REPO / "var").mkdir(exist_ok=True)
    log_path = REPO / "var" / "bench-preannotate-worker.log"

    slug = f"bench-preannotate-{uuid.uuid4().hex[:8]}"
    with audit_source("cli"):
        project = create_project(slug, name="pre-annotation throughput benchmark")
        cue_count = build_transcripts(project, args.clips, args.seed)

    worker = start_worker(worker_env, queue, args.concurrency, args.pool, log_path)
    try:
        database = connection.settings_dict["NAME"]
        busy_before, workers_before, own_before = machine_busy(), tree_cpu(worker.pid), time.process_time()
        db_before = database_cpu(database)
        started, started_at = time.perf_counter(), time.time()
        with audit_source("cli"):
            batch = start_preannotation(project)
        dispatched = time.perf_counter() - started
        last = -1
        while True:
            batch.refresh_from_db()
            if batch.progress_done != last:
                last = batch.progress_done
                print(f"\r  {batch.progress_done}/{batch.progress_total} clips", end="", flush=True)
            if batch.state in (JobState.SUCCEEDED, JobState.FAILED):
                break
            time.sleep(0.1)
        wall = time.perf_counter() - started
        busy_after, workers_after, own_after = machine_busy(), tree_cpu(worker.pid), time.process_time()
        db_run = sum(cpu - db_before.get(pid, 0.0) for pid, cpu in database_cpu(database).items())
        print()
    finally:
        os.killpg(worker.pid, signal.SIGTERM)
        try:
            worker.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(worker.pid, signal.SIGKILL)
        fake.stop()

        forget_queue(os.environ["CELERY_BROKER_URL"], queue)

    if args.dump:
        import json

        Path(args.dump).write_text(
            json.dumps({"started": started_at, "arrivals": [r.at for r in fake.generate_requests]})
        )
    jobs = Job.objects.filter(project=project, kind="preannotate", params__batch=batch.pk)
    failed = jobs.filter(state=JobState.FAILED).count()
    requests = len(fake.generate_requests)
    floor = args.clips * args.latency / args.concurrency
    request_floor = requests * args.latency / args.concurrency
    worker_cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
    own_cpu = resource.getrusage(resource.RUSAGE_SELF)
    observed = fake.max_in_window(args.window)
    per_second = fake.max_in_window(1.0)
    rows = Row.objects.filter(clip__project=project).count()
    drafts = Draft.objects.filter(row__clip__project=project).count()
    rate_floor = 0.0
    if requests > args.limit:  # the limit binds: the last request waits for earlier windows to pass
        rate_floor = ((requests - 1) // args.limit) * (args.window + args.margin) + args.latency

    governing = max(floor, rate_floor) or float("inf")  # the larger floor is the one that binds
    ok_time = wall <= TARGET_RATIO * governing
    ok_rate = observed <= args.limit
    print(
        f"database            {connection.vendor} ({connection.settings_dict['NAME']}), broker "
        f"{os.environ['CELERY_BROKER_URL']}"
    )
    print(
        f"project             {slug}: {args.clips} clips, {cue_count} cues; worker -c {args.concurrency} "
        f"--pool={args.pool} on queue {queue}"
    )
    print(
        f"fake Gemini         {args.latency:.2f} s per answer; {requests} requests ({requests - args.clips} extra for "
        "long clips split in windows)"
    )
    print(
        f"result              {args.clips - failed} clips pre-annotated, {failed} failed; {rows} rows, {drafts} drafts"
    )
    print(
        f"dispatch            {dispatched:6.2f} s  (start_preannotation returns; clips are sent chunk by chunk from "
        "the start)"
    )
    print(f"wall time           {wall:6.2f} s")
    print(
        f"floor               {floor:6.2f} s  ({args.clips} x {args.latency:g} s / {args.concurrency}); per request "
        f"{request_floor:.2f} s"
    )
    if rate_floor:
        print(
            f"rate floor          {rate_floor:6.2f} s  ({requests} requests at {args.limit} per {args.window:g} s + "
            f"{args.margin:g} s margin)"
        )
    print(
        f"ratio               {wall / governing:6.3f}x the {'rate floor' if rate_floor > floor else 'floor'}"
        f"  (target <= {TARGET_RATIO}x: {'met' if ok_time else 'MISSED'})"
    )
    cpu = worker_cpu.ru_utime + worker_cpu.ru_stime
    print(
        f"cpu                 workers {cpu:.1f} s ({cpu / args.clips * 1000:.0f} ms per clip, start-up included); "
        f"this process (fake server, dispatch) {own_cpu.ru_utime + own_cpu.ru_stime:.1f} s; "
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"
    )
    if None not in (busy_before, busy_after, workers_before, workers_after):
        busy, workers_run, own_run = busy_after - busy_before, workers_after - workers_before, own_after - own_before
        others = max(0.0, busy - workers_run - own_run - db_run)
        print(
            f"machine cpu         {busy:.1f} of {wall * os.cpu_count():.1f} core-s busy during the run: workers "
            f"{workers_run:.1f}, "
            f"this process {own_run:.1f}, PostgreSQL for {database} {db_run:.1f}, everything else {others:.1f} "
            "(Redis, the kernel, other work on the machine)"
        )
    print(
        f"max request rate    {observed} in any {args.window:g} s window vs limit {args.limit}: "
        f"{'never exceeded' if ok_rate else 'EXCEEDED'}; peak {per_second} requests in any 1 s"
    )
    return 0 if ok_time and ok_rate and not failed else 1


if __name__ == "__main__":
    sys.exit(main())
