"""Stored agreement reports: computed on a worker, served at once, marked stale when the data moved on.

A report is stored in ``AgreementReport`` under a fingerprint: a SHA-256 of
everything it depends on (the clips in scope and their states, their rows,
the assignments with their modes and states, which revisions count under the
work scope and why the others are left out, the version and update time of
every revision that counts, the drafts, the parameters and the report
version). Any change that could move a figure changes the fingerprint, so a
stored report is never served as current for data it was not computed from;
edits that cannot move a figure (an annotator working on an open assignment,
under the default scope) leave it alone.

Reading where a report stands (``report_state``) never starts anything;
``ensure_report`` has a missing or stale report computed, the way its caller
names (``Compute``). The page never computes: it shows the last stored report
of its scope (with when it was computed and whether it is stale) and starts a
Celery job (a ``Job`` row with progress) when that report is missing or
stale; the page polls the job and reloads when the new report is stored. The
API computes small scopes in place (``SYNC_MAX_ROWS``), the command any.
"""

from __future__ import annotations

import hashlib
import time
from contextlib import contextmanager
from dataclasses import dataclass
from enum import Enum
from urllib.parse import urlencode

from django.conf import settings
from django.db import connection, connections, transaction
from django.db.models import Count, QuerySet, TextField, Value
from django.db.models.functions import MD5, Cast, Coalesce, Concat

from .. import jobs
from ..models import AgreementReport, Assignment, Draft, Job, JobState, Project, Revision, Row
from ..taxonomy import SCENARIOS
from .celery_tasks import compute_report_task
from .extract import candidate_clips, extract, report_scope, scope_sample_ids
from .report import REPORT_VERSION, check_resamples, report_from_extraction
from .scope import DEFAULT_WORK_SCOPE, LEFT_OUT_FIELD, check_work_scope, with_left_out

JOB_KIND = "agreement"
# Up to this many rows in scope the report is computed inside the request (about a second).
SYNC_MAX_ROWS = getattr(settings, "AGREEMENT_SYNC_MAX_ROWS", 1500)


@dataclass(frozen=True)
class Params:
    """What a report is computed for; JSON-ready so that a job can carry it."""

    scenario: str | None = None
    clips: tuple[str, ...] | None = None  # sample ids
    resamples: int = 1000
    seed: int = 0
    work_scope: str = DEFAULT_WORK_SCOPE  # which work counts (``scope``)

    def as_dict(self) -> dict:
        return {
            "scenario": self.scenario,
            "clips": list(self.clips) if self.clips is not None else None,
            "resamples": self.resamples,
            "seed": self.seed,
            "work_scope": self.work_scope,
        }

    @classmethod
    def from_dict(cls, d: dict) -> Params:
        clips = d.get("clips")
        return cls(
            d.get("scenario"),
            tuple(clips) if clips is not None else None,
            d.get("resamples", 1000),
            d.get("seed", 0),
            d.get("work_scope", DEFAULT_WORK_SCOPE),
        )

    @classmethod
    def from_query(cls, query, default_scope: str = DEFAULT_WORK_SCOPE) -> Params:
        """From request parameters (``scope``, ``scenario``, ``resamples``, ``seed``); ValueError with a message.
        Without ``scope``, ``default_scope`` (the project's study design)."""
        work_scope = check_work_scope((query.get("scope") or "").strip() or default_scope)
        scenario = (query.get("scenario") or "").strip() or None
        if scenario is not None and scenario not in SCENARIOS:
            raise ValueError(f"scenario must be one of {', '.join(SCENARIOS)}, got {scenario!r}")
        numbers = {}
        for name, default in (("resamples", 1000), ("seed", 0)):
            raw = (query.get(name) or "").strip()
            try:
                numbers[name] = int(raw) if raw else default
            except ValueError:
                raise ValueError(f"{name} must be a whole number, got {raw!r}") from None
        if numbers["seed"] < 0:
            raise ValueError("seed must be 0 or more")
        check_resamples(numbers["resamples"])
        return cls(scenario, None, numbers["resamples"], numbers["seed"], work_scope)

    def query(self) -> str:
        """The request parameters that give these params back (clips are not a request parameter)."""
        parts = {
            "scope": self.work_scope,
            "scenario": self.scenario or "",
            "resamples": self.resamples,
            "seed": self.seed,
        }
        return urlencode({k: v for k, v in parts.items() if v not in ("", None)})


