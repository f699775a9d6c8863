"""The row and clip schema: defined once, used everywhere.

Pydantic models give the structure (keys, types, nesting) of the RESCUE
release format; ``check_clip`` / ``check_row`` add the rules that depend on the
clip (its scenario's taxonomy and its closed entity set) and on other rows.
Both report :class:`Issue` objects with a JSON-ish path
(``rows[12].support_strategy[0].target[1]``) and a sentence a person can act on.

Severity: ``error`` means the document is refused; ``warning`` means it is
stored with the issue attached to the row and shown to the annotator.
``strict=True`` (a person's save: the annotator's editor, the API, the lead's
gold) refuses warnings too, and also refuses work that looks made but is not:
a list entry whose text is empty, evidence rows cited without a relation
pattern, a relation pattern (``""`` included) without a reason. Documents
that come from elsewhere (LLM drafts, imported releases) are not held to
these completeness rules: the public release itself leaves the reasons of its
therapist rows empty.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from .taxonomy import THERAPIST, Taxonomy, UnknownTaxonomy, load_taxonomy

# --- structure -----------------------------------------------------------------


class _Record(BaseModel):
    # Strict: a string where a number belongs is an error, not a silent cast.
    model_config = ConfigDict(extra="forbid", strict=True)


class PersonDescription(_Record):
    """An entry of ``body_posture``, ``facial_expressions`` or ``self_directed_behavior``."""

    person: str
    description: str


class BackgroundUtterance(_Record):
    speaker: str
    target: list[str]
    content: str


class InteractionBehavior(_Record):
    initiator: str
    target: list[str]
    description: str


class InternalEmotion(_Record):
    person: str
    emotion_description: str
    intensity: int


class ViewpointAttitude(_Record):
    source: str
    target: str
    viewpoint: str
    attitude: str


class SupportStrategy(_Record):
    provider: str
    target: list[str]
    strategy_type: str
    strategy_content: str


class RowAnnotation(_Record):
    """The annotated part of a row: what a Draft, Revision or Gold document holds."""

    target: list[str]
    utterance_type: str
    background_dialogue: list[BackgroundUtterance]
    tone_of_voice: str
    body_posture: list[PersonDescription]
    facial_expressions: list[PersonDescription]
    self_directed_behavior: list[PersonDescription]
    interaction_behavior: list[InteractionBehavior]
    internal_emotion: list[InternalEmotion]
    viewpoints_attitudes: list[ViewpointAttitude]
    support_strategy: list[SupportStrategy]
    # The relation-pattern label lives under two key families in the release
    # (see ROW_SCHEMA.md); each is optional and kept exactly as it came.
    relation_pattern: str | None = None
    relation_pattern_reason: str | None = None
    relation_pattern_evidence_rows: list[int] = []
    relation_cycle_state: str | None = None
    relation_cycle_reason: str | None = None
    relation_cycle_evidence_rows: list[int] = []


class Row(RowAnnotation):
    """A full release row: the skeleton plus the annotation."""

    start_time: float
    end_time: float
    primary_speaker: str
    dialogue_cleaned: str
    row_index: int


class Clip(_Record):
    sample_id: str
    scenario: str
    participants: list[str]
    source_file: str = ""
    rows: list[Row]


SKELETON_KEYS = ("start_time", "end_time", "primary_speaker", "dialogue_cleaned", "row_index")
ANNOTATION_KEYS = tuple(RowAnnotation.model_fields)
RELATION_KEYS = (
    "relation_pattern",
    "relation_pattern_reason",
    "relation_pattern_evidence_rows",
    "relation_cycle_state",
    "relation_cycle_reason",
    "relation_cycle_evidence_rows",
)
# The regular convention for clips created on this platform (ROW_SCHEMA.md):
# the fifteen keys from start_time to support_strategy, the cycle keys,
# row_index, then the relation_pattern keys.
CONVENTION_ROW_KEYS = (
    "start_time",
    "end_time",
    "primary_speaker",
    "target",
    "dialogue_cleaned",
    "utterance_type",
    "background_dialogue",
    "tone_of_voice",
    "body_posture",
    "facial_expressions",
    "self_directed_behavior",
    "interaction_behavior",
    "internal_emotion",
    "viewpoints_attitudes",
    "support_strategy",
    "relation_cycle_state",
    "relation_cycle_reason",
    "relation_cycle_evidence_rows",
    "row_index",
    "relation_pattern",
    "relation_pattern_reason",
    "relation_pattern_evidence_rows",
)
CLIP_KEYS = ("sample_id", "scenario", "participants", "source_file", "rows")
SPARSE_LIST_FIELDS = (
    "internal_emotion",
    "viewpoints_attitudes",
    "interaction_behavior",
    "support_strategy",
    "facial_expressions",
    "self_directed_behavior",
)


def relation_label_key(row: dict) -> str:
    """Which key carries the row's relation-pattern label.

    Therapist rows of the public release carry it under the older
    ``relation_cycle_state`` (what the public evaluation code reads); every
    other row under ``relation_pattern``.
    """
    if "relation_cycle_state" in row and (row.get("primary_speaker") == THERAPIST or "relation_pattern" not in row):
        return "relation_cycle_state"
    return "relation_pattern"


# The text each kind of list entry must carry before a person may save it.
REQUIRED_ENTRY_TEXT = {
    "background_dialogue": ("content",),
    "body_posture": ("description",),
    "facial_expressions": ("description",),
    "self_directed_behavior": ("description",),
    "interaction_behavior": ("description",),
    "internal_emotion": ("emotion_description",),
    "viewpoints_attitudes": ("viewpoint", "attitude"),
    "support_strategy": ("strategy_content",),
}


def relation_key_family(row: dict) -> tuple[str, str, str]:
    """The (label, reason, evidence rows) keys the row's relation pattern lives under."""
    if relation_label_key(row) == "relation_cycle_state":
        return "relation_cycle_state", "relation_cycle_reason", "relation_cycle_evidence_rows"
    return "relation_pattern", "relation_pattern_reason", "relation_pattern_evidence_rows"


