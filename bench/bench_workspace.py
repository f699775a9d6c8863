"""Annotator workspace: clip page queries and render time, row-save latency through gunicorn.

Issue 4, "Performance". On PostgreSQL only (DATABASE_URL; the database must be
migrated). Creates a throw-away project (unique slug), family clips of 15, 50
and 150 rows and its own annotators with API tokens; deletes them at the end
(``--keep`` leaves them for inspection).

1. Clip page: SQL queries of GET /work/clips/<id>/ and of
   GET /api/v1/clips/<id>/workspace/ for an assigned annotator at each size
   (django.test.Client + CaptureQueriesContext), and the median server-side
   time of ~20 renders of the 150-row page.
2. Row save: PUT /api/v1/revisions/<id>/ (the whole six-dimension document,
   validated, audited, optimistic version) through gunicorn on loopback,
   500 sequential saves and 500 saves from 20 concurrent clients (each with its
   own annotator and rows, so no 409s); then the same two runs against a floor
   endpoint (bench/floor_urls.py: same auth and body, one UPDATE). p50/p95/max, throughput, CPU time per
   request of the gunicorn workers and of PostgreSQL, how often a backend waits
   on a lock, and the real/floor p95 ratio under 20 clients. Each run is made in
   --rounds slices alternating the targets, so that a change in the machine's
   background load does not favour one of them.

Targets: page queries constant in the number of rows and under 150 ms;
sequential save p95 under 25 ms; under 20 clients, save p95 within 2x of the
floor's. If a target is missed (or with --profile), the save path is profiled
in-process: the statements of one save, wall vs CPU time, and the CPU time of
each part (cProfile). Exit status 0 when every target is met, else 1.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/NAME .venv/bin/python manage.py migrate
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/NAME .venv/bin/python bench/bench_workspace.py
"""

from __future__ import annotations

import argparse
import http.client
import json
import math
import os
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from importlib import import_module
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SETTINGS = "bench.bench_settings"

PAGE_SIZES = (15, 50, 150)
PAGE_TARGET_MS = 150.0
SEQ_P95_TARGET_MS = 25.0
FLOOR_RATIO_TARGET = 2.0
DOCCANO = "doccano, one label changed, same machine: p95 12 ms sequential; p95 ~200 ms at 20 clients, 137 req/s"


# Set when the run is being stopped, so client threads stop sending instead of failing loudly.
STOPPING = threading.Event()


class TimeLimit(Exception):
    """The whole run took longer than --time-limit."""


# --- helpers -------------------------------------------------------------------------------


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100) of a non-empty list."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]


def require_postgres() -> None:
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith(("postgres://", "postgresql://", "pgsql://")):
        sys.exit(
            "bench_workspace.py measures the PostgreSQL deployment and refuses to run on SQLite "
            f"(DATABASE_URL is {url or 'not set, i.e. the SQLite default'}).\n"
            "Run: DATABASE_URL=postgres://postgres@127.0.0.1:5432/NAME .venv/bin/python bench/bench_workspace.py "
            "(after manage.py migrate on that database)."
        )


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --- 1. clip page ----------------------------------------------------------------------------


def bench_page(clips: dict, user, renders: int) -> dict:
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    client = Client()
    client.force_login(user)
    out = {"queries": {}, "bytes": {}}
    for rows, clip in clips.items():
        counts = []
        for url in (f"/work/clips/{clip.pk}/", f"/api/v1/clips/{clip.pk}/workspace/"):
            client.get(url)  # warm caches (taxonomy, templates) outside the count
            with CaptureQueriesContext(connection) as ctx:
                response = client.get(url)
            assert response.status_code == 200, (url, response.status_code)
            counts.append(len(ctx.captured_queries))
            out["bytes"][(rows, url.startswith("/api"))] = len(response.content)
        out["queries"][rows] = counts
    big = clips[max(clips)]
    for key, url in (("page_ms", f"/work/clips/{big.pk}/"), ("api_ms", f"/api/v1/clips/{big.pk}/workspace/")):
        times = []
        for _ in range(renders):
            t0 = time.perf_counter()
            response = client.get(url)
            times.append((time.perf_counter() - t0) * 1000)
            assert response.status_code == 200
        out[key] = (statistics.median(times), max(times))
    with CaptureQueriesContext(connection) as ctx:
        client.get(f"/work/clips/{big.pk}/")
    out["page_sql"] = [q["sql"] for q in ctx.captured_queries]
    return out


