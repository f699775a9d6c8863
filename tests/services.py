"""Private service processes for the fault tests: a Redis, a PostgreSQL cluster, a
gunicorn and a Celery worker of the test's own, on free loopback ports, that the
test may kill and start again at will.

Never the machine's shared Redis (6379) or PostgreSQL (5432): other tests, and
people, use those. Each process runs in its own process group and is stopped
by the object that started it (``stop()``/``kill()``/``destroy()`` are safe to
call twice), from the fixtures' teardown.

No pytest and no Django at import time: gunicorn imports ``faults_wsgi`` from here.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _pg_tool(name: str) -> str:
    """A PostgreSQL server tool: on PATH (/usr/local/bin here), else the newest Debian build."""
    found = shutil.which(name)
    if found:
        return found
    versions = sorted(
        Path("/usr/lib/postgresql").glob(f"*/bin/{name}"),
        key=lambda p: int(p.parts[-3]) if p.parts[-3].isdigit() else 0,
    )
    return str(versions[-1]) if versions else f"/usr/local/bin/{name}"


REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"
INITDB = _pg_tool("initdb")
PG_CTL = _pg_tool("pg_ctl")
RUNUSER = shutil.which("runuser") or "/usr/sbin/runuser"
PG_USER = "postgres"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(predicate, timeout: float, what: str, interval: float = 0.2):
    """The first truthy value of ``predicate()``; AssertionError naming ``what`` after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout:.0f} s")
        time.sleep(interval)


def missing_tools(*paths: str) -> list[str]:
    return [p for p in paths if not (shutil.which(p) or os.access(p, os.X_OK))]


def _stop_group(proc: subprocess.Popen, sig=signal.SIGTERM, timeout: float = 15) -> None:
    """Stop a process started with start_new_session=True, and everything it started."""
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, sig)
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    except ProcessLookupError:
        pass


# --- Redis ---------------------------------------------------------------------------------------


