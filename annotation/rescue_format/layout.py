"""Key order of a release row, kept beside the document.

PostgreSQL's jsonb does not keep key order, and the public release is not
uniform about it (rows differ in which relation keys they carry and where;
a few ``internal_emotion`` entries put ``intensity`` before
``emotion_description``). A document therefore keeps a ``layout``: the row's
top-level key order, plus the key order of any nested record that differs
from the schema's field order. Export applies it; a document without a
layout follows the platform's regular convention.
"""

from __future__ import annotations

from ..schema import CONVENTION_ROW_KEYS, Row

# Schema field order of each nested record, by the list that holds it.
_CANONICAL_NESTED = {
    name: tuple(field.annotation.__args__[0].model_fields)
    for name, field in Row.model_fields.items()
    if getattr(field.annotation, "__origin__", None) is list and hasattr(field.annotation.__args__[0], "model_fields")
}


def capture(row: dict) -> dict:
    """The layout of a row as it came: ``{"keys": [...], "nested": {"internal_emotion[0]": [...]}}``."""
    nested = {}
    for name, canonical in _CANONICAL_NESTED.items():
        for i, entry in enumerate(row.get(name) or []):
            if isinstance(entry, dict) and tuple(entry) != canonical:
                nested[f"{name}[{i}]"] = list(entry)
    layout = {"keys": list(row)}
    if nested:
        layout["nested"] = nested
    return layout


def _ordered(mapping: dict, order) -> dict:
    out = {k: mapping[k] for k in order if k in mapping}
    out.update((k, v) for k, v in mapping.items() if k not in out)
    return out


def apply(row: dict, layout: dict | None) -> dict:
    """Order a row's keys (and its nested records' keys) as its layout says."""
    layout = layout or {}
    ordered = _ordered(row, layout.get("keys") or CONVENTION_ROW_KEYS)
    nested = layout.get("nested", {})
    for name, canonical in _CANONICAL_NESTED.items():
        entries = ordered.get(name)
        if isinstance(entries, list):
            ordered[name] = [
                _ordered(e, nested.get(f"{name}[{i}]", canonical)) if isinstance(e, dict) else e
                for i, e in enumerate(entries)
            ]
    return ordered
