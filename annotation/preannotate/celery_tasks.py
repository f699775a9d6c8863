"""The per-clip pre-annotation task, on the ``preannotate`` queue.

Settings route ``annotation.preannotate.*`` to that queue, so its concurrency
(``celery worker -Q preannotate -c N``) and the shared rate limit are set apart
from other work. Acknowledged late and rejected on worker loss: a clip whose
worker dies is delivered again, and ``services.run_clip_job`` finishes it
exactly once. Retries of the HTTP calls happen inside the task (per request,
with backoff and ``Retry-After``), so a retry never redoes a window that
already succeeded.
"""

from __future__ import annotations

from celery import shared_task
from celery.signals import worker_before_create_process

from ..audit import audit_source
from .gemini import warm_up

# Imported here, not inside the task: a prefork worker imports this module before
# forking its pool, so the children share the SDK (~0.7 s of imports) instead of
# each loading it on its first clip.
from .services import run_clip_job

_warm = False


@worker_before_create_process.connect
def _warm_up_before_fork(**kwargs) -> None:
    """In the worker's parent process, before each pool process is forked: warm up once."""
    global _warm
    if not _warm:
        _warm = True
        warm_up()


@shared_task(bind=True, acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def preannotate_clip(self, job_id: int) -> None:
    with audit_source("worker"):
        run_clip_job(job_id)
