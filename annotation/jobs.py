"""Background jobs as the database sees them.

Celery carries the work; the ``Job`` row carries its state, progress and
error, which is what pages and the API read. A job is started here, then the
task moves it through running -> succeeded | failed.

Annotation never waits for the broker: a job is recorded first and handed to
Celery after its transaction commits. If the broker is down at that moment the
job stays ``queued``, says so in ``error`` (NOT_SENT) and the sweeper (celery
beat, every minute; ``manage.py sweep_jobs``) sends it as soon as the broker
answers again. The sweeper also sends again a job whose message reached the
broker but was never picked up (Redis restarted without persistence, queue
flushed), and a running job whose worker stopped sending heartbeats.
"""

from __future__ import annotations

import logging
import threading
from datetime import timedelta
from importlib import import_module

from django.db import transaction
from django.db.models import F, Q
from django.db.models.functions import Coalesce
from django.utils import timezone

from .models import Job, JobState

log = logging.getLogger(__name__)

# Without a heartbeat for this long, a running job's worker is presumed lost.
RUNNING_STALE_AFTER = timedelta(minutes=10)
# A queued job whose message was sent but not picked up for this long is sent again
# (the broker may have lost it). Counted from the last time it was sent.
QUEUED_STALE_AFTER = timedelta(minutes=2)
MAX_ATTEMPTS = 5
# What a queued job says while its message has not reached the broker; the sweeper sends
# such a job at its next run, without waiting for QUEUED_STALE_AFTER.
NOT_SENT = "not sent yet: the task queue was unreachable; it will be sent as soon as the queue is back"
REQUEUED = "requeued: worker lost or message not delivered"


def _task(app, name: str):
    """The registered task ``name``; its module is imported first if this process has not yet
    (a sweeper in a management command has not loaded every capability's tasks)."""
    if name not in app.tasks:
        import_module(name.rpartition(".")[0])
    return app.tasks[name]


def warm_broker() -> None:
    """Open this process's connection to the broker and declare the queues jobs go to, in the background.

    A web process opens its broker connection on the first job it starts, and
    that request paid for it (about 100 ms here, a quarter of the agreement
    page's budget). Web servers call this when a worker process starts
    (``gunicorn.conf.py``). Never blocks, never fails: with the broker down,
    jobs wait queued as always.
    """
    import threading

    from django.conf import settings

    from rescue_annot.celery import app

    if app.conf.task_always_eager:
        return
    # Once per process, in the thread that serves requests (the result backend is kept per thread): the task
    # registry and the result backend, about 40 ms of the first job's start otherwise.
    app.finalize(auto=True)
    app.backend  # noqa: B018

    def connect() -> None:
        try:
            from .preannotate import conf as preannotate

            queues = {
                settings.CELERY_TASK_DEFAULT_QUEUE,
                settings.EMBEDDINGS_QUEUE,
                preannotate.get("PREANNOTATE_QUEUE"),
            }
            with app.producer_or_acquire() as producer:
                producer.connection.ensure_connection(max_retries=1)
                for name in queues:
                    producer.maybe_declare(app.amqp.queues[name])
        except Exception:  # the broker may be down at start; the first job then waits as documented
            log.warning("could not reach the broker at start; jobs will be sent when it answers", exc_info=True)

    threading.Thread(target=connect, name="warm-broker", daemon=True).start()


def _dispatch(job_id: int, task_name: str, args: list, options: dict | None = None) -> bool:
    """Hand the job to Celery; False (and the job marked NOT_SENT) when the broker is unreachable."""
    from rescue_annot.celery import app

    try:
        # Through the registered task (not send_task), so that eager mode runs it in-process.
        result = _task(app, task_name).apply_async(args=[job_id, *args], **(options or {}))
    except Exception:
        if app.conf.task_always_eager:  # no broker involved: the task itself raised, and recorded why
            log.exception("job %s (%s) failed in-process", job_id, task_name)
            return False
        log.warning("could not send job %s (%s) to the broker; it stays queued", job_id, task_name, exc_info=True)
        mark_not_sent(job_id)
        return False
    if result.id != (options or {}).get("task_id"):  # a task id chosen by the caller is on the job already
        Job.objects.filter(pk=job_id).update(celery_task_id=result.id or "")
    return True


def dispatch(job_id: int, spec: dict, **options) -> bool:
    """Send a committed job now, as its recorded task ``spec`` says (see ``enqueue``); False when
    the broker is unreachable, the job then marked NOT_SENT for the sweeper."""
    return _dispatch(job_id, spec["name"], spec.get("args", []), {**spec.get("options", {}), **options})


def mark_not_sent(job_id: int) -> None:
    """A queued job whose message could not reach the broker: say so; the sweeper sends it later."""
    Job.objects.filter(pk=job_id, state=JobState.QUEUED).update(celery_task_id="", error=NOT_SENT)


