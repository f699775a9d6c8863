"""Celery task of the meaning capability: the LLM judge over a project's free text, on the pre-annotation queue
(its Gemini calls share that queue's concurrency and the shared rate limit)."""

from __future__ import annotations

import logging

from celery import shared_task

from .. import jobs
from ..audit import audit_source

logger = logging.getLogger(__name__)


@shared_task(bind=True, acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def judge_project_task(self, job_id: int) -> None:
    """Ask the judge for every pair the judge alpha needs and every pair people judged; store the report on the job."""
    from .judge import JudgeFailed
    from .judge_alpha import judge_report
    from .models import JudgedPair

    with audit_source("worker"):
        job = jobs.mark_running(job_id)
        try:
            judged = [(r.field, r.text_a, r.text_b) for r in JudgedPair.objects.filter(project=job.project)]
            report = judge_report(
                job.project, extra_pairs=judged, progress=lambda d, t: jobs.report_progress(job_id, d, t)
            )
        except JudgeFailed as exc:
            jobs.mark_failed(job_id, str(exc))
            return
        except Exception as exc:
            logger.exception("judge job %s failed", job_id)
            jobs.mark_failed(job_id, f"{type(exc).__name__}: {exc}")
            return
        jobs.mark_succeeded(job_id, report)
