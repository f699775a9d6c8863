"""Checking the model's answer: never trusted, never silently fixed.

``parse_answer`` turns the text of one answer into :class:`DraftRow` objects or
refuses it (:class:`PreannotationFailed`): not JSON, not the schema's shape at
the level of the row skeleton (times, speaker, words), or no rows at all.

Within a row, only *safe normalisations* are applied, and each is noted on the
row and logged: whitespace, a person label written in another case (``maya`` →
``Maya``), the therapist's personal name in a person field → ``Therapist``, and a
subtitle speaker label copied in front of the words. An annotation field whose
value does not have the schema's structure is left empty with a warning naming
what the model sent. Everything else the full validation finds (the ROW_SCHEMA
rules via ``annotation.schema.check_row``, cue coverage, times outside the cue
spans, a pattern without a reason or evidence) is kept as it came and stored as
warnings on the row, for the annotator.

The wire conventions of ``response_schema`` are undone here: ``null`` utterance
type → ``""``; relation pattern ``null`` → null ("not annotated", its reason null
too), ``no_clear_pattern`` → ``""``; evidence cue ids are read into cue numbers
(``DraftRow.evidence_cues``), which ``windows.stitch`` turns into row numbers.
"""

from __future__ import annotations

import bisect
import difflib
import json
import logging
import math
import re
import typing
from dataclasses import dataclass, field

from pydantic import ValidationError

from ..schema import ANNOTATION_KEYS, ClipContext, RowAnnotation, check_row
from ..taxonomy import THERAPIST
from .errors import PreannotationFailed
from .response_schema import (
    ANSWER_ROW_KEYS,
    EVIDENCE_KEY,
    EVIDENCE_WIRE_KEY,
    MIRRORED_KEYS,
    NO_CLEAR_PATTERN,
    STORED_ANSWER_KEYS,
)
from .transcript import ClipInput, cue_number

log = logging.getLogger(__name__)

SKELETON_FIELDS = ("start_time", "end_time", "primary_speaker", "dialogue_cleaned")
# The stored annotation keys an answer fills (evidence under its stored name).
ANSWER_CONTENT_KEYS = tuple(k for k in STORED_ANSWER_KEYS if k not in SKELETON_FIELDS)
# Seconds a row may reach past its cues (rounding, cue edges) before it is a warning.
TIME_TOLERANCE = 0.5
# Share of a cue's words that must appear, in order, in the rows around it.
COVERAGE_THRESHOLD = 0.9
_TITLE = re.compile(r"^(dr|mr|mrs|ms|miss|mx|prof)\.?\s+", re.IGNORECASE)
_LABEL = re.compile(r"^\s*(?:\[(?P<bracket>[^\]\n]{1,40})\]|(?P<colon>[^:\n\[\]]{1,40}):)\s*")
_FENCE = re.compile(r"^\s*```(?:json)?\s*(?P<body>.*?)\s*```\s*$", re.DOTALL)
_WORD = re.compile(r"[\w']+")


@dataclass
class DraftRow:
    """One row of a draft before it is stored: skeleton, annotation, warnings, normalisation notes."""

    start_time: float
    end_time: float
    primary_speaker: str
    dialogue_cleaned: str
    content: dict
    warnings: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    window: int = 1  # the window of the clip's plan the row came from
    part: str = "1"  # the request it came from: the window, or a half of it asked again ("2.1")
    home_cue: int = 0  # 0-based position of the cue the row mostly covers
    # Cue numbers the model cited as evidence; ``windows.stitch`` maps them to row numbers.
    evidence_cues: list[int] = field(default_factory=list)

    def warn(self, path: str, message: str, code: str) -> None:
        self.warnings.append({"path": path, "message": message, "code": code, "severity": "warning"})

    def skeleton(self, row_index: int) -> dict:
        return {
            "start_time": self.start_time,
            "end_time": self.end_time,
            "primary_speaker": self.primary_speaker,
            "dialogue_cleaned": self.dialogue_cleaned,
            "row_index": row_index,
        }


