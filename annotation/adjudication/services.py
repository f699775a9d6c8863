"""The lead's writes: gold decisions field by field, the unanimous rows in
bulk, and the clip-level decisions (discard, re-review, adjudicated).

Every gold write carries the version it was based on (0 when the row has no
gold yet) and is refused with the current state when it is stale, as revision
saves are. Each decision is recorded twice: in ``Gold.decisions`` (per field:
source, the sources whose value it equals, note, who, when) for the page and
the release, and in the gold's history (django-simple-history: who, when,
from web/api/cli, and a change reason naming the field and the source).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

from django.db import transaction
from django.utils import timezone
from simple_history.utils import bulk_create_with_history

from ..agreement.embeddings import EmbeddingError
from ..codebook.selectors import in_force_id
from ..models import Assignment, AssignmentState, Clip, ClipState, Comment, CommentKind, Gold, Row
from ..schema import Issue
from ..services import ServiceError, comment_addressee, transition
from ..workspace.services import InvalidDocument, clip_context, mirror_relation, validate_content
from .fields import DRAFT, FIELD_TITLES, FIELDS, field_value, same_value, with_field
from .selectors import EDITABLE_STATES, RowState, readiness, row_state, row_states

# Sources a decision can record besides a coder's username and "draft".
EDIT = "edit"  # typed in the gold editor
CONFIRMED = "confirmed"  # the gold's value kept as it was
UNANIMOUS = "unanimous"  # every coder gave this value
KEEP = "gold"  # what a caller passes to decide() to keep the current gold value (e.g. to add a note)

NOTE_LIMIT = 2000
NOT_AN_OBJECT = Issue("", "the document must be a JSON object", "model_type")


class GoldConflict(Exception):
    """The row's gold changed since the caller read it (``gold`` is the current one)."""

    def __init__(self, row: Row, gold: Gold | None):
        self.row, self.gold = row, gold
        version = gold.version if gold else 0
        super().__init__(f"the gold of row {row.row_index} changed since it was opened (now version {version})")


def _lock_row(row_id: int) -> Row:
    try:
        return Row.objects.select_for_update().select_related("clip__project").get(pk=row_id)
    except Row.DoesNotExist:
        raise ServiceError("no such row") from None


def ensure_gold_editable(clip: Clip) -> None:
    """Refuse a gold write unless the clip is in review or reviewed and enough of its coders submitted."""
    if clip.state not in EDITABLE_STATES:
        hint = " (request a re-review to reopen it)" if clip.state == ClipState.ADJUDICATED else ""
        raise ServiceError(
            f"clip {clip.sample_id} is {clip.state}: its gold can change only while it is in review or reviewed{hint}"
        )
    refusal = readiness(clip).refusal(clip)
    if refusal:
        raise ServiceError(refusal)


def _note(note) -> str:
    note = (note or "").strip()
    if len(note) > NOTE_LIMIT:
        raise ServiceError(f"a decision note is limited to {NOTE_LIMIT} characters")
    return note


def _decision(source: str, user, note: str, same_as: list[str]) -> dict:
    return {"source": source, "same_as": same_as, "note": note, "by": user.username, "at": timezone.now().isoformat()}


def _new_gold(state: RowState, user) -> Gold:
    """A gold document from the row's base; fields every coder agrees on are decided as unanimous."""
    content, layout = state.base()
    decisions = {}
    if state.revisions:
        for name in FIELDS:
            if name not in state.disputes:
                decisions[name] = _decision(UNANIMOUS, user, "", state.same_as(name, field_value(content, name)))
    return Gold(row=state.row, content=content, layout=layout, decisions=decisions, version=0)


def _check_version(state: RowState, expected_version: int) -> None:
    current = state.gold.version if state.gold else 0
    if current != expected_version:
        raise GoldConflict(state.row, state.gold)


def _store(gold: Gold, user, reason: str, ctx=None) -> Gold:
    # Takes may combine fields that only fail together; the gold keeps its
    # issues (shown on the row) and "mark adjudicated" waits until none are left.
    gold.warnings = [i.as_dict() for i in validate_content(gold.row, gold.content, ctx)]
    gold.version += 1
    gold.guidance_version_id = in_force_id(gold.row.clip.project_id)
    gold.decided_by = user
    gold._history_user = user
    gold._change_reason = reason[:100]
    gold.save()
    return gold


