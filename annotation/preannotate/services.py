"""Pre-annotation writes: starting a batch, running one clip's job, retrying.

A batch is a ``Job`` of kind ``preannotate_batch`` (what the lead started) with
one ``preannotate`` Job per clip, linked by ``params["batch"]``. The clip job's
``key`` is the idempotency key: input hash + prompt version + model. A clip
whose drafts already carry that key is *reused* (nothing is sent, nothing is
paid) unless the start is forced.

Exactly once: the model is called outside any transaction; the clip's rows,
drafts, state and job result are then written in ONE transaction that first
locks the clip and the job and re-checks that the job is not already done. A
task redelivered after a worker crash therefore either redoes the clip from
scratch (the crash came before the commit: nothing was written) or finds the
job finished and stops (the crash came after it). There is never a second set
of rows.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from datetime import timedelta

from django.db import transaction
from django.db.models import Count, Exists, OuterRef, Q, Value
from django.utils import timezone
from simple_history.utils import bulk_create_with_history

from .. import jobs
from ..ingest.speakers import SpeakerMapNotConfirmed
from ..models import Clip, ClipState, Cue, Draft, Gold, Job, JobState, Project, Revision, Row
from ..services import ServiceError, transition
from . import conf, gemini, offline
from .errors import REASONS, PreannotationFailed
from .transcript import clip_input
from .validate import Outcome

log = logging.getLogger(__name__)

BATCH_KIND = "preannotate_batch"
CLIP_KIND = "preannotate"
STARTABLE = (ClipState.IMPORTED, ClipState.PREANNOTATED, ClipState.PREANNOTATION_FAILED)
FINISHED = (JobState.SUCCEEDED, JobState.FAILED)


# --- reads used by the writes -------------------------------------------------------


def has_human_work(clip: Clip) -> bool:
    return _row_facts(clip.pk)[1]


def _row_facts(clip_id: int) -> tuple[bool, bool]:
    """(the clip has rows, some row has a human revision or gold), in one query."""
    clip = OuterRef("pk")
    return (
        Clip.objects.filter(pk=clip_id)
        .values_list(
            Exists(Row.objects.filter(clip_id=clip)),
            Exists(Revision.objects.filter(row__clip_id=clip)) | Exists(Gold.objects.filter(row__clip_id=clip)),
        )
        .get()
    )


def provider_version(provider: str, scenario: str, taxonomy_version: str) -> tuple[str, str]:
    """(prompt version, model) that identify what a provider would produce."""
    if provider == offline.PROVIDER:
        return offline.VERSION, offline.PROVIDER
    return gemini.prompt_version(scenario, taxonomy_version), conf.gemini_model()


def idempotency_key(input_hash: str, prompt_version: str, model: str) -> str:
    return f"sha256:{input_hash}|{prompt_version}|{model}"


def batch_jobs(batch: Job):
    """The clip jobs of a batch. Through the project (an indexed key): the batch id sits in a JSON field."""
    return Job.objects.filter(project_id=batch.project_id, kind=CLIP_KIND, params__batch=batch.pk)


def is_stale(job: Job) -> bool:
    """A clip job that is neither finished nor showing signs of life (its worker is gone)."""
    if job.state in FINISHED:
        return False
    last = job.heartbeat_at or job.started_at or job.created_at
    return last < timezone.now() - timedelta(seconds=float(conf.get("PREANNOTATE_STALE_SECONDS")))


def resolve_clips(project: Project, refs) -> list[Clip]:
    """Clips of ``project`` named by database id or sample id; unknown names are refused."""
    clips, missing = [], []
    for ref in refs:
        ref = str(ref).strip()
        q = Q(sample_id=ref) | (Q(pk=int(ref)) if ref.isdigit() else Q(pk__in=[]))
        clip = project.clips.filter(q).first()
        (clips if clip else missing).append(clip or ref)
    if missing:
        raise ServiceError(f"no clip {', '.join(map(repr, missing))} in project {project.slug}")
    return clips


# --- starting -------------------------------------------------------------------------


def _task_spec() -> dict:
    """How the sweeper (annotation.jobs) can send a clip job again, kept on the job.

    Only a job that never reached the broker is sent again by the sweeper: a
    batch waits in the queue for many minutes by design (the rate limit), so
    "queued for a while" is no sign of a lost message here, and a clip whose
    worker died is delivered again by the broker (acks late) or retried by a
    lead once stale.
    """
    from .celery_tasks import preannotate_clip

    return {
        "name": preannotate_clip.name,
        "args": [],
        "options": {"queue": conf.get("PREANNOTATE_QUEUE")},
        "resend_if_stale": False,
    }


def _send(jobs_to_send: list[Job]) -> None:
    """Dispatch the clip tasks once their job rows are committed (the worker must find them).

    With the broker down, the jobs stay queued and say so (``jobs.NOT_SENT``);
    the sweeper sends them once it answers again. After the first refusal the
    rest are not tried: each attempt would wait out the connection retries.
    """
    spec = _task_spec()

    def send():
        for i, job in enumerate(jobs_to_send):
            if not jobs.dispatch(job.pk, spec, task_id=job.celery_task_id):
                for unsent in jobs_to_send[i + 1 :]:
                    jobs.mark_not_sent(unsent.pk)
                return

    transaction.on_commit(send)


@dataclass
class _Facts:
    """What deciding about many clips needs, read in a few queries instead of a few per clip."""

    human: set[int]
    draft_keys: dict[int, set]
    draft_counts: dict[int, int]
    row_counts: dict[int, int]

    @classmethod
    def read(cls, ids: list[int]) -> _Facts:
        human = set(Revision.objects.filter(row__clip_id__in=ids).values_list("row__clip_id", flat=True))
        human |= set(Gold.objects.filter(row__clip_id__in=ids).values_list("row__clip_id", flat=True))
        draft_keys: dict[int, set] = {}
        draft_counts: dict[int, int] = {}
        for clip_id, key in Draft.objects.filter(row__clip_id__in=ids).values_list("row__clip_id", "provenance__key"):
            draft_keys.setdefault(clip_id, set()).add(key)
            draft_counts[clip_id] = draft_counts.get(clip_id, 0) + 1
        row_counts = dict(
            Row.objects.filter(clip_id__in=ids).values("clip_id").annotate(n=Count("id")).values_list("clip_id", "n")
        )
        return cls(human, draft_keys, draft_counts, row_counts)

    def drafts_match(self, clip_id: int, key: str) -> bool:
        rows = self.row_counts.get(clip_id, 0)
        return bool(rows) and self.draft_keys.get(clip_id) == {key} and self.draft_counts.get(clip_id) == rows


def _verdict(clip: Clip, provider: str, force: bool, facts: _Facts) -> tuple[str, str]:
    """('queue', key) | ('reuse', key) | ('refuse', reason)."""
    if clip.state not in STARTABLE:
        if clip.state == ClipState.PREANNOTATING:
            return "refuse", "it is being pre-annotated already"
        return (
            "refuse",
            f"it is {clip.get_state_display()}; only imported, pre-annotated or failed clips can be pre-annotated",
        )
    if clip.pk in facts.human:
        return "refuse", "it already has human revisions or gold; a new draft would replace rows they depend on"
    try:
        inp = clip_input(clip)
    except SpeakerMapNotConfirmed:
        return "refuse", "its speaker mapping is not confirmed yet"
    if not any(c.has_words for c in inp.cues):
        return "refuse", "it has no transcript cue with words"
    prompt_version, model = provider_version(provider, clip.scenario, inp.taxonomy_version)
    key = idempotency_key(inp.input_hash(), prompt_version, model)
    if not force and facts.drafts_match(clip.pk, key):
        return "reuse", key
    return "queue", key


# Clips decided and queued per transaction: workers start on the first ones while the rest are queued.
START_CHUNK = 16


def _chunks(ids: list[int]):
    """``ids`` in growing chunks (1, 2, 4 ... START_CHUNK): the first clip is sent as soon as it
    is decided, so the workers start within milliseconds; later clips go in fewer transactions."""
    start, size = 0, 1
    while start < len(ids):
        yield ids[start : start + size]
        start += size
        size = min(2 * size, START_CHUNK)


def start_preannotation(
    project: Project, clips=None, force: bool = False, user=None, *, offline_provider: bool = False
) -> Job:
    """Queue pre-annotation of ``clips`` (default: every clip still needing a draft); returns the batch Job.

    Clips that cannot start are listed in ``batch.params["refused"]`` with the
    reason; clips whose drafts already match are in ``params["reused"]``.
    Raises ServiceError when the Gemini provider is asked for without a key.

    Clips are taken longest first, in chunks growing to START_CHUNK: each chunk is one
    transaction that locks its clips, decides for each (queue, reuse, refuse)
    on their current state and dispatches the queued ones when it commits. A
    clip that someone else queued meanwhile is refused here, never queued twice.
    """
    provider = offline.PROVIDER if offline_provider else gemini.PROVIDER
    if provider == gemini.PROVIDER and not conf.gemini_api_key():
        raise ServiceError(
            "GEMINI_API_KEY is not set: set it (and GEMINI_BASE_URL for a proxy) or use the offline provider"
        )
    if provider == gemini.PROVIDER:
        try:
            conf.window_cues()
        except conf.BudgetError as exc:
            raise ServiceError(str(exc)) from None
    if clips is None:
        candidates = list(project.clips.filter(state__in=STARTABLE).order_by("sample_id").values_list("pk", flat=True))
    else:
        clips = sorted(clips, key=lambda c: c.sample_id)
        if any(c.project_id != project.pk for c in clips):
            raise ServiceError(f"some clips do not belong to project {project.slug}")
        candidates = [c.pk for c in clips]
    # Longest clips first: a long clip needs several requests, and started last it
    # would keep one worker busy after all the others have finished.
    sizes = dict(
        Cue.objects.filter(clip_id__in=candidates).values("clip_id").annotate(n=Count("id")).values_list("clip_id", "n")
    )
    candidates.sort(key=lambda pk: -sizes.get(pk, 0))
    now = timezone.now()
    batch = Job.objects.create(
        kind=BATCH_KIND,
        project=project,
        created_by=user,
        state=JobState.RUNNING if candidates else JobState.SUCCEEDED,
        started_at=now if candidates else None,
        finished_at=None if candidates else now,
        # What the batch waits for: every candidate until it is known which are reused or refused.
        progress_total=len(candidates),
        params={
            "provider": provider,
            "force": force,
            "model": conf.gemini_model() if provider == gemini.PROVIDER else offline.PROVIDER,
            "queued": [],
            "reused": [],
            "refused": [],
        },
    )
    for chunk in _chunks(candidates):
        _queue_chunk(project, batch.pk, chunk, provider, force, user)
    with transaction.atomic():
        locked = Job.objects.select_for_update().get(pk=batch.pk)
        queued = list(batch_jobs(batch).order_by("pk").values_list("clip_id", flat=True))
        locked.params = {**locked.params, "queued": queued}
        locked.progress_total = len(queued)
        locked.save(update_fields=["params", "progress_total"])
        _refresh_batch(batch.pk)
    batch.refresh_from_db()
    return batch


def _queue_chunk(project: Project, batch_id: int, ids: list[int], provider: str, force: bool, user) -> None:
    """Decide for the clips ``ids`` on their current, locked state; queue and dispatch the ones to run."""
    with transaction.atomic():
        clips = {c.pk: c for c in Clip.objects.select_for_update().filter(pk__in=ids)}
        facts = _Facts.read(list(clips))
        ready, reused, refused = [], [], []
        for pk in ids:
            clip = clips[pk]
            clip.project = project
            verdict, detail = _verdict(clip, provider, force, facts)
            if verdict == "refuse":
                refused.append({"clip": pk, "sample_id": clip.sample_id, "reason": detail})
            elif verdict == "reuse":
                reused.append({"clip": pk, "sample_id": clip.sample_id})
            else:
                ready.append((clip, detail))
        # Task ids are chosen here so that each job row names its task from the start.
        task = _task_spec()
        clip_jobs = Job.objects.bulk_create(
            [
                Job(
                    kind=CLIP_KIND,
                    project=project,
                    clip=clip,
                    key=key,
                    created_by=user,
                    celery_task_id=uuid.uuid4().hex,
                    params={"batch": batch_id, "provider": provider, "force": force, "_task": task},
                )
                for clip, key in ready
            ]
        )
        for clip, _ in ready:
            transition(
                clip,
                ClipState.PREANNOTATING,
                actor=user,
                reason=f"pre-annotation queued ({provider}, batch {batch_id})",
            )
        if reused or refused:
            batch = Job.objects.select_for_update().get(pk=batch_id)
            batch.params = {
                **batch.params,
                "reused": [*batch.params["reused"], *reused],
                "refused": [*batch.params["refused"], *refused],
            }
            batch.progress_total -= len(reused) + len(refused)
            batch.save(update_fields=["params", "progress_total"])
        _send(clip_jobs)


def retry_clip_job(job: Job, user=None) -> Job:
    """Queue a failed (or stale) clip job again; the same Job row carries the new attempt."""
    with transaction.atomic():
        clip = Clip.objects.select_for_update().get(pk=job.clip_id)
        job = Job.objects.select_for_update().get(pk=job.pk)
        if job.kind != CLIP_KIND:
            raise ServiceError("only a clip's pre-annotation job can be retried")
        stale = is_stale(job) and clip.state == ClipState.PREANNOTATING
        if job.state != JobState.FAILED and not stale:
            raise ServiceError(f"the job is {job.state}; only a failed or stalled pre-annotation can be retried")
        if has_human_work(clip):
            raise ServiceError("the clip already has human revisions or gold")
        if job.state == JobState.FAILED:
            if clip.state != ClipState.PREANNOTATION_FAILED:
                raise ServiceError(f"clip {clip.sample_id} is {clip.get_state_display()}, not failed")
            transition(clip, ClipState.PREANNOTATING, actor=user, reason=f"pre-annotation retried (job {job.pk})")
        history = list(job.result.get("previous_failures", []))
        if job.result.get("failure"):
            history.append({**job.result["failure"], "at": job.finished_at.isoformat() if job.finished_at else None})
        elif stale:
            history.append({"reason": "stalled", "detail": "no sign of life from the worker; dispatched again"})
        job.state, job.error, job.result = JobState.QUEUED, "", {"previous_failures": history}
        job.params = {**job.params, "_task": _task_spec()}
        job.progress_done = job.progress_total = 0
        job.finished_at = None
        job.celery_task_id = uuid.uuid4().hex
        job.save()
        _refresh_batch(job.params.get("batch"))
        _send([job])
    return job


# --- running one clip (worker side) -----------------------------------------------------


def run_clip_job(job_id: int, *, client=None) -> None:
    """Pre-annotate the clip of job ``job_id``; safe to run again for the same job (exactly once)."""
    job = Job.objects.select_related("clip", "clip__project").filter(pk=job_id, kind=CLIP_KIND).first()
    if job is None:
        log.warning("pre-annotation job %s does not exist (deleted?); nothing to do", job_id)
        return
    if job.state in FINISHED:
        log.info("pre-annotation job %s is already %s; redelivered task ignored", job_id, job.state)
        return
    clip = job.clip
    if clip.state != ClipState.PREANNOTATING:
        _record_failure(job_id, PreannotationFailed("clip_state", f"the clip is {clip.get_state_display()}"))
        return
    jobs.mark_running(job_id)
    provider = job.params.get("provider", gemini.PROVIDER)
    try:
        try:
            inp = clip_input(clip)
        except SpeakerMapNotConfirmed as exc:
            raise PreannotationFailed("speaker_map", str(exc)) from exc
        if provider == offline.PROVIDER:
            outcome = offline.annotate(inp)
        else:
            outcome = gemini.annotate(
                inp, client=client, progress=lambda done, total: jobs.report_progress(job_id, done, total)
            )
    except PreannotationFailed as failure:
        _record_failure(job_id, failure)
        return
    except Exception as exc:  # a bug must still leave the clip in a state the lead can act on
        log.exception("pre-annotation job %s crashed", job_id)
        _record_failure(job_id, PreannotationFailed("internal_error", f"{type(exc).__name__}: {exc}"))
        return
    prompt_version, model = outcome.provenance["prompt_version"], outcome.provenance["model"] or provider
    key = idempotency_key(outcome.provenance["input_hash"], prompt_version, model)
    try:
        _store(job_id, clip.pk, key, outcome)
    except PreannotationFailed as failure:
        _record_failure(job_id, failure)


def _store(job_id: int, clip_id: int, key: str, outcome: Outcome) -> bool:
    """Replace the clip's rows and drafts and finish the job, in one transaction. False if already done."""
    with transaction.atomic():
        # The clip first, then its job: the order every writer of both takes its locks in.
        clip = Clip.objects.select_for_update().get(pk=clip_id)
        job = Job.objects.select_for_update().get(pk=job_id)
        if job.state == JobState.SUCCEEDED:
            log.info("pre-annotation job %s was finished by another delivery; result discarded", job_id)
            return False
        if clip.state != ClipState.PREANNOTATING:
            raise PreannotationFailed(
                "clip_state", f"the clip became {clip.get_state_display()} while the job ran", usage=_usage(outcome)
            )
        has_rows, human = _row_facts(clip.pk)
        if human:
            raise PreannotationFailed(
                "human_work",
                "human revisions or gold appeared while the job ran; nothing was replaced",
                usage=_usage(outcome),
            )
        if has_rows:
            clip.rows.all().delete()  # drafts go with them (CASCADE)
        rows = [Row(clip=clip, **r.skeleton(i)) for i, r in enumerate(outcome.rows, start=1)]
        rows = bulk_create_with_history(rows, Row, batch_size=1000)
        if rows and rows[0].pk is None:  # a backend that does not return ids from bulk inserts
            rows = list(clip.rows.order_by("row_index"))
        common = {**outcome.provenance, "key": key, "job": job_id}
        provenance_field = Draft._meta.get_field("provenance")

        def provenance(r):
            own = {"window": r.window} if outcome.provenance.get("windows", 1) > 1 else {}
            if r.part != str(r.window):  # from a half of a window asked again after a cut-off answer
                own["part"] = r.part
            if r.notes:  # the safe normalisations applied to this row
                own["normalisations"] = r.notes
            # Passed as an expression, which makes Django insert the drafts (and their history)
            # with a multi-row VALUES statement instead of UNNEST over one array per column.
            # The stored rows are the same; the difference is CPU: for an UNNEST array psycopg
            # escapes every quote of every JSON document in Python, one regex callback each
            # (on Python 3.11), which made these two inserts the largest part of a clip's CPU;
            # in a VALUES statement each document is escaped by libpq, in C. Measured on a
            # 40-row clip: rows + drafts with their history 44 -> 33 ms. Drop the wrapper once
            # that escaping is cheap (Python >= 3.12 expands regex templates in C).
            return Value({**common, **own}, output_field=provenance_field)

        drafts = [
            Draft(
                row=row,
                content=r.content,
                warnings=r.warnings,
                layout={},
                source=outcome.source,
                provenance=provenance(r),
                modality=outcome.provenance.get("modality", ""),
            )
            for row, r in zip(rows, outcome.rows)
        ]
        bulk_create_with_history(drafts, Draft, batch_size=1000)
        transition(
            clip, ClipState.PREANNOTATED, reason=f"pre-annotated ({outcome.provenance['provider']}, job {job_id})"
        )
        result = {
            "summary": outcome.summary,
            "provenance": outcome.provenance,
            "previous_failures": job.result.get("previous_failures", []),
        }
        # Progress is reported after each window but the last one; finishing completes it.
        parts = outcome.provenance.get("windows", 1)
        Job.objects.filter(pk=job_id).update(
            state=JobState.SUCCEEDED,
            key=key,
            result=result,
            error="",
            progress_done=parts,
            progress_total=parts,
            finished_at=timezone.now(),
            heartbeat_at=timezone.now(),
        )
        _refresh_batch(job.params.get("batch"))
    return True


