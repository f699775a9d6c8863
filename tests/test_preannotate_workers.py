"""Pre-annotation on real Celery workers over the real Redis broker, against the fake Gemini server.

The workers are started here the way ``conftest.celery_worker_process`` starts
its worker (same command, DATABASE_URL pointed at the test database), with
what this capability needs in their environment: the fake server as
GEMINI_BASE_URL, a test key, short backoffs, and a private queue so no other
worker takes these messages. ``tests.fakes.celery_app`` is the project's app
with the pre-annotation tasks imported (and, for the crash test, a short
broker visibility timeout so the unacknowledged message comes back quickly).
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

from annotation.models import ClipState, Draft, Job, JobState, Row
from annotation.preannotate.services import start_preannotation

from .conftest import REPO, _test_database_url, require, wait_for
from .fakes import gemini_server as g
from .fakes.clips import make_clip

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


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
def fake():
    with g.FakeGemini() as server:
        yield server


@pytest.fixture
def workers(fake, settings, django_db_blocker):
    broker = os.environ.get("CELERY_BROKER_URL", "")
    require(broker.startswith("redis"), "CELERY_BROKER_URL (Redis) is not set: no broker for real workers")
    require(
        os.environ.get("DATABASE_URL", "").startswith("postgres"),
        "real workers need a shared PostgreSQL test database (DATABASE_URL)",
    )
    queue = f"preannotate-test-{uuid.uuid4().hex[:8]}"
    settings.PREANNOTATE_QUEUE = queue  # where this process dispatches
    settings.GEMINI_API_KEY = "test-key"
    settings.GEMINI_BASE_URL = fake.url
    with django_db_blocker.unblock():
        database = _test_database_url()
    env = {
        **os.environ,
        "DATABASE_URL": database,
        "GEMINI_API_KEY": "test-key",
        "GEMINI_BASE_URL": fake.url,
        "GEMINI_RPM": "100000",
        "PREANNOTATE_RATE_KEY": f"test:rate:{queue}",
        "PREANNOTATE_MAX_ATTEMPTS": "3",
        "PREANNOTATE_RETRY_BASE_DELAY": "0.05",
    }
    pool = Workers(env, queue)
    yield pool
    pool.stop_all()

    g.forget_queue(broker, queue)


def finished(batch_id):
    batch = Job.objects.get(pk=batch_id)
    return batch if batch.state in (JobState.SUCCEEDED, JobState.FAILED) else None


def test_preannotation_runs_on_real_workers_over_the_redis_broker(workers, fake, project):
    clips = [make_clip(project, f"maya_and_tobias/00{i}_session") for i in range(1, 4)]
    fake.latency = 0.2
    workers.start(concurrency=2)
    batch = start_preannotation(project)
    batch = wait_for(lambda: finished(batch.pk), timeout=90)
    assert batch.state == JobState.SUCCEEDED, batch.error
    for clip in clips:
        clip.refresh_from_db()
        job = Job.objects.get(kind="preannotate", clip=clip)
        assert job.celery_task_id and job.attempts == 1, "dispatched through the broker, run once"
        assert clip.state == ClipState.PREANNOTATED
        assert Row.objects.filter(clip=clip).count() == Draft.objects.filter(row__clip=clip).count() == 6
        assert Draft.objects.filter(row__clip=clip).first().provenance["model_version"] == g.MODEL_VERSION
    assert len(fake.generate_requests) == 3


def test_killing_the_worker_mid_clip_finishes_the_clip_exactly_once_after_a_restart(workers, fake, project):
    clip = make_clip(project)
    hold = g.Hold()
    fake.script(hold)  # the first answer never comes while the first worker lives
    short_visibility = {"TEST_BROKER_VISIBILITY_TIMEOUT": "3"}
    first = workers.start(extra_env=short_visibility)
    batch = start_preannotation(project)
    assert hold.arrived.wait(60), "the worker never called the model"
    job = Job.objects.get(kind="preannotate", clip=clip)
    assert job.state == JobState.RUNNING and Row.objects.filter(clip=clip).count() == 0

    workers.kill(first)  # in the middle of the clip: the request is open, nothing is written
    hold.release.set()
    clip.refresh_from_db()
    assert clip.state == ClipState.PREANNOTATING and Row.objects.filter(clip=clip).count() == 0

    workers.start(extra_env=short_visibility)  # the broker hands the unacknowledged task to the new worker
    batch = wait_for(lambda: finished(batch.pk), timeout=90)
    assert batch.state == JobState.SUCCEEDED, batch.error
    job.refresh_from_db()
    clip.refresh_from_db()
    assert job.state == JobState.SUCCEEDED and job.attempts == 2
    assert clip.state == ClipState.PREANNOTATED
    rows = Row.objects.filter(clip=clip)
    assert rows.count() == 6 and Draft.objects.filter(row__clip=clip).count() == 6  # one draft per row
    # One set of rows was ever created for the clip, not a second one on top or replaced.
    assert Row.history.filter(clip_id=clip.pk, history_type="+").count() == 6
    assert Row.history.filter(clip_id=clip.pk, history_type="-").count() == 0
    assert len(fake.generate_requests) == 2
