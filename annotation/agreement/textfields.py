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

from ..models import Draft, Revision
from ..schema import relation_label_key
from .extract import NOT_CODED, Extraction, JSONText
from .fields import EVERY_ROW, THERAPIST_ROWS
from .scope import LEFT_OUT_FIELD, with_left_out

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


def _documents(documents: QuerySet, *leading: str):
    """The documents' parts, in the order of ``leading``: the texts' positions (and so the order in which every
    figure sums their vectors) must not depend on the order a query plan happens to return rows in, or a
    release would not reproduce byte for byte."""
    parts = {f"text_{key}": JSONText("content", key) for key in READS}
    return documents.annotate(**parts).values_list(*leading, *parts).order_by(*leading).iterator(chunk_size=2000)


def extract_texts(ex: Extraction, clips: QuerySet) -> dict[str, TextMatrix]:
    """The texts of the documents that count in ``ex`` (its work scope), one matrix per text field."""
    unit_of = {row_id: j for j, row_id in enumerate(ex.unit_row_ids)}
    coder_of = {name: i for i, name in enumerate(ex.coders)}
    counted = with_left_out(Revision.objects.filter(row__clip__in=clips), ex.work_scope).filter(
        **{f"{LEFT_OUT_FIELD}__isnull": True}
    )
    units: dict[str, dict[tuple[int, str], int]] = {f.key: {} for f in TEXT_FIELDS}
    domains: dict[str, dict[str, int]] = {f.key: {EMPTY: 0} for f in TEXT_FIELDS}
    # Per field, three parallel columns: coder, unit, position of the text in the domain.
    entries: dict[str, tuple[list[int], list[int], list[int]]] = {f.key: ([], [], []) for f in TEXT_FIELDS}
    decoded: dict[str, object] = {}
    # Per field, its (matching key, position in the domain) pairs by the raw part it reads (or by the speaker and
    # the parts, for a field that reads more): documents repeat their parts a lot (drafts, unchanged revisions,
    # phrases coders reuse), and a 10x release reads 280,000 documents, so the lookup is one dict per field.
    fields = [
        (f, units[f.key], entries[f.key], tuple(READS.index(k) for k in f.reads), {}) for f in TEXT_FIELDS
    ]  # fmt: skip
    single = [len(positions) == 1 and not f.by_speaker for f, _, _, positions, _ in fields]

    def parse(speaker: str, raw: tuple) -> list[tuple[dict, tuple, list[tuple[str, int]]]]:
        content = None
        out = []
        for (f, field_units, field_entries, positions, memo), one_part in zip(fields, single):
            memo_key = raw[positions[0]] if one_part else (speaker, *[raw[i] for i in positions])
            found = memo.get(memo_key)
            if found is None:
                if content is None:
                    content = {}
                    for key, text in zip(READS, raw):
                        if text is not None:
                            if text not in decoded:
                                decoded[text] = _loads(text)
                            content[key] = decoded[text]
                domain = domains[f.key]
                found = memo[memo_key] = [
                    (match, domain.setdefault(text, len(domain))) for match, text in f.texts(content, speaker).items()
                ]
            if found:
                out.append((field_units, field_entries, found))
        return out

    def read(coder: int, row_id: int, raw: tuple) -> None:
        j = unit_of.get(row_id)
        if j is None:
            return
        for field_units, (coders, field_units_of, texts), found in parse(ex.unit_speaker[j], raw):
            for match, t in found:
                coders.append(coder)
                field_units_of.append(field_units.setdefault((j, match), len(field_units)))
                texts.append(t)

    for row_id, username, *raw in _documents(counted, "row_id", "annotator__username"):
        if username in coder_of:
            read(coder_of[username], row_id, tuple(raw))
    if ex.llm is not None:
        for row_id, *raw in _documents(Draft.objects.filter(row__clip__in=clips), "row_id"):
            read(ex.llm, row_id, tuple(raw))

    out = {}
    for f in TEXT_FIELDS:
        keys = list(units[f.key])
        unit_row = np.fromiter((j for j, _ in keys), dtype=np.int64, count=len(keys))
        codes = np.where(ex.coding[:, unit_row] != NOT_CODED, 0, -1).astype(np.int32)
        c, u, t = entries[f.key]
        if c:
            codes[np.asarray(c), np.asarray(u)] = np.asarray(t)
        out[f.key] = TextMatrix(unit_row, [k for _, k in keys], codes, list(domains[f.key]))
    return out


def coder_texts(field: TextField, contents: dict[str, dict], speaker: str) -> dict[str, dict[str, str]]:
    """Per matching key, each coder's text (empty when they wrote none for it): ``{key: {coder: text}}``.

    For one row, from full documents (``{coder: content}``); keys in order of first appearance.
    """
    per_coder = {coder: field.texts(content or {}, speaker) for coder, content in contents.items()}
    keys = list(dict.fromkeys(k for texts in per_coder.values() for k in texts))
    return {key: {coder: texts.get(key, EMPTY) for coder, texts in per_coder.items()} for key in keys}