# --- 2. saves through gunicorn ----------------------------------------------------------------


class Gunicorn:
    """A gunicorn on 127.0.0.1 in its own process group, stopped by stop() (idempotent)."""

    def __init__(self, workers: int, worker_class: str, threads: int):
        self.port = free_port()
        self.cmd = [
            str(Path(sys.executable).with_name("gunicorn")),
            "rescue_annot.wsgi:application",
            "--preload",  # as deployed (Dockerfile): workers forked with the application loaded
            "--bind",
            f"127.0.0.1:{self.port}",
            "--workers",
            str(workers),
            "--worker-class",
            worker_class,
            "--threads",
            str(threads),
            "--timeout",
            "60",
            "--log-level",
            "warning",
        ]
        env = dict(os.environ, DJANGO_SETTINGS_MODULE=SETTINGS, LOG_LEVEL="WARNING")
        self.proc = subprocess.Popen(self.cmd, cwd=ROOT, env=env, start_new_session=True)

    def wait_ready(self, token: str, timeout: float = 120.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"gunicorn exited with {self.proc.returncode}")
            try:
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=5)
                conn.request("GET", "/api/v1/assignments/", headers={"Authorization": f"Token {token}"})
                if conn.getresponse().status == 200:
                    conn.close()
                    return
            except OSError:
                pass
            time.sleep(0.2)
        raise RuntimeError(f"gunicorn did not answer within {timeout:.0f} s")

    def stop(self) -> None:
        if self.proc.poll() is not None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)  # our own process group: gunicorn and its workers
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=5)
        except ProcessLookupError:
            pass


# The endpoints a client can save through.
TARGETS = {
    "real": "/api/v1/revisions/{id}/",  # the app's save
    "floor": "/bench/floor/revisions/{id}/",  # bench/floor_urls.py
}