def _usage(outcome: Outcome) -> dict:
    keys = ("requests", "tokens_in", "tokens_out", "latency_s", "cost_usd")
    return {k: outcome.provenance[k] for k in keys if k in outcome.provenance}


def _record_failure(job_id: int, failure: PreannotationFailed) -> None:
    """Finish the job as failed with its reason; the clip's existing rows and drafts stay as they were."""
    log.warning("pre-annotation job %s failed: %s", job_id, failure)
    with transaction.atomic():
        job = Job.objects.get(pk=job_id)
        clip = Clip.objects.select_for_update().get(pk=job.clip_id)
        job = Job.objects.select_for_update().get(pk=job_id)
        if job.state in FINISHED:
            return
        error = f"{REASONS[failure.reason]}: {failure.detail}"
        result = {
            "failure": failure.as_dict(),
            "usage": failure.usage,
            "attempts": failure.attempts,
            "previous_failures": job.result.get("previous_failures", []),
        }
        Job.objects.filter(pk=job_id).update(
            state=JobState.FAILED, error=error[:5000], result=result, finished_at=timezone.now()
        )
        if clip.state == ClipState.PREANNOTATING:
            # The audit trail keeps a short reason (100 characters); the full error is on the job.
            transition(
                clip, ClipState.PREANNOTATION_FAILED, reason=f"pre-annotation failed ({failure.reason}, job {job_id})"
            )
        _refresh_batch(job.params.get("batch"))


def _refresh_batch(batch_id: int | None) -> None:
    """Recount a batch from its clip jobs (under a lock, so concurrent finishers agree)."""
    if not batch_id:
        return
    batch = Job.objects.select_for_update().filter(pk=batch_id, kind=BATCH_KIND).first()
    if batch is None:
        return
    # Counted by the database: a batch's last clips would otherwise read every clip job's state.
    counts = dict(batch_jobs(batch).order_by().values_list("state").annotate(n=Count("id")))
    failed = counts.get(JobState.FAILED, 0)
    done = failed + counts.get(JobState.SUCCEEDED, 0)
    # The batch waits for every planned clip, also those whose jobs are still being queued.
    total = max(batch.progress_total, sum(counts.values()))
    fields = {"progress_done": done, "progress_total": total, "heartbeat_at": timezone.now()}
    if done == total:
        fields.update(
            state=JobState.FAILED if failed else JobState.SUCCEEDED,
            error=f"{failed} of {total} clips failed" if failed else "",
            finished_at=timezone.now(),
        )
    else:
        fields.update(state=JobState.RUNNING, error="", finished_at=None)
        if batch.started_at is None:
            fields["started_at"] = timezone.now()
    Job.objects.filter(pk=batch_id).update(**fields)
