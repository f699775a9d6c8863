"""The annotator's writes: saving a row's revision, marking it reviewed,
submitting a clip, commenting and flagging.

Saves are optimistic: each carries the revision ``version`` it was based on;
a save based on an older version is refused with the current state, so no
edit is ever silently overwritten.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from django.db import connection, transaction
from django.utils import timezone

from ..audit import current_source
from ..models import (
    AnnotatorSettings,
    Assignment,
    AssignmentState,
    Clip,
    ClipState,
    Comment,
    CommentKind,
    ReplaySpeed,
    Revision,
    RevisionStatus,
    Row,
)
from ..schema import THERAPIST, ClipContext, Issue, check_row, relation_key_family
from ..services import ClipClosed, ServiceError, closed_to, comment_addressee, ensure_clip_open, transition
from . import save_sql


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
    return relation_key_family({**content, "primary_speaker": speaker})


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
        clip.scenario,
        clip.participants,
        row_count if row_count is not None else clip.rows.count(),
        clip.project.taxonomy_version,
        clip.duration,
    )


# A document with thousands of wrong keys gets its first problems and a count, not a
# list of megabytes (issue 14: wide JSON).
ISSUES_LISTED = 50


def validate_content(row: Row, content: dict, ctx: ClipContext | None = None) -> list[Issue]:
    """The issues of a human edit (strict: warnings are refused too), with row-relative paths;
    past ISSUES_LISTED, the first ones and one more saying how many were left out."""
    ctx = ctx or clip_context(row.clip)
    _, report = check_row({**row.skeleton(), **content}, ctx, strict=True)
    issues = report.issues
    if len(issues) > ISSUES_LISTED:
        more = Issue("", f"and {len(issues) - ISSUES_LISTED} more problems like these", "too_many_issues")
        issues = [*issues[:ISSUES_LISTED], more]
    return issues


@dataclass
class SaveTarget:
    """The caller's revision with everything a save checks, read in one query (no lock)."""

    revision_id: int
    row: Row
    ctx: ClipContext
    assignment_state: str
    purpose: str
    version: int
    status: str
    layout: dict
    content: dict


def _json(value):
    # Raw cursors hand JSON columns back as text (PostgreSQL's jsonb included).
    return json.loads(value) if isinstance(value, (str, bytes)) else value


def load_for_save(revision_id: int, user) -> SaveTarget:
    """Read the caller's own revision for a save or review.

    Raises Revision.DoesNotExist for anyone else's revision (the API answers
    404 before reading the body), ServiceError when the clip is not, or no
    longer, the caller's to edit.
    """
    with connection.cursor() as cursor:
        cursor.execute(save_sql.context_select(), {"id": revision_id, "user": user.pk})
        found = cursor.fetchone()
    if found is None:
        raise Revision.DoesNotExist("no such revision")
    (
        row_id,
        index,
        start,
        end,
        speaker,
        dialogue,
        clip_id,
        scenario,
        participants,
        duration,
        taxonomy_version,
        row_count,
        assignment_state,
        version,
        status,
        layout,
        content,
        clip_state,
        purpose,
    ) = found
    if assignment_state is None:
        raise ServiceError("this clip is not assigned to you")
    if closed_to(clip_state, purpose):
        raise ClipClosed(Clip.objects.get(pk=clip_id), "edits or reviews")
    if assignment_state == AssignmentState.SUBMITTED:
        raise ServiceError("this clip was submitted; ask a lead to reopen it before editing")
    row = Row(
        id=row_id,
        clip_id=clip_id,
        row_index=index,
        start_time=start,
        end_time=end,
        primary_speaker=speaker,
        dialogue_cleaned=dialogue,
    )
    ctx = ClipContext.for_clip(scenario, _json(participants), row_count, taxonomy_version, duration)
    return SaveTarget(
        revision_id, row, ctx, assignment_state, purpose, version, status, _json(layout) or {}, _json(content)
    )