def relation_label(row: dict) -> str | None:
    """The row's relation-pattern label: a label, ``""`` (no clear pattern) or None (not annotated)."""
    return row.get(relation_label_key(row))


# --- issues --------------------------------------------------------------------

Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class Issue:
    path: str
    message: str
    code: str
    severity: Severity = "error"

    def as_dict(self) -> dict[str, str]:
        return asdict(self)

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message


@dataclass
class Report:
    """The outcome of validating one clip or row."""

    issues: list[Issue] = field(default_factory=list)

    @property
    def errors(self) -> list[Issue]:
        return [i for i in self.issues if i.severity == "error"]

    @property
    def warnings(self) -> list[Issue]:
        return [i for i in self.issues if i.severity == "warning"]

    @property
    def ok(self) -> bool:
        return not self.errors


def format_path(loc: Iterable[Any]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


_TYPE_WORDS = {
    "string_type": "must be text (a JSON string)",
    "int_type": "must be a whole number",
    "int_from_float": "must be a whole number",
    "float_type": "must be a number of seconds",
    "list_type": "must be a list (JSON array)",
    "model_type": "must be an object (JSON object)",
    "model_attributes_type": "must be an object (JSON object)",
    "dict_type": "must be an object (JSON object)",
    "missing": "is required but missing",
    "extra_forbidden": "is not a field of this format",
}


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, str):
        return f"the text {value[:40]!r}"
    if isinstance(value, (int, float)):
        return f"the number {value}"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def issues_from_validation_error(exc: ValidationError, prefix: tuple = ()) -> list[Issue]:
    issues = []
    for err in exc.errors(include_url=False):
        loc = (*prefix, *err["loc"])
        kind = err["type"]
        words = _TYPE_WORDS.get(kind)
        if words and kind not in ("missing", "extra_forbidden") and err.get("input") is None:
            # A new entry's value nobody chose yet (the editor starts entries empty).
            message = "choose an intensity from 0 to 10" if loc[-1] == "intensity" else f"has no value yet: it {words}"
        elif words and kind not in ("missing", "extra_forbidden"):
            message = f"{words}, got {_describe(err.get('input'))}"
        else:
            message = words or err["msg"]
        issues.append(Issue(format_path(loc), message, code=kind))
    return issues


# --- rules that need the clip --------------------------------------------------