@dataclass(frozen=True)
class ReportKind:
    """A kind of stored report: the label figures (``LABELS``), or the free-text figures (``TEXTS``).

    Both are stored in ``AgreementReport`` and computed by the same job
    machinery; a kind says what its stored scope adds to the parameters, what
    its fingerprint adds to the data's, and how to build it.
    """

    name: str
    job_kind: str
    # The setting naming the Celery queue its jobs go to: free-text reports (the embedding model, minutes when
    # cold) have their own, so that a label report never waits behind one (a deployment runs a worker for each).
    queue_setting: str

    @property
    def queue(self) -> str:
        return getattr(settings, self.queue_setting)

    def scope(self, params: Params) -> dict:
        return params.as_dict()

    def fingerprint_head(self) -> tuple:
        return ("agreement report", REPORT_VERSION)

    @property
    def text_parts(self) -> tuple[str, ...]:
        """The documents' free-text parts ``build_from`` reads besides their label parts (``extract``)."""
        return ()

    def build(self, project: Project, params: Params, progress=None) -> tuple[dict, dict]:
        """(the report, facts about the run for the job's result): ``build_from`` on a fresh extraction."""
        candidates = candidate_clips(project, scenario=params.scenario, clips=params.clips)
        extraction = extract(candidates, params.work_scope, text_parts=self.text_parts)
        return self.build_from(extraction, candidates, project, params, progress)

    def build_from(self, extraction, candidates, project: Project, params: Params, progress=None) -> tuple[dict, dict]:
        """``build`` from coders, rows and units already extracted (``extract``) from the clips ``candidates``
        (a release computes both kinds from one extraction)."""
        scope = report_scope(params.scenario, params.clips, params.work_scope)
        return report_from_extraction(
            extraction,
            project=project.slug,
            scope=scope,
            resamples=params.resamples,
            seed=params.seed,
            progress=progress,
            quick_seconds=project.quick_confirm_seconds,
        ), {}


@dataclass(frozen=True)
class TextReportKind(ReportKind):
    """The free-text figures: they also depend on the embedding model, which names them in their scope."""

    def scope(self, params: Params) -> dict:
        return {**params.as_dict(), "measure": SEMANTIC, "model": _semantic_provider().id}

    @property
    def text_parts(self) -> tuple[str, ...]:
        from .textfields import READS

        return READS

    def fingerprint_head(self) -> tuple:
        from .semantic import SEMANTIC_VERSION

        return ("semantic agreement report", SEMANTIC_VERSION, _semantic_provider().id)

    def build_from(self, extraction, candidates, project: Project, params: Params, progress=None) -> tuple[dict, dict]:
        from .semantic import semantic_report_for_extraction

        scope = report_scope(params.scenario, params.clips, params.work_scope)
        return semantic_report_for_extraction(
            extraction,
            candidates,
            project=project.slug,
            scope=scope,
            resamples=params.resamples,
            seed=params.seed,
            provider=_semantic_provider(),
            progress=progress,
        )


def _semantic_provider():
    from .embeddings import current_provider

    return current_provider()


NOMINAL, SEMANTIC = "nominal", "semantic"
LABELS = ReportKind(NOMINAL, JOB_KIND, "CELERY_TASK_DEFAULT_QUEUE")
TEXTS = TextReportKind(SEMANTIC, "agreement-semantic", "EMBEDDINGS_QUEUE")
KINDS_BY_JOB = {k.job_kind: k for k in (LABELS, TEXTS)}