def proc_cpu_ms(pid: int) -> float | None:
    """User + system CPU time a process has used so far (ms), from /proc; None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()  # fields[0] is the state (field 3)
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def children(pid: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                        out.append(int(entry))
            except (OSError, IndexError, ValueError):
                continue
    return out


LABELS = {"real": "save", "floor": "floor"}


class ServerMonitor:
    """During one run: how often a backend of this database waits on a lock (pg_stat_activity sampled
    every 10 ms), and the CPU time used by the gunicorn workers and by this database's PostgreSQL
    backends (from /proc). Only this benchmark uses its database, so its backends are ours."""

    def __init__(self, master_pid: int, interval: float = 0.01):
        import psycopg

        self.master_pid = master_pid
        self.conn = psycopg.connect(os.environ["DATABASE_URL"], autocommit=True)
        self.interval, self.samples, self.waiting = interval, 0, []
        self.events: dict = {}
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self) -> None:
        sql = (
            "SELECT wait_event FROM pg_stat_activity WHERE datname = current_database() "
            "AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()"
        )
        while not self.stopped.is_set():
            rows = self.conn.execute(sql).fetchall()
            self.samples += 1
            self.waiting.append(len(rows))
            for (event,) in rows:
                self.events[event] = self.events.get(event, 0) + 1
            time.sleep(self.interval)

    def cpu(self) -> dict:
        backends = self.conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
            "AND backend_type = 'client backend' AND pid <> pg_backend_pid()"
        ).fetchall()
        snapshot = {"workers": {}, "postgres": {}}
        for kind, pids in (("workers", children(self.master_pid)), ("postgres", [pid for (pid,) in backends])):
            for pid in pids:
                used = proc_cpu_ms(pid)
                if used is not None:
                    snapshot[kind][pid] = used
        return snapshot

    def __enter__(self):
        self.cpu_start = self.cpu()
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stopped.set()
        self.thread.join(timeout=5)
        end = self.cpu()
        # A process that appeared during the run counts in full; one that ended is lost (rare:
        # connections live as long as the workers, see bench_settings.CONN_MAX_AGE).
        self.cpu_used = {
            kind: sum(used - self.cpu_start[kind].get(pid, 0.0) for pid, used in end[kind].items()) for kind in end
        }
        self.conn.close()

    def counts(self) -> dict:
        return {
            "samples": self.samples,
            "busy": sum(1 for w in self.waiting if w),
            "waiting": sum(self.waiting),
            "events": dict(self.events),
            "cpu_workers": self.cpu_used["workers"],
            "cpu_postgres": self.cpu_used["postgres"],
        }


def lock_summary(counts: dict) -> str:
    if not counts.get("samples"):
        return "-"
    busy = counts["busy"] / counts["samples"] * 100
    events = ",".join(sorted(counts["events"], key=counts["events"].get, reverse=True)[:2])
    return f"{busy:.0f}% (mean {counts['waiting'] / counts['samples']:.1f} waiting{', ' + events if events else ''})"


@dataclass
class Client:
    """One simulated annotator: a keep-alive connection, a token and their own rows."""

    port: int
    token: str
    rows: list[dict]  # {"id", "version", "content"}, updated after each real save
    sent: int = 0

    def __post_init__(self):
        self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)

    def put(self, path: str, body: bytes) -> tuple[int, bytes]:
        headers = {
            "Authorization": f"Token {self.token}",
            "Content-Type": "application/json",
            "Connection": "keep-alive",
        }
        try:
            self.conn.request("PUT", path, body=body, headers=headers)
            response = self.conn.getresponse()
        except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
            # The server closed an idle keep-alive connection: one retry on a fresh one.
            self.conn.close()
            self.conn.request("PUT", path, body=body, headers=headers)
            response = self.conn.getresponse()
        data = response.read()
        if response.will_close:
            self.conn.close()  # http.client reconnects on the next request
        return response.status, data

    def next_save(self, target: str) -> tuple[str, bytes, dict]:
        row = self.rows[self.sent % len(self.rows)]
        self.sent += 1
        # The whole document, with one field really changed so each save is an edit.
        content = dict(row["content"])
        content["tone_of_voice"] = f"{row['content']['tone_of_voice'].split(' #')[0]} #{self.sent}"
        body = json.dumps({"content": content, "version": row["version"]}).encode()
        return TARGETS[target].format(id=row["id"]), body, row

    def one(self, target: str) -> tuple[float, int, bytes]:
        path, body, row = self.next_save(target)
        t0 = time.perf_counter()
        status, data = self.put(path, body)
        elapsed = (time.perf_counter() - t0) * 1000
        if target != "floor":  # every save but the floor bumps the version
            if status == 200:
                saved = json.loads(data)
                row["version"], row["content"] = saved["version"], saved["content"]
            elif status == 409:
                row["version"] = json.loads(data)["current"]["version"]
        return elapsed, status, data


@dataclass
class Run:
    scenario: str
    target: str
    clients: int
    times: list[float]
    wall: float
    errors: dict
    first_error: bytes = b""
    locks: dict = None

    def merge(self, other: Run) -> Run:
        """The two runs as one (rounds of the same scenario): all latencies, summed wall time."""
        errors = dict(self.errors)
        for k, v in other.errors.items():
            errors[k] = errors.get(k, 0) + v
        locks = {
            k: self.locks[k] + other.locks[k] for k in ("samples", "busy", "waiting", "cpu_workers", "cpu_postgres")
        }
        locks["events"] = {
            e: self.locks["events"].get(e, 0) + other.locks["events"].get(e, 0)
            for e in {*self.locks["events"], *other.locks["events"]}
        }
        return Run(
            self.scenario,
            self.target,
            self.clients,
            self.times + other.times,
            self.wall + other.wall,
            errors,
            self.first_error or other.first_error,
            locks,
        )

    @property
    def n(self) -> int:
        return len(self.times)

    def row(self) -> str:
        p50, p95, mx = percentile(self.times, 50), percentile(self.times, 95), max(self.times)
        errors = ", ".join(f"{k}x{v}" for k, v in sorted(self.errors.items())) or "-"
        cpu_py, cpu_pg = self.locks["cpu_workers"] / self.n, self.locks["cpu_postgres"] / self.n
        return (
            f"{self.scenario:<28} {self.n:>4} {p50:>8.1f} {p95:>8.1f} {mx:>8.1f} {self.n / self.wall:>8.1f}  "
            f"{cpu_py:>6.1f} {cpu_pg:>6.1f}  {errors:<7} {lock_summary(self.locks)}"
        )


def run_clients(clients: list[Client], target: str, total: int, scenario: str, master_pid: int) -> Run:
    """``total`` saves split evenly over the clients, all started together."""
    per_client = [total // len(clients) + (1 if i < total % len(clients) else 0) for i in range(len(clients))]
    results: list[list] = [[] for _ in clients]
    barrier = threading.Barrier(len(clients) + 1)

    def work(i: int) -> None:
        barrier.wait()
        for _ in range(per_client[i]):
            if STOPPING.is_set():
                return
            try:
                results[i].append(clients[i].one(target))
            except (OSError, http.client.HTTPException):
                if STOPPING.is_set():  # the server is going away: leave quietly
                    return
                raise

    threads = [threading.Thread(target=work, args=(i,), daemon=True) for i in range(len(clients))]
    for t in threads:
        t.start()
    with ServerMonitor(master_pid) as locks:
        barrier.wait()
        t0 = time.perf_counter()
        for t in threads:
            t.join()
        wall = time.perf_counter() - t0
    flat = [r for rs in results for r in rs]
    errors: dict = {}
    first_error = b""
    for _, status, data in flat:
        if status != 200:
            errors[status] = errors.get(status, 0) + 1
            first_error = first_error or data[:400]
    return Run(scenario, target, len(clients), [r[0] for r in flat], wall, errors, first_error, locks.counts())


def bench_saves(data, seq_user, crowd, saves: int, args) -> list[Run]:
    from bench.workspace_data import my_revisions

    clip = data.clips[max(data.clips)]
    server = Gunicorn(args.workers, args.worker_class, args.threads)
    try:
        server.wait_ready(data.tokens[seq_user.pk])
        seq = Client(server.port, data.tokens[seq_user.pk], my_revisions(clip, seq_user))
        many = [Client(server.port, data.tokens[u.pk], my_revisions(clip, u)) for u in crowd]
        targets = ("real", "floor")
        # Warm every worker (imports, DB connection, URL resolver, taxonomy cache) outside the figures.
        for target in targets:
            run_clients(many, target, 4 * len(many), "warm-up", server.proc.pid)
            run_clients([seq], target, 20, "warm-up", server.proc.pid)
        # With --rounds N, each run is done in N alternating slices (real, floor,
        # real, ...), so that a change in the machine's background load hits every target alike.
        runs: dict[str, Run] = {}
        for r in range(args.rounds):
            share = saves // args.rounds + (1 if r < saves % args.rounds else 0)
            for target in targets:
                # Each slice starts its cycle at the client's first row, so a concurrent client
                # saves each of its rows at most once per slice (versions are tracked throughout).
                for c in (seq, *many):
                    c.sent = 0
                label = LABELS[target]
                for clients, scenario in (([seq], f"{label}, sequential"), (many, f"{label}, {len(many)} clients")):
                    run = run_clients(clients, target, share, scenario, server.proc.pid)
                    runs[scenario] = runs[scenario].merge(run) if scenario in runs else run
        order = [f"{label}, {kind}" for label in LABELS.values() for kind in ("sequential", f"{len(many)} clients")]
        return [runs[name] for name in order if name in runs]
    finally:
        STOPPING.set()
        server.stop()


# --- profile of the save path ------------------------------------------------------------------

# (label, path suffix, function) of the parts of a save whose cumulative time the profile reports.
SAVE_PARTS = (
    ("DRF token authentication", "rest_framework/authentication.py", "authenticate"),
    ("view: SaveRevisionSerializer.is_valid", "rest_framework/serializers.py", "is_valid"),
    ("services.save_revision (whole)", "annotation/workspace/services.py", "save_revision"),
    ("view: load_for_save (one SELECT for the checks)", "annotation/workspace/services.py", "load_for_save"),
    ("  validate_content (whole)", "annotation/workspace/services.py", "validate_content"),
    ("    schema.check_row (pydantic + rules)", "annotation/schema.py", "check_row"),
    ("  _write (UPDATE + history, one statement)", "annotation/workspace/services.py", "_write"),
    ("the ORM compiling SELECTs (SQLCompiler.as_sql)", "django/db/models/sql/compiler.py", "as_sql"),
    ("view: RevisionSerializer(...).data", "rest_framework/serializers.py", "data"),
    ("response JSON rendering", "rest_framework/response.py", "rendered_content"),
)


class QueryTimer:
    """Django execute wrapper: every statement's SQL and wall time (ms), at microsecond resolution."""

    def __init__(self):
        self.calls: list[tuple[str, float]] = []

    def __call__(self, execute, sql, params, many, context):
        t0 = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            self.calls.append((sql, (time.perf_counter() - t0) * 1000))


