"""The lean response schema sent to Gemini, derived from ``annotation.schema``.

Gemini refuses response schemas it finds too complex (HTTP 400 INVALID_ARGUMENT,
"too many states for serving"; see docs/preannotation.md). So the model gets a
projection of the pydantic row model: the same keys, types and nesting, in the
release key order, with enums only for the three short closed label sets of the
scenario, and nothing else — no numeric bounds, no array limits, no per-clip
entity enums. Everything the projection leaves out is enforced afterwards by the
full validation (``validate.py``).

The wire differs from the stored document in a few documented ways, all stated in
the prompt and undone in one place (``validate``):

- ``utterance_type`` is ``null`` on therapist rows (stored ``""``): an enum with an
  empty-string member is not something to rely on.
- ``relation_pattern`` keeps the release's three states apart: ``null`` is "not
  annotated" (stored null, with a null reason), the extra enum member
  ``no_clear_pattern`` is "no clear pattern" (stored ``""``), else a label.
- Evidence is asked as ``relation_pattern_evidence_cues``: the ids of the cues
  (``"c12"``) the model copies from the transcript, not row numbers it would have to
  count; they become ``relation_pattern_evidence_rows`` once the rows are numbered.
- ``row_index`` is not asked for (the platform numbers the rows), and the
  ``relation_cycle_*`` keys are mirrored by the platform from ``relation_pattern``
  (ROW_SCHEMA.md, regular convention).
"""

from __future__ import annotations

from functools import cache
from typing import Any

from google.genai import types

from ..schema import CONVENTION_ROW_KEYS, Row, relation_label_key
from ..taxonomy import DEFAULT_VERSION, Taxonomy, load_taxonomy

# Kept by the platform, not asked from the model.
MIRRORED_KEYS = ("relation_cycle_state", "relation_cycle_reason", "relation_cycle_evidence_rows")
# Stored keys whose wire name differs, and the wire name.
EVIDENCE_KEY, EVIDENCE_WIRE_KEY = "relation_pattern_evidence_rows", "relation_pattern_evidence_cues"
# The stored keys the model's answer fills, in the order the release uses.
STORED_ANSWER_KEYS = tuple(k for k in CONVENTION_ROW_KEYS if k not in MIRRORED_KEYS and k != "row_index")
# The keys of one row in the model's answer (wire names), same order.
ANSWER_ROW_KEYS = tuple(EVIDENCE_WIRE_KEY if k == EVIDENCE_KEY else k for k in STORED_ANSWER_KEYS)
# The relation_pattern enum member that stands for "" ("no clear pattern"); null is "not annotated".
NO_CLEAR_PATTERN = "no_clear_pattern"

_TYPES = {
    "string": "STRING",
    "integer": "INTEGER",
    "number": "NUMBER",
    "boolean": "BOOLEAN",
    "array": "ARRAY",
    "object": "OBJECT",
}


def _resolve(node: dict, defs: dict) -> dict:
    if "$ref" in node:
        return _resolve(defs[node["$ref"].rsplit("/", 1)[1]], defs)
    return node


def _convert(node: dict, defs: dict) -> dict:
    """A pydantic JSON-schema node as a Gemini ``Schema`` dict (snake_case keys)."""
    node = _resolve(node, defs)
    if "anyOf" in node:  # Optional[X]: X, nullable
        options = [o for o in node["anyOf"] if o.get("type") != "null"]
        out = _convert(options[0], defs)
        out["nullable"] = True
        return out
    kind = node["type"]
    out: dict[str, Any] = {"type": _TYPES[kind]}
    if kind == "object":
        props = node["properties"]
        out["properties"] = {name: _convert(sub, defs) for name, sub in props.items()}
        out["required"] = list(props)
        out["property_ordering"] = list(props)
    elif kind == "array":
        out["items"] = _convert(node["items"], defs)
    return out


def _row_schema() -> dict:
    raw = Row.model_json_schema()
    defs = raw.get("$defs", {})
    props = raw["properties"]
    properties = {k: _convert(props[k], defs) for k in STORED_ANSWER_KEYS}
    for sub in properties.values():
        sub.pop("nullable", None)  # optional in the stored model, always present in an answer
    properties[EVIDENCE_WIRE_KEY] = {"type": "ARRAY", "items": {"type": "STRING"}}
    del properties[EVIDENCE_KEY]
    properties["relation_pattern_reason"]["nullable"] = True
    properties = {k: properties[k] for k in ANSWER_ROW_KEYS}
    return {
        "type": "OBJECT",
        "properties": properties,
        "required": list(ANSWER_ROW_KEYS),
        "property_ordering": list(ANSWER_ROW_KEYS),
    }


def _with_labels(row: dict, taxonomy: Taxonomy) -> dict:
    props = row["properties"]
    props["utterance_type"].update(enum=[x.label for x in taxonomy.utterance_types], nullable=True)
    props["relation_pattern"].update(
        enum=[*(x.label for x in taxonomy.relation_patterns), NO_CLEAR_PATTERN], nullable=True
    )
    props["support_strategy"]["items"]["properties"]["strategy_type"]["enum"] = [
        x.label for x in taxonomy.support_strategies
    ]
    return row


@cache
def lean_schema_dict(scenario: str, taxonomy_version: str = DEFAULT_VERSION) -> dict:
    """The response schema for ``scenario`` as a plain dict: ``{"rows": [row, ...]}``."""
    row = _with_labels(_row_schema(), load_taxonomy(scenario, taxonomy_version))
    return {
        "type": "OBJECT",
        "properties": {"rows": {"type": "ARRAY", "items": row}},
        "required": ["rows"],
        "property_ordering": ["rows"],
    }


@cache
def lean_schema(scenario: str, taxonomy_version: str = DEFAULT_VERSION) -> types.Schema:
    """The same schema as the SDK's type (built once: the SDK reads it, never changes it)."""
    return types.Schema.model_validate(lean_schema_dict(scenario, taxonomy_version))


def enum_value_count(schema: dict) -> int:
    """Enum values anywhere in a schema dict (what makes a schema "too complex" first)."""
    total = len(schema.get("enum") or [])
    for sub in (schema.get("properties") or {}).values():
        total += enum_value_count(sub)
    if schema.get("items"):
        total += enum_value_count(schema["items"])
    return total


def wire_row(row: dict, cue_of_row) -> dict:
    """A stored row (skeleton and annotation, in any of the release's key conventions) as the
    model would answer it; ``cue_of_row(n)`` gives the cue id that stands for evidence row n.
    The inverse of ``validate``'s reading, for measuring answer sizes (bench/bench_row_tokens.py)
    and for the tests' fake model."""
    key = relation_label_key(row)
    label = row.get(key)
    prefix = "relation_cycle" if key == "relation_cycle_state" else "relation_pattern"
    out = {k: row.get(k) for k in STORED_ANSWER_KEYS if k != EVIDENCE_KEY}
    out["utterance_type"] = row.get("utterance_type") or None
    out["relation_pattern"] = NO_CLEAR_PATTERN if label == "" else label
    out["relation_pattern_reason"] = None if label is None else (row.get(f"{prefix}_reason") or "")
    out[EVIDENCE_WIRE_KEY] = [] if label is None else [cue_of_row(n) for n in row.get(f"{prefix}_evidence_rows") or []]
    return {k: out[k] for k in ANSWER_ROW_KEYS}
