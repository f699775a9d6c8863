"""The annotator's writes: saving a row's revision, marking it reviewed,
submitting a clip, commenting and flagging.

Saves are optimistic: each carries the revision ``version`` it was based on;
a save based on an older version is refused with the current state, so no
edit is ever silently overwritten.
"""
from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction
from django.db.models import Count, OuterRef, Subquery
from django.utils import timezone

from ..models import (
    Assignment,
    AssignmentState,
    Clip,
    ClipState,
    Comment,
    CommentKind,
    Revision,
    RevisionStatus,
    Row,
)
from ..schema import THERAPIST, ClipContext, Issue, check_row, relation_label_key
from ..services import ServiceError, transition


class VersionConflict(Exception):
    """The revision changed since the editor loaded it."""

    def __init__(self, revision: Revision):
        self.revision = revision
        super().__init__(f"row {revision.row.row_index} was saved elsewhere (now version {revision.version})")


class InvalidDocument(Exception):
    def __init__(self, issues: list[Issue]):
        self.issues = issues
        super().__init__("; ".join(str(i) for i in issues))


@dataclass(frozen=True)
class SaveResult:
    revision: Revision
    changed: bool


def relation_keys(content: dict, speaker: str) -> tuple[str, str, str]:
    """The (label, reason, evidence) keys the row's relation pattern is edited under."""
    label_key = relation_label_key({**content, "primary_speaker": speaker})
    if label_key == "relation_cycle_state":
        return "relation_cycle_state", "relation_cycle_reason", "relation_cycle_evidence_rows"
    return "relation_pattern", "relation_pattern_reason", "relation_pattern_evidence_rows"


def mirror_relation(content: dict, speaker: str, layout: dict) -> dict:
    """Keep the regular convention's mirrored cycle keys in step with the edited label.

    Only for documents in the platform's convention (no imported layout): the
    label lives in ``relation_pattern`` and therapist rows mirror it under
    ``relation_cycle_*`` (``""``/``[]`` elsewhere), as the public evaluation
    code expects. Imported rows keep exactly the keys they came with.
    """
    if layout.get("keys") or "relation_cycle_state" not in content:
        return content
    out = dict(content)
    if speaker == THERAPIST:
        # The same label, null included: "" would claim "no clear pattern".
        out["relation_cycle_state"] = content.get("relation_pattern")
        out["relation_cycle_reason"] = content.get("relation_pattern_reason")
        out["relation_cycle_evidence_rows"] = list(content.get("relation_pattern_evidence_rows") or [])
    else:
        out["relation_cycle_state"], out["relation_cycle_reason"], out["relation_cycle_evidence_rows"] = "", "", []
    return out


def clip_context(clip: Clip, row_count: int | None = None) -> ClipContext:
    return ClipContext.for_clip(
        clip.scenario, clip.participants, row_count if row_count is not None else clip.rows.count(), clip.project.taxonomy_version, clip.duration
    )


def validate_content(row: Row, content: dict, ctx: ClipContext | None = None) -> list[Issue]:
    """All issues of a human edit (strict: warnings are refused too), with row-relative paths."""
    ctx = ctx or clip_context(row.clip)
    _, report = check_row({**row.skeleton(), **content}, ctx, strict=True)
    return report.issues


def _revision_for_save(revision_id: int, user) -> Revision:
    """The caller's revision with what the checks need, in one query.

    No row lock: the UPDATE in ``_store`` only succeeds on the version that was
    read (optimistic locking), so concurrent saves of a project never queue.
    Raises Revision.DoesNotExist for anyone else's revision.
    """
    my_assignment = Assignment.objects.filter(clip_id=OuterRef("row__clip_id"), annotator=user)
    row_count = Row.objects.filter(clip_id=OuterRef("row__clip_id")).order_by().values("clip_id").annotate(n=Count("id")).values("n")
    revision = (
        Revision.objects.select_related("row__clip__project")
        .annotate(assignment_state=Subquery(my_assignment.values("state")[:1]), clip_row_count=Subquery(row_count))
        .get(pk=revision_id, annotator=user)
    )
    if revision.assignment_state is None:
        raise ServiceError("this clip is not assigned to you")
    if revision.assignment_state == AssignmentState.SUBMITTED:
        raise ServiceError("this clip was submitted; ask a lead to reopen it before editing")
    return revision


