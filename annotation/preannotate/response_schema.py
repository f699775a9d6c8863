"""The lean response schema sent to Gemini, derived from ``annotation.schema``.

Gemini refuses response schemas it finds too complex (HTTP 400 INVALID_ARGUMENT,
"too many states for serving"; see spec/PREANNOTATION.md). So the model gets a
projection of the pydantic row model: the same keys, types and nesting, in the
release key order, with enums only for the three short closed label sets of the
scenario, and nothing else — no numeric bounds, no array limits, no per-clip
entity enums. Everything the projection leaves out is enforced afterwards by the
full validation (``validate.py``).

Two wire conventions differ from the stored document, both stated in the prompt:
``utterance_type`` and ``relation_pattern`` use ``null`` for "empty" (an enum
with an empty-string member is not something to rely on), and the
``relation_cycle_*`` keys are not asked for: the platform mirrors them from
``relation_pattern`` (ROW_SCHEMA.md, regular convention).
"""

from __future__ import annotations

from functools import cache
from typing import Any

from google.genai import types

from ..schema import CONVENTION_ROW_KEYS, Row
from ..taxonomy import Taxonomy, load_taxonomy

# Kept by the platform, not asked from the model.
MIRRORED_KEYS = ("relation_cycle_state", "relation_cycle_reason", "relation_cycle_evidence_rows")
# The keys of one row in the model's answer, in the order the release uses.
ANSWER_ROW_KEYS = tuple(k for k in CONVENTION_ROW_KEYS if k not in MIRRORED_KEYS)
# Fields whose "empty" is null on the wire and "" in the stored document.
NULL_MEANS_BLANK = ("utterance_type", "relation_pattern")

_TYPES = {
    "string": "STRING",
    "integer": "INTEGER",
    "number": "NUMBER",
    "boolean": "BOOLEAN",
    "array": "ARRAY",
    "object": "OBJECT",
}
# JSON-schema keywords that constrain values; none of them is sent.
_DROPPED = {
    "title",
    "description",
    "default",
    "additionalProperties",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minItems",
    "maxItems",
    "minLength",
    "maxLength",
    "pattern",
    "format",
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
    row = {
        "type": "OBJECT",
        "properties": {k: _convert(props[k], defs) for k in ANSWER_ROW_KEYS},
        "required": list(ANSWER_ROW_KEYS),
        "property_ordering": list(ANSWER_ROW_KEYS),
    }
    for sub in row["properties"].values():
        sub.pop("nullable", None)  # optional in the stored model, always present in an answer
    return row


def _with_labels(row: dict, taxonomy: Taxonomy) -> dict:
    props = row["properties"]
    props["utterance_type"].update(enum=[x.label for x in taxonomy.utterance_types], nullable=True)
    props["relation_pattern"].update(enum=[x.label for x in taxonomy.relation_patterns], nullable=True)
    props["support_strategy"]["items"]["properties"]["strategy_type"]["enum"] = [
        x.label for x in taxonomy.support_strategies
    ]
    return row


@cache
def lean_schema_dict(scenario: str, taxonomy_version: str = "1") -> dict:
    """The response schema for ``scenario`` as a plain dict: ``{"rows": [row, ...]}``."""
    row = _with_labels(_row_schema(), load_taxonomy(scenario, taxonomy_version))
    return {
        "type": "OBJECT",
        "properties": {"rows": {"type": "ARRAY", "items": row}},
        "required": ["rows"],
        "property_ordering": ["rows"],
    }


@cache
def lean_schema(scenario: str, taxonomy_version: str = "1") -> types.Schema:
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