# --- names ------------------------------------------------------------------------


class PersonNames:
    """Maps what the model may write for a person to the clip's entity label."""

    def __init__(self, inp: ClipInput):
        self.entities = set(inp.entities)
        self.canonical = {e.casefold(): e for e in inp.entities}
        participants = {p.casefold() for p in inp.participants}
        self.therapist_names: set[str] = set()
        for name in inp.therapist_names:
            for variant in (name, _TITLE.sub("", name)):
                key = " ".join(variant.split()).casefold()
                if key and key not in participants:
                    self.therapist_names.add(key)
        self.labels = set(self.canonical) | self.therapist_names | {t.casefold() for t in inp.speaker_tags}

    def normalise(self, value: str) -> tuple[str, str | None]:
        """(label, note) — note says what changed, None when nothing did."""
        if value in self.entities:
            return value, None
        key = " ".join(value.split()).casefold()
        if key in self.therapist_names:
            return THERAPIST, f"the therapist's personal name {value!r} replaced by {THERAPIST!r}"
        if key in self.canonical:
            return self.canonical[key], f"person label {value!r} written as {self.canonical[key]!r}"
        return value, None


# --- one answer ---------------------------------------------------------------------


def _loads(text: str):
    body = text.strip()
    m = _FENCE.match(body)
    if m:
        body = m["body"]
    try:
        return json.loads(body)
    except ValueError as exc:
        snippet = " ".join(text.split())[:120]
        raise PreannotationFailed(
            "invalid_json", f"the answer is not valid JSON ({exc}); it starts: {snippet!r}"
        ) from exc


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _skeleton_problem(raw, pos: int) -> str | None:
    if not isinstance(raw, dict):
        return f"rows[{pos}] is not a JSON object"
    for key in ("start_time", "end_time"):
        if not _number(raw.get(key)):
            return f"rows[{pos}].{key} must be a number of seconds, got {raw.get(key)!r}"
    for key in ("primary_speaker", "dialogue_cleaned"):
        if not isinstance(raw.get(key), str):
            return f"rows[{pos}].{key} must be text, got {raw.get(key)!r}"
    return None


def parse_answer(text: str, inp: ClipInput, *, window: int = 1, part: str = "1") -> list[DraftRow]:
    """The rows of one answer, normalised and structurally valid. Raises PreannotationFailed."""
    data = _loads(text)
    if isinstance(data, dict) and isinstance(data.get("rows"), list):
        raw_rows = data["rows"]
    elif isinstance(data, list):
        raw_rows = data
    else:
        shape = "an object without a rows list" if isinstance(data, dict) else type(data).__name__
        raise PreannotationFailed("schema_mismatch", f"the answer must be an object with a list of rows, got {shape}")
    if not raw_rows:
        raise PreannotationFailed("empty", "the answer has no rows")
    for pos, raw in enumerate(raw_rows):
        problem = _skeleton_problem(raw, pos)
        if problem:
            raise PreannotationFailed("schema_mismatch", problem)
    names = PersonNames(inp)
    return [_read_row(raw, names, window, part) for raw in raw_rows]


def _read_row(raw: dict, names: PersonNames, window: int, part: str) -> DraftRow:
    row = DraftRow(
        start_time=float(raw["start_time"]),
        end_time=float(raw["end_time"]),
        primary_speaker=raw["primary_speaker"],
        dialogue_cleaned=raw["dialogue_cleaned"],
        content={},
        window=window,
        part=part,
    )
    extra = sorted(k for k in raw if k not in ANSWER_ROW_KEYS and k not in MIRRORED_KEYS and k != "row_index")
    if extra:
        row.notes.append(f"keys outside the schema ignored: {', '.join(extra)}")

    # Skeleton normalisations.
    words = " ".join(row.dialogue_cleaned.split())
    if words != row.dialogue_cleaned:
        row.notes.append("whitespace normalised in dialogue_cleaned")
    m = _LABEL.match(words)
    if m and (m["bracket"] or m["colon"]).strip().casefold() in names.labels:
        row.notes.append(f"subtitle speaker label {m.group(0).strip()!r} removed from dialogue_cleaned")
        words = words[m.end() :]
    row.dialogue_cleaned = words
    speaker, note = names.normalise(row.primary_speaker)
    if note:
        row.notes.append(f"primary_speaker: {note}")
    row.primary_speaker = speaker

    values = {k: raw.get(k) for k in ANSWER_CONTENT_KEYS if k != EVIDENCE_KEY}
    values[EVIDENCE_KEY] = []  # numbered by windows.stitch from the cited cues
    present = {k for k in ANSWER_CONTENT_KEYS if k in raw} | ({EVIDENCE_KEY} if EVIDENCE_WIRE_KEY in raw else set())
    if values["utterance_type"] is None and "utterance_type" in raw:
        values["utterance_type"] = ""
    row.content = _checked_content(values, present, row)
    _read_relation(raw, row)
    _normalise_people(row, names)
    _normalise_text(row)
    return row