@transaction.atomic
def decide(row_id: int, user, field_name: str, source: str, expected_version: int, *, note: str | None = None) -> Gold:
    """Decide one field of a row's gold.

    ``source`` is a coder's username (take their value), ``draft`` (take the LLM
    draft's value: never a suggestion, so the lead must say why in ``note``) or
    ``gold`` (keep the current value; on a decided field this only updates the note).
    A coder whose work does not count yet (``selectors.Uncoded``) is no source.
    """
    if field_name not in FIELD_TITLES:
        raise ServiceError(f"unknown field {field_name!r} (choose from {', '.join(FIELDS)})")
    row = _lock_row(row_id)
    ensure_gold_editable(row.clip)
    state = row_state(row)
    _check_version(state, expected_version)
    gold = state.gold or _new_gold(state, user)
    decisions = dict(gold.decisions or {})
    previous = decisions.get(field_name)
    if source == KEEP:
        value = field_value(gold.content, field_name)
        if previous:
            entry = {
                **previous,
                "note": _note(note if note is not None else previous.get("note")),
                "by": user.username,
                "at": timezone.now().isoformat(),
            }
            reason = f"note on {field_name}"
        else:
            entry = _decision(CONFIRMED, user, _note(note), [])
            reason = f"{field_name}: kept as it was"
    else:
        if source in state.uncoded:
            raise ServiceError(
                f"{source}'s revision of row {row.row_index} is {state.uncoded[source].words}: it is not a source of "
                "gold"
            )
        if source == DRAFT and not _note(note):
            raise ServiceError(
                "taking the LLM draft's value needs a reason: say in the note why the draft is right where the coders "
                "are not"
            )
        try:
            value = copy.deepcopy(state.source_value(source, field_name))
        except KeyError:
            raise ServiceError(
                f"row {row.row_index} has no value from {source!r} (sources: "
                f"{', '.join([*state.revisions, *([DRAFT] if state.draft else [])])})"
            ) from None
        gold.content = with_field(gold.content, field_name, value)
        entry = _decision(source, user, _note(note), [])
        reason = f"{field_name}: taken from {source}"
    entry["same_as"] = state.same_as(field_name, value)
    decisions[field_name] = entry
    gold.decisions = decisions
    return _store(gold, user, reason)


@transaction.atomic
def save_gold(row_id: int, user, content: dict, expected_version: int, *, notes: dict | None = None) -> Gold:
    """Store the lead's edit of a row's gold (strict validation, as an annotator's save).

    Every field whose value changed gets a decision with source ``edit``;
    a note given for an unchanged field is attached to its decision.
    """
    row = _lock_row(row_id)
    ensure_gold_editable(row.clip)
    state = row_state(row)
    _check_version(state, expected_version)
    if not isinstance(content, dict):
        raise InvalidDocument([NOT_AN_OBJECT])
    notes = notes or {}
    unknown = sorted(set(notes) - set(FIELDS))
    if unknown:
        raise ServiceError(f"notes for unknown fields: {', '.join(unknown)}")
    gold = state.gold or _new_gold(state, user)
    content = mirror_relation(content, row.primary_speaker, gold.layout or {})
    issues = validate_content(row, content)
    if issues:
        raise InvalidDocument(issues)
    decisions = dict(gold.decisions or {})
    changed = []
    for name in FIELDS:
        new = field_value(content, name)
        if not same_value(name, new, field_value(gold.content, name)):
            decisions[name] = _decision(EDIT, user, _note(notes.get(name)), state.same_as(name, new))
            changed.append(name)
        elif name in notes:
            previous = decisions.get(name)
            entry = (
                {**previous, "note": _note(notes[name]), "by": user.username, "at": timezone.now().isoformat()}
                if previous
                else _decision(CONFIRMED, user, _note(notes[name]), [])
            )
            entry["same_as"] = state.same_as(name, new)
            decisions[name] = entry
    gold.content = content
    gold.decisions = decisions
    return _store(gold, user, f"edited: {', '.join(changed) or 'notes'}")