def enqueue(job: Job, task, *args, in_thread_when_eager: bool = False, **options) -> Job:
    """Dispatch ``task`` for ``job`` once the job row is committed (the worker must see it).

    The task name, arguments and ``apply_async`` options (e.g. ``queue``) are
    kept on the job, so that a job whose message was lost (broker down, worker
    killed) can be sent again the same way. Never raises because the broker is
    down: the job then waits, queued, for the sweeper.
    """
    spec = {"name": task.name, "args": list(args), **({"options": options} if options else {})}
    job.params = {**job.params, "_task": spec}
    Job.objects.filter(pk=job.pk).update(params=job.params)
    if in_thread_when_eager and _eager_in_thread():
        transaction.on_commit(lambda: _dispatch_in_thread(job.pk, task.name, list(args), options))
    else:
        transaction.on_commit(lambda: _dispatch(job.pk, task.name, list(args), options))
    return job


def _eager_in_thread() -> bool:
    from django.conf import settings

    from rescue_annot.celery import app

    return bool(app.conf.task_always_eager and getattr(settings, "JOBS_EAGER_IN_THREAD", False))


_after_response = threading.local()  # per request thread: the jobs to start once its response is sent


def _dispatch_in_thread(job_id: int, task_name: str, args: list, options: dict | None = None) -> None:
    """No broker (the demo): run the eager task in a thread once the response of the request that started it is
    sent, so that the page answers at once with the job's progress (as with a worker), and the computation does not
    compete with the request for the interpreter. ``in_thread_when_eager`` jobs only (started by pages)."""
    from django.core.signals import request_finished

    pending = getattr(_after_response, "jobs", None)
    if pending is None:
        pending = _after_response.jobs = []
    pending.append((job_id, task_name, args, options))
    request_finished.connect(_start_pending, dispatch_uid="jobs-start-after-response", weak=False)


def _start_pending(**kwargs) -> None:
    from django.db import connections

    pending, _after_response.jobs = getattr(_after_response, "jobs", None) or [], []
    if not pending:
        return

    def run():
        # One at a time across the process: SQLite (the demo's database) takes one writer at a time.
        with _one_at_a_time:
            try:
                for job_id, task_name, args, options in pending:
                    _dispatch(job_id, task_name, args, options)
            finally:
                connections.close_all()

    threading.Thread(target=run, name=f"jobs-{pending[0][0]}", daemon=True).start()


_one_at_a_time = threading.Lock()


def stale_jobs(now=None, running_after: timedelta = RUNNING_STALE_AFTER, queued_after: timedelta = QUEUED_STALE_AFTER):
    """Jobs to send again: never sent, sent but not picked up in time, or running without a heartbeat."""
    now = now or timezone.now()
    return Job.objects.alias(last_sent=Coalesce("heartbeat_at", "created_at")).filter(
        Q(state=JobState.QUEUED, error=NOT_SENT)
        | Q(state=JobState.QUEUED, last_sent__lt=now - queued_after)
        | Q(state=JobState.RUNNING, heartbeat_at__lt=now - running_after)
    )


def sweep_stale_jobs(
    now=None, running_after: timedelta = RUNNING_STALE_AFTER, queued_after: timedelta = QUEUED_STALE_AFTER
) -> list[int]:
    """Send again the jobs whose worker died or whose message never arrived.

    Returns the ids of the jobs sent again. A job that has been tried
    MAX_ATTEMPTS times is failed instead, with the reason. A job that could
    not be sent (broker still down) stays queued for the next sweep.
    """
    now = now or timezone.now()
    resent = []
    for job in stale_jobs(now, running_after, queued_after).order_by("created_at", "pk"):
        task = job.params.get("_task") or {}
        if not task.get("name"):
            continue
        never_sent = job.state == JobState.QUEUED and job.error == NOT_SENT
        if not never_sent and task.get("resend_if_stale") is False:
            continue  # its kind waits long by design and recovers from lost workers itself
        if job.attempts >= MAX_ATTEMPTS:
            mark_failed(job.pk, f"gave up after {job.attempts} attempts: the worker was lost each time")
            continue
        # Only one sweeper wins the job, even if several run at once. heartbeat_at of a
        # queued job is when it was last sent.
        claimed = Job.objects.filter(pk=job.pk, state=job.state, heartbeat_at=job.heartbeat_at).update(
            state=JobState.QUEUED, heartbeat_at=now, error=REQUEUED
        )
        if claimed and _dispatch(job.pk, task["name"], task.get("args", []), task.get("options")):
            resent.append(job.pk)
    return resent


def mark_running(job_id: int, total: int = 0) -> Job:
    now = timezone.now()
    Job.objects.filter(pk=job_id).update(
        state=JobState.RUNNING,
        started_at=now,
        heartbeat_at=now,
        progress_total=total,
        progress_done=0,
        error="",
        attempts=F("attempts") + 1,
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