def _read_relation(raw: dict, row: DraftRow) -> None:
    """The three relation states of the release, from the wire's null / no_clear_pattern / label."""
    content = row.content
    label = content["relation_pattern"]
    if label == NO_CLEAR_PATTERN:
        content["relation_pattern"] = ""
    handles = raw.get(EVIDENCE_WIRE_KEY)
    if label is None:
        # Not annotated: the release stores a null reason and no evidence with it.
        if content["relation_pattern_reason"] or handles:
            row.notes.append(
                "relation_pattern is null (not annotated): the reason and evidence sent with it were dropped"
            )
        content["relation_pattern_reason"] = None
        return
    if content["relation_pattern_reason"] is None:
        content["relation_pattern_reason"] = ""
    if handles is None:
        return
    if not isinstance(handles, list):
        handles = [handles]
    for handle in handles:
        number = cue_number(handle)
        if number is None:
            row.warn(
                EVIDENCE_KEY,
                f'evidence {json.dumps(handle, ensure_ascii=False)[:40]} is not a cue id such as "c12"; it was left '
                "out",
                "evidence_cue_unreadable",
            )
        elif number not in row.evidence_cues:
            row.evidence_cues.append(number)


def _empty(key: str):
    """The empty value of an annotation field: [] for lists, null for the relation label and its
    reason (not annotated), "" for other text."""
    if key in ("relation_pattern", "relation_pattern_reason"):
        return None
    return [] if typing.get_origin(RowAnnotation.model_fields[key].annotation) is list else ""


def _checked_content(values: dict, present: set, row: DraftRow) -> dict:
    """Annotation fields with the schema's structure; a broken field is emptied with a warning."""
    for key in ANSWER_CONTENT_KEYS:
        if key not in present:
            wire = EVIDENCE_WIRE_KEY if key == EVIDENCE_KEY else key
            row.warn(key, f"the model left out {wire}; it is empty here", "llm_field_missing")
            values[key] = _empty(key)
    for _ in range(len(ANSWER_CONTENT_KEYS)):
        try:
            RowAnnotation.model_validate(values)
            break
        except ValidationError as exc:
            bad = {err["loc"][0] for err in exc.errors(include_url=False) if err["loc"]}
            for key in sorted(bad):
                sent = json.dumps(values[key], ensure_ascii=False)[:200]
                first = next(e for e in exc.errors(include_url=False) if e["loc"] and e["loc"][0] == key)
                where = ".".join(str(p) for p in first["loc"])
                row.warn(
                    key,
                    f"the model's {key} did not have the schema's structure ({where}: {first['msg']}); it is empty "
                    f"here. The model sent: {sent}",
                    "llm_field_invalid",
                )
                values[key] = _empty(key)
    return values


# (field, key inside each entry or None for the row's own list, whether the value is a list)
_PERSON_FIELDS = (
    ("target", None, True),
    ("background_dialogue", "speaker", False),
    ("background_dialogue", "target", True),
    ("body_posture", "person", False),
    ("facial_expressions", "person", False),
    ("self_directed_behavior", "person", False),
    ("interaction_behavior", "initiator", False),
    ("interaction_behavior", "target", True),
    ("internal_emotion", "person", False),
    ("viewpoints_attitudes", "source", False),
    ("viewpoints_attitudes", "target", False),
    ("support_strategy", "provider", False),
    ("support_strategy", "target", True),
)


