"""The dashboard's free-text part: each coder's agreement with the adjudicated gold on every free-text field,
with the project's free-text measure (the round's own computation, ``free_text.field_figure``).

The embedding model loads on a worker of the embeddings queue only, never in a web request nor in the label
dashboard's task (which must not wait behind it): the page enqueues this part beside the label dashboard and
says it is being computed until it is stored. Stored in ``AnnotatorRecordReport`` under its own scenario key
(``store_key``) with the label dashboard's fingerprint, so it is current exactly when the label dashboard is.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.utils import timezone

from .. import jobs
from ..agreement.embeddings import embed_texts
from ..agreement.extract import scope_clips
from ..agreement.scope import coded_revisions
from ..agreement.textfields import TEXT_FIELDS
from ..models import Gold, Job, JobState, Project
from .dashboard import fingerprint
from .free_text import field_figure, text_units
from .models import AnnotatorRecordReport

JOB_KIND = "record_dashboard_texts"


def store_key(scenario: str) -> str:
    """The scenario key the free-text part is stored under, beside the label dashboard's ``scenario``."""
    return f"~{scenario}"


def coder_units(project: Project, scenario: str) -> dict[str, list[dict]]:
    """Per coder: one unit per row with gold that the coder's counted production work covers (as a round's)."""
    clips = scope_clips(project, scenario=scenario)
    revisions = coded_revisions(clips, project.work_scope).values_list(
        "row_id", "row__primary_speaker", "annotator__username", "content"
    )
    revisions = list(revisions.order_by("annotator__username", "row__clip__sample_id", "row__row_index"))
    golds = {
        g["row_id"]: g["content"]
        for g in Gold.objects.filter(row_id__in={r[0] for r in revisions}).values("row_id", "content")
    }
    out: dict[str, list[dict]] = {}
    for row_id, speaker, username, content in revisions:
        if row_id in golds:
            out.setdefault(username, []).append({"speaker": speaker, "coder": content, "gold": golds[row_id]})
    return out


def build(project: Project, scenario: str, provider=None) -> dict:
    per_coder = {name: text_units(units) for name, units in coder_units(project, scenario).items()}
    texts = {t for fields in per_coder.values() for pairs in fields.values() for pair in pairs for t in pair if t}
    vectors = embed_texts(sorted(texts), provider).vectors if texts else {}
    fields = []
    for field in TEXT_FIELDS:
        fields.append(
            {
                "key": field.key,
                "label": field.label,
                "coders": [
                    {"coder": name, **field_figure(by_field[field.key], vectors)}
                    for name, by_field in per_coder.items()
                ],
            }
        )
    return {
        "scenario": scenario,
        "computed_at": timezone.now().isoformat(),
        "coders": list(per_coder),
        "measure": "embedding",
        "fields": fields,
    }


def compute_and_store(project: Project, scenario: str, fp: str, provider=None) -> AnnotatorRecordReport | None:
    report = build(project, scenario, provider)
    if fingerprint(project, scenario) != fp:
        return None  # the data changed while computing
    AnnotatorRecordReport.objects.filter(project=project, scenario=store_key(scenario)).delete()
    return AnnotatorRecordReport.objects.create(
        project=project, scenario=store_key(scenario), fingerprint=fp, report=report
    )


@dataclass
class TextState:
    status: str  # "ready", "queued", "running", "failed", or "missing" (nothing started)
    report: dict | None = None
    job: Job | None = None


def text_state(project: Project, scenario: str, fp: str) -> TextState:
    """The stored free-text part for the data as they are (``fp``: the label dashboard's fingerprint), or the
    worker's job computing it; never starts anything (``ensure_text_report`` does)."""
    stored = AnnotatorRecordReport.objects.filter(project=project, scenario=store_key(scenario), fingerprint=fp).first()
    if stored is not None:
        return TextState("ready", stored.report)
    job = Job.objects.filter(kind=JOB_KIND, key=_job_key(scenario, fp)).order_by("-created_at", "-id").first()
    if job is not None and job.state in (JobState.QUEUED, JobState.RUNNING, JobState.FAILED):
        return TextState(job.state, None, job)
    return TextState("missing", None, job)


def ensure_text_report(project: Project, scenario: str, fp: str, *, user=None) -> TextState:
    """Where the free-text part stands (``text_state``), having started an embeddings worker's job when none is
    running and none failed."""
    state = text_state(project, scenario, fp)
    if state.status != "missing":
        return state
    from .celery_tasks import compute_dashboard_texts_task

    job = Job.objects.create(
        kind=JOB_KIND,
        project=project,
        key=_job_key(scenario, fp),
        params={"scenario": scenario, "fingerprint": fp},
        created_by=user,
    )
    return TextState(
        JobState.QUEUED,
        None,
        # With no broker (the demo) the embedding model loads in a thread after the response, never in the request.
        jobs.enqueue(job, compute_dashboard_texts_task, queue=settings.EMBEDDINGS_QUEUE, in_thread_when_eager=True),
    )


def _job_key(scenario: str, fp: str) -> str:
    return f"{JOB_KIND}:{scenario}:{fp}"
