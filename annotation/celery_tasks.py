"""Celery tasks of the annotation workflow. Each task works on a Job row."""

from __future__ import annotations

from celery import shared_task

from . import jobs
from .audit import audit_source
from .models import Job
from .recheck import recheck_project


@shared_task(bind=True, acks_late=True, max_retries=3, default_retry_delay=5)
def recheck_project_task(self, job_id: int) -> None:
    with audit_source("worker"):
        job = jobs.mark_running(job_id)
        try:
            summary = recheck_project(
                job.project, progress=lambda done, total: jobs.report_progress(job_id, done, total)
            )
        except Exception as exc:  # the job row must say what went wrong
            jobs.mark_failed(job_id, f"{type(exc).__name__}: {exc}")
            raise
        jobs.mark_succeeded(job_id, summary)


def start_recheck(project, user=None) -> Job:
    job = Job.objects.create(kind="recheck", project=project, created_by=user, key=f"recheck:{project.slug}")
    return jobs.enqueue(job, recheck_project_task)


@shared_task(ignore_result=True)
def sweep_stale_jobs_task() -> list[int]:
    """Periodic (celery beat): re-send jobs whose worker died or whose message was lost."""
    return jobs.sweep_stale_jobs()