def _normalise_people(row: DraftRow, names: PersonNames) -> None:
    def fix(path: str, value: str) -> str:
        label, note = names.normalise(value)
        if note:
            row.notes.append(f"{path}: {note}")
        return label

    for name, key, is_list in _PERSON_FIELDS:
        if key is None:
            row.content[name] = [fix(f"{name}[{i}]", v) for i, v in enumerate(row.content[name])]
            continue
        for i, entry in enumerate(row.content[name]):
            path = f"{name}[{i}].{key}"
            if is_list:
                entry[key] = [fix(f"{path}[{j}]", v) for j, v in enumerate(entry[key])]
            else:
                entry[key] = fix(path, entry[key])


def _normalise_text(row: DraftRow) -> None:
    """Collapse whitespace in every free-text value (logged once per row)."""
    changed = False

    def clean(value):
        nonlocal changed
        if isinstance(value, str):
            out = " ".join(value.split())
            changed |= out != value
            return out
        if isinstance(value, list):
            return [clean(v) for v in value]
        if isinstance(value, dict):
            return {k: clean(v) for k, v in value.items()}
        return value

    row.content = {k: clean(v) for k, v in row.content.items()}
    if changed:
        row.notes.append("whitespace normalised in annotation text")


# --- the whole clip -----------------------------------------------------------------


def content_in_convention(speaker: str, values: dict) -> dict:
    """The stored annotation document: ANNOTATION_KEYS order, relation_cycle_* mirrored on therapist rows."""
    therapist = speaker == THERAPIST
    doc = dict(values)
    doc["relation_cycle_state"] = values.get("relation_pattern") if therapist else ""
    doc["relation_cycle_reason"] = values.get("relation_pattern_reason") if therapist else ""
    doc["relation_cycle_evidence_rows"] = list(values.get("relation_pattern_evidence_rows") or []) if therapist else []
    return {k: doc[k] for k in ANNOTATION_KEYS}


def finalise(rows: list[DraftRow], inp: ClipInput, *, ignore_codes: frozenset[str] = frozenset()) -> dict:
    """Number the rows, put content in the stored convention and attach every warning. Returns a summary."""
    ctx = ClipContext(inp.taxonomy, inp.participants, len(rows), inp.end_of_clip)
    previous_start = None
    for index, row in enumerate(rows, start=1):
        row.content = content_in_convention(row.primary_speaker, row.content)
        _, report = check_row({**row.skeleton(index), **row.content}, ctx)
        for issue in report.issues:
            if issue.code not in ignore_codes:
                row.warn(issue.path, issue.message, issue.code)
        if previous_start is not None and row.start_time < previous_start:
            row.warn(
                "start_time",
                f"row starts at {row.start_time}, before the previous row ({previous_start})",
                "rows_out_of_order",
            )
        previous_start = row.start_time
    for row in rows:
        _check_relation(row)
    _check_spans(rows, inp)
    uncovered = _check_coverage(rows, inp)
    for row in rows:
        for note in row.notes:
            log.info("clip %s: normalised: %s", inp.sample_id, note)
    codes: dict[str, int] = {}
    for row in rows:
        for w in row.warnings:
            codes[w["code"]] = codes.get(w["code"], 0) + 1
    return {
        "rows": len(rows),
        "rows_with_warnings": sum(1 for r in rows if r.warnings),
        "warnings": codes,
        "normalisations": sum(len(r.notes) for r in rows),
        "uncovered_cues": uncovered,
    }


