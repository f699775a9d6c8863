"""What agreement is measured on: one ``Measure`` per reported figure.

A measure says which rows are its units (every row, therapist rows or client
rows), how one coder's annotation document turns into a value (``None`` is a
missing value, never a value of its own), and the level of measurement that
gives the distance between two values. Measures that compare the same values
at two levels (the target sets: nominal and MASI) share one ``source`` so the
values are extracted once.

Values are plain, hashable Python objects: strings for labels, sorted tuples
of names for target sets, ints for intensities.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..schema import SPARSE_LIST_FIELDS, relation_label
from ..taxonomy import THERAPIST

NO_STRATEGY = "(no strategy)"
NO_CLEAR_PATTERN = "(no clear pattern)"
PRESENT, ABSENT = "present", "absent"
MARKED, UNMARKED = "marked", "not marked"

# Which rows are units of a measure.
EVERY_ROW, THERAPIST_ROWS, CLIENT_ROWS = "row", "therapist row", "client row"


def _relation_pattern(content: dict, speaker: str):
    # relation_label picks the key the row carries (relation_pattern or the
    # older relation_cycle_state); it needs the speaker to decide.
    label = relation_label({**content, "primary_speaker": speaker})
    if label is None:
        return None
    return label or NO_CLEAR_PATTERN


def _relation_marked(content: dict, speaker: str) -> str:
    # A coder who coded the row and left its pattern unset has said "no pattern marked here": a value, not missing.
    return MARKED if relation_label({**content, "primary_speaker": speaker}) is not None else UNMARKED


def _strategy_type(content: dict, speaker: str):
    strategies = content.get("support_strategy") or []
    if not strategies:
        return NO_STRATEGY
    return strategies[0].get("strategy_type") or None


def _utterance_type(content: dict, speaker: str):
    # "" is invalid on a client row (the schema refuses it): treat it as not coded.
    return content.get("utterance_type") or None


def _target_set(targets) -> tuple[str, ...] | None:
    return tuple(sorted(set(targets))) if targets else None


def _support_target(content: dict, speaker: str):
    # A row without a strategy has no support target: missing, not a value
    # (whether there is a strategy at all is what strategy_type measures).
    strategies = content.get("support_strategy") or []
    return _target_set(strategies[0].get("target")) if strategies else None


def _row_target(content: dict, speaker: str):
    return _target_set(content.get("target"))


def _speaker_intensity(content: dict, speaker: str):
    for entry in content.get("internal_emotion") or []:
        if entry.get("person") == speaker and isinstance(entry.get("intensity"), int):
            return entry["intensity"]
    return None


def _presence(list_field: str) -> Callable[[dict, str], str]:
    def value(content: dict, speaker: str) -> str:
        return PRESENT if content.get(list_field) else ABSENT

    return value


@dataclass(frozen=True)
class Measure:
    key: str
    label: str
    unit: str  # EVERY_ROW, THERAPIST_ROWS or CLIENT_ROWS
    level: str  # "nominal", "interval" or "masi"
    source: str  # measures with the same source share extracted values
    value: Callable[[dict, str], Any]
    missing: str  # what makes a coder's value missing on a unit, for the report
    # The parts of the document ``value`` reads (``extract.PARTS``): extraction
    # computes the value once per distinct combination of these and the speaker.
    reads: tuple[str, ...]
    # Units count only when every coder of the row has a value (the speaker's
    # emotion intensity is compared only where all coders recorded one).
    every_coder: bool = False

    @property
    def nominal(self) -> bool:
        return self.level == "nominal"

    def applies_to(self, speaker: str) -> bool:
        if self.unit == THERAPIST_ROWS:
            return speaker == THERAPIST
        if self.unit == CLIENT_ROWS:
            return speaker != THERAPIST
        return True


MEASURES: tuple[Measure, ...] = (
    Measure(
        "relation_pattern",
        "Relation pattern",
        EVERY_ROW,
        "nominal",
        "relation_pattern",
        _relation_pattern,
        'null (not annotated) is missing; "" is the value "(no clear pattern)"',
        ("relation_pattern", "relation_cycle_state"),
    ),
    Measure(
        "strategy_type",
        "Support strategy (first strategy's type)",
        THERAPIST_ROWS,
        "nominal",
        "strategy_type",
        _strategy_type,
        'never missing: a row without a strategy has the value "(no strategy)"',
        ("has_support_strategy", "strategy_type"),
    ),
    Measure(
        "utterance_type",
        "Utterance type",
        CLIENT_ROWS,
        "nominal",
        "utterance_type",
        _utterance_type,
        "an empty utterance type is missing",
        ("utterance_type",),
    ),
    Measure(
        "support_target",
        "Support target (first strategy's target set)",
        THERAPIST_ROWS,
        "nominal",
        "support_target",
        _support_target,
        "missing when the coder gave the row no strategy",
        ("has_support_strategy", "strategy_target"),
    ),
    Measure(
        "support_target_masi",
        "Support target, set overlap (MASI)",
        THERAPIST_ROWS,
        "masi",
        "support_target",
        _support_target,
        "missing when the coder gave the row no strategy",
        ("has_support_strategy", "strategy_target"),
    ),
    Measure(
        "target",
        "Row target (target set)",
        EVERY_ROW,
        "nominal",
        "target",
        _row_target,
        "an empty target list is missing",
        ("target",),
    ),
    Measure(
        "target_masi",
        "Row target, set overlap (MASI)",
        EVERY_ROW,
        "masi",
        "target",
        _row_target,
        "an empty target list is missing",
        ("target",),
    ),
    Measure(
        "emotion_intensity",
        "Speaker's internal-emotion intensity",
        CLIENT_ROWS,
        "interval",
        "emotion_intensity",
        _speaker_intensity,
        "units are client rows on which every coder of the row recorded an emotion for the speaker",
        ("internal_emotion",),
        every_coder=True,
    ),
    Measure(
        "relation_pattern_presence",
        "Relation pattern marked here or not",
        EVERY_ROW,
        "nominal",
        "relation_pattern_presence",
        _relation_marked,
        'never missing: a label or "" (no clear pattern) is "marked", an unset pattern (null) is "not marked"',
        ("relation_pattern", "relation_cycle_state"),
    ),
    *(
        Measure(
            f"presence_{name}",
            f"{name} present",
            EVERY_ROW,
            "nominal",
            f"presence_{name}",
            _presence(name),
            'never missing: an empty list is the value "absent"',
            (f"has_{name}",),
        )
        for name in SPARSE_LIST_FIELDS
    ),
)
MEASURES_BY_KEY = {m.key: m for m in MEASURES}
# One extractor per source (the first measure that names it).
SOURCES: dict[str, Measure] = {}
for _m in MEASURES:
    SOURCES.setdefault(_m.source, _m)


def value_label(value) -> str:
    """A value as the report and the page show it."""
    if isinstance(value, tuple):
        return " + ".join(value)
    return str(value)
