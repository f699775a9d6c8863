"""Reads for the annotator's workspace, always scoped to the caller.

An annotator reads their own assignments, their own revisions, the LLM draft
of their clips and their own comments; never another annotator's work.
"""

from __future__ import annotations

from django.db.models import Count, Max, Q
from django.http import Http404
from django.urls import reverse

from .. import selectors
from ..codebook.selectors import editor_guidance
from ..labels import state_label, state_words
from ..models import (
    AnnotatorSettings,
    Assignment,
    AssignmentMode,
    AssignmentPurpose,
    AssignmentState,
    Clip,
    ClipState,
    Draft,
    Revision,
    RevisionStatus,
    Row,
)
from ..preannotate.selectors import modality_note
from ..schema import ANNOTATION_KEYS
from ..services import closed_to
from ..taxonomy import load_taxonomy
from .services import relation_keys


def my_assignments(user):
    """The caller's assignments with progress counters, most recently active first."""
    mine = Q(clip__rows__revisions__annotator=user)
    return (
        Assignment.every.filter(
            annotator=user
        )  # known-answer checks and qualification rounds too: the workspace is theirs
        .select_related("clip__project")
        .annotate(
            rows_total=Count("clip__rows__revisions", filter=mine, distinct=True),
            rows_reviewed=Count(
                "clip__rows__revisions",
                filter=mine & Q(clip__rows__revisions__status=RevisionStatus.REVIEWED),
                distinct=True,
            ),
            rows_edited=Count(
                "clip__rows__revisions",
                filter=mine & Q(clip__rows__revisions__status=RevisionStatus.EDITED),
                distinct=True,
            ),
            rows_with_warnings=Count("clip__rows", filter=~Q(clip__rows__draft__warnings=[]), distinct=True),
            rows_commented=Count("clip__comments__row", filter=Q(clip__comments__author=user), distinct=True),
            last_activity=Max("clip__rows__revisions__updated_at", filter=mine),
        )
        .order_by("-last_activity", "clip__sample_id")
    )


def queue_counters(assignments) -> dict:
    """Totals across the queue, like the benchmark's own review dashboard."""
    totals = {"clips": 0, "rows": 0, "reviewed": 0, "remaining": 0, "commented": 0, "submitted": 0}
    for a in assignments:
        a.rows_remaining = a.rows_total - a.rows_reviewed
        totals["clips"] += 1
        totals["rows"] += a.rows_total
        totals["reviewed"] += a.rows_reviewed
        totals["commented"] += a.rows_commented
        totals["submitted"] += a.state == "submitted"
    totals["remaining"] = totals["rows"] - totals["reviewed"]
    return totals


def resume_target(assignments):
    """Where to pick up: the most recent unfinished assignment and its first unreviewed row."""
    for a in assignments:
        if a.state != "submitted" and a.rows_reviewed < a.rows_total:
            first_open = (
                Revision.objects.filter(row__clip=a.clip_id, annotator=a.annotator_id)
                .exclude(status=RevisionStatus.REVIEWED)
                .order_by("row__row_index")
                .values_list("row__row_index", flat=True)
                .first()
            )
            return a, first_open
    return None, None


def workspace_clip(user, clip_id: int) -> Clip:
    """The clip if the caller may open it in the workspace (assigned, or a lead)."""
    try:
        return selectors.visible_clips(user).get(pk=clip_id)
    except Clip.DoesNotExist:
        raise Http404("no such clip") from None


def editor_config(clip: Clip) -> dict:
    """Everything the row editor offers: entities, labels with definitions, the taxonomy's boundary
    rules, and the project's own guidance (``codebook``) with the address of its guide page."""
    tax = load_taxonomy(clip.scenario, clip.project.taxonomy_version)
    labels = lambda items: [{"label": x.label, "definition": x.definition} for x in items]  # noqa: E731
    return {
        # The words of every state, as every page writes them (the labels on the state choices).
        "state_words": state_words(),
        "scenario": clip.scenario,
        "taxonomy_version": tax.version,
        "group_label": tax.group_label,
        "participants": list(clip.participants),
        "entities": list(tax.entities(clip.participants)),
        "relation_patterns": labels(tax.relation_patterns),
        "support_strategies": labels(tax.support_strategies),
        "utterance_types": labels(tax.utterance_types),
        "rules": [
            {"id": r.id, "field": r.field, "labels": list(r.labels), "title": r.title, "text": r.text}
            for r in tax.rules
        ],
        "guidance": editor_guidance(clip.project, clip.scenario),
        "guide_url": reverse("codebook-guide", args=[clip.project.slug]) + f"?scenario={clip.scenario}",
    }


def annotator_settings(user) -> dict:
    """How the caller's media replays (their saved settings, or the defaults)."""
    saved = AnnotatorSettings.objects.filter(user=user).first() or AnnotatorSettings()
    return {"replay_speed": float(saved.replay_speed), "preroll": float(saved.preroll)}