@dataclass
class ReportState:
    """Where the report of some params stands.

    ``status``: "ready" (``report`` is current), "queued" / "running" (``job``
    computes it), "failed" (``job.error`` says why) or "missing" (nothing
    started). Unless ready, ``report`` is the last stored report of the same
    scope, computed from older data (``stale``), or None.
    """

    status: str
    fingerprint: str
    report: AgreementReport | None = None
    job: Job | None = None

    @property
    def stale(self) -> bool:
        return self.report is not None and self.report.fingerprint != self.fingerprint


def _feed(digest, rows) -> None:
    for row in rows:
        digest.update("\x1f".join(map(str, row)).encode())
        digest.update(b"\x1e")


def _feed_table(digest, rows: QuerySet, fields: tuple[str, ...]) -> None:
    """Feed ``fields`` of every row, in id order, into ``digest``.

    On PostgreSQL the rows are digested by the server (one MD5 over the
    ordered rows; only that comes back): reading tens of thousands of
    timestamps into Python just to hash them was most of a fingerprint's time.
    Elsewhere the rows are hashed here, as the database spells them (read with
    the cursor: turning every timestamp into a datetime first was most of a
    SQLite fingerprint's time). Either way a change to any field of any row,
    or a row added or removed, changes the digest.
    """
    if connections[rows.db].vendor != "postgresql":
        sql, params = rows.order_by("id").values_list(*fields).query.sql_with_params()
        with connections[rows.db].cursor() as cursor:
            cursor.execute(sql, params)
            while batch := cursor.fetchmany(5000):
                _feed(digest, batch)
        return
    from django.contrib.postgres.aggregates import StringAgg

    null, separator = Value("\x1d", output_field=TextField()), Value("\x1f", output_field=TextField())
    parts = []
    for name in fields:
        parts += [Coalesce(Cast(name, TextField()), null), separator]
    server = rows.order_by().aggregate(
        digest=MD5(StringAgg(Concat(*parts, output_field=TextField()), delimiter="\x1e", order_by="id")),
        n=Count("id"),
    )
    digest.update(f"{server['n']}:{server['digest'] or ''}".encode())
    digest.update(b"\x1e")


def data_digest(project: Project, params: Params) -> str:
    """Digest of the data a report of ``project`` with ``params`` reads, whatever its kind.

    Both kinds (labels, free text) read the same clips, rows, assignments,
    revisions and drafts, so a page that shows both reads the data once
    (``fingerprint(..., data=...)``).
    """
    check_resamples(params.resamples)
    check_work_scope(params.work_scope)
    clips = candidate_clips(project, scenario=params.scenario, clips=params.clips)
    digest = hashlib.sha256()
    _feed(
        digest,
        [
            (
                project.slug,
                params.scenario,
                scope_sample_ids(params.clips),
                params.resamples,
                params.seed,
                params.work_scope,
                project.quick_confirm_seconds,
            )
        ],
    )
    # Participants decide the relationship groups the anchoring effect resamples.
    _feed(digest, clips.order_by("id").values_list("id", "sample_id", "scenario", "state", "participants"))
    _feed_table(digest, Row.objects.filter(clip__in=clips), ("id", "clip_id", "row_index", "primary_speaker"))
    _feed_table(
        digest,
        Assignment.objects.filter(clip__in=clips),
        ("id", "clip_id", "annotator_id", "annotator__username", "mode"),
    )
    # Which revisions count, and why the others do not (this is where an assignment's state matters); then the
    # content (version, time) of those that count. Work in progress that does not count changes nothing here.
    text = lambda name: Cast(name, TextField())  # noqa: E731
    counted = Concat(text("version"), Value("|"), "status", Value("|"), text("updated_at"), output_field=TextField())
    revisions = with_left_out(Revision.objects.filter(row__clip__in=clips), params.work_scope, counted=counted)
    _feed_table(digest, revisions, ("id", "row_id", "annotator_id", LEFT_OUT_FIELD))
    _feed_table(digest, Draft.objects.filter(row__clip__in=clips), ("id", "row_id", "updated_at"))
    return digest.hexdigest()