@transaction.atomic
def accept_suggestion(row_id: int, user, expected_version: int, fields: list[str] | None = None) -> Gold:
    """Decide the row's fields that have no decision yet (or only ``fields``) by
    accepting their suggestion: the value every coder gave, or a strict majority of them.

    A field without a suggestion (the coders split) stays open: the lead takes
    a value for it. Refused when nothing would be decided.
    """
    unknown = sorted(set(fields or ()) - set(FIELDS))
    if unknown:
        raise ServiceError(f"unknown field(s) {', '.join(unknown)} (choose from {', '.join(FIELDS)})")
    row = _lock_row(row_id)
    ensure_gold_editable(row.clip)
    state = row_state(row)
    _check_version(state, expected_version)
    before = set((state.gold.decisions or {}) if state.gold else ())
    gold = state.gold or _new_gold(state, user)
    decisions = dict(gold.decisions or {})
    suggestions = state.suggestions()
    taken = []
    for name in fields or [n for n in FIELDS if n not in decisions]:
        suggestion = suggestions.get(name)
        if suggestion is None:
            continue
        value = copy.deepcopy(suggestion.value)
        gold.content = with_field(gold.content, name, value)
        source = UNANIMOUS if suggestion.kind == "unanimous" else suggestion.source
        decisions[name] = _decision(source, user, "", state.same_as(name, value))
        taken.append(name)
    # The fields asked for that got a suggestion's value; without ``fields``, also those a new gold decided as
    # unanimous.
    accepted = taken if fields else [name for name in FIELDS if name in decisions and name not in before]
    if not accepted:
        raise ServiceError(
            f"nothing to accept on row {row.row_index}: every field is decided, or the coders split and the lead must "
            "take a value"
        )
    gold.decisions = decisions
    return _store(gold, user, f"accepted the suggestion: {', '.join(accepted)}")


def validate_gold(row: Row, content) -> list:
    """The issues a gold save of ``content`` would be refused with."""
    if not isinstance(content, dict):
        return [NOT_AN_OBJECT]
    gold = getattr(row, "gold", None)
    layout = gold.layout if gold is not None else {}
    return validate_content(row, mirror_relation(content, row.primary_speaker, layout or {}))


@dataclass
class UnanimousResult:
    accepted: list[int] = field(default_factory=list)  # row indices that got gold
    invalid: dict[int, list[dict]] = field(default_factory=dict)  # row index -> issues (left for the lead)
    already_gold: int = 0

    @property
    def summary(self) -> str:
        text = f"{len(self.accepted)} unanimous row(s) accepted as gold"
        if self.invalid:
            text += (
                f"; {len(self.invalid)} unanimous row(s) left for you because they do not validate (rows "
                f"{', '.join(map(str, sorted(self.invalid)[:15]))})"
            )
        if self.already_gold:
            text += f"; {self.already_gold} unanimous row(s) already had gold"
        return text


@transaction.atomic
def accept_unanimous(clip: Clip, user) -> UnanimousResult:
    """Give every row on which all coders agree a gold equal to their shared document.

    Rows that already have gold are left alone; a shared document that fails
    strict validation is not accepted (the lead fixes it in the editor).
    """
    clip = Clip.objects.select_for_update().select_related("project").get(pk=clip.pk)
    ensure_gold_editable(clip)
    # Lock the rows too, so that no single-row decision creates a gold under us.
    rows = list(Row.objects.select_for_update().filter(clip=clip).order_by("row_index"))
    states = row_states(clip, rows)
    ctx = clip_context(clip, len(states))
    guidance = in_force_id(clip.project_id)
    result = UnanimousResult()
    new = []
    for state in states:
        if not state.unanimous:
            continue
        if state.gold is not None:
            result.already_gold += 1
            continue
        first = next(iter(state.revisions.values()))
        content = copy.deepcopy(first.content)
        issues = validate_content(state.row, content, ctx)
        if issues:
            result.invalid[state.row.row_index] = [i.as_dict() for i in issues]
            continue
        decisions = {
            name: _decision(UNANIMOUS, user, "", state.same_as(name, field_value(content, name))) for name in FIELDS
        }
        new.append(
            Gold(
                row=state.row,
                content=content,
                layout=dict(first.layout or {}),
                decisions=decisions,
                decided_by=user,
                guidance_version_id=guidance,
            )
        )
        result.accepted.append(state.row.row_index)
    bulk_create_with_history(new, Gold, default_user=user, default_change_reason="accepted: every coder agreed")
    return result


