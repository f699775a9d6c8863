"""Background jobs survive a lost worker or a broker outage: they are found and sent again."""

from datetime import timedelta
from types import SimpleNamespace

import pytest
from django.utils import timezone

from annotation import jobs
from annotation.celery_tasks import recheck_project_task, start_recheck
from annotation.models import Job, JobState
from annotation.rescue_format.importer import import_rescue

pytestmark = pytest.mark.django_db


class Broker:
    """Stands in for Redis around ``recheck_project_task``: down, up, or up but losing every message."""

    def __init__(self, monkeypatch):
        from rescue_annot.celery import app

        self.app, self.monkeypatch, self.sent = app, monkeypatch, []
        self.real_apply_async = recheck_project_task.apply_async
        self.was_eager = app.conf.task_always_eager
        app.conf.task_always_eager = False  # a broker is configured
        self.down()

    def down(self):
        from kombu.exceptions import OperationalError

        def refuse(*args, **kwargs):
            raise OperationalError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

        self.monkeypatch.setattr(recheck_project_task, "apply_async", refuse)

    def losing(self):
        """Accepts every message and loses it (Redis restarted without persistence before a worker took it)."""

        def accept(*args, **kwargs):
            self.sent.append(kwargs.get("args"))
            return SimpleNamespace(id=f"lost-{len(self.sent)}")

        self.monkeypatch.setattr(recheck_project_task, "apply_async", accept)

    def up(self):
        """Back, with the task run in-process (the unit tests have no worker)."""
        self.monkeypatch.setattr(recheck_project_task, "apply_async", self.real_apply_async)
        self.app.conf.task_always_eager = True


@pytest.fixture
def broker(monkeypatch):
    broker = Broker(monkeypatch)
    yield broker
    broker.app.conf.task_always_eager = broker.was_eager


def recheck_job(project, **fields) -> Job:
    return Job.objects.create(
        kind="recheck", project=project, params={"_task": {"name": recheck_project_task.name, "args": []}}, **fields
    )