def fingerprint(project: Project, params: Params, kind: ReportKind = LABELS, *, data: str | None = None) -> str:
    """Digest of everything a report of ``kind`` for ``project`` with ``params`` depends on.

    ``data``: the ``data_digest`` of the same project and params, when the caller has it already.
    """
    if data is None:
        data = data_digest(project, params)
    digest = hashlib.sha256()
    _feed(digest, [(*kind.fingerprint_head(), data)])
    return digest.hexdigest()


def cached_report(project: Project, fp: str) -> AgreementReport | None:
    """The stored report computed from exactly the data ``fp`` describes, if any."""
    return AgreementReport.objects.filter(project=project, fingerprint=fp).order_by("-created_at", "-id").first()


def latest_report(project: Project, params: Params, kind: ReportKind = LABELS) -> AgreementReport | None:
    """The last stored report of the same scope and parameters, current or not."""
    scope = kind.scope(params)
    # A project keeps one report per scope (``store_report``): a handful of rows, compared here.
    for stored in AgreementReport.objects.filter(project=project).only("pk", "scope").order_by("-created_at", "-id"):
        if stored.scope == scope:
            return AgreementReport.objects.get(pk=stored.pk)
    return None


def previous_figures(stored: AgreementReport) -> dict:
    """The human alphas of a stored report per slice and measure, and when it was computed."""
    alphas = {}
    for entry in stored.report.get("slices", []):
        alphas[entry["key"]] = {
            key: item["humans"].get("alpha") if item["humans"].get("defined") else None
            for key, item in (entry.get("measures") or {}).items()
        }
    return {"created_at": stored.created_at.isoformat(), "alphas": alphas}


def store_report(project: Project, params: Params, fp: str, report: dict, kind: ReportKind = LABELS) -> AgreementReport:
    """Keep ``report`` under ``fp``; older reports of the same scope are dropped (they can never match again)."""
    scope = kind.scope(params)
    with transaction.atomic():
        stale = [r.pk for r in AgreementReport.objects.filter(project=project).only("pk", "scope") if r.scope == scope]
        if kind is LABELS and stale:
            # The dashboard says what changed since the last report: keep its alphas before it goes.
            last = AgreementReport.objects.filter(pk__in=stale).order_by("-created_at", "-id").first()
            report = {**report, "previous": previous_figures(last)}
        AgreementReport.objects.filter(pk__in=stale).delete()
        return AgreementReport.objects.create(project=project, scope=scope, fingerprint=fp, report=report)


def compute_and_store(
    project: Project,
    params: Params,
    progress=None,
    kind: ReportKind = LABELS,
    facts: dict | None = None,
    *,
    fp: str | None = None,
) -> AgreementReport | None:
    """Compute and store; None when the data changed while computing (the result would be mislabelled).

    ``facts`` (a dict, if given) receives what the run did beyond the report (texts embedded, for the semantic kind).
    ``fp``: the fingerprint the caller has just taken of the same data (else it is taken here).
    """
    fp = fp or fingerprint(project, params, kind)
    report, run = kind.build(project, params, progress)
    if facts is not None:
        facts.update(run)
    if fingerprint(project, params, kind) != fp:
        return None
    return store_report(project, params, fp, report, kind)


# What keeps a kind of report from being computed here, without being a bug: no embedding model or provider (an
# ``embeddings.EmbeddingError`` is a RuntimeError), a model folder that cannot be read.
UNAVAILABLE = (RuntimeError, OSError, ImportError)


