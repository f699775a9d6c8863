"""Celery task of the agreement capability: compute and cache a report (labels or free text) for a Job."""

from __future__ import annotations

import gc
import logging

from celery import shared_task

from .. import jobs
from ..audit import audit_source
from .embeddings import release_freed_memory

logger = logging.getLogger(__name__)


@shared_task(bind=True, acks_late=True)
def compute_report_task(self, job_id: int) -> None:
    """Compute the report the job's params describe and store it; the Job row carries progress and errors.

    A failure is recorded on the job and not re-raised: the page and the API
    read it from there, and (with eager tasks) the request that started the
    job must not fail with it.
    """
    from .services import KINDS_BY_JOB, LABELS, Params, compute_and_store, throttled_progress

    with audit_source("worker"):
        job = jobs.mark_running(job_id)
        facts: dict = {}
        try:
            kind = KINDS_BY_JOB.get(job.kind, LABELS)
            params = Params.from_dict(job.params)
            stored = compute_and_store(job.project, params, progress=throttled_progress(job_id), kind=kind, facts=facts)
        except Exception as exc:
            logger.exception("agreement job %s failed", job_id)
            jobs.mark_failed(job_id, f"{type(exc).__name__}: {exc}")
            return
        if stored is None:
            result = {
                "stored": False,
                "why": "revisions changed while the report was computed; it will be computed again",
            }
        else:
            result = {"stored": True, "report_id": stored.pk, "fingerprint": stored.fingerprint}
        if facts:
            result["run"] = facts  # texts embedded and how long it took (semantic reports)
        jobs.mark_succeeded(job_id, result)
    if kind is not LABELS:
        # A full-scale free-text report frees several hundred megabytes when it ends; hand them back now, so
        # that the worker process keeps the model (the next report needs it) and little else.
        del stored, facts
        gc.collect()
        release_freed_memory()
