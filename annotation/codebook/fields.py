"""The label fields guidance attaches to, and their labels in a project's taxonomy."""

from __future__ import annotations

from ..taxonomy import NONE, SCENARIOS, Taxonomy, load_taxonomy

# Field -> (what people call it, the taxonomy's label list, what the empty choice means, or None when there is none).
FIELDS: dict[str, tuple[str, str, str | None]] = {
    "utterance_type": ("Utterance type", "utterance_types", None),
    "support_strategy": ("Support strategy", "support_strategies", "no strategy"),
    "relation_pattern": ("Relation pattern", "relation_patterns", "no clear pattern"),
}
ALL_SCENARIOS = ""  # an entry's scenario: "" is every scenario of the project's taxonomy


def field_title(field: str) -> str:
    return FIELDS[field][0]


def label_title(field: str, label: str) -> str:
    """A label as people read it: the empty choice is named ("no strategy")."""
    return (FIELDS[field][2] or "(empty)") if label == NONE else label


def labels_title(field: str, labels) -> str:
    """``accusation vs disclosure vs request``; one label alone is just its name."""
    return " vs ".join(label_title(field, x) for x in labels)


def scenario_title(scenario: str) -> str:
    return "every scenario" if scenario == ALL_SCENARIOS else f"{scenario} clips"


def field_labels(taxonomy: Taxonomy, field: str) -> list[str]:
    """The labels of ``field`` in ``taxonomy``, in its order, then the empty choice where it exists."""
    _title, attribute, empty = FIELDS[field]
    labels = [x.label for x in getattr(taxonomy, attribute)]
    return [*labels, NONE] if empty else labels


def scenarios_of(scenario: str) -> tuple[str, ...]:
    """The scenarios an entry for ``scenario`` applies to."""
    return SCENARIOS if scenario == ALL_SCENARIOS else (scenario,)


def labels_in(taxonomy_version: str, scenario: str, field: str) -> list[str]:
    """The labels an entry for ``scenario`` may name: those of ``field`` in every scenario it applies to."""
    per_scenario = [field_labels(load_taxonomy(s, taxonomy_version), field) for s in scenarios_of(scenario)]
    common = set.intersection(*(set(x) for x in per_scenario))
    return [x for x in per_scenario[0] if x in common]


def scenarios_with(taxonomy_version: str, field: str, labels) -> list[str]:
    """The scenarios whose taxonomy has every one of ``labels`` in ``field``."""
    return [s for s in SCENARIOS if set(labels) <= set(field_labels(load_taxonomy(s, taxonomy_version), field))]
