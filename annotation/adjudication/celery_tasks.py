"""The adjudication page's background work: embedding one clip's texts for its similarity figures.

It lives here, not beside the agreement report's task, because only the adjudication page asks for it: in the
agreement package it made agreement's tasks import adjudication and adjudication import them back."""

from __future__ import annotations

import logging

from celery import shared_task

from .. import jobs
from ..agreement.embeddings import embed_texts
from ..audit import audit_source
from ..models import Clip

logger = logging.getLogger(__name__)


@shared_task(bind=True, acks_late=True)
def embed_clip_texts_task(self, job_id: int) -> None:
    """Embed the texts of one clip not yet in the cache (the adjudication page's similarities)."""
    from .disagreement import clip_texts  # disagreement enqueues this task

    with audit_source("worker"):
        job = jobs.mark_running(job_id)
        try:
            clip = Clip.objects.get(pk=job.params["clip"])
            done = embed_texts(clip_texts(clip), progress=lambda d, t: jobs.report_progress(job_id, d, t))
        except Exception as exc:
            logger.exception("embedding job %s failed", job_id)
            jobs.mark_failed(job_id, f"{type(exc).__name__}: {exc}")
            return
        jobs.mark_succeeded(job_id, done.as_dict())
