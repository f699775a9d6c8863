"""Background jobs as the database sees them.

Celery carries the work; the ``Job`` row carries its state, progress and
error, which is what pages and the API read. A job is started here, then the
task moves it through running -> succeeded | failed.
"""
from __future__ import annotations

import logging
from datetime import timedelta

from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from .models import Job, JobState

log = logging.getLogger(__name__)

# Without a heartbeat for this long, a running job's worker is presumed lost.
RUNNING_STALE_AFTER = timedelta(minutes=10)
# A queued job not picked up for this long is sent again (the broker may have been down).
QUEUED_STALE_AFTER = timedelta(minutes=2)
MAX_ATTEMPTS = 5


def _dispatch(job_id: int, task_name: str, args: list) -> bool:
    from rescue_annot.celery import app

    try:
        # Through the registered task (not send_task), so that eager mode runs it in-process.
        result = app.tasks[task_name].apply_async(args=[job_id, *args])
    except Exception:  # broker down: the job stays queued and the sweeper sends it later
        log.exception("could not send job %s (%s) to the broker; it stays queued", job_id, task_name)
        return False
    Job.objects.filter(pk=job_id).update(celery_task_id=result.id or "")
    return True


def enqueue(job: Job, task, *args) -> Job:
    """Dispatch ``task`` for ``job`` once the job row is committed (the worker must see it).

    The task name and arguments are kept on the job, so that a job whose
    message was lost (broker down, worker killed) can be sent again.
    """
    job.params = {**job.params, "_task": {"name": task.name, "args": list(args)}}
    Job.objects.filter(pk=job.pk).update(params=job.params)
    transaction.on_commit(lambda: _dispatch(job.pk, task.name, list(args)))
    return job


def sweep_stale_jobs(now=None, running_after: timedelta = RUNNING_STALE_AFTER, queued_after: timedelta = QUEUED_STALE_AFTER) -> list[int]:
    """Send again the jobs whose worker died or whose message never arrived.

    Returns the ids of the jobs sent again. A job that has been tried
    MAX_ATTEMPTS times is failed instead, with the reason.
    """
    now = now or timezone.now()
    stale = Job.objects.filter(
        Q(state=JobState.RUNNING, heartbeat_at__lt=now - running_after)
        | Q(state=JobState.QUEUED, created_at__lt=now - queued_after, started_at__isnull=True)
    )
    resent = []
    for job in stale:
        task = job.params.get("_task") or {}
        if not task.get("name"):
            continue
        if job.attempts >= MAX_ATTEMPTS:
            mark_failed(job.pk, f"gave up after {job.attempts} attempts: the worker was lost each time")
            continue
        # Only one sweeper wins the job, even if several run at once.
        claimed = Job.objects.filter(pk=job.pk, state=job.state, heartbeat_at=job.heartbeat_at).update(
            state=JobState.QUEUED, heartbeat_at=now, error="requeued: worker lost or message not delivered"
        )
        if claimed and _dispatch(job.pk, task["name"], task.get("args", [])):
            resent.append(job.pk)
    return resent


def mark_running(job_id: int, total: int = 0) -> Job:
    now = timezone.now()
    Job.objects.filter(pk=job_id).update(
        state=JobState.RUNNING, started_at=now, heartbeat_at=now, progress_total=total, progress_done=0, error="", attempts=F("attempts") + 1
    )
    return Job.objects.get(pk=job_id)


def report_progress(job_id: int, done: int, total: int | None = None) -> None:
    fields = {"progress_done": done, "heartbeat_at": timezone.now()}
    if total is not None:
        fields["progress_total"] = total
    Job.objects.filter(pk=job_id).update(**fields)


def mark_succeeded(job_id: int, result: dict) -> None:
    Job.objects.filter(pk=job_id).update(state=JobState.SUCCEEDED, result=result, finished_at=timezone.now(), error="")


def mark_failed(job_id: int, error: str) -> None:
    Job.objects.filter(pk=job_id).update(state=JobState.FAILED, error=error[:5000], finished_at=timezone.now())

