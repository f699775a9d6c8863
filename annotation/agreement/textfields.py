"""The free-text fields whose agreement is measured on meaning, and their units.

A text field's unit is a row, or a row and a *matching key* for the texts
inside list fields: a person (body posture, facial expressions, self-directed
behaviour, internal emotion), an initiator and the people they act toward
(interaction behaviour), a source and a target (viewpoint, attitude), the
provider (the therapist's strategy content). Two coders' texts are compared
when they are about the same key of the same row. A coder who coded the row
and wrote nothing for a key a co-coder wrote about contributes the empty text
(disagreement on presence); a unit on which no coder wrote anything is no unit.
Several entries for the same key in one document are read as one text, joined
with "; " in their order.

Texts are compared after collapsing white space (``normalise``); the
background dialogue's ``content`` is transcribed speech, not a coder's
reading, and is not measured.

Everything here is a read; the coders, rows and what counts are those of the
nominal extraction (``extract``), read again for the texts with the same work
scope rule (``scope.with_left_out``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import orjson
from django.db.models import QuerySet

from ..schema import relation_label_key
from .extract import NOT_CODED, Extraction, combined_codes, extract
from .fields import EVERY_ROW, THERAPIST_ROWS

EMPTY = ""


def _loads(text: str):
    """A document part as Python values: orjson, several times faster than ``json`` on the hundred thousand parts
    of a full-scale report; ``json`` for what orjson refuses and ``json`` reads (integers beyond 64 bits)."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)


def normalise(text) -> str:
    """The text as it is compared: white space collapsed; anything that is not a string is no text."""
    return " ".join(text.split()) if isinstance(text, str) else EMPTY


def _joined(pairs) -> dict[str, str]:
    out: dict[str, list[str]] = {}
    for key, text in pairs:
        text = normalise(text)
        if text:
            out.setdefault(key, []).append(text)
    return {key: "; ".join(texts) for key, texts in out.items()}


def _entries(content: dict, list_key: str) -> list[dict]:
    return [e for e in (content.get(list_key) or []) if isinstance(e, dict)]


def _tone(content: dict, speaker: str) -> dict[str, str]:
    return _joined([(EMPTY, content.get("tone_of_voice"))])


def _by_person(list_key: str, text_key: str) -> Callable[[dict, str], dict[str, str]]:
    def texts(content: dict, speaker: str) -> dict[str, str]:
        return _joined((str(e.get("person")), e.get(text_key)) for e in _entries(content, list_key))

    return texts


def _people(value) -> str:
    return ", ".join(sorted(str(v) for v in value)) if isinstance(value, list) else str(value)


def _interaction(content: dict, speaker: str) -> dict[str, str]:
    return _joined(
        (f"{e.get('initiator')} → {_people(e.get('target') or [])}", e.get("description"))
        for e in _entries(content, "interaction_behavior")
    )


def _viewpoint(text_key: str) -> Callable[[dict, str], dict[str, str]]:
    def texts(content: dict, speaker: str) -> dict[str, str]:
        return _joined(
            (f"{e.get('source')} → {e.get('target')}", e.get(text_key))
            for e in _entries(content, "viewpoints_attitudes")
        )

    return texts


def _strategy(content: dict, speaker: str) -> dict[str, str]:
    return _joined((str(e.get("provider")), e.get("strategy_content")) for e in _entries(content, "support_strategy"))


def _relation_reason(content: dict, speaker: str) -> dict[str, str]:
    # The reason lives beside the label, under whichever key family the row carries.
    label_key = relation_label_key({**content, "primary_speaker": speaker})
    reason_key = "relation_cycle_reason" if label_key == "relation_cycle_state" else "relation_pattern_reason"
    return _joined([(EMPTY, content.get(reason_key))])


@dataclass(frozen=True)
class TextField:
    key: str
    label: str
    rows: str  # EVERY_ROW or THERAPIST_ROWS
    matched_by: str  # how texts of two coders are paired within a row, for the report
    reads: tuple[str, ...]  # top-level document keys
    texts: Callable[[dict, str], dict[str, str]]  # (content, speaker) -> {matching key: text}
    # The adjudication field (``adjudication.fields``) the text belongs to.
    adjudication_field: str
    # Whether ``texts`` reads the row's speaker too (else only the document's parts).
    by_speaker: bool = False