@contextmanager
def consistent_reads():
    """A block whose reads all see one state of the database; yields whether it could be had.

    On PostgreSQL, outside any transaction: a REPEATABLE READ transaction (the
    block only reads, and holds no writer back). Inside a caller's transaction
    the isolation level is the caller's, and SQLite's read transactions would
    hold writers back for the whole computation, so there the answer is False.
    """
    if connection.vendor != "postgresql" or connection.in_atomic_block:
        yield False
        return
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        yield True


def reports_for(project: Project, params: Params, kinds: tuple[ReportKind, ...] = (LABELS, TEXTS)) -> dict:
    """Each kind's report for ``params``: the stored one when current, else computed and stored.

    What a release needs: every kind from one reading of the data. The data's
    digest is taken once (and the kinds' fingerprints derived from it), the
    coders, rows and units are extracted once for every kind computed, and all
    of it inside one database snapshot where there is one, so that the stored
    fingerprints describe exactly the data the reports were computed from.
    Elsewhere the digest is taken again afterwards, and reports whose data
    changed meanwhile are returned but not stored.

    Returns ``{kind: report dict, or the exception that kept it from being
    computed}``: a free-text report may fail (no embedding model) while the
    label report stands.
    """
    out: dict[ReportKind, dict | Exception] = {}
    built: dict[ReportKind, dict] = {}
    with consistent_reads() as consistent:
        data = data_digest(project, params)
        fps = {}
        for kind in kinds:
            try:
                fps[kind] = fingerprint(project, params, kind, data=data)
            except UNAVAILABLE as exc:
                out[kind] = exc
                continue
            stored = cached_report(project, fps[kind])
            if stored is not None:
                out[kind] = stored.report
        missing = [kind for kind in kinds if kind not in out]
        if missing:
            candidates = candidate_clips(project, scenario=params.scenario, clips=params.clips)
            # One reading of the documents for every kind computed: the label parts and every part a kind adds.
            text_parts = tuple(dict.fromkeys(part for kind in missing for part in kind.text_parts))
            extraction = extract(candidates, params.work_scope, text_parts=text_parts)
            for kind in missing:
                try:
                    built[kind] = kind.build_from(extraction, candidates, project, params)[0]
                except UNAVAILABLE as exc:
                    out[kind] = exc
    if built and (consistent or data_digest(project, params) == data):
        for kind, report in built.items():
            store_report(project, params, fps[kind], report, kind)
    out.update(built)
    return {kind: out[kind] for kind in kinds}


def compute_release_reports(
    project: Project, *, clips, resamples: int = 1000, seed: int = 0
) -> tuple[dict, dict | Exception]:
    """The label report and the free-text (semantic) report of ``clips``, the coded work of the project's study
    design (submitted work unless the lead chose otherwise): what a release ships (``releases.agreement_report``).

    Each is the stored report when current for this data (and embedding model), else both are computed from one
    reading of the data and stored (``reports_for``). The free-text report is the exception that kept it from
    being computed (no embedding model, say) instead of a dict when it could not be; the label report raises.
    """
    params = Params(clips=tuple(sorted(clips)), resamples=resamples, seed=seed, work_scope=project.work_scope)
    reports = reports_for(project, params, (LABELS, TEXTS))
    if isinstance(reports[LABELS], Exception):
        raise reports[LABELS]
    return reports[LABELS], reports[TEXTS]


def _latest_job(fp: str, kind: ReportKind = LABELS) -> Job | None:
    key = f"{kind.job_kind}:{fp}"
    return Job.objects.filter(kind=kind.job_kind, key=key).order_by("-created_at", "-id").first()