@dataclass(frozen=True)
class ClipContext:
    """What a row is checked against: the scenario taxonomy and the clip's people."""

    taxonomy: Taxonomy
    participants: tuple[str, ...]
    row_count: int
    duration: float | None = None

    @property
    def entities(self) -> tuple[str, ...]:
        return self.taxonomy.entities(self.participants)

    @classmethod
    def for_clip(cls, scenario: str, participants, row_count: int, taxonomy_version: str = "1", duration=None):
        return cls(load_taxonomy(scenario, taxonomy_version), tuple(participants), row_count, duration)


class _RowChecker:
    """Collects the clip-dependent issues of one row."""

    def __init__(self, row: Row, base: str, ctx: ClipContext, strict: bool = False):
        self.row, self.base, self.ctx, self.strict = row, base, ctx, strict
        self.issues: list[Issue] = []
        self.entity_set = frozenset(ctx.entities)

    def add(self, path: str, message: str, code: str, severity: Severity = "error") -> None:
        self.issues.append(Issue(f"{self.base}.{path}" if self.base else path, message, code, severity))

    def person(self, path: str, value: str) -> None:
        if value not in self.entity_set:
            allowed = ", ".join(self.ctx.entities)
            if value == "":
                self.add(path, f"choose a person (one of: {allowed})", "entity_unknown")
            else:
                self.add(path, f"{value!r} is not a person of this clip (allowed: {allowed})", "entity_unknown")

    def targets(self, path: str, targets: list[str], owner: str, owner_word: str) -> None:
        if not targets:
            self.add(path, "target list is empty; name at least one person", "target_empty")
        for i, t in enumerate(targets):
            self.person(f"{path}[{i}]", t)
            if t == owner:
                self.add(f"{path}[{i}]", f"{owner!r} is the {owner_word} and cannot also be a target", "self_target")

    def label(self, path: str, value: str | None, allowed: frozenset[str], what: str, *, blank_ok: bool) -> None:
        if value is None or (value == "" and blank_ok):
            return
        if value not in allowed:
            choices = ", ".join(sorted(allowed))
            self.add(
                path,
                f"{value!r} is not a {what} of the {self.ctx.taxonomy.scenario} taxonomy (choose from: {choices})",
                "label_unknown",
            )

    def run(self) -> list[Issue]:
        row, tax = self.row, self.ctx.taxonomy
        speaker = row.primary_speaker
        is_therapist = speaker == THERAPIST

        # 1. timing and entities
        if row.start_time < 0:
            self.add("start_time", f"start time {row.start_time} is negative", "time_negative")
        if row.end_time <= row.start_time:
            self.add("end_time", f"end time {row.end_time} must be after the start time {row.start_time}", "time_order")
        if self.ctx.duration is not None and row.end_time > self.ctx.duration + 0.5:
            self.add(
                "end_time",
                f"end time {row.end_time} is past the end of the clip ({self.ctx.duration} s)",
                "time_beyond_clip",
                "warning",
            )
        self.person("primary_speaker", speaker)
        self.targets("target", row.target, speaker, "speaker")

        # 2. verbal content
        if is_therapist and row.utterance_type != "":
            self.add(
                "utterance_type",
                "must be empty on a therapist row (utterance types describe client turns)",
                "utterance_type_on_therapist",
            )
        elif not is_therapist and row.utterance_type == "":
            self.add("utterance_type", "a client row needs an utterance type", "utterance_type_missing")
        elif not is_therapist:
            self.label("utterance_type", row.utterance_type, tax.utterance_labels, "utterance type", blank_ok=False)
        for i, bg in enumerate(row.background_dialogue):
            self.person(f"background_dialogue[{i}].speaker", bg.speaker)
            self.targets(f"background_dialogue[{i}].target", bg.target, bg.speaker, "speaker")
        nonverbal = row.body_posture or row.facial_expressions or row.interaction_behavior or row.self_directed_behavior
        if not row.dialogue_cleaned.strip() and not nonverbal:
            self.add(
                "dialogue_cleaned",
                "is empty, and the row records no nonverbal behaviour that would make it a reaction row",
                "dialogue_empty",
                "warning",
            )

        # 3. individual cues
        for name in ("body_posture", "facial_expressions", "self_directed_behavior"):
            for i, entry in enumerate(getattr(row, name)):
                self.person(f"{name}[{i}].person", entry.person)
        for i, emo in enumerate(row.internal_emotion):
            self.person(f"internal_emotion[{i}].person", emo.person)
            if not 0 <= emo.intensity <= 10:
                self.add(
                    f"internal_emotion[{i}].intensity", f"intensity {emo.intensity} is outside 0–10", "intensity_range"
                )

        # 4. relational stance
        for i, ib in enumerate(row.interaction_behavior):
            self.person(f"interaction_behavior[{i}].initiator", ib.initiator)
            self.targets(f"interaction_behavior[{i}].target", ib.target, ib.initiator, "initiator")
        for i, va in enumerate(row.viewpoints_attitudes):
            self.person(f"viewpoints_attitudes[{i}].source", va.source)
            self.person(f"viewpoints_attitudes[{i}].target", va.target)
            if va.source == va.target:
                self.add(
                    f"viewpoints_attitudes[{i}].target",
                    f"{va.source!r} is the source and cannot also be the target",
                    "self_target",
                )

        # 5. therapist strategy
        for i, st in enumerate(row.support_strategy):
            base = f"support_strategy[{i}]"
            if not is_therapist:
                self.add(base, "support strategies belong on therapist rows only", "strategy_on_client_row")
            if st.provider != THERAPIST:
                self.add(
                    f"{base}.provider", f"provider must be {THERAPIST!r}, got {st.provider!r}", "strategy_provider"
                )
            self.targets(f"{base}.target", st.target, THERAPIST, "provider")
            if tax.group_label in st.target and len(st.target) > 1:
                self.add(
                    f"{base}.target",
                    f"when {tax.group_label!r} is a target it must be the only one",
                    "group_label_not_alone",
                )
            self.label(
                f"{base}.strategy_type", st.strategy_type, tax.strategy_labels, "support strategy", blank_ok=False
            )

        # 6. relation pattern (both key families)
        for label_key, ev_key in (
            ("relation_pattern", "relation_pattern_evidence_rows"),
            ("relation_cycle_state", "relation_cycle_evidence_rows"),
        ):
            self.label(label_key, getattr(row, label_key), tax.relation_labels, "relation pattern", blank_ok=True)
            for i, ev in enumerate(getattr(row, ev_key)):
                if not 1 <= ev <= self.ctx.row_count:
                    self.add(
                        f"{ev_key}[{i}]",
                        f"evidence row {ev} does not exist (this clip has rows 1–{self.ctx.row_count})",
                        "evidence_row_missing",
                        "warning",
                    )
        if self.strict:
            self.completeness()
        return self.issues

    def completeness(self) -> None:
        """What a person's save must not leave half-made (see the module's docstring)."""
        row = self.row
        for name, keys in REQUIRED_ENTRY_TEXT.items():
            for i, entry in enumerate(getattr(row, name)):
                for key in keys:
                    if not getattr(entry, key).strip():
                        self.add(f"{name}[{i}].{key}", "is empty: write it, or remove the entry", "text_empty")
        # Only the key family the row's label lives under: the mirrored family of the
        # regular convention holds "" on client rows by design, not "no clear pattern".
        present = {key: None for key in row.model_fields_set}
        label_key, reason_key, evidence_key = relation_key_family({**present, "primary_speaker": row.primary_speaker})
        label = getattr(row, label_key)
        if label is None and getattr(row, evidence_key):
            self.add(
                evidence_key,
                "evidence rows belong to a relation pattern: choose a pattern, or remove the rows",
                "evidence_without_pattern",
            )
        if label is not None and not (getattr(row, reason_key) or "").strip():
            what = "“no clear pattern”" if label == "" else "a relation pattern"
            self.add(reason_key, f"{what} needs a short reason", "relation_reason_missing")


