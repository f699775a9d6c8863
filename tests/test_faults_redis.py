"""Redis goes away while annotators work: saves keep working, queued work waits and runs when it is back.

For real: the module runs its own redis-server on a free loopback port (never
the machine's shared one), and a gunicorn and a Celery worker pointed at it and
at the test database. A test kills Redis with SIGKILL, works through the API,
starts Redis again on the same port (empty: it kept nothing, as after a crash)
and runs the sweeper that celery beat runs every minute (``manage.py sweep_jobs``).
"""

from __future__ import annotations

import os
import re

import pytest

from annotation import jobs
from annotation.models import ClipState, Draft, Job, JobState, Revision
from annotation.tokens import issue_token

from . import services as svc
from .builders.agreement import annotators, coded_client_content, make_clip
from .conftest import _test_database_url, require
from .fakes.clips import make_clip as make_imported_clip

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

# A save never waits on the broker; one that sat out its connect timeouts and retries would run into this
# client timeout (a TimeoutError), with a margin over a loaded machine's slowest honest save.
SAVE_TIMEOUT = 15


class Stack:
    """The module's private processes."""

    def __init__(self, redis: svc.RedisServer, worker: svc.CeleryWorker, server: svc.Gunicorn, env: dict):
        self.redis, self.worker, self.server, self.env = redis, worker, server, env

    def redis_back(self) -> None:
        if not self.redis.ping():
            self.redis.start()


@pytest.fixture(scope="module")
def stack(django_db_setup, django_db_blocker, tmp_path_factory):
    """Private Redis + a Celery worker and a gunicorn on it, both on the test database; stopped at the end."""
    require(
        os.environ.get("DATABASE_URL", "").startswith("postgres"),
        "gunicorn and the worker share the test database: DATABASE_URL must be PostgreSQL",
    )
    require(not svc.missing_tools(svc.REDIS_SERVER), f"{svc.REDIS_SERVER} is needed for a private Redis")
    workdir = tmp_path_factory.mktemp("faults-redis")  # the processes' logs
    redis = svc.RedisServer(workdir)
    redis.start()
    with django_db_blocker.unblock():
        env = svc.app_env(DATABASE_URL=_test_database_url(), CELERY_BROKER_URL=redis.url)
    worker = server = None
    try:
        worker = svc.CeleryWorker(env, workdir)
        server = svc.Gunicorn(env, workdir, app="tests.services:faults_wsgi()")
        worker.wait_ready()
        server.wait_ready()
        yield Stack(redis, worker, server, env)
    finally:
        for proc in (server, worker):
            if proc is not None:
                proc.stop()
        redis.kill()


def auth(user) -> dict:
    return {"Authorization": f"Token {issue_token(user)[1]}"}


def save(server, user, revision: Revision, tone: str):
    revision.refresh_from_db()
    body = {"content": {**revision.content, "tone_of_voice": tone}, "version": revision.version}
    return server.request("PUT", f"/api/v1/revisions/{revision.pk}/", body, auth(user), timeout=SAVE_TIMEOUT)


def finished(job_id: int):
    return Job.objects.filter(pk=job_id, state__in=[JobState.SUCCEEDED, JobState.FAILED]).first()