def profile_save(data, user, n: int) -> None:
    """Where a save's time goes, in-process (django.test.Client, token auth, same database)."""
    import cProfile
    import pstats

    from django.db import connection
    from django.test import Client as DjangoClient
    from django.test.utils import CaptureQueriesContext

    from annotation.models import Revision
    from annotation.workspace import services
    from bench.workspace_data import my_revisions

    clip = data.clips[max(data.clips)]
    revisions = my_revisions(clip, user)
    client = DjangoClient(HTTP_AUTHORIZATION=f"Token {data.tokens[user.pk]}")
    counter = {"i": 0}
    targets = ("real", "floor")

    def request(target: str):
        counter["i"] += 1
        r = revisions[counter["i"] % len(revisions)]
        body = {"content": {**r["content"], "tone_of_voice": f"profiled {counter['i']}"}, "version": r["version"]}
        response = client.put(TARGETS[target].format(id=r["id"]), body, content_type="application/json")
        assert response.status_code == 200, (target, response.status_code, response.content[:300])
        if target != "floor":
            saved = response.json()
            r["version"], r["content"] = saved["version"], saved["content"]
        return response, body

    print("\n--- profile of the save path (in-process: django.test.Client with the token, same database) ---")
    for _ in range(20):
        for target in targets:
            request(target)  # warm

    # a) the statements of one request, in order
    for target in targets:
        with CaptureQueriesContext(connection) as ctx:
            response, body = request(target)
        print(
            f"{LABELS[target]}: {len(ctx.captured_queries)} statements, response {len(response.content)} bytes "
            "(plus the health-check SELECT 1 Django sends once per request with CONN_HEALTH_CHECKS)"
        )
        for i, q in enumerate(ctx.captured_queries, 1):
            sql = " ".join(q["sql"].split())
            if sql.startswith("SELECT") and " FOR UPDATE" in sql:
                sql = sql[:90] + " … " + sql[sql.index(" FROM ") :][:40] + " … " + sql[sql.rindex(" FOR UPDATE") :]
            print(f"  {i:>2}. {sql[:170]}{'…' if len(sql) > 170 else ''}")
    print(f"request body {len(json.dumps(body))} bytes")

    # b) wall vs Python CPU per request, and the mean wall time of each statement
    print(f"\nper request, mean of {n} (wall = Python CPU + waiting on PostgreSQL incl. BEGIN/COMMIT/health check):")
    for target in targets:
        timer = QueryTimer()
        wall0, cpu0 = time.perf_counter(), time.thread_time()
        with connection.execute_wrapper(timer):
            for _ in range(n):
                request(target)
        wall, cpu = (time.perf_counter() - wall0) * 1000 / n, (time.thread_time() - cpu0) * 1000 / n
        per_request = len(timer.calls) / n
        sql_ms = sum(t for _, t in timer.calls) / n
        print(
            f"  {LABELS[target]:<13}: wall {wall:6.2f} ms, Python CPU {cpu:6.2f} ms, waiting {wall - cpu:6.2f} ms; "
            f"{per_request:.0f} statements through execute() taking {sql_ms:.2f} ms"
        )
        if target == "real":
            k = round(per_request)
            for j in range(k):
                times = [timer.calls[i * k + j][1] for i in range(n)]
                sql = " ".join(timer.calls[j][0].split())
                print(f"      {statistics.mean(times):6.3f} ms  {sql[:100]}")

    # c) the service alone and validation alone
    objs = list(Revision.objects.filter(pk__in=[r["id"] for r in revisions]).select_related("row__clip__project"))
    t0 = time.perf_counter()
    for i in range(n):
        r = revisions[i % len(revisions)]
        result = services.save_revision(r["id"], user, {**r["content"], "tone_of_voice": f"service {i}"}, r["version"])
        r["version"], r["content"] = result.revision.version, result.revision.content
    service_ms = (time.perf_counter() - t0) * 1000 / n
    ctx_obj = services.clip_context(clip)
    t0 = time.perf_counter()
    for i in range(n):
        rv = objs[i % len(objs)]
        content = services.mirror_relation(
            {**rv.content, "tone_of_voice": "x"}, rv.row.primary_speaker, rv.layout or {}
        )
        services.validate_content(rv.row, content, ctx_obj)
    validate_ms = (time.perf_counter() - t0) * 1000 / n
    print(
        f"\nservices.save_revision called directly: {service_ms:.2f} ms per save (wall); "
        f"mirror_relation + validate_content alone, clip context given: {validate_ms:.3f} ms"
    )

    # d) cProfile on CPU time (thread_time), so waiting on PostgreSQL is left out
    def cpu_profile(target: str) -> tuple[dict, float]:
        profiler = cProfile.Profile(time.thread_time)
        profiler.enable()
        for _ in range(n):
            request(target)
        profiler.disable()
        stats = pstats.Stats(profiler).stats
        return stats, max(v[3] for v in stats.values())

    def part(stats: dict, suffix: str, func: str) -> float:
        # max, not sum: same-named methods in one module nest (Serializer.data calls BaseSerializer.data)
        return max(
            (v[3] for (path, _, name), v in stats.items() if name == func and path.endswith(suffix)), default=0.0
        )

    profiles = {target: cpu_profile(target) for target in targets}
    header = "".join(f"{LABELS[t]:>14}" for t in targets)
    totals = "".join(f"{total * 1000 / n:>14.2f}" for _, total in profiles.values())
    print(
        f"\nPython CPU per request by part (ms; cProfile on thread CPU time over {n} requests each, profiler overhead "
        "included)"
    )
    print(f"  {'':<52}{header}")
    print(f"  {'whole request':<52}{totals}")
    for label, suffix, func in SAVE_PARTS:
        cells = "".join(f"{part(stats, suffix, func) * 1000 / n:>14.2f}" for stats, _ in profiles.values())
        print(f"  {label:<52}{cells}")