def _finish(issues: list[Issue], strict: bool) -> Report:
    if strict:
        issues = [Issue(i.path, i.message, i.code, "error") for i in issues]
    return Report(issues)


def check_row(data: dict, ctx: ClipContext, *, base: str = "", strict: bool = False) -> tuple[Row | None, Report]:
    """Validate one full row (skeleton + annotation) against its clip."""
    try:
        row = Row.model_validate(data)
    except ValidationError as exc:
        prefix = tuple(_parse_base(base))
        issues = issues_from_validation_error(exc, prefix)
        # The clip's rules too, on a copy whose unreadable values stand in as blanks: the person then sees
        # every problem of the row at once, not the type errors first and the rest after fixing them.
        stand_in = _with_blanks(data, exc)
        if stand_in is not None:
            try:
                filled = Row.model_validate(stand_in)
            except ValidationError:
                filled = None
            if filled is not None:
                typed = {i.path for i in issues}
                issues += [i for i in _RowChecker(filled, base, ctx, strict).run() if i.path not in typed]
        return None, _finish(issues, strict)
    return row, _finish(_RowChecker(row, base, ctx, strict).run(), strict)


# A blank of the type each pydantic error asks for: what ``_with_blanks`` puts in place of an unreadable value.
_BLANKS = {
    "int_type": 0,
    "int_parsing": 0,
    "int_from_float": 0,
    "float_type": 0.0,
    "float_parsing": 0.0,
    "string_type": "",
    "bool_type": False,
    "bool_parsing": False,
    "list_type": [],
    "dict_type": {},
}


