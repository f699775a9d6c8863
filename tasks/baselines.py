"""Reference baselines: majority class (fitted on the training split), uniform
random (exact expectation, see ``Scorer.random_stats``), and the ITP one-rule
shortcut.

The majority baseline predicts, for every instance, what was most frequent
among the *training* instances of the same task: the majority answer (ITP;
ties go to ``yes``), the most frequent labels of the instance's scenario
(RPP, SSP: a top-3 ranking by frequency), the most frequent gold targets
among the instance's own candidates (STP; never-seen names count 0, ties keep
the candidates' order: participants, then the group label), the most frequent
intensity (ER; ties go to the lower value) and, for VP, the speaker as source
with the most frequent target among the instance's candidates. Predictions
come out in the public formats, so they are scored like any system's.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from annotation.taxonomy import THERAPIST

from .rules import NO, RPP_ANY_SPEAKER, YES


def _by_frequency(counts: Counter, candidates: Sequence[str]) -> list[str]:
    """Candidates sorted by count (descending), ties in candidate order."""
    return sorted(candidates, key=lambda c: (-counts[c], candidates.index(c)))


class MajorityBaseline:
    def __init__(self, task: str, train: Sequence[Mapping]):
        self.task = task
        self.fitted = bool(train)
        self.overall: Counter = Counter()
        self.by_scenario: dict[str, Counter] = {}
        for inst in train:
            for value in self._gold_values(inst):
                self.overall[value] += 1
                self.by_scenario.setdefault(inst["scenario"], Counter())[value] += 1

    def _gold_values(self, inst) -> list:
        gold = inst["gold"]
        if self.task == "er":
            return [gold["intensity"]]
        if self.task == "vp":
            return [g["target"] for g in gold]
        return [gold]

    def predict(self, inst: Mapping) -> Any:
        task = self.task
        if task == "itp":
            return YES if self.overall[YES] >= self.overall[NO] else NO
        if task in ("rpp", RPP_ANY_SPEAKER, "ssp"):
            counts = self.by_scenario.get(inst["scenario"], self.overall)
            return _by_frequency(counts, list(inst["candidates"]))[:3]
        if task == "stp":
            return _by_frequency(self.overall, list(inst["candidates"]))[:3]
        if task == "er":
            if not self.overall:
                return 5
            top = max(self.overall.values())
            return min(v for v, n in self.overall.items() if n == top)
        if task == "vp":
            target = _by_frequency(self.overall, list(inst["candidates"]))[0]
            return [{"source": inst["speaker"], "target": target, "viewpoint": ""}]
        raise ValueError(f"unknown task {task!r}")

    def describe(self) -> str:
        if not self.fitted:
            return "no training instances: the majority baseline is not defined"
        if self.task == "itp":
            return f"always {self.predict({})!r}"
        if self.task == "er":
            return f"always intensity {self.predict({})}"
        if self.task in ("rpp", RPP_ANY_SPEAKER, "ssp"):
            parts = [f"{s}: {', '.join(label for label, _ in c.most_common(3))}" for s, c in sorted(self.by_scenario.items())]
            return "most frequent training labels per scenario (" + "; ".join(parts) + ")"
        return "most frequent training targets among the instance's candidates"


def itp_shortcut(current_row_target: Sequence[str]) -> str:
    """The one-rule shortcut: ``yes`` exactly when the current row is addressed to the therapist."""
    return YES if THERAPIST in (current_row_target or []) else NO
