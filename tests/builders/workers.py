"""Celery worker processes for a test, over the real Redis broker, against the fake Gemini server.

The workers are started the way ``conftest.celery_worker_process`` starts its worker (same command, DATABASE_URL
pointed at the test database), with the fake server as GEMINI_BASE_URL, a test key, short backoffs, and a private
queue so no other worker takes these messages. ``tests.fakes.celery_app`` is the project's app with the tasks
imported. conftest registers the fixtures.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import uuid

import pytest

from ..conftest import REPO, _test_database_url, require
from ..fakes import gemini_server as g


class Workers:
    """Celery worker processes for one test, each in its own process group (so a kill takes its pool too)."""

    def __init__(self, env: dict, queue: str):
        self.env, self.queue = env, queue
        self.procs: list[subprocess.Popen] = []
        (REPO / "var").mkdir(exist_ok=True)

    def start(self, *, concurrency: int = 1, extra_env: dict | None = None) -> subprocess.Popen:
        from rescue_annot.celery import app

        name = f"preannotate-test-{os.getpid()}-{len(self.procs)}"
        command = [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "tests.fakes.celery_app",
            "worker",
            "--loglevel=INFO",
            f"--concurrency={concurrency}",
            "-Q",
            self.queue,
            "-n",
            f"{name}@%h",
        ]
        with open(REPO / "var" / f"test-{name}.log", "w") as log:  # the worker keeps its own descriptor
            proc = subprocess.Popen(
                command,
                cwd=REPO,
                env={**self.env, **(extra_env or {})},
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.procs.append(proc)
        node = f"{name}@{socket.gethostname()}"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                pytest.fail(f"worker exited with {proc.returncode}; see var/test-{name}.log")
            if app.control.ping(destination=[node], timeout=0.5):
                return proc
        pytest.fail(f"worker {node} did not answer a ping within 60 s")

    @staticmethod
    def kill(proc: subprocess.Popen) -> None:
        """SIGKILL the worker and its pool processes: no warm shutdown, no acknowledgement."""
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=20)

    def stop_all(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)


@pytest.fixture
def worker_fake():
    """A bare fake Gemini server (conftest's ``fake`` also points the settings at it; workers read their
    environment)."""
    with g.FakeGemini() as server:
        yield server


@pytest.fixture
def workers(worker_fake, settings, django_db_blocker):
    broker = os.environ.get("CELERY_BROKER_URL", "")
    require(broker.startswith("redis"), "CELERY_BROKER_URL (Redis) is not set: no broker for real workers")
    require(
        os.environ.get("DATABASE_URL", "").startswith("postgres"),
        "real workers need a shared PostgreSQL test database (DATABASE_URL)",
    )
    queue = f"preannotate-test-{uuid.uuid4().hex[:8]}"
    settings.PREANNOTATE_QUEUE = queue  # where this process dispatches
    settings.GEMINI_API_KEY = "test-key"  # pragma: allowlist secret
    settings.GEMINI_BASE_URL = worker_fake.url
    with django_db_blocker.unblock():
        database = _test_database_url()
    env = {
        **os.environ,
        "DATABASE_URL": database,
        "GEMINI_API_KEY": "test-key",  # pragma: allowlist secret
        "GEMINI_BASE_URL": worker_fake.url,
        "GEMINI_RPM": "100000",
        "PREANNOTATE_RATE_KEY": f"test:rate:{queue}",
        "PREANNOTATE_MAX_ATTEMPTS": "3",
        "PREANNOTATE_RETRY_BASE_DELAY": "0.05",
    }
    pool = Workers(env, queue)
    yield pool
    pool.stop_all()

    g.forget_queue(broker, queue)
