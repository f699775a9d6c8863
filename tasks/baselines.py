"""Trivial rules: the scores a system must clearly beat, meaningful under group-disjoint splits.

Splits keep each couple or family whole, so no person of the test split was
seen in training: a rule that predicts *names* learned from the training
split cannot transfer. Every rule here uses only what transfers — labels of
the scenario's closed sets, the roles of the people in the instance (the
group label, who spoke last, who spoke most), or nothing at all:

- ``majority``: the training split's most frequent answer (ITP, ties ``yes``;
  RPP and SSP a top-3 ranking of the scenario's labels by training frequency;
  ER the most frequent intensity, ties to the lower value);
- ``random``: the exact expected score of a uniform answer over the
  instance's candidates (``Scorer.random_stats``), not a sample;
- ITP ``shortcut``: ``yes`` exactly when the current row is addressed to the therapist;
- STP ``group_label``, ``last_client``, ``most_client``: rank the group label,
  the client who spoke last, or the client who spoke most in the context first
  (each rule ranks every candidate, so Recall@2..3 and MRR are defined);
- VP ``speaker_about_others``: the speaker's viewpoint about every other participant.

Predictions come out in the public formats and are scored like any system's.
An instance is a mapping with its ``gold``, ``scenario``, ``participants``,
task inputs and ``context`` (the rows before its decision point, as in the
task files).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from annotation.taxonomy import THERAPIST

from .metrics import Scorer
from .rules import NO, RPP_ANY_SPEAKER, YES

RANDOM = "random"


def _by_frequency(counts: Counter, candidates: Sequence[str]) -> list[str]:
    """Candidates sorted by count (descending), ties in candidate order."""
    return sorted(candidates, key=lambda c: (-counts[c], candidates.index(c)))


@dataclass(frozen=True)
class TrivialRule:
    name: str
    description: str
    predict: Callable[[Mapping], Any] | None  # None: the random rule, scored by its expectation


def itp_shortcut(current_row_target: Sequence[str]) -> str:
    """The one-rule shortcut: ``yes`` exactly when the current row is addressed to the therapist."""
    return YES if THERAPIST in (current_row_target or []) else NO


def group_label_of(inst: Mapping) -> str:
    """``Couple`` or ``Family``: STP's candidates are the clip's participants, then the group label."""
    return inst["candidates"][-1]


def _clients_by(inst: Mapping, key: Callable[[str, list[int]], tuple]) -> list[str]:
    """The clip's clients ordered by ``key(name, row positions where they speak in the context)``."""
    spoke: dict[str, list[int]] = {p: [] for p in inst["participants"]}
    for position, row in enumerate(inst["context"]):
        if row["primary_speaker"] in spoke:
            spoke[row["primary_speaker"]].append(position)
    return sorted(inst["participants"], key=lambda p: key(p, spoke[p]))


def last_client_first(inst: Mapping) -> list[str]:
    """Clients by how recently they spoke (never: last, in candidate order), then the group label."""
    order = inst["participants"]
    clients = _clients_by(inst, lambda p, rows: (-(rows[-1] if rows else -1), order.index(p)))
    return [*clients, group_label_of(inst)][:3]


def most_client_first(inst: Mapping) -> list[str]:
    """Clients by how many context rows they spoke (ties: the more recent first), then the group label."""
    order = inst["participants"]
    clients = _clients_by(inst, lambda p, rows: (-len(rows), -(rows[-1] if rows else -1), order.index(p)))
    return [*clients, group_label_of(inst)][:3]


def group_label_first(inst: Mapping) -> list[str]:
    return [group_label_of(inst), *inst["participants"]][:3]


def speaker_about_others(inst: Mapping) -> list[dict]:
    return [
        {"source": inst["speaker"], "target": p, "viewpoint": ""} for p in inst["participants"] if p != inst["speaker"]
    ]


class _Majority:
    """The training split's most frequent answers."""

    def __init__(self, task: str, train: Sequence[Mapping]):
        self.task = task
        self.overall: Counter = Counter()
        self.by_scenario: dict[str, Counter] = {}
        for inst in train:
            value = inst["gold"]["intensity"] if task == "er" else inst["gold"]
            self.overall[value] += 1
            self.by_scenario.setdefault(inst["scenario"], Counter())[value] += 1

    def predict(self, inst: Mapping) -> Any:
        if self.task == "itp":
            return YES if self.overall[YES] >= self.overall[NO] else NO
        if self.task == "er":
            top = max(self.overall.values())
            return min(v for v, n in self.overall.items() if n == top)
        counts = self.by_scenario.get(inst["scenario"], self.overall)
        return _by_frequency(counts, list(inst["candidates"]))[:3]

    def describe(self) -> str:
        if self.task == "itp":
            return f"always {self.predict({})!r} (the training split's majority)"
        if self.task == "er":
            return f"always intensity {self.predict({})} (the training split's most frequent)"
        parts = [
            f"{s}: {', '.join(label for label, _ in c.most_common(3))}" for s, c in sorted(self.by_scenario.items())
        ]
        return "the scenario's labels by training frequency (" + "; ".join(parts) + ")"


def trivial_rules(task: str, train: Sequence[Mapping]) -> list[TrivialRule]:
    """The trivial rules of ``task``, fitted on ``train`` where they learn anything
    (the majority rule is left out when there is no training instance)."""
    rules: list[TrivialRule] = []
    if task in ("itp", "rpp", RPP_ANY_SPEAKER, "ssp", "er") and train:
        majority = _Majority(task, train)
        rules.append(TrivialRule("majority", majority.describe(), majority.predict))
    if task == "itp":
        rules.append(
            TrivialRule(
                "shortcut",
                "yes exactly when the current row is addressed to the therapist",
                lambda i: itp_shortcut(i["context"][-1]["target"] if i["context"] else []),
            )
        )
    if task == "stp":
        rules += [
            TrivialRule(
                "group_label", "the group label (Couple / Family) first, then the participants", group_label_first
            ),
            TrivialRule(
                "last_client",
                "the client who spoke last in the context first, then the others by recency, then the group label",
                last_client_first,
            ),
            TrivialRule(
                "most_client",
                "the client who spoke most in the context first, then the others, then the group label",
                most_client_first,
            ),
        ]
    if task == "vp":
        rules.append(
            TrivialRule(
                "speaker_about_others",
                "the speaker's viewpoint about every other participant (empty text)",
                speaker_about_others,
            )
        )
    rules.append(TrivialRule(RANDOM, "uniform over the instance's candidates (expected value, not a sample)", None))
    return rules


def rule_matrix(rule: TrivialRule, scorer: Scorer, instances: Sequence[Mapping]) -> np.ndarray:
    """Per-instance statistics of ``rule`` on ``instances`` (the expectation for the random rule)."""
    if rule.predict is None:
        return scorer.random_matrix(instances)
    return scorer.matrix(instances, [rule.predict(i) for i in instances])