# --- main --------------------------------------------------------------------------------------


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--saves", type=int, default=500, help="saves per run (default 500)")
    parser.add_argument("--clients", type=int, default=20, help="concurrent clients (default 20)")
    parser.add_argument("--renders", type=int, default=20, help="renders timed for the 150-row page (default 20)")
    parser.add_argument("--workers", type=int, default=4, help="gunicorn workers (default 4)")
    parser.add_argument("--worker-class", default="sync", help="gunicorn worker class (default sync)")
    parser.add_argument("--threads", type=int, default=1, help="threads per gunicorn worker (gthread only)")
    parser.add_argument(
        "--rounds",
        type=int,
        default=5,
        help="make each run in N slices, alternating the targets, so that all see the same background load (default 5)",
    )
    parser.add_argument("--profile", action="store_true", help="profile the save path even if every target is met")
    parser.add_argument("--profile-saves", type=int, default=200)
    parser.add_argument("--keep", action="store_true", help="keep the bench project and users")
    parser.add_argument("--time-limit", type=int, default=900, help="abort after this many seconds (default 900)")
    args = parser.parse_args(argv)

    require_postgres()
    sys.path.insert(0, str(ROOT))
    os.environ["DJANGO_SETTINGS_MODULE"] = SETTINGS
    import django

    django.setup()
    from django.db import connection

    from bench import workspace_data as wd

    if connection.vendor != "postgresql":
        sys.exit(f"bench_workspace.py needs PostgreSQL; the configured database is {connection.vendor}.")
    from django.db.migrations.executor import MigrationExecutor

    executor = MigrationExecutor(connection)
    if executor.migration_plan(executor.loader.graph.leaf_nodes()):
        sys.exit(
            f"database {connection.settings_dict['NAME']} is not fully migrated: run manage.py migrate on it first."
        )
    try:  # fail before creating anything if the project's URLs do not import
        import_module(SETTINGS.rsplit(".", 1)[0] + ".floor_urls")
    except Exception as exc:  # noqa: BLE001 - any import error stops the run the same way
        sys.exit(f"the project's URL configuration does not import: {type(exc).__name__}: {exc}")

    def on_alarm(*_):
        raise TimeLimit(f"stopped after --time-limit {args.time_limit} s")

    def on_term(*_):
        raise KeyboardInterrupt

    signal.signal(signal.SIGALRM, on_alarm)
    signal.signal(signal.SIGTERM, on_term)
    # A shell without job control starts background jobs with SIGINT ignored; Ctrl-C must still stop us.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.alarm(args.time_limit)

    started = time.perf_counter()
    project = wd.new_project()
    data = wd.BenchData(project)
    try:
        data.users, data.tokens = wd.make_annotators(project, args.clients + 1)
        page_user, crowd = data.users[0], data.users[1:]
        for rows in PAGE_SIZES:
            data.clips[rows] = wd.make_family_clip(project, rows)
            wd.assign(data.clips[rows], [page_user])
            wd.add_some_comments(data.clips[rows], page_user)
        wd.assign(data.clips[max(PAGE_SIZES)], crowd)
        setup = time.perf_counter() - started

        print(
            f"machine         {os.cpu_count()} CPUs, load average {load()} at the start (other processes skew the "
            "figures)"
        )
        print(
            f"database        postgresql ({connection.settings_dict['NAME']}), project {project.slug}, setup "
            f"{setup:.1f} s"
        )
        print(
            f"clips           family, {len(data.clips[15].participants)} participants, rows "
            f"{', '.join(map(str, PAGE_SIZES))}; "
            f"{len(data.users)} annotators ({args.clients} for the concurrent run), DRF token auth"
        )

        # 1. the clip page
        page = bench_page(data.clips, page_user, args.renders)
        print("\n1. Clip page for an assigned annotator (django.test.Client in-process, DEBUG off)")
        print(f"   {'rows':>5}  {'GET /work/clips/<id>/':>24}  {'GET /api/v1/clips/<id>/workspace/':>36}")
        for rows, (page_q, api_q) in page["queries"].items():
            kb_page, kb_api = page["bytes"][(rows, False)] / 1024, page["bytes"][(rows, True)] / 1024
            print(f"   {rows:>5}  {page_q:>11} queries {kb_page:>5.0f} kB  {api_q:>23} queries {kb_api:>5.0f} kB")
        counts = list(page["queries"].values())
        constant = all(c == counts[0] for c in counts)
        page_ms, page_max = page["page_ms"]
        api_ms, api_max = page["api_ms"]
        print(f"   queries grow with rows: {'no' if constant else 'YES'}")
        print(
            f"   150-row page, median of {args.renders} renders: {page_ms:.1f} ms (max {page_max:.1f}); "
            f"workspace API: {api_ms:.1f} ms (max {api_max:.1f}); target under {PAGE_TARGET_MS:.0f} ms"
        )
        print("   queries of the 150-row page: " + " | ".join(" ".join(q.split())[:60] for q in page["page_sql"]))

        # 2. saves through gunicorn
        print(
            f"\n2. Row save through gunicorn on 127.0.0.1: {args.workers} {args.worker_class} workers"
            + (f" x {args.threads} threads" if args.worker_class == "gthread" else "")
        )
        print(
            "   why: a save is short, CPU-bound Python plus a few DB round trips, so sync workers (one request per "
            "process,\n"
            "   no GIL sharing) are gunicorn's recommended fit; 4 = 2 per core on this 2-core machine, so one worker "
            "computes\n"
            "   while another waits on PostgreSQL. Sync workers close the connection after each response (no "
            "keep-alive);\n"
            "   the clients ask for keep-alive and reconnect on loopback when told to close. Client and server share "
            "the machine."
        )
        runs = bench_saves(data, page_user, crowd, args.saves, args)
        print(f"   load average after the runs: {load()}")
        print(
            f"\n   {'':<28} {'':>4} {'':>8} {'':>8} {'':>8} {'':>8}  {'CPU ms/request':<13}\n"
            f"   {'scenario':<28} {'n':>4} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8} {'req/s':>8}  {'python':>6} "
            f"{'pg':>6}  "
            f"{'non-200':<7} lock waits (share of 10 ms samples)"
        )
        for run in runs:
            print("   " + run.row())
        by = {r.scenario: r for r in runs}
        p95 = {name: percentile(run.times, 95) for name, run in by.items()}
        crowd_name = f"{len(crowd)} clients"
        seq_p95 = p95["save, sequential"]
        ratio = p95[f"save, {crowd_name}"] / p95[f"floor, {crowd_name}"]
        print(
            f"   real/floor p95: {ratio:.2f} under {crowd_name} (target within {FLOOR_RATIO_TARGET:.0f}x), "
            f"{seq_p95 / p95['floor, sequential']:.2f} sequential"
        )
        print(f"   reference: {DOCCANO}")
        for run in runs:
            if run.errors:
                print(f"   first non-200 in '{run.scenario}': {run.first_error[:300]!r}")

        ok_queries = constant
        ok_page = page_ms < PAGE_TARGET_MS
        ok_seq = seq_p95 < SEQ_P95_TARGET_MS
        ok_ratio = ratio <= FLOOR_RATIO_TARGET
        ok_errors = not any(r.errors for r in runs)
        print("\nTargets")
        print(
            f"   page queries constant in rows   {'met' if ok_queries else 'MISSED'}  "
            f"({', '.join(f'{r}: {q[0]}/{q[1]}' for r, q in page['queries'].items())})"
        )
        print(f"   150-row page under 150 ms       {'met' if ok_page else 'MISSED'}  ({page_ms:.1f} ms)")
        print(f"   sequential save p95 under 25 ms {'met' if ok_seq else 'MISSED'}  ({seq_p95:.1f} ms)")
        print(f"   20-client p95 within 2x floor   {'met' if ok_ratio else 'MISSED'}  ({ratio:.2f}x)")
        print(f"   every save answered 200         {'yes' if ok_errors else 'NO'}")
        all_ok = ok_queries and ok_page and ok_seq and ok_ratio and ok_errors
        if args.profile or not all_ok:
            profile_save(data, page_user, args.profile_saves)
        print(f"\ntotal {time.perf_counter() - started:.0f} s")
        return 0 if all_ok else 1
    except (KeyboardInterrupt, TimeLimit) as exc:
        print(
            f"\nstopped ({str(exc) or 'interrupted'}); gunicorn is stopped and the bench data removed", file=sys.stderr
        )
        return 130
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # let the clean-up finish
        if not args.keep:
            wd.drop(project, data.users)
        else:
            print(f"kept project {project.slug} and its users")


if __name__ == "__main__":
    sys.exit(main())
