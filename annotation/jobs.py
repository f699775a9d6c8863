"""Background jobs as the database sees them.

Celery carries the work; the ``Job`` row carries its state, progress and
error, which is what pages and the API read. A job is started here, then the
task moves it through running -> succeeded | failed.
"""
from __future__ import annotations

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from .models import Job, JobState


def enqueue(job: Job, task, *args) -> Job:
    """Dispatch ``task`` for ``job`` once the job row is committed (the worker must see it)."""

    def send():
        result = task.apply_async(args=[job.pk, *args])
        Job.objects.filter(pk=job.pk, celery_task_id="").update(celery_task_id=result.id or "")

    transaction.on_commit(send)
    return job


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

