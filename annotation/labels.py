"""The words people read for the platform's internal names: states and fields.

One mapping, used by every server-rendered page through the template filters
of ``annotation/templatetags/people.py`` (``state_label``, ``field_label``)
and by messages that name a state. Stored values stay as they are
(``in_review``); only what is shown changes (``in review``).

Field names follow the row editor's labels: the six dimensions by their
titles (``adjudication.fields.FIELD_TITLES``), list entries by position from 1
(``Support strategy 1 › for``), rows by their 1-based number.
"""

from __future__ import annotations

import re
from typing import get_args, get_origin

from pydantic import BaseModel

from .adjudication.fields import FIELD_TITLES
from .models import AssignmentState, ClipState, JobState, RevisionStatus
from .schema import RowAnnotation

# The words of every state: the labels of the state choices (models.py), the one place they are written.
_STATE_WORDS: dict[str, str] = {
    value: label for kind in (ClipState, AssignmentState, RevisionStatus, JobState) for value, label in kind.choices
}


def state_words() -> dict[str, str]:
    """Every state's words, for the pages' scripts (they write no state names of their own)."""
    return dict(_STATE_WORDS)


def state_label(value) -> str:
    """``in_review`` -> ``in review``; a value not in the mapping gets its underscores turned into spaces."""
    if value is None:
        return ""
    value = str(value)
    return _STATE_WORDS.get(value, value.replace("_", " "))


# Document keys that are not dimensions of their own: the relation pattern's parts (under either key family)
# and the row skeleton.
_KEY_LABELS = {
    "relation_pattern_reason": "Relation pattern › reason",
    "relation_pattern_evidence_rows": "Relation pattern › evidence rows",
    "relation_cycle_state": "Relation pattern",
    "relation_cycle_reason": "Relation pattern › reason",
    "relation_cycle_evidence_rows": "Relation pattern › evidence rows",
    "row_index": "Row number",
    "start_time": "Start",
    "end_time": "End",
    "primary_speaker": "Speaker",
    "dialogue_cleaned": "Words",
}
# Keys inside list entries where the editor names them otherwise (the rest read as the key with spaces).
_ENTRY_KEYS = {
    "background_dialogue": {"content": "words"},
    "internal_emotion": {"emotion_description": "emotion"},
    "interaction_behavior": {"target": "toward", "description": "what they do"},
    "viewpoints_attitudes": {"target": "about"},
    "support_strategy": {"strategy_type": "strategy", "target": "for", "strategy_content": "what the therapist does"},
}
_STEP = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)((?:\[\d+\])*)")


def _is_record_list(annotation) -> bool:
    args = get_args(annotation)
    return (
        get_origin(annotation) is list and bool(args) and isinstance(args[0], type) and issubclass(args[0], BaseModel)
    )


# Lists whose entries are records (an emotion, a strategy): an index names an entry ("Internal emotion 2").
_RECORD_LISTS = frozenset(k for k, f in RowAnnotation.model_fields.items() if _is_record_list(f.annotation))


def key_label(key: str) -> str:
    """A document key (or any field name) as a person reads it."""
    if key in FIELD_TITLES:
        return FIELD_TITLES[key]
    if key in _KEY_LABELS:
        return _KEY_LABELS[key]
    words = key.replace("_", " ").strip()
    return words[:1].upper() + words[1:]


def measure_label(measure: dict) -> str:
    """An agreement measure's name for the page: ``presence_internal_emotion`` reads ``Internal emotion present``.

    The measures' own labels (``internal_emotion present``) stay as they are in
    the report and the figures: frozen releases reproduce them byte for byte.
    """
    key = measure.get("key", "")
    if key.startswith("presence_"):
        return f"{key_label(key.removeprefix('presence_'))} present"
    return measure.get("label", key)


def field_label(path: str) -> str:
    """A field path as a person reads it.

    ``rows[12].support_strategy[0].target[1]`` -> ``Row 13 › Support strategy 1 › for, entry 2``;
    ``relation_pattern_evidence_rows[2]`` -> ``Relation pattern › evidence rows, entry 3``;
    ``content.tone_of_voice`` (an audit-trail change) -> ``Tone of voice``.
    A path that does not parse is returned as it is.
    """
    steps = (path or "").split(".")
    if steps[0] == "content" and len(steps) > 1:
        steps = steps[1:]  # the annotation document of a draft, revision or gold
    parts: list[str] = []
    record_list = None  # the list of records the path is inside, if any
    for step in steps:
        match = _STEP.fullmatch(step)
        if match is None:
            return path
        key, index = match.group(1), [int(i) + 1 for i in re.findall(r"\d+", match.group(2))]
        if key == "rows" and index and not parts:
            parts.append(f"Row {index[0]}")
            continue
        if record_list is None:
            label = key_label(key)
        else:
            label = _ENTRY_KEYS.get(record_list, {}).get(key, key.replace("_", " "))
        if index and record_list is None and key in _RECORD_LISTS:
            label = f"{label} {index[0]}"
            record_list = key
        elif index:
            label = f"{label}, entry {index[0]}"
        parts.append(label)
    return " › ".join(parts)