def test_saves_keep_working_while_redis_is_down_and_queued_work_runs_when_it_is_back(stack, project, lead):
    server, redis = stack.server, stack.redis
    a, b = annotators("redisfault", 2)
    make_clip(
        project,
        "redis/001",
        {a: [coded_client_content(v) for v in (0, 1, 2, 3)], b: [coded_client_content(v) for v in (0, 1, 2, 1)]},
    )
    revision = Revision.objects.filter(annotator=a).order_by("row__row_index").first()
    assert save(server, a, revision, "before the outage").status == 200

    redis.kill()
    assert not redis.ping()

    # Annotation never depends on the broker: every save answers 200 at once, is stored and audited.
    tones = [f"saved while redis was down #{i}" for i in range(5)]
    for tone in tones:
        answer = save(server, a, revision, tone)
        assert answer.status == 200, answer.text
    revision.refresh_from_db()
    assert revision.version == 2 + len(tones) and revision.content["tone_of_voice"] == tones[-1]
    history = list(
        revision.history.order_by("version").values("version", "content", "history_source", "history_user_id")
    )
    assert [h["version"] for h in history] == list(range(1, revision.version + 1)), "one audit record per version"
    assert [h["content"]["tone_of_voice"] for h in history[-len(tones) :]] == tones
    assert {(h["history_source"], h["history_user_id"]) for h in history[-len(tones) :]} == {("api", a.pk)}

    # Work that needs a worker is recorded and answered as queued: never a 500, never lost.
    # Asking must not sit out the broker's retries either: the client gives up (TimeoutError) after 30 s.
    answer = server.request("GET", f"/api/v1/projects/{project.slug}/agreement/", headers=auth(lead), timeout=30)
    assert answer.status == 202, answer.text
    body = answer.json()
    assert body["status"] == "queued" and body["job"]["error"] == jobs.NOT_SENT
    job = Job.objects.get(pk=body["job"]["id"])
    assert job.state == JobState.QUEUED and job.celery_task_id == "" and job.attempts == 0

    # Operators see which dependency is missing; the load balancer still sees a live process.
    ready = server.request("GET", "/readyz")
    assert ready.status == 503 and ready.json()["checks"]["broker"] == {"ok": False, "detail": "broker unreachable"}
    assert ready.json()["checks"]["database"]["ok"] is True
    assert "127.0.0.1" not in ready.text and str(redis.port) not in ready.text, "no internals in the answer"
    assert server.request("GET", "/healthz").status == 200

    # The sweeper can send nothing while Redis is down, and loses nothing.
    assert "re-sent 0 jobs" in svc.manage(stack.env, "sweep_jobs")
    job.refresh_from_db()
    assert job.state == JobState.QUEUED and job.error == jobs.NOT_SENT

    redis.start()  # same port, empty: whatever it held is gone
    svc.wait_until(lambda: server.request("GET", "/readyz").status == 200, 30, "/readyz to be ready again")
    assert save(server, a, revision, "after the outage").status == 200

    out = svc.manage(stack.env, "sweep_jobs")
    assert re.search(rf"re-sent 1 jobs: {job.pk}\b", out), out
    # The worker reconnects by itself (it backs off a few seconds between attempts).
    svc.wait_until(
        lambda: finished(job.pk), 60, f"the re-sent job to finish on the worker (log: {stack.worker.log_path})"
    )
    job.refresh_from_db()
    assert job.state == JobState.SUCCEEDED, job.error
    assert job.celery_task_id and job.attempts == 1, "sent through the broker once it was back, and run once"
    report = server.request("GET", f"/api/v1/projects/{project.slug}/agreement/", headers=auth(lead))
    assert report.status == 200 and report.json()["status"] == "ready", report.text
    assert report.json()["report"]["counts"]["rows"] == 4


def test_starting_preannotation_while_redis_is_down_is_kept_and_runs_when_it_is_back(stack, project, lead):
    server, redis = stack.server, stack.redis
    clip = make_imported_clip(project)
    redis.kill()
    try:
        answer = server.request(
            "POST", f"/api/v1/projects/{project.slug}/preannotation/", {"provider": "offline"}, auth(lead)
        )
        assert answer.status == 202, f"{answer.status}: {answer.text[:300]}"
        job = Job.objects.get(kind="preannotate", clip=clip)
        assert job.state == JobState.QUEUED and job.error == jobs.NOT_SENT
    finally:
        stack.redis_back()
    out = svc.manage(stack.env, "sweep_jobs")
    assert re.search(rf"re-sent 1 jobs: {job.pk}\b", out), out
    svc.wait_until(
        lambda: finished(job.pk), 60, f"the pre-annotation to finish on the worker (log: {stack.worker.log_path})"
    )
    clip.refresh_from_db()
    assert (
        clip.state == ClipState.PREANNOTATED and Draft.objects.filter(row__clip=clip).count() == clip.rows.count() > 0
    )