def _at_version(target: SaveTarget, expected_version: int) -> SaveTarget:
    """``target`` if the edit was based on its current version; else the conflict, with the current revision."""
    if target.version != expected_version:
        raise VersionConflict(Revision.objects.select_related("row").get(pk=target.revision_id))
    return target


def _write(target: SaveTarget, user, content: dict, status: str, expected_version: int) -> Revision:
    """Store the revision if it is still at ``expected_version``, with its audit record.

    A compare-and-set on the version (optimistic locking): concurrent saves of
    a project never queue on a lock, and a save that lost the race to another
    one updates nothing, which is the 409. On PostgreSQL the write and its
    history record are one statement, so there is no transaction to open.
    """
    now = timezone.now()
    params = {
        "id": target.revision_id,
        "user": user.pk,
        "version": expected_version,
        "clip": target.row.clip_id,
        "content": json.dumps(content),
        "warnings": "[]",
        "status": status,
        "now": now,
        "source": current_source(),
    }
    guidance = None
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(save_sql.write_and_audit_postgresql(), params)
            found = cursor.fetchone()
            written = found is not None
            guidance = found[1] if written else None
        else:
            update, audit = save_sql.write_statements_portable()
            with transaction.atomic():
                cursor.execute(update, params)
                written = cursor.rowcount == 1
                if written:
                    cursor.execute(audit, params)
                    cursor.execute(save_sql.guidance_number(), params)
                    found = cursor.fetchone()
                    guidance = found[0] if found else None
    if not written:
        current = Revision.objects.select_related("row__clip").get(pk=target.revision_id)
        ensure_clip_open(current.row.clip, "edits or reviews", target.purpose)  # discarded or released since we read it
        if current.version != expected_version:  # another save won the race since we read the row
            raise VersionConflict(current)
        raise ServiceError("this clip was submitted; ask a lead to reopen it before editing")
    if target.assignment_state == AssignmentState.ASSIGNED:  # the first save starts the assignment
        Assignment.every.filter(clip_id=target.row.clip_id, annotator=user, state=AssignmentState.ASSIGNED).update(
            state=AssignmentState.IN_PROGRESS
        )
    saved = Revision(
        id=target.revision_id,
        row=target.row,
        annotator=user,
        version=expected_version + 1,
        status=status,
        content=content,
        warnings=[],
        layout=target.layout,
        updated_at=now,
    )
    saved.guidance_number = guidance  # the number of the guidance version the save recorded (None: none yet)
    return saved


def save_revision(
    revision_id: int,
    user,
    content: dict,
    expected_version: int,
    *,
    reviewed: bool | None = None,
    target: SaveTarget | None = None,
) -> SaveResult:
    """Validate and store an annotator's edit of one row (``target`` when the caller has read it already)."""
    target = _at_version(target or load_for_save(revision_id, user), expected_version)
    if not isinstance(content, dict):
        raise InvalidDocument([Issue("", "the document must be a JSON object", "model_type")])
    content = mirror_relation(content, target.row.primary_speaker, target.layout)
    issues = validate_content(target.row, content, target.ctx)
    if issues:
        raise InvalidDocument(issues)
    changed = content != target.content
    status = target.status
    if reviewed is True:
        status = RevisionStatus.REVIEWED
    elif reviewed is False or (changed and target.status == RevisionStatus.UNTOUCHED):
        status = RevisionStatus.EDITED
    return SaveResult(_write(target, user, content, status, expected_version), changed)


def set_reviewed(
    revision_id: int, user, expected_version: int, reviewed: bool = True, *, target: SaveTarget | None = None
) -> Revision:
    """Mark a row reviewed (its current content must pass validation) or reopen it."""
    target = _at_version(target or load_for_save(revision_id, user), expected_version)
    if reviewed:
        issues = validate_content(target.row, target.content, target.ctx)
        if issues:
            raise InvalidDocument(issues)
    return _write(
        target, user, target.content, RevisionStatus.REVIEWED if reviewed else RevisionStatus.EDITED, expected_version
    )


