"""The label taxonomy as versioned data.

One JSON file per scenario and version under ``data/`` (``couple-1.json``):
labels with short definitions, and the disambiguation rules of TAXONOMY.md §4
linked to the labels they separate. Everything that needs a closed label set
(the row schema, the editor, the pre-annotation prompt, the release card) asks
this module.

A rule's ``labels`` may include ``NONE`` (``""``): the empty choice, i.e. no
strategy on the turn, or "no clear pattern" for the relation pattern. Rules
that separate a label from leaving the field empty ("warmth alone is not
join", "an empty list is not the safe choice") are linked to it, so an editor
shows them when the annotator is about to leave the field empty too.

Versions: 1 is what the first projects were annotated under and stays as it
was (their releases record it and must reproduce byte for byte). 2 has the
same labels; it completes the family ``repair_softening`` definition and adds
the rules version 1 lacked (the function-not-wording principle, the
counterweight to empty strategy lists, the "not enough" boundaries, no
fallback labels, "no clear pattern" vs "not annotated"). New projects use
DEFAULT_VERSION.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path

DATA_DIR = Path(__file__).resolve().parent / "data"
SCENARIOS = ("couple", "family")
DEFAULT_VERSION = "2"
NONE = ""  # the empty choice in a rule's labels: no strategy / no clear pattern
THERAPIST = "Therapist"


class UnknownTaxonomy(LookupError):
    """No taxonomy file for this scenario and version."""


@dataclass(frozen=True)
class Label:
    label: str
    definition: str


@dataclass(frozen=True)
class Rule:
    """A disambiguation rule: how to choose between ``labels`` of ``field``."""

    id: str
    field: str
    labels: tuple[str, ...]
    title: str
    text: str


@dataclass(frozen=True)
class Taxonomy:
    scenario: str
    version: str
    group_label: str
    relation_patterns: tuple[Label, ...]
    support_strategies: tuple[Label, ...]
    utterance_types: tuple[Label, ...]
    rules: tuple[Rule, ...]

    @property
    def relation_labels(self) -> frozenset[str]:
        return frozenset(x.label for x in self.relation_patterns)

    @property
    def strategy_labels(self) -> frozenset[str]:
        return frozenset(x.label for x in self.support_strategies)

    @property
    def utterance_labels(self) -> frozenset[str]:
        return frozenset(x.label for x in self.utterance_types)

    def rules_for(self, field: str, label: str) -> list[Rule]:
        """The boundary rules to show next to ``field`` when ``label`` is chosen."""
        return [r for r in self.rules if r.field == field and label in r.labels]

    def entities(self, participants) -> tuple[str, ...]:
        """The closed person set of a clip: participants, the therapist, the group label."""
        return (*participants, THERAPIST, self.group_label)


def _labels(items) -> tuple[Label, ...]:
    return tuple(Label(label=i["label"], definition=i["definition"]) for i in items)


@cache
def load_taxonomy(scenario: str, version: str = DEFAULT_VERSION) -> Taxonomy:
    path = DATA_DIR / f"{scenario}-{version}.json"
    if scenario not in SCENARIOS or not path.is_file():
        raise UnknownTaxonomy(
            f"no taxonomy for scenario {scenario!r} version {version!r} "
            f"(scenarios: {', '.join(SCENARIOS)}; versions: {', '.join(available_versions()) or 'none'})"
        )
    raw = json.loads(path.read_text(encoding="utf-8"))
    return Taxonomy(
        scenario=raw["scenario"],
        version=raw["version"],
        group_label=raw["group_label"],
        relation_patterns=_labels(raw["relation_patterns"]),
        support_strategies=_labels(raw["support_strategies"]),
        utterance_types=_labels(raw["utterance_types"]),
        rules=tuple(
            Rule(id=r["id"], field=r["field"], labels=tuple(r["labels"]), title=r["title"], text=r["text"])
            for r in raw["rules"]
        ),
    )


def boundary_rules_markdown(version: str) -> str:
    """The boundary rules of every scenario in ``version`` as Markdown, for the release card."""
    text = f"### Boundary rules (taxonomy version {version})\n\n"
    for scenario in SCENARIOS:
        taxonomy = load_taxonomy(scenario, version)
        text += f"**{scenario.capitalize()}.**\n\n"
        for rule in taxonomy.rules:
            field = rule.field.replace("_", " ")
            text += f"- *{rule.title}* ({field}): {rule.text}\n"
        text += "\n"
    return text


def available_versions() -> list[str]:
    """Versions for which every scenario has a file."""
    per_scenario = [{p.stem.split("-", 1)[1] for p in DATA_DIR.glob(f"{s}-*.json")} for s in SCENARIOS]
    return sorted(set.intersection(*per_scenario)) if per_scenario else []