def _check_relation(row: DraftRow) -> None:
    """A pattern, and "no clear pattern" too, comes with a reason and the rows that show it (as in
    the release: all its "" rows carry both). Skipped where the row model's own rules already
    flagged the same field."""
    label = row.content.get("relation_pattern")
    if label is None:
        return
    flagged = {w["path"] for w in row.warnings}
    what = "'no clear pattern'" if label == "" else repr(label)
    if "relation_pattern_reason" not in flagged and not (row.content.get("relation_pattern_reason") or "").strip():
        row.warn("relation_pattern_reason", f"the model gave {what} without a reason", "relation_reason_missing")
    if EVIDENCE_KEY not in flagged and not row.content.get(EVIDENCE_KEY):
        row.warn(EVIDENCE_KEY, f"the model gave {what} without evidence rows", "relation_evidence_missing")


def _check_spans(rows: list[DraftRow], inp: ClipInput) -> None:
    """A row must lie inside the span of the cues it overlaps: not in a silence, not beyond."""
    cues = [c for c in inp.cues]
    for row in rows:
        overlapping = [c for c in cues if c.end > row.start_time + 1e-6 and c.start < row.end_time - 1e-6]
        if not overlapping:
            row.warn(
                "start_time",
                f"the row ({row.start_time}–{row.end_time} s) lies where no cue is spoken",
                "time_outside_cues",
            )
            continue
        # Length of the row not covered by any cue span (merge the overlapping spans).
        spans = sorted((max(c.start, row.start_time), min(c.end, row.end_time)) for c in overlapping)
        covered, cur_start, cur_end = 0.0, *spans[0]
        for s, e in spans[1:]:
            if s > cur_end:
                covered += cur_end - cur_start
                cur_start, cur_end = s, e
            else:
                cur_end = max(cur_end, e)
        covered += cur_end - cur_start
        outside = (row.end_time - row.start_time) - covered
        if outside > TIME_TOLERANCE:
            first, last = overlapping[0], overlapping[-1]
            row.warn(
                "end_time",
                f"{outside:.1f} s of the row ({row.start_time}–{row.end_time} s) lie outside its cues "
                f"(cue {first.number}–{last.number}: {first.start}–{last.end} s)",
                "time_outside_cues",
            )


def _words(text: str) -> list[str]:
    return _WORD.findall(text.replace("’", "'").replace("‘", "'").casefold())


def _check_coverage(rows: list[DraftRow], inp: ClipInput) -> list[int]:
    """Every cue with words must appear in the rows around its time. Returns the uncovered cue numbers."""
    if not rows:
        return [c.number for c in inp.cues if c.has_words]
    row_words = [_words(r.dialogue_cleaned) for r in rows]
    starts = [r.start_time for r in rows]
    uncovered = []
    for cue in inp.cues:
        needed = _words(cue.text)
        if not needed:
            continue
        near = [
            i
            for i, r in enumerate(rows)
            if r.end_time >= cue.start - TIME_TOLERANCE and r.start_time <= cue.end + TIME_TOLERANCE
        ]
        hay = [w for i in near for w in row_words[i]]
        matcher = difflib.SequenceMatcher(None, needed, hay, autojunk=False)
        found = sum(block.size for block in matcher.get_matching_blocks())
        if found >= COVERAGE_THRESHOLD * len(needed):
            continue
        uncovered.append(cue.number)
        # Attach the warning to the row nearest the cue, where the annotator will look.
        pos = min(max(bisect.bisect_left(starts, cue.start), 0), len(rows) - 1)
        if pos > 0 and abs(rows[pos - 1].start_time - cue.start) < abs(rows[pos].start_time - cue.start):
            pos -= 1
        snippet = " ".join(cue.text.split())[:80]
        rows[pos].warn(
            "dialogue_cleaned",
            f"cue {cue.number} ({cue.start}–{cue.end} s, {cue.speaker or 'unknown speaker'}: {snippet!r}) is not "
            "covered by any row's words",
            "cue_not_covered",
        )
    return uncovered


@dataclass
class Outcome:
    """What a provider made of one clip: the rows to store and the clip-level provenance."""

    rows: list[DraftRow]
    source: str  # a DraftSource value
    provenance: dict  # copied onto every draft of the clip
    summary: dict  # for the job's result: counts of rows, warnings, normalisations