TEXT_FIELDS: tuple[TextField, ...] = (
    TextField("tone_of_voice", "Tone of voice", EVERY_ROW, "row", ("tone_of_voice",), _tone, "tone_of_voice"),
    TextField(
        "body_posture",
        "Body posture (description)",
        EVERY_ROW,
        "person",
        ("body_posture",),
        _by_person("body_posture", "description"),
        "body_posture",
    ),
    TextField(
        "facial_expressions",
        "Facial expressions (description)",
        EVERY_ROW,
        "person",
        ("facial_expressions",),
        _by_person("facial_expressions", "description"),
        "facial_expressions",
    ),
    TextField(
        "self_directed_behavior",
        "Self-directed behaviour (description)",
        EVERY_ROW,
        "person",
        ("self_directed_behavior",),
        _by_person("self_directed_behavior", "description"),
        "self_directed_behavior",
    ),
    TextField(
        "interaction_behavior",
        "Interaction behaviour (description)",
        EVERY_ROW,
        "initiator → targets",
        ("interaction_behavior",),
        _interaction,
        "interaction_behavior",
    ),
    TextField(
        "internal_emotion",
        "Internal emotion (description)",
        EVERY_ROW,
        "person",
        ("internal_emotion",),
        _by_person("internal_emotion", "emotion_description"),
        "internal_emotion",
    ),
    TextField(
        "viewpoint",
        "Viewpoint",
        EVERY_ROW,
        "source → target",
        ("viewpoints_attitudes",),
        _viewpoint("viewpoint"),
        "viewpoints_attitudes",
    ),
    TextField(
        "attitude",
        "Attitude",
        EVERY_ROW,
        "source → target",
        ("viewpoints_attitudes",),
        _viewpoint("attitude"),
        "viewpoints_attitudes",
    ),
    TextField(
        "strategy_content",
        "Support strategy (content)",
        THERAPIST_ROWS,
        "provider",
        ("support_strategy",),
        _strategy,
        "support_strategy",
    ),
    TextField(
        "relation_reason",
        "Relation pattern (reason)",
        EVERY_ROW,
        "row",
        ("relation_pattern", "relation_pattern_reason", "relation_cycle_state", "relation_cycle_reason"),
        _relation_reason,
        "relation_pattern",
        by_speaker=True,
    ),
)
TEXT_FIELDS_BY_KEY = {f.key: f for f in TEXT_FIELDS}
READS = tuple(dict.fromkeys(k for f in TEXT_FIELDS for k in f.reads))


@dataclass
class TextMatrix:
    """One text field's units and values.

    ``codes[coder, unit]``: -1 when the coder's work on the unit's row does not
    count (or there is none), 0 when it counts and holds no text for the unit's
    key (``domain[0]`` is the empty text), else a position in ``domain``.
    """

    unit_row: np.ndarray  # per unit: its row's position among the extraction's units
    unit_key: list[str]
    codes: np.ndarray
    domain: list[str]