def test_enqueue_with_the_broker_down_keeps_the_job_queued_and_says_why(
    project, broker, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        job = start_recheck(project)  # must not raise into the caller
    job.refresh_from_db()
    assert job.state == JobState.QUEUED and job.celery_task_id == "" and job.attempts == 0
    assert job.error == jobs.NOT_SENT
    assert job.params["_task"] == {"name": recheck_project_task.name, "args": []}


def test_a_job_that_could_not_be_sent_goes_at_the_first_sweep_after_the_broker_is_back(
    project, sample_path, broker, django_capture_on_commit_callbacks
):
    import_rescue(sample_path, project)
    with django_capture_on_commit_callbacks(execute=True):
        job = start_recheck(project)
    broker.up()
    # No waiting for QUEUED_STALE_AFTER: the job is known never to have reached the broker.
    assert jobs.sweep_stale_jobs() == [job.pk]
    job.refresh_from_db()
    assert job.state == JobState.SUCCEEDED and job.attempts == 1 and job.error == ""
    assert job.result["documents"] == 406


def test_while_the_broker_stays_down_every_sweep_keeps_the_job_queued_and_never_gives_up(
    project, broker, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        job = start_recheck(project)
    later = timezone.now()
    for minute in range(jobs.MAX_ATTEMPTS + 2):
        assert jobs.sweep_stale_jobs(now=later + timedelta(minutes=minute)) == []
    job.refresh_from_db()
    assert job.state == JobState.QUEUED and job.error == jobs.NOT_SENT and job.attempts == 0


def test_a_sent_job_is_not_sent_again_before_it_has_waited_queued_after_since_the_last_send(project, broker):
    broker.losing()
    job = recheck_job(project)
    created = job.created_at
    assert jobs.sweep_stale_jobs(now=created + timedelta(seconds=30)) == [], "just sent: not stale yet"
    first = created + jobs.QUEUED_STALE_AFTER + timedelta(seconds=1)
    assert jobs.sweep_stale_jobs(now=first) == [job.pk]
    # The next sweep a minute later must not pile a duplicate onto a queue that may just be slow.
    assert jobs.sweep_stale_jobs(now=first + timedelta(minutes=1)) == []
    assert jobs.sweep_stale_jobs(now=first + jobs.QUEUED_STALE_AFTER + timedelta(seconds=1)) == [job.pk]
    assert len(broker.sent) == 2
    job.refresh_from_db()
    assert job.state == JobState.QUEUED and job.celery_task_id == "lost-2" and job.error == jobs.REQUEUED


def test_a_job_requeued_after_its_worker_died_is_sent_again_if_that_message_is_lost_too(project, broker):
    broker.losing()
    old = timezone.now() - timedelta(hours=1)
    job = recheck_job(project, state=JobState.RUNNING, attempts=1, started_at=old, heartbeat_at=old)
    now = timezone.now()
    assert jobs.sweep_stale_jobs(now=now) == [job.pk]
    job.refresh_from_db()
    assert job.state == JobState.QUEUED and job.started_at == old, "it ran once before: started_at is set"
    assert jobs.sweep_stale_jobs(now=now + jobs.QUEUED_STALE_AFTER + timedelta(seconds=1)) == [job.pk]


def test_sweeper_resends_a_job_whose_message_was_lost(project, sample_path, eager_celery):
    import_rescue(sample_path, project)
    job = recheck_job(project)
    Job.objects.filter(pk=job.pk).update(created_at=timezone.now() - timedelta(minutes=5))
    assert jobs.sweep_stale_jobs() == [job.pk]
    job.refresh_from_db()
    assert job.state == JobState.SUCCEEDED and job.result["documents"] == 406


def test_sweeper_resends_a_running_job_whose_worker_died(project, sample_path, eager_celery):
    import_rescue(sample_path, project)
    old = timezone.now() - timedelta(hours=1)
    job = Job.objects.create(
        kind="recheck",
        project=project,
        state=JobState.RUNNING,
        attempts=1,
        heartbeat_at=old,
        started_at=old,
        params={"_task": {"name": recheck_project_task.name, "args": []}},
    )
    fresh = Job.objects.create(
        kind="recheck",
        project=project,
        state=JobState.RUNNING,
        attempts=1,
        heartbeat_at=timezone.now(),
        params={"_task": {"name": recheck_project_task.name, "args": []}},
    )
    assert jobs.sweep_stale_jobs() == [job.pk]
    job.refresh_from_db()
    fresh.refresh_from_db()
    assert job.state == JobState.SUCCEEDED and job.attempts == 2
    assert fresh.state == JobState.RUNNING, "a job with a recent heartbeat is left alone"


def test_sweeper_gives_up_after_too_many_attempts(project):
    old = timezone.now() - timedelta(hours=1)
    job = Job.objects.create(
        kind="recheck",
        project=project,
        state=JobState.RUNNING,
        attempts=jobs.MAX_ATTEMPTS,
        heartbeat_at=old,
        params={"_task": {"name": recheck_project_task.name, "args": []}},
    )
    assert jobs.sweep_stale_jobs() == []
    job.refresh_from_db()
    assert job.state == JobState.FAILED and "gave up after 5 attempts" in job.error


def test_apply_async_options_are_kept_and_used_again_when_the_job_is_resent(
    project, broker, django_capture_on_commit_callbacks
):
    calls = []
    broker.monkeypatch.setattr(
        recheck_project_task, "apply_async", lambda **kw: calls.append(kw) or SimpleNamespace(id=f"t{len(calls)}")
    )
    job = Job.objects.create(kind="recheck", project=project)
    with django_capture_on_commit_callbacks(execute=True):
        jobs.enqueue(job, recheck_project_task, queue="elsewhere")
    assert Job.objects.get(pk=job.pk).params["_task"] == {
        "name": recheck_project_task.name,
        "args": [],
        "options": {"queue": "elsewhere"},
    }
    Job.objects.filter(pk=job.pk).update(created_at=timezone.now() - timedelta(hours=1))
    assert jobs.sweep_stale_jobs() == [job.pk]
    assert calls == [{"args": [job.pk], "queue": "elsewhere"}] * 2


def test_a_kind_that_waits_long_by_design_is_resent_only_when_it_never_reached_the_broker(project, broker):
    # Pre-annotation batches sit in the queue for minutes (the rate limit): being queued
    # a while is no sign of a lost message for them, and a resend would pay Gemini twice.
    spec = {"name": recheck_project_task.name, "args": [], "resend_if_stale": False}
    long = timezone.now() - timedelta(hours=1)
    waiting = Job.objects.create(kind="recheck", project=project, params={"_task": spec})
    running = Job.objects.create(kind="recheck", project=project, params={"_task": spec}, state=JobState.RUNNING)
    never_sent = Job.objects.create(kind="recheck", project=project, params={"_task": spec})
    Job.objects.filter(pk__in=[waiting.pk, running.pk]).update(created_at=long, heartbeat_at=long)
    jobs.mark_not_sent(never_sent.pk)
    broker.losing()
    assert jobs.sweep_stale_jobs() == [never_sent.pk]
    assert jobs.sweep_stale_jobs() == []  # sent now: from here on it waits like the others


def test_each_web_worker_warms_its_broker_connection_when_it_starts(monkeypatch):
    """gunicorn reads ``gunicorn.conf.py`` from its working directory: its worker hook warms the broker."""
    import runpy
    from pathlib import Path

    hooks = runpy.run_path(str(Path(__file__).resolve().parent.parent / "gunicorn.conf.py"))
    called = []
    monkeypatch.setattr(jobs, "warm_broker", lambda: called.append(True))
    hooks["post_worker_init"](SimpleNamespace())
    assert called == [True]


def _wait_for_warm_up():
    import threading

    for thread in threading.enumerate():
        if thread.name == "warm-broker":
            thread.join(timeout=10)


def test_warming_the_broker_never_fails_a_start_when_the_broker_is_down(broker, monkeypatch, caplog):
    from kombu.exceptions import OperationalError

    def refuse(*args, **kwargs):
        raise OperationalError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    monkeypatch.setattr(broker.app, "producer_or_acquire", refuse)
    jobs.warm_broker()  # returns at once; the connection is tried in the background
    _wait_for_warm_up()
    assert "could not reach the broker at start" in caplog.text


@pytest.mark.usefixtures("transactional_db")
def test_warming_the_broker_declares_the_queues_jobs_go_to(settings, caplog):
    import os

    import redis

    from rescue_annot.celery import app

    if not os.environ.get("CELERY_BROKER_URL"):
        pytest.skip("CELERY_BROKER_URL is not set: no broker to warm")
    settings.EMBEDDINGS_QUEUE = f"embeddings-warm-{os.getpid()}"
    was, app.conf.task_always_eager = app.conf.task_always_eager, False
    client = redis.Redis.from_url(os.environ["CELERY_BROKER_URL"])
    try:
        jobs.warm_broker()
        _wait_for_warm_up()
        assert "could not reach the broker" not in caplog.text
        # kombu's Redis transport records a declared queue as a binding of its exchange.
        bindings = client.smembers(f"_kombu.binding.{settings.EMBEDDINGS_QUEUE}")
        assert any(settings.EMBEDDINGS_QUEUE.encode() in b for b in bindings), bindings
    finally:
        app.conf.task_always_eager = was
        client.delete(
            f"_kombu.binding.{settings.EMBEDDINGS_QUEUE}", f"_kombu.binding_permanent.{settings.EMBEDDINGS_QUEUE}"
        )