@transaction.atomic
def submit_assignment(assignment: Assignment, user) -> Assignment:
    """Hand in a clip once every row is reviewed; the clip is reviewed when all its coders are done."""
    assignment = Assignment.every.select_for_update().select_related("clip").get(pk=assignment.pk, annotator=user)
    ensure_clip_open(assignment.clip, "submissions", assignment.purpose)
    if assignment.state == AssignmentState.SUBMITTED:
        return assignment
    open_rows = Revision.objects.filter(row__clip=assignment.clip, annotator=user).exclude(
        status=RevisionStatus.REVIEWED
    )
    if open_rows.exists():
        indices = sorted(open_rows.values_list("row__row_index", flat=True))
        raise ServiceError(
            f"{len(indices)} rows are not reviewed yet (rows "
            f"{', '.join(map(str, indices[:15]))}{'…' if len(indices) > 15 else ''})"
        )
    assignment.state = AssignmentState.SUBMITTED
    assignment.submitted_at = timezone.now()
    assignment._history_user = user
    assignment.save()
    clip = assignment.clip
    if clip.state == ClipState.IN_REVIEW and not clip.assignments.exclude(state=AssignmentState.SUBMITTED).exists():
        transition(clip, ClipState.REVIEWED, actor=user, reason="all assignments submitted")
    return assignment


def add_comment(
    clip: Clip, user, body: str, *, row: Row | None = None, kind: str = CommentKind.COMMENT, addressee=None
) -> Comment:
    """A comment, flag or discard proposal; ``addressee`` (or a coder the text names) limits who reads it."""
    body = (body or "").strip()
    if not body:
        raise ServiceError(
            "a comment needs some text" if kind == CommentKind.COMMENT else "say why (a reason is required)"
        )
    if len(body) > 10_000:
        raise ServiceError("comments are limited to 10,000 characters")
    if kind not in CommentKind.values:
        raise ServiceError(f"unknown comment kind {kind!r}")
    if kind in (CommentKind.FLAG_SPLIT, CommentKind.FLAG_MERGE) and row is None:
        raise ServiceError("a split/merge flag belongs on a row")
    if kind == CommentKind.DISCARD_PROPOSAL and row is not None:
        raise ServiceError("a discard proposal is about the whole clip, not a row")
    addressee = comment_addressee(clip, user, body, addressee)
    with transaction.atomic():
        # Locked, so that a discard cannot land between the check and the write.
        ensure_clip_open(Clip.objects.select_for_update().get(pk=clip.pk), "comments")
        comment = Comment(clip=clip, row=row, author=user, body=body, kind=kind, addressee=addressee)
        comment._history_user = user
        comment.save()
    return comment


PREROLL_MAX = 2.0


@transaction.atomic
def save_annotator_settings(
    user, *, replay_speed: float | None = None, preroll: float | None = None
) -> AnnotatorSettings:
    """Store how the caller's media replays; only the settings given change.

    Two changes sent at once (speed, then pre-roll) both land: the row is
    created if missing without a race, then locked while it changes.
    """
    AnnotatorSettings.objects.bulk_create([AnnotatorSettings(user=user)], ignore_conflicts=True)
    saved = AnnotatorSettings.objects.select_for_update().get(user=user)
    if replay_speed is not None:
        choice = next((c for c in ReplaySpeed.values if float(c) == float(replay_speed)), None)
        if choice is None:
            raise ServiceError(f"replay speed must be one of {', '.join(ReplaySpeed.labels)}")
        saved.replay_speed = choice
    if preroll is not None:
        if not 0 <= preroll <= PREROLL_MAX:
            raise ServiceError(f"pre-roll must be between 0 and {PREROLL_MAX:g} seconds")
        saved.preroll = round(preroll, 2)
    saved.save()
    return saved
