"""Background jobs survive a lost worker or a broker outage: they are found and sent again."""
from datetime import timedelta

import pytest
from django.utils import timezone

from annotation import jobs
from annotation.celery_tasks import recheck_project_task, start_recheck
from annotation.models import Job, JobState
from annotation.rescue_format.importer import import_rescue

pytestmark = pytest.mark.django_db


@pytest.fixture
def dead_broker(monkeypatch):
    """Publishing fails the way kombu fails when Redis is not there."""
    from kombu.exceptions import OperationalError

    def refuse(*args, **kwargs):
        raise OperationalError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    monkeypatch.setattr(recheck_project_task, "apply_async", refuse)


def test_enqueue_with_the_broker_down_keeps_the_job_queued(project, dead_broker, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        job = start_recheck(project)  # must not raise into the caller
    job.refresh_from_db()
    assert job.state == JobState.QUEUED and job.celery_task_id == ""
    assert job.params["_task"] == {"name": recheck_project_task.name, "args": []}


def test_sweeper_resends_a_job_whose_message_was_lost(project, sample_path, eager_celery):
    import_rescue(sample_path, project)
    job = Job.objects.create(kind="recheck", project=project, params={"_task": {"name": recheck_project_task.name, "args": []}})
    Job.objects.filter(pk=job.pk).update(created_at=timezone.now() - timedelta(minutes=5))
    assert jobs.sweep_stale_jobs() == [job.pk]
    job.refresh_from_db()
    assert job.state == JobState.SUCCEEDED and job.result["documents"] == 406


def test_sweeper_resends_a_running_job_whose_worker_died(project, sample_path, eager_celery):
    import_rescue(sample_path, project)
    old = timezone.now() - timedelta(hours=1)
    job = Job.objects.create(kind="recheck", project=project, state=JobState.RUNNING, attempts=1, heartbeat_at=old, started_at=old, params={"_task": {"name": recheck_project_task.name, "args": []}})
    fresh = Job.objects.create(kind="recheck", project=project, state=JobState.RUNNING, attempts=1, heartbeat_at=timezone.now(), params={"_task": {"name": recheck_project_task.name, "args": []}})
    assert jobs.sweep_stale_jobs() == [job.pk]
    job.refresh_from_db()
    fresh.refresh_from_db()
    assert job.state == JobState.SUCCEEDED and job.attempts == 2
    assert fresh.state == JobState.RUNNING, "a job with a recent heartbeat is left alone"


def test_sweeper_gives_up_after_too_many_attempts(project):
    old = timezone.now() - timedelta(hours=1)
    job = Job.objects.create(kind="recheck", project=project, state=JobState.RUNNING, attempts=jobs.MAX_ATTEMPTS, heartbeat_at=old, params={"_task": {"name": recheck_project_task.name, "args": []}})
    assert jobs.sweep_stale_jobs() == []
    job.refresh_from_db()
    assert job.state == JobState.FAILED and "gave up after 5 attempts" in job.error