def read_only_reason(user, clip: Clip, assignment: Assignment | None) -> dict | None:
    """Why the caller cannot edit this clip in the workspace (None: they can).

    ``reason`` is a fixed word for scripts (discarded, released, submitted,
    not_assigned); ``message`` says it to a person, and who can change it.
    """
    if clip.state == ClipState.DISCARDED:
        # Never the discard reason: it may quote a coder's proposal, and coders are blind to each other.
        return {
            "reason": "discarded",
            "message": "A lead discarded this clip: it left the benchmark and nothing in it can be edited.",
        }
    if clip.state == ClipState.RELEASED and closed_to(
        clip.state, assignment.purpose if assignment else AssignmentPurpose.PRODUCTION
    ):
        return {
            "reason": "released",
            "message": "This clip is part of a frozen release: its annotations can be read here but no longer edited.",
        }
    if assignment is None:
        return {
            "reason": "not_assigned",
            "message": "You are viewing this clip without an assignment: nothing here can be edited.",
        }
    if assignment.state == AssignmentState.SUBMITTED:
        return {
            "reason": "submitted",
            "message": (
                "You submitted this clip, so it is read-only. A lead can reopen it for you (a re-review "
                "request); ask one if something needs changing."
            ),
            "since": assignment.submitted_at.isoformat() if assignment.submitted_at else None,
        }
    return None


def workspace_payload(user, clip: Clip) -> dict:
    """The clip, its cues and rows, the caller's revision and the draft of each row.

    A fixed number of queries whatever the number of rows.
    """
    assignment = Assignment.every.filter(clip=clip, annotator=user).first()
    # Calibration assignments start empty so the draft cannot anchor them: hide it.
    show_draft = assignment is None or assignment.mode != AssignmentMode.FROM_EMPTY
    rows = list(Row.objects.filter(clip=clip).order_by("row_index"))
    # Only what the payload shows: decoding the unused JSON columns (the key layouts) was a third of the decoding.
    revisions = {
        r.row_id: r
        for r in Revision.objects.filter(row__clip=clip, annotator=user).only(
            "row_id", "version", "status", "content", "warnings", "updated_at"
        )
    }
    drafts = (
        {
            d.row_id: d
            for d in Draft.objects.filter(row__clip=clip).only("row_id", "content", "warnings", "source", "modality")
        }
        if show_draft
        else {}
    )
    # Their own notes, and what leads wrote to every coder or to them alone — never another annotator's.
    comments = (
        selectors.visible_comments(user, clip).select_related("author", "row", "addressee").order_by("created_at")
    )
    comment_list = [
        {
            "id": c.pk,
            "row": c.row.row_index if c.row_id else None,
            "kind": c.kind,
            "body": c.body,
            "author": c.author.username,
            "to": c.addressee.username if c.addressee_id else None,
            "created_at": c.created_at.isoformat(),
            "resolved": c.resolved,
        }
        for c in comments
    ]
    commented_rows = {c["row"] for c in comment_list if c["row"] is not None}
    payload_rows = []
    for row in rows:
        revision, draft = revisions.get(row.pk), drafts.get(row.pk)
        content = revision.content if revision else (draft.content if draft else {})
        label_key, reason_key, evidence_key = relation_keys(content, row.primary_speaker)
        payload_rows.append(
            {
                "row_index": row.row_index,
                "start_time": row.start_time,
                "end_time": row.end_time,
                "primary_speaker": row.primary_speaker,
                "dialogue_cleaned": row.dialogue_cleaned,
                "relation_keys": [label_key, reason_key, evidence_key],
                "revision": (
                    {
                        "id": revision.pk,
                        "version": revision.version,
                        "status": revision.status,
                        "content": revision.content,
                        "warnings": revision.warnings,
                        "updated_at": revision.updated_at.isoformat(),
                    }
                    if revision
                    else None
                ),
                "draft": (
                    # What the model could perceive when it drafted the row ("drafted from the transcript only").
                    {
                        "content": draft.content,
                        "warnings": draft.warnings,
                        "source": draft.source,
                        "modality": draft.modality,
                        "modality_note": modality_note(draft.modality),
                    }
                    if draft
                    else None
                ),
                "commented": row.row_index in commented_rows,
            }
        )
    return {
        "clip": clip_header(clip),
        "assignment": {"id": assignment.pk, "mode": assignment.mode, "state": assignment.state} if assignment else None,
        "read_only": read_only_reason(user, clip, assignment),
        "settings": annotator_settings(user),
        "cues": [
            {"position": c.position, "start": c.start_time, "end": c.end_time, "speaker": c.speaker, "text": c.text}
            for c in clip.cues.order_by("position")
        ],
        "rows": payload_rows,
        "comments": comment_list,
        "annotation_keys": list(ANNOTATION_KEYS),
        "config": editor_config(clip),
    }


def clip_header(clip: Clip) -> dict:
    """The clip as the row editor's pages embed it."""
    return {
        "id": clip.pk,
        "sample_id": clip.sample_id,
        "scenario": clip.scenario,
        "participants": clip.participants,
        "state": clip.state,
        "state_label": state_label(clip.state),
        "duration": clip.duration,
        "media_url": clip_media_url(clip),
        "media_kind": media_kind(clip),
        "project": clip.project.slug,
    }


def clip_media_url(clip: Clip) -> str:
    if clip.media:
        return reverse("workspace-media", args=[clip.pk])
    return clip.media_url or ""


def media_kind(clip: Clip) -> str:
    name = (clip.media.name if clip.media else clip.media_url or "").lower()
    if not name:
        return ""
    return "audio" if name.rsplit(".", 1)[-1] in {"mp3", "wav", "m4a", "ogg", "oga", "flac", "aac"} else "video"