def _store(revision: Revision, user, expected_version: int) -> None:
    """Write the revision if it is still at ``expected_version``, and its history record.

    One conditional UPDATE and one history INSERT (simple-history's own bulk
    API, so the audit record is the same as a model save would write).
    """
    now = timezone.now()
    written = Revision.objects.filter(pk=revision.pk, annotator=user, version=expected_version).update(
        content=revision.content, warnings=revision.warnings, status=revision.status, version=expected_version + 1, updated_at=now
    )
    if not written:  # another save won the race since we read the row
        raise VersionConflict(Revision.objects.select_related("row").get(pk=revision.pk))
    revision.version, revision.updated_at = expected_version + 1, now
    Revision.history.bulk_history_create([revision], update=True, default_user=user, default_date=now)
    if revision.assignment_state == AssignmentState.ASSIGNED:  # the first save starts the assignment
        Assignment.objects.filter(clip_id=revision.row.clip_id, annotator=user, state=AssignmentState.ASSIGNED).update(state=AssignmentState.IN_PROGRESS)


@transaction.atomic
def save_revision(revision_id: int, user, content: dict, expected_version: int, *, reviewed: bool | None = None) -> SaveResult:
    """Validate and store an annotator's edit of one row."""
    revision = _revision_for_save(revision_id, user)
    if revision.version != expected_version:
        raise VersionConflict(revision)
    if not isinstance(content, dict):
        raise InvalidDocument([Issue("", "the document must be a JSON object", "model_type")])
    content = mirror_relation(content, revision.row.primary_speaker, revision.layout or {})
    issues = validate_content(revision.row, content, clip_context(revision.row.clip, revision.clip_row_count))
    if issues:
        raise InvalidDocument(issues)
    changed = content != revision.content
    revision.content = content
    revision.warnings = []
    if reviewed is True:
        revision.status = RevisionStatus.REVIEWED
    elif reviewed is False or (changed and revision.status == RevisionStatus.UNTOUCHED):
        revision.status = RevisionStatus.EDITED
    _store(revision, user, expected_version)
    return SaveResult(revision, changed)


@transaction.atomic
def set_reviewed(revision_id: int, user, expected_version: int, reviewed: bool = True) -> Revision:
    """Mark a row reviewed (its current content must pass validation) or reopen it."""
    revision = _revision_for_save(revision_id, user)
    if revision.version != expected_version:
        raise VersionConflict(revision)
    if reviewed:
        issues = validate_content(revision.row, revision.content, clip_context(revision.row.clip, revision.clip_row_count))
        if issues:
            raise InvalidDocument(issues)
    revision.status = RevisionStatus.REVIEWED if reviewed else RevisionStatus.EDITED
    _store(revision, user, expected_version)
    return revision


@transaction.atomic
def submit_assignment(assignment: Assignment, user) -> Assignment:
    """Hand in a clip once every row is reviewed; the clip is reviewed when all its coders are done."""
    assignment = Assignment.objects.select_for_update().select_related("clip").get(pk=assignment.pk, annotator=user)
    if assignment.state == AssignmentState.SUBMITTED:
        return assignment
    open_rows = Revision.objects.filter(row__clip=assignment.clip, annotator=user).exclude(status=RevisionStatus.REVIEWED)
    if open_rows.exists():
        indices = sorted(open_rows.values_list("row__row_index", flat=True))
        raise ServiceError(f"{len(indices)} rows are not reviewed yet (rows {', '.join(map(str, indices[:15]))}{'…' if len(indices) > 15 else ''})")
    assignment.state = AssignmentState.SUBMITTED
    assignment.submitted_at = timezone.now()
    assignment._history_user = user
    assignment.save()
    clip = assignment.clip
    if clip.state == ClipState.IN_REVIEW and not clip.assignments.exclude(state=AssignmentState.SUBMITTED).exists():
        transition(clip, ClipState.REVIEWED, actor=user, reason="all assignments submitted")
    return assignment


def add_comment(clip: Clip, user, body: str, *, row: Row | None = None, kind: str = CommentKind.COMMENT) -> Comment:
    body = (body or "").strip()
    if not body:
        raise ServiceError("a comment needs some text" if kind == CommentKind.COMMENT else "say why (a reason is required)")
    if len(body) > 10_000:
        raise ServiceError("comments are limited to 10,000 characters")
    if kind not in CommentKind.values:
        raise ServiceError(f"unknown comment kind {kind!r}")
    if kind in (CommentKind.FLAG_SPLIT, CommentKind.FLAG_MERGE) and row is None:
        raise ServiceError("a split/merge flag belongs on a row")
    if kind == CommentKind.DISCARD_PROPOSAL and row is not None:
        raise ServiceError("a discard proposal is about the whole clip, not a row")
    comment = Comment(clip=clip, row=row, author=user, body=body, kind=kind)
    comment._history_user = user
    comment.save()
    return comment