def _first_appearance(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(``codes`` renumbered 0, 1, ... in the order each value first appears; where each new number first
    appears): what numbering in a dict as one goes gives, for integers, in a few sorts."""
    _, first, inverse = np.unique(codes, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    return rank[inverse.reshape(-1)], first[order]


def extract_with_texts(clips: QuerySet, work_scope: str) -> Extraction:
    """``extract`` reading the free-text parts in the same pass over the documents (what ``extract_texts`` needs)."""
    return extract(clips, work_scope, text_parts=READS)


def extract_texts(ex: Extraction, clips: QuerySet) -> dict[str, TextMatrix]:
    """The texts of the documents that count in ``ex`` (its work scope), one matrix per text field.

    The documents' free-text parts come from ``ex``, read with its label parts (``extract_with_texts``). A
    field's texts are computed once per distinct combination of the parts it
    reads (and the row's speaker, for the one field that reads it), in the order the combinations first appear
    among the documents (the revisions by row and coder's name, then the drafts by row); every document with that
    combination gets them. Texts and units are numbered in order of first appearance, so the numbering never
    depends on a query plan.
    """
    columns = ex.text_columns
    if columns is None:
        raise ValueError("the extraction did not read the free-text parts: make it with extract_with_texts")
    speaker_names = list(dict.fromkeys(ex.unit_speaker))
    speaker_code = {s: i for i, s in enumerate(speaker_names)}
    unit_speaker = np.fromiter(map(speaker_code.__getitem__, ex.unit_speaker), dtype=np.int64, count=ex.units)
    doc_speaker = unit_speaker[columns.doc_unit]
    decoded: dict[str, object] = {}

    def reading(field: TextField, doc: int) -> tuple[dict, str]:
        """The parts of document ``doc`` the field reads, decoded, and its row's speaker."""
        content = {}
        for key in field.reads:
            codes, texts = columns.parts[key]
            text = texts[codes[doc]]
            if text is not None:
                if text not in decoded:
                    decoded[text] = _loads(text)
                content[key] = decoded[text]
        return content, speaker_names[doc_speaker[doc]]

    return {f.key: _field_matrix(f, ex, columns, doc_speaker, reading) for f in TEXT_FIELDS}


def _field_matrix(field: TextField, ex: Extraction, columns, doc_speaker: np.ndarray, reading) -> TextMatrix:
    # The distinct combinations of what the field reads, numbered in order of first appearance, and a document
    # holding each (the first).
    parts = [(columns.parts[key][0], len(columns.parts[key][1])) for key in field.reads]
    combination, first = _first_appearance(combined_codes(doc_speaker if field.by_speaker else None, parts))
    # Each combination's texts: (matching key, text) entries, laid end to end.
    matches: dict[str, int] = {}
    domain: dict[str, int] = {EMPTY: 0}
    lengths = np.zeros(len(first), dtype=np.int64)
    entry_match, entry_text = [], []
    for k, doc in enumerate(first.tolist()):
        found = field.texts(*reading(field, doc))
        lengths[k] = len(found)
        for match, text in found.items():
            entry_match.append(matches.setdefault(match, len(matches)))
            entry_text.append(domain.setdefault(text, len(domain)))
    # Every document's entries, in document order: its combination's entries.
    per_doc = lengths[combination]
    total = int(per_doc.sum())
    doc_of_entry = np.repeat(np.arange(len(combination)), per_doc)
    within = np.arange(total) - np.repeat(np.cumsum(per_doc) - per_doc, per_doc)
    at = np.repeat((np.cumsum(lengths) - lengths)[combination], per_doc) + within
    match = np.asarray(entry_match, dtype=np.int64)[at]
    text = np.asarray(entry_text, dtype=np.int64)[at]
    row_of_entry = columns.doc_unit[doc_of_entry]
    # A unit is a row and a matching key, numbered in order of first appearance.
    unit, first_entry = _first_appearance(row_of_entry * max(len(matches), 1) + match)
    names = list(matches)
    unit_row = row_of_entry[first_entry].astype(np.int64)
    codes = np.where(ex.coding[:, unit_row] != NOT_CODED, 0, -1).astype(np.int32)
    if total:
        codes[columns.doc_coder[doc_of_entry], unit] = text
    return TextMatrix(unit_row, [names[m] for m in match[first_entry].tolist()], codes, list(domain))


def coder_texts(field: TextField, contents: dict[str, dict], speaker: str) -> dict[str, dict[str, str]]:
    """Per matching key, each coder's text (empty when they wrote none for it): ``{key: {coder: text}}``.

    For one row, from full documents (``{coder: content}``); keys in order of first appearance.
    """
    per_coder = {coder: field.texts(content or {}, speaker) for coder, content in contents.items()}
    keys = list(dict.fromkeys(k for texts in per_coder.values() for k in texts))
    return {key: {coder: texts.get(key, EMPTY) for coder, texts in per_coder.items()} for key in keys}
