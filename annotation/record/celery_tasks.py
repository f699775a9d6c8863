"""Celery task of the record: compute and store a scenario's per-annotator dashboard for a Job."""

from __future__ import annotations

import logging

from celery import shared_task

from .. import jobs
from ..audit import audit_source

logger = logging.getLogger(__name__)


@shared_task(bind=True, acks_late=True)
def compute_dashboard_task(self, job_id: int) -> None:
    """A failure is recorded on the job and not re-raised (the page reads it from there)."""
    from .dashboard import compute_and_store

    with audit_source("worker"):
        job = jobs.mark_running(job_id)
        try:
            stored = compute_and_store(job.project, job.params["scenario"])
        except Exception as exc:
            logger.exception("record dashboard job %s failed", job_id)
            jobs.mark_failed(job_id, f"{type(exc).__name__}: {exc}")
            return
        jobs.mark_succeeded(job_id, {"stored": stored is not None, "report_id": stored and stored.pk})


@shared_task(bind=True, acks_late=True)
def score_round_texts_task(self, job_id: int) -> None:
    """Score a submitted round's free-text fields (the embedding model loads here, on the worker) and store
    them on the attempt; a failure is recorded on the job (the feedback page says so)."""
    from .services import store_text_scores

    with audit_source("worker"):
        job = jobs.mark_running(job_id)
        try:
            stored = store_text_scores(job.params["attempt"])
        except Exception as exc:
            logger.exception("free-text scoring of round job %s failed", job_id)
            jobs.mark_failed(job_id, f"{type(exc).__name__}: {exc}")
            return
        jobs.mark_succeeded(job_id, {"fields": stored})


@shared_task(bind=True, acks_late=True)
def compute_dashboard_texts_task(self, job_id: int) -> None:
    """The dashboard's free-text part (the embedding model loads here, on an embeddings worker)."""
    from .dashboard_texts import compute_and_store

    with audit_source("worker"):
        job = jobs.mark_running(job_id)
        try:
            stored = compute_and_store(job.project, job.params["scenario"], job.params["fingerprint"])
        except Exception as exc:
            logger.exception("record dashboard free-text job %s failed", job_id)
            jobs.mark_failed(job_id, f"{type(exc).__name__}: {exc}")
            return
        jobs.mark_succeeded(job_id, {"stored": stored is not None, "report_id": stored and stored.pk})