@transaction.atomic
def mark_adjudicated(clip: Clip, user) -> Clip:
    """Close a clip once enough coders submitted (``selectors.readiness``), every row has gold that passes
    strict validation and no disagreement is left open. A clip may close in review when the project needs
    fewer coders than it assigned: the coder still working then does so on a clip whose gold is decided."""
    clip = Clip.objects.select_for_update().select_related("project").get(pk=clip.pk)
    if clip.state not in EDITABLE_STATES:
        raise ServiceError(
            f"only a clip in review or reviewed can be marked adjudicated; {clip.sample_id} is {clip.state}"
        )
    refusal = readiness(clip).refusal(clip)
    if refusal:
        raise ServiceError(refusal)
    states = row_states(clip)
    ctx = clip_context(clip, len(states))
    problems = []
    missing = [s.row.row_index for s in states if s.gold is None]
    if missing:
        problems.append(f"{len(missing)} row(s) have no gold (rows {_some(missing)})")
    undecided = [s.row.row_index for s in states if s.gold is not None and s.undecided]
    if undecided:
        problems.append(f"{len(undecided)} row(s) have disagreements not decided yet (rows {_some(undecided)})")
    invalid = [s.row.row_index for s in states if s.gold is not None and validate_content(s.row, s.gold.content, ctx)]
    if invalid:
        problems.append(f"{len(invalid)} row(s) have gold that does not validate (rows {_some(invalid)})")
    if problems:
        raise ServiceError("not adjudicated yet: " + "; ".join(problems))
    return transition(clip, ClipState.ADJUDICATED, actor=user, reason="adjudicated: every row has validated gold")


def _some(indices: list[int]) -> str:
    return ", ".join(map(str, indices[:15])) + ("…" if len(indices) > 15 else "")


def _open_proposal(clip: Clip, comment_id: int) -> Comment:
    comment = (
        Comment.objects.select_for_update()
        .select_related("author")
        .filter(pk=comment_id, clip=clip, kind=CommentKind.DISCARD_PROPOSAL)
        .first()
    )
    if comment is None:
        raise ServiceError("no such discard proposal on this clip")
    if comment.resolved:
        raise ServiceError("this discard proposal was already decided")
    return comment


def _resolve(comment: Comment, user, reason: str) -> None:
    comment.resolved = True
    comment._history_user = user
    comment._change_reason = reason
    comment.save()


@transaction.atomic
def accept_discard(clip: Clip, comment_id: int, user) -> Clip:
    """The clip leaves the benchmark with the proposal's reason kept (and who proposed it)."""
    clip = Clip.objects.select_for_update().get(pk=clip.pk)
    comment = _open_proposal(clip, comment_id)
    transition(clip, ClipState.DISCARDED, actor=user, reason=f"{comment.body} (proposed by {comment.author.username})")
    for proposal in Comment.objects.filter(clip=clip, kind=CommentKind.DISCARD_PROPOSAL, resolved=False):
        _resolve(proposal, user, "clip discarded")
    return clip


@transaction.atomic
def dismiss_discard(clip: Clip, comment_id: int, user) -> Comment:
    """Keep the clip: the proposal is marked decided (its history says by whom)."""
    comment = _open_proposal(clip, comment_id)
    _resolve(comment, user, "discard proposal dismissed")
    return comment