def _with_blanks(data: dict, exc: ValidationError) -> dict | None:
    """A deep copy of ``data`` with each value pydantic could not read replaced by a blank of the wanted
    type; None when an error is of another kind (a missing key, an unknown one, a bad label)."""
    import copy

    out = copy.deepcopy(data)
    for err in exc.errors(include_url=False):
        if err["type"] not in _BLANKS or not err["loc"]:
            return None
        *parents, leaf = err["loc"]
        node = out
        try:
            for key in parents:
                node = node[key]
            node[leaf] = copy.deepcopy(_BLANKS[err["type"]])
        except (KeyError, IndexError, TypeError):
            return None
    return out


def _parse_base(base: str) -> list:
    # "rows[3]" -> ["rows", 3]; the only prefix shape used here.
    if not base:
        return []
    name, _, rest = base.partition("[")
    return [name, int(rest.rstrip("]"))]


def check_clip(
    data: Any, *, taxonomy_version: str = "1", duration: float | None = None, strict: bool = False
) -> tuple[Clip | None, Report]:
    """Validate a whole clip document. Returns the parsed clip (None if structurally broken) and the report."""
    if not isinstance(data, dict):
        return None, Report([Issue("", f"a clip must be a JSON object, got {_describe(data)}", "model_type")])
    try:
        clip = Clip.model_validate(data)
    except ValidationError as exc:
        return None, _finish(issues_from_validation_error(exc), strict)

    issues: list[Issue] = []
    try:
        taxonomy = load_taxonomy(clip.scenario, taxonomy_version)
    except UnknownTaxonomy:
        return clip, Report(
            [Issue("scenario", f"unknown scenario {clip.scenario!r} (expected couple or family)", "unknown_scenario")]
        )

    reserved = {THERAPIST, taxonomy.group_label}
    if not clip.participants:
        issues.append(Issue("participants", "a clip needs at least one participant", "participants_empty"))
    seen = set()
    for i, name in enumerate(clip.participants):
        if not name.strip():
            issues.append(Issue(f"participants[{i}]", "participant name is empty", "participant_invalid"))
        elif name in reserved:
            issues.append(
                Issue(f"participants[{i}]", f"{name!r} is a reserved entity, not a participant", "participant_invalid")
            )
        elif name in seen:
            issues.append(Issue(f"participants[{i}]", f"{name!r} is listed twice", "participant_invalid"))
        seen.add(name)

    ctx = ClipContext(taxonomy, tuple(clip.participants), len(clip.rows), duration)
    previous_start = None
    for pos, row in enumerate(clip.rows):
        base = f"rows[{pos}]"
        if row.row_index != pos + 1:
            issues.append(
                Issue(
                    f"{base}.row_index",
                    f"row_index is {row.row_index}, expected {pos + 1} (1-based, dense, in order)",
                    "row_index_order",
                )
            )
        if previous_start is not None and row.start_time < previous_start:
            issues.append(
                Issue(
                    f"{base}.start_time",
                    f"row starts at {row.start_time}, before the previous row ({previous_start}); rows must be in time "
                    "order",
                    "rows_out_of_order",
                    "warning",
                )
            )
        previous_start = row.start_time
        issues.extend(_RowChecker(row, base, ctx, strict).run())
    return clip, _finish(issues, strict)


def row_issue_index(issue: Issue) -> int | None:
    """The 0-based row position an issue path points into (``rows[3]...`` -> 3)."""
    if issue.path.startswith("rows["):
        return int(issue.path[5 : issue.path.index("]")])
    return None
