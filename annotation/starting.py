"""One assignment and the revisions it starts with: a copy of the draft, or an empty document; and handing an
assignment to another annotator."""

from __future__ import annotations

from django.db import transaction
from simple_history.utils import bulk_create_with_history

from .models import (
    Assignment,
    AssignmentMode,
    AssignmentPurpose,
    Clip,
    ClipState,
    Draft,
    Revision,
    RevisionStatus,
)
from .schema import CONVENTION_ROW_KEYS, SKELETON_KEYS, THERAPIST, RowAnnotation
from .services import ServiceError, transition

CONVENTION_ANNOTATION_KEYS = tuple(k for k in CONVENTION_ROW_KEYS if k not in SKELETON_KEYS)


def empty_content(draft_content: dict | None = None, speaker: str = "") -> dict:
    """A blank annotation document with the draft's keys (calibration mode).

    Lists are empty, texts are "", and the relation pattern is null (not
    annotated) — except the mirrored cycle keys, which are "" off therapist rows.
    """
    keys = list(draft_content) if draft_content else list(CONVENTION_ANNOTATION_KEYS)
    blank = {}
    for key in keys:
        field = RowAnnotation.model_fields.get(key)
        if field is None:
            continue
        if getattr(field.annotation, "__origin__", None) is list:
            blank[key] = []
        elif key in ("relation_pattern", "relation_pattern_reason"):
            blank[key] = None
        elif key in ("relation_cycle_state", "relation_cycle_reason") and speaker == THERAPIST:
            blank[key] = None  # mirrors the (unset) relation pattern on therapist rows
        else:
            blank[key] = ""
    return blank


def start_assignment(
    clip: Clip,
    user,
    *,
    mode: str = AssignmentMode.FROM_DRAFT,
    actor=None,
    design: dict | None = None,
    purpose: str = AssignmentPurpose.PRODUCTION,
) -> Assignment:
    """Create the assignment and one revision per row (draft copy or empty); ``design`` records why this mode.

    ``purpose``: production work, or the annotator's record (a qualification round, a known-answer check).
    """
    if Assignment.every.filter(clip=clip, annotator=user).exists():
        raise ServiceError(f"{user.username} is already assigned to {clip.sample_id}")
    assignment = Assignment(clip=clip, annotator=user, mode=mode, design=design or {}, purpose=purpose)
    if actor is not None:
        assignment._history_user = actor
    assignment.save()
    drafts = {d.row_id: d for d in Draft.objects.filter(row__clip=clip)}
    revisions = []
    for row in clip.rows.all():
        draft = drafts.get(row.pk)
        if mode == AssignmentMode.FROM_DRAFT and draft is not None:
            content, layout = dict(draft.content), dict(draft.layout)
        else:
            content, layout = (
                empty_content(draft.content if draft else None, row.primary_speaker),
                dict(draft.layout) if draft else {},
            )
        revisions.append(
            Revision(row=row, annotator=user, content=content, layout=layout, status=RevisionStatus.UNTOUCHED)
        )
    bulk_create_with_history(revisions, Revision, default_user=actor)
    if purpose == AssignmentPurpose.PRODUCTION and clip.state in (ClipState.IMPORTED, ClipState.PREANNOTATED):
        transition(clip, ClipState.IN_REVIEW, actor=actor, reason=f"assigned to {user.username}")
    return assignment


@transaction.atomic
def reassign(assignment: Assignment, new_user, *, actor=None, discard_edits: bool = False) -> Assignment:
    """Hand a clip to another annotator. Edited work is only thrown away when asked to."""
    if Assignment.every.filter(clip=assignment.clip, annotator=new_user).exists():
        raise ServiceError(f"{new_user.username} is already assigned to {assignment.clip.sample_id}")
    revisions = Revision.objects.filter(row__clip=assignment.clip, annotator=assignment.annotator)
    if not discard_edits and revisions.exclude(status=RevisionStatus.UNTOUCHED).exists():
        raise ServiceError(
            f"{assignment.annotator.username} has already edited {assignment.clip.sample_id}; reassigning would "
            "discard that work"
        )
    clip, mode, design = assignment.clip, assignment.mode, assignment.design
    for revision in revisions:
        revision.delete()  # one by one, so each deletion is in the audit trail
    assignment.delete()
    return start_assignment(clip, new_user, mode=mode, actor=actor, design=design)