@transaction.atomic
def request_rereview(clip: Clip, username: str, user, message: str = "") -> Assignment:
    """Reopen one coder's assignment so they can edit again; the clip goes back to review."""
    clip = Clip.objects.select_for_update().get(pk=clip.pk)
    if clip.state in (ClipState.DISCARDED, ClipState.RELEASED):
        raise ServiceError(f"clip {clip.sample_id} is {clip.state}; it cannot be reviewed again")
    assignment = (
        Assignment.objects.select_for_update()
        .select_related("annotator")
        .filter(clip=clip, annotator__username=username)
        .first()
    )
    if assignment is None:
        raise ServiceError(f"{username} is not assigned to {clip.sample_id}")
    message = (message or "").strip()
    if len(message) > 10_000:
        raise ServiceError("the message is limited to 10,000 characters")
    assignment.state = AssignmentState.REOPENED
    assignment._history_user = user
    assignment._change_reason = "re-review requested"
    assignment.save()
    if clip.state in (ClipState.REVIEWED, ClipState.ADJUDICATED):
        transition(clip, ClipState.IN_REVIEW, actor=user, reason=f"re-review requested from {username}")
    body = f"Re-review requested from {username}: {message or '(no message)'}"
    # For the coder it names and the leads only: the other coders must not learn who else codes the clip.
    note = Comment(
        clip=clip,
        author=user,
        kind=CommentKind.COMMENT,
        body=body,
        addressee=comment_addressee(clip, user, body, assignment.annotator),
    )
    note._history_user = user
    note.save()
    return assignment


@dataclass
class AgreeingResult:
    threshold: float
    accepted: list[int] = field(default_factory=list)  # row indices that got gold
    near: list[int] = field(default_factory=list)  # of those, rows whose coders' texts differ (within the threshold)
    invalid: dict[int, list[dict]] = field(default_factory=dict)

    @property
    def summary(self) -> str:
        text = (
            f"{len(self.accepted)} row(s) accepted as gold at similarity {self.threshold:.2f}: "
            f"{len(self.accepted) - len(self.near)} unanimous, {len(self.near)} with texts that differ within the "
            "threshold"
        )
        if self.invalid:
            text += (
                f"; {len(self.invalid)} row(s) left for you because they do not validate (rows "
                f"{_some(sorted(self.invalid))})"
            )
        return text


@transaction.atomic
def accept_agreeing(clip: Clip, user, threshold) -> AgreeingResult:
    """Give gold to every row without gold whose coders agree on every field within a text-similarity ``threshold``.

    Fields the coders gave identically are decided as unanimous; a field whose only difference is its texts takes
    the value of the coder whose texts are closest to the others' (``disagreement.near_agreement``), recorded as
    taken from that coder, with a note naming the threshold. Texts not embedded yet never count as agreeing.
    """
    from .disagreement import Vectors, accepted_note, agreeing_rows, check_threshold, row_texts

    try:
        threshold = check_threshold(threshold)
    except ValueError as exc:
        raise ServiceError(str(exc)) from None
    clip = Clip.objects.select_for_update().select_related("project").get(pk=clip.pk)
    ensure_gold_editable(clip)
    rows = list(Row.objects.select_for_update().filter(clip=clip).order_by("row_index"))
    states = row_states(clip, rows)
    by_id = {s.row.pk: s for s in states}
    try:
        vectors = Vectors(t for s in states for t in row_texts(s.coder_contents, s.row.primary_speaker))
    except EmbeddingError as exc:
        raise ServiceError(f"the coders' texts cannot be compared: {exc}") from None
    ctx = clip_context(clip, len(states))
    guidance = in_force_id(clip.project_id)
    result = AgreeingResult(threshold)
    new = []
    for found in agreeing_rows(states, vectors, threshold):
        state = by_id[found["row_id"]]
        content, layout = state.base()
        for name, coder in found["fields"].items():
            content = with_field(content, name, copy.deepcopy(field_value(state.revisions[coder].content, name)))
        issues = validate_content(state.row, content, ctx)
        if issues:
            result.invalid[state.row.row_index] = [i.as_dict() for i in issues]
            continue
        note = accepted_note(threshold, found["near"])
        decisions = {}
        for name, coder in found["fields"].items():
            same = state.same_as(name, field_value(content, name))
            decisions[name] = _decision(
                coder if name in found["near"] else UNANIMOUS, user, note if name in found["near"] else "", same
            )
        new.append(
            Gold(
                row=state.row,
                content=content,
                layout=layout,
                decisions=decisions,
                decided_by=user,
                guidance_version_id=guidance,
            )
        )
        result.accepted.append(state.row.row_index)
        if found["near"]:
            result.near.append(state.row.row_index)
    bulk_create_with_history(
        new, Gold, default_user=user, default_change_reason=f"accepted: coders agree within {threshold:.2f}"
    )
    return result
