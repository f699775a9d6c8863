"""The fields a lead adjudicates, and how coders' values of them are compared.

A field is a top-level key of ``schema.ANNOTATION_KEYS``, except the relation
pattern: its label, reason and evidence rows (under whichever key family the
row carries, see ``workspace.services.relation_keys``, plus the mirrored
``relation_cycle_*`` keys of the regular convention) form one field, decided
as a whole, because a label without its reason and evidence means nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..schema import ANNOTATION_KEYS, RELATION_KEYS

RELATION_FIELD = "relation_pattern"
FIELDS: tuple[str, ...] = (*(k for k in ANNOTATION_KEYS if k not in RELATION_KEYS), RELATION_FIELD)
FIELD_TITLES = {
    "target": "Target",
    "utterance_type": "Utterance type",
    "background_dialogue": "Background dialogue",
    "tone_of_voice": "Tone of voice",
    "body_posture": "Body posture",
    "facial_expressions": "Facial expressions",
    "self_directed_behavior": "Self-directed behaviour",
    "interaction_behavior": "Interaction behaviour",
    "internal_emotion": "Internal emotion",
    "viewpoints_attitudes": "Viewpoints & attitudes",
    "support_strategy": "Support strategy",
    RELATION_FIELD: "Relation pattern",
}
DRAFT = "draft"  # the LLM draft as a source of values (never a coder)


def field_keys(name: str) -> tuple[str, ...]:
    """The document keys a field covers."""
    if name not in FIELD_TITLES:
        raise KeyError(name)
    return RELATION_KEYS if name == RELATION_FIELD else (name,)


def field_value(content: dict, name: str):
    """The value of a field in a document; the relation field is a dict of the keys the document has."""
    if name == RELATION_FIELD:
        return {k: content[k] for k in RELATION_KEYS if k in content}
    return content.get(name)


def comparable(name: str, value):
    # Whom a row addresses is a set: the order the boxes were ticked in means nothing.
    if name == "target" and isinstance(value, list):
        return sorted(value, key=str)
    return value


def same_value(name: str, a, b) -> bool:
    return comparable(name, a) == comparable(name, b)


def with_field(content: dict, name: str, value) -> dict:
    """A copy of ``content`` with the field set to ``value`` (a deep-enough copy for JSON data)."""
    out = dict(content)
    if name == RELATION_FIELD:
        for key in RELATION_KEYS:
            out.pop(key, None)
        out.update(value or {})
    else:
        out[name] = value
    return out


@dataclass
class FieldComparison:
    """How the coders' values of one field of one row relate."""

    name: str
    disputed: bool
    # Coders whose value is not the strict majority's (every coder when there is no majority).
    outliers: list[str] = field(default_factory=list)


def compare_field(name: str, coder_contents: dict[str, dict]) -> FieldComparison:
    """Compare one field across coders (``{username: content}``)."""
    values = [(coder, comparable(name, field_value(c, name))) for coder, c in coder_contents.items()]
    groups: list[tuple[object, list[str]]] = []
    for coder, value in values:
        for group_value, members in groups:
            if group_value == value:
                members.append(coder)
                break
        else:
            groups.append((value, [coder]))
    if len(groups) <= 1:
        return FieldComparison(name, False)
    biggest = max(len(m) for _, m in groups)
    majority = next((m for _, m in groups if len(m) == biggest), []) if biggest * 2 > len(values) else []
    return FieldComparison(name, True, [coder for coder, _ in values if coder not in majority])


def compare_row(coder_contents: dict[str, dict]) -> dict[str, FieldComparison]:
    """Every field of a row; only disputed fields are returned."""
    if len(coder_contents) < 2:
        return {}
    contents = list(coder_contents.values())
    # Most rows of a reviewed clip are unanimous: one dict comparison settles them.
    if all(c == contents[0] for c in contents[1:]):
        return {}
    out = {}
    for name in FIELDS:
        comparison = compare_field(name, coder_contents)
        if comparison.disputed:
            out[name] = comparison
    return out


def labels_used(content: dict, speaker_relation_keys: tuple[str, str, str]) -> set[str]:
    """The taxonomy labels a document uses, as ``kind:label`` (for the label filter)."""
    out = set()
    if content.get("utterance_type"):
        out.add(f"utterance:{content['utterance_type']}")
    for strategy in content.get("support_strategy") or []:
        if isinstance(strategy, dict) and strategy.get("strategy_type"):
            out.add(f"strategy:{strategy['strategy_type']}")
    label = content.get(speaker_relation_keys[0])
    if label:
        out.add(f"relation:{label}")
    return out