class RedisServer:
    """A redis-server of our own: no persistence, so a restart loses every message, as a crash would."""

    def __init__(self, workdir: Path):
        self.port = free_port()
        self.log_path = Path(workdir) / f"redis-{self.port}.log"
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def ping(self) -> bool:
        import redis
        from redis.backoff import NoBackoff
        from redis.retry import Retry

        client = redis.Redis(
            host="127.0.0.1", port=self.port, socket_timeout=1, socket_connect_timeout=1, retry=Retry(NoBackoff(), 0)
        )
        try:
            return bool(client.ping())
        except redis.RedisError:
            return False

    def start(self, timeout: float = 20) -> None:
        with open(self.log_path, "a") as log:
            self.proc = subprocess.Popen(
                [REDIS_SERVER, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        wait_until(lambda: self.proc.poll() is not None or self.ping(), timeout, f"redis on port {self.port} to answer")
        if self.proc.poll() is not None:
            raise RuntimeError(f"redis-server exited with {self.proc.returncode}; see {self.log_path}")

    def kill(self) -> None:
        """As if the machine lost it: SIGKILL, no goodbye to the clients."""
        if self.proc is not None:
            _stop_group(self.proc, signal.SIGKILL)
            self.proc = None


# --- PostgreSQL ----------------------------------------------------------------------------------


class PostgresCluster:
    """A throw-away cluster: initdb as the postgres user in a private folder, a free port,
    its socket in that folder, no fsync (nothing here needs to survive a power cut)."""

    def __init__(self):
        # /tmp, not pytest's tmp_path: the postgres user cannot enter root's 0700 pytest folders.
        self.root = Path(tempfile.mkdtemp(prefix="faults-pg-"))
        shutil.chown(self.root, user=PG_USER)
        self.data = self.root / "data"
        self.log_path = self.root / "server.log"
        self.port = free_port()

    def _as_postgres(self, *cmd: str, timeout: float = 120) -> subprocess.CompletedProcess:
        result = subprocess.run(
            [RUNUSER, "-u", PG_USER, "--", *cmd], check=False, capture_output=True, text=True, timeout=timeout
        )
        if result.returncode != 0:
            raise RuntimeError(
                f"{' '.join(cmd)} failed ({result.returncode}): {result.stdout[-2000:]}{result.stderr[-2000:]}"
            )
        return result

    def init(self) -> None:
        self._as_postgres(
            INITDB, "-D", str(self.data), "-U", PG_USER, "--auth=trust", "-E", "UTF8", "--no-sync", "--no-instructions"
        )

    def start(self) -> None:
        options = (
            f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 "
            "-c fsync=off -c full_page_writes=off -c synchronous_commit=off -c max_connections=40"
        )
        self._as_postgres(
            PG_CTL, "-D", str(self.data), "-l", str(self.log_path), "-o", options, "-w", "-t", "60", "start"
        )

    def stop(self) -> None:
        """``pg_ctl stop -m fast``: open transactions are rolled back, clients are disconnected."""
        if (self.data / "postmaster.pid").exists():
            self._as_postgres(PG_CTL, "-D", str(self.data), "-m", "fast", "-w", "-t", "60", "stop")

    def url(self, dbname: str) -> str:
        return f"postgres://{PG_USER}@127.0.0.1:{self.port}/{dbname}"

    def connect(self, dbname: str = "postgres"):
        import psycopg

        return psycopg.connect(self.url(dbname), autocommit=True, connect_timeout=5)

    def create_database(self, name: str) -> str:
        with self.connect() as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def destroy(self) -> None:
        try:
            self.stop()
        finally:
            shutil.rmtree(self.root, ignore_errors=True)


# --- the app ----------------------------------------------------------------------------------------


def manage(env: dict, *args: str, timeout: float = 180) -> str:
    """``manage.py ARGS`` in a subprocess with ``env``; its stdout, or RuntimeError with the output."""
    result = subprocess.run(
        [sys.executable, "manage.py", *args],
        check=False,
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if result.returncode != 0:
        raise RuntimeError(f"manage.py {' '.join(args)} failed: {result.stdout[-3000:]}{result.stderr[-3000:]}")
    return result.stdout


def django_call(env: dict, target: str, timeout: float = 120):
    """Call ``module:function`` in a fresh Django process with ``env``; its JSON-able return value."""
    module, function = target.split(":")
    code = (
        f"import json, django; django.setup(); from {module} import {function} as f; print('\\n@@' + json.dumps(f()))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], check=False, cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout
    )
    if result.returncode != 0 or "\n@@" not in result.stdout:
        raise RuntimeError(f"{target} failed: {result.stdout[-3000:]}{result.stderr[-3000:]}")
    return json.loads(result.stdout.rsplit("\n@@", 1)[1])


def app_env(**overrides: str) -> dict:
    """The environment of an app process: this one's, less what only a pytest process should see."""
    env = {k: v for k, v in os.environ.items() if k not in ("DJANGO_ALLOW_ASYNC_UNSAFE", "PYTEST_CURRENT_TEST")}
    env.update(DJANGO_SETTINGS_MODULE="rescue_annot.settings", LOG_LEVEL="WARNING", **overrides)
    return env


def faults_wsgi(agreement_sync_max_rows: int = 0):
    """The project's WSGI app, with every agreement report computed on a worker (never in the
    request), so that asking for one always enqueues work. ``gunicorn 'tests.services:faults_wsgi()'``."""
    from django.core.wsgi import get_wsgi_application

    application = get_wsgi_application()
    from annotation.agreement import services

    services.SYNC_MAX_ROWS = agreement_sync_max_rows
    return application


@dataclass
class Answer:
    status: int
    headers: dict
    body: bytes
    seconds: float

    def json(self):
        return json.loads(self.body)

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", "replace")


class Gunicorn:
    """A gunicorn on 127.0.0.1 in its own process group."""

    def __init__(
        self, env: dict, workdir: Path, app: str = "rescue_annot.wsgi:application", workers: int = 1, threads: int = 1
    ):
        self.port = free_port()
        self.log_path = Path(workdir) / f"gunicorn-{self.port}.log"
        cmd = [
            str(Path(sys.executable).with_name("gunicorn")),
            app,
            "--bind",
            f"127.0.0.1:{self.port}",
            "--workers",
            str(workers),
            "--worker-class",
            "sync" if threads == 1 else "gthread",
            "--threads",
            str(threads),
            "--timeout",
            "60",
            "--graceful-timeout",
            "5",
            "--log-level",
            "warning",
        ]
        with open(self.log_path, "a") as log:
            self.proc = subprocess.Popen(
                cmd, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )

    @property
    def pid(self) -> int:
        return self.proc.pid

    def worker_pids(self) -> set[int]:
        """The pids of the master's children (its workers), from /proc."""
        out = set()
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    with open(f"/proc/{entry}/stat") as f:
                        if int(f.read().rsplit(")", 1)[1].split()[1]) == self.pid:
                            out.add(int(entry))
                except (OSError, IndexError, ValueError):
                    continue
        return out

    def request(self, method: str, path: str, body=None, headers: dict | None = None, timeout: float = 30) -> Answer:
        headers = dict(headers or {})
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers.setdefault("Content-Type", "application/json")
        started = time.monotonic()
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            conn.request(method, path, body=data, headers=headers)
            response = conn.getresponse()
            return Answer(
                response.status,
                {k.lower(): v for k, v in response.getheaders()},
                response.read(),
                time.monotonic() - started,
            )
        finally:
            conn.close()

    def wait_ready(self, path: str = "/healthz", timeout: float = 60) -> None:
        def answered():
            if self.proc.poll() is not None:
                raise RuntimeError(f"gunicorn exited with {self.proc.returncode}; see {self.log_path}")
            try:
                return self.request("GET", path, timeout=5).status == 200
            except OSError:
                return False

        wait_until(answered, timeout, f"gunicorn on port {self.port} to answer {path}")

    def stop(self) -> None:
        _stop_group(self.proc)


def celery_worker_command(node: str) -> list[str]:
    """A Celery worker of this project on every queue the tests use, one process, named ``node``."""
    return [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "rescue_annot",
        "worker",
        "--loglevel=INFO",
        "--concurrency=1",
        "-Q",
        "default,preannotate,embeddings",
        "-n",
        f"{node}@%h",
    ]


class CeleryWorker:
    """A Celery worker on a broker of our own (both queues, one process)."""

    def __init__(self, env: dict, workdir: Path):
        self.log_path = Path(workdir) / f"worker-{os.getpid()}-{free_port()}.log"
        with open(self.log_path, "a") as log:
            self.proc = subprocess.Popen(
                [*celery_worker_command(f"faults-{os.getpid()}"), "--without-gossip", "--without-mingle"],
                cwd=REPO,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def wait_ready(self, timeout: float = 90) -> None:
        """Until the worker logs that it is ready (connected, consuming). Not a control ping: Celery
        would publish that through the CELERY_BROKER_URL of this process's environment, whatever
        broker the pinging app is given, and in a test run that is the shared Redis."""

        def ready():
            if self.proc.poll() is not None:
                raise RuntimeError(f"celery worker exited with {self.proc.returncode}; see {self.log_path}")
            return re.search(r"@\S+ ready\.", self.log_path.read_text(errors="replace"))

        wait_until(ready, timeout, f"the celery worker to be ready (see {self.log_path})", interval=0.3)

    def stop(self) -> None:
        _stop_group(self.proc, timeout=20)