class Compute(Enum):
    """How ``ensure_report`` has a missing or stale report computed: one choice per kind of caller."""

    # In this process, before returning (the command).
    IN_PROCESS = "in process"
    # Label reports of up to SYNC_MAX_ROWS rows in this process, anything else as a job (the API). Free-text
    # figures need the embedding model, never loaded in a web process: always a job. Where tasks run eagerly
    # (no broker configured), that job has run before the call returns.
    IN_PROCESS_IF_SMALL = "in process if small"
    # Always a job, so that the caller answers at once (the page): where tasks run eagerly (no broker
    # configured), the job runs in a thread.
    AS_JOB = "as a job"


def report_state(
    project: Project, params: Params, *, kind: ReportKind = LABELS, data: str | None = None
) -> ReportState:
    """Where the report of ``kind`` for ``params`` stands; never starts anything (``ensure_report`` does).

    ``data``: the params' ``data_digest``, when the caller has it already.
    """
    fp = fingerprint(project, params, kind, data=data)
    latest = latest_report(project, params, kind)
    if latest is not None and latest.fingerprint == fp:
        return ReportState("ready", fp, report=latest)
    job = _latest_job(fp, kind)
    if job is not None and job.state in (JobState.QUEUED, JobState.RUNNING):
        return ReportState(job.state, fp, report=latest, job=job)
    if job is not None and job.state == JobState.FAILED:
        return ReportState("failed", fp, report=latest, job=job)
    return ReportState("missing", fp, report=latest, job=job)


def ensure_report(
    project: Project,
    params: Params,
    *,
    compute: Compute,
    user=None,
    kind: ReportKind = LABELS,
    data: str | None = None,
    retry: bool = False,
) -> ReportState:
    """Have the report of ``kind`` for ``params`` computed, the way ``compute`` says, unless it is current or being
    computed; where it stands then (``report_state``).

    A failed job is not started again unless ``retry``. ``data``: the params' ``data_digest``, when the caller has
    it already.
    """
    state = report_state(project, params, kind=kind, data=data)
    if state.status in ("ready", JobState.QUEUED, JobState.RUNNING) or (state.status == "failed" and not retry):
        return state
    fp, latest = state.fingerprint, state.report
    in_process = compute is Compute.IN_PROCESS
    if compute is Compute.IN_PROCESS_IF_SMALL:
        in_scope = candidate_clips(project, scenario=params.scenario, clips=params.clips)
        in_process = kind is LABELS and Row.objects.filter(clip__in=in_scope).count() <= SYNC_MAX_ROWS
    if in_process:
        stored = compute_and_store(project, params, kind=kind, fp=fp)
        if stored is not None:
            return ReportState("ready", fp, report=stored)
        return report_state(project, params, kind=kind)  # the data changed meanwhile: where the new data stand
    job = start_job(project, params, fp, user=user, kind=kind, page=compute is Compute.AS_JOB)
    # With eager tasks (no broker) the job has already run by now, unless started AS_JOB (then it runs in a thread).
    job.refresh_from_db()
    stored = cached_report(project, fp) if job.state == JobState.SUCCEEDED else None
    if stored is not None:
        return ReportState("ready", fp, report=stored, job=job)
    return ReportState("failed" if job.state == JobState.FAILED else job.state, fp, report=latest, job=job)


def start_job(
    project: Project, params: Params, fp: str, *, user=None, kind: ReportKind = LABELS, page: bool = False
) -> Job:
    """``page``: started by a page, which must answer at once; with eager tasks the job then runs in a thread."""
    job = Job.objects.create(
        kind=kind.job_kind, project=project, key=f"{kind.job_kind}:{fp}", params=params.as_dict(), created_by=user
    )
    return jobs.enqueue(job, compute_report_task, queue=kind.queue, in_thread_when_eager=page)


def throttled_progress(job_id: int, every: float = 0.5):
    """A progress callback that writes the Job row at most every ``every`` seconds (and at the end)."""
    last = [0.0]

    def report(done: int, total: int) -> None:
        now = time.monotonic()
        if done >= total or now - last[0] >= every:
            last[0] = now
            jobs.report_progress(job_id, done, total)

    return report
