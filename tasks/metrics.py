"""Task metrics as sums of per-instance statistics.

Every metric of the tasks (docs/tasks.md) is a function of sums of per-instance counts
(F1 from true/false positives, Recall@k from hits, MRR from reciprocal ranks,
macro-F1 from per-class counts, intensity match from per-instance scores). A
:class:`Scorer` turns (instance, prediction) into such a vector and sums into
metric values; the bootstrap then only has to resample sums.

An instance without a usable prediction (``None``) is scored as wrong: the
opposite answer for ITP, no hit for rankings, the lowest intensity score (1),
nothing recovered for VP. It is never left out of the denominator.

Instances are mappings with ``gold``, ``scenario``, ``participants`` and the
task inputs (``candidates``, ``speaker``, ``target``); 0/0 counts as 0.

The task profile (``tasks.profiles``) decides the scoring details. Under
``rescue-v1`` the public evaluation code's are followed: an RPP ranking keeps
its distinct valid labels and is padded to three with the scenario's labels in
taxonomy order (``normalize_relation_top3``), so its top-1 is the first of them;
RPP macro-F1 averages over every label of the scenario's taxonomy
(``compute_macro_metrics``), not only those that occur; STP and SSP rankings
keep their distinct labels among the candidates (``normalize_target_top3``,
``normalize_strategy_top3``); a predicted intensity is rounded to a whole
number (``parse_intensity``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from annotation.taxonomy import SCENARIOS, THERAPIST, load_taxonomy

from .profiles import get_profile
from .profiles.rescue_v1 import clean, parse_intensity
from .rules import NO, RPP_ANY_SPEAKER, YES


def _ratio(num, den):
    num, den = np.asarray(num, dtype=float), np.asarray(den, dtype=float)
    return np.divide(num, den, out=np.zeros(np.broadcast(num, den).shape), where=den != 0)


class Scorer:
    task: str
    stat_names: tuple[str, ...]
    primary: str | None  # the metric a system is judged on; None when no rule-based metric can be (VP)
    metric_names: tuple[str, ...]

    @property
    def headline(self) -> str:
        """The metric that ranks trivial rules: the primary one, else the first."""
        return self.primary or self.metric_names[0]

    def stats(self, inst: Mapping, pred: Any) -> list[float]:
        raise NotImplementedError

    def random_stats(self, inst: Mapping) -> list[float]:
        """Expected statistics of a uniform random prediction (exact, no sampling)."""
        raise NotImplementedError

    def summarise(self, sums: np.ndarray) -> dict[str, np.ndarray]:
        """Metric values from summed statistics (last axis = statistics)."""
        raise NotImplementedError

    def matrix(self, instances: Sequence[Mapping], predictions: Sequence[Any]) -> np.ndarray:
        return np.array([self.stats(i, p) for i, p in zip(instances, predictions)], dtype=float).reshape(
            len(instances), len(self.stat_names)
        )

    def random_matrix(self, instances: Sequence[Mapping]) -> np.ndarray:
        return np.array([self.random_stats(i) for i in instances], dtype=float).reshape(
            len(instances), len(self.stat_names)
        )

    def values(self, matrix: np.ndarray) -> dict[str, float]:
        return {k: float(v) for k, v in self.summarise(matrix.sum(axis=0)).items()}


class TimingScorer(Scorer):
    """ITP: precision, recall and F1 of ``yes`` (plus accuracy)."""

    task = "itp"
    stat_names = ("tp", "fp", "fn", "tn")
    primary = "f1"
    metric_names = ("f1", "precision", "recall", "accuracy")

    def stats(self, inst, pred):
        gold = inst["gold"]
        if pred is None:  # scored as the wrong answer
            pred = NO if gold == YES else YES
        return [
            gold == YES and pred == YES,
            gold == NO and pred == YES,
            gold == YES and pred == NO,
            gold == NO and pred == NO,
        ]

    def random_stats(self, inst):
        return [0.5, 0, 0.5, 0] if inst["gold"] == YES else [0, 0.5, 0, 0.5]

    def summarise(self, sums):
        tp, fp, fn, tn = (sums[..., i] for i in range(4))
        return {
            "f1": _ratio(2 * tp, 2 * tp + fp + fn),
            "precision": _ratio(tp, tp + fp),
            "recall": _ratio(tp, tp + fn),
            "accuracy": _ratio(tp + tn, tp + fp + fn + tn),
        }


class RankingScorer(Scorer):
    """STP and SSP: Recall@1..3 and MRR of the gold in a top-3 ranking."""

    stat_names = ("hit1", "hit2", "hit3", "rr", "n")
    primary = "mrr"
    metric_names = ("recall@1", "recall@2", "recall@3", "mrr")

    def __init__(self, task: str, distinct_candidates: bool = False):
        self.task = task
        self.distinct_candidates = distinct_candidates

    def ranking(self, inst, pred) -> list:
        if not self.distinct_candidates:
            return list(pred or [])[:3]
        allowed = set(inst["candidates"])
        return [label for label in dict.fromkeys(clean(v) for v in pred or []) if label and label in allowed][:3]

    def stats(self, inst, pred):
        ranked = self.ranking(inst, pred)
        rank = ranked.index(inst["gold"]) + 1 if inst["gold"] in ranked else None
        if rank is None:
            return [0, 0, 0, 0, 1]
        return [rank <= 1, rank <= 2, rank <= 3, 1 / rank, 1]

    def random_stats(self, inst):
        k = len(inst["candidates"])
        return [min(1, k) / k, min(2, k) / k, min(3, k) / k, sum(1 / (r * k) for r in range(1, min(3, k) + 1)), 1]

    def summarise(self, sums):
        n = sums[..., 4]
        return {
            "recall@1": _ratio(sums[..., 0], n),
            "recall@2": _ratio(sums[..., 1], n),
            "recall@3": _ratio(sums[..., 2], n),
            "mrr": _ratio(sums[..., 3], n),
        }


def relation_label_space(taxonomy_version: str = "1") -> list[str]:
    """Every relation-pattern label of every scenario, in taxonomy order, once."""
    out: list[str] = []
    for scenario in SCENARIOS:
        for label in load_taxonomy(scenario, taxonomy_version).relation_patterns:
            if label.label not in out:
                out.append(label.label)
    return out


class PatternScorer(Scorer):
    """RPP: top-1 accuracy and macro-F1 (plus Recall@3). ``padded``: the ``rescue-v1`` rules
    (padding, macro-F1 over the whole taxonomy, and the MRR the public scorer reports too);
    otherwise macro-F1 averages over the labels that occur."""

    primary = "accuracy"

    def __init__(self, task: str = "rpp", taxonomy_version: str = "1", padded: bool = False):
        self.task = task
        self.padded = padded
        self.labels = relation_label_space(taxonomy_version)
        self.index = {label: i for i, label in enumerate(self.labels)}
        cells = [f"{kind}:{label}" for kind in ("tp", "fp", "fn") for label in self.labels]
        self.offsets = {kind: 3 + k * len(self.labels) for k, kind in enumerate(("tp", "fp", "fn"))}
        if padded:
            # Which scenarios' taxonomies the macro average spans: the instances' scenarios, counted per scenario.
            self.scenario_labels = {
                s: [x.label for x in load_taxonomy(s, taxonomy_version).relation_patterns] for s in SCENARIOS
            }
            self.scenario_offset = 3 + len(cells)
            self.stat_names = ("correct", "hit3", "n", *cells, *(f"n:{s}" for s in SCENARIOS), "rr")
            self.metric_names = ("accuracy", "macro_f1", "recall@3", "mrr")
        else:
            self.stat_names = ("correct", "hit3", "n", *cells)
            self.metric_names = ("accuracy", "macro_f1", "recall@3")

    def ranking(self, inst, pred) -> list:
        if not self.padded:
            return list(pred or [])[:3]
        labels = list(inst["candidates"])
        ranked = [label for label in dict.fromkeys(clean(v) for v in pred or []) if label and label in labels]
        return (ranked + [label for label in labels if label not in ranked])[:3]

    def _empty(self) -> list[float]:
        return [0.0] * len(self.stat_names)

    def _cell(self, kind: str, label: str) -> int:
        return self.offsets[kind] + self.index[label]

    def _scenario(self, out: list, inst) -> None:
        if self.padded and inst["scenario"] in self.scenario_labels:
            out[self.scenario_offset + SCENARIOS.index(inst["scenario"])] = 1

    def stats(self, inst, pred):
        out = self._empty()
        gold = inst["gold"]
        ranked = self.ranking(inst, pred)
        top = ranked[0] if ranked else None
        out[2] = 1
        out[1] = float(gold in ranked)
        self._scenario(out, inst)
        if self.padded and gold in ranked:
            out[-1] = 1 / (ranked.index(gold) + 1)
        if top == gold and gold in self.index:
            out[0] = 1
            out[self._cell("tp", gold)] = 1
        else:
            out[0] = float(top == gold)
            if gold in self.index:  # a gold label outside the taxonomy (rescue-v1 keeps such rows) has no cell
                out[self._cell("fn", gold)] = 1
            if top in self.index:
                out[self._cell("fp", top)] = 1
        return out

    def random_stats(self, inst):
        out = self._empty()
        gold, candidates = inst["gold"], inst["candidates"]
        p = 1 / len(candidates)
        out[0], out[1], out[2] = p, min(3, len(candidates)) * p, 1
        self._scenario(out, inst)
        if self.padded:
            out[-1] = sum(p / r for r in range(1, min(3, len(candidates)) + 1)) if gold in candidates else 0.0
        if gold in self.index:
            out[self._cell("tp", gold)] = p
            out[self._cell("fn", gold)] = 1 - p
        for label in candidates:
            if label != gold and label in self.index:
                out[self._cell("fp", label)] = p
        return out

    def summarise(self, sums):
        n = sums[..., 2]
        size = len(self.labels)
        tp = sums[..., 3 : 3 + size]
        fp = sums[..., 3 + size : 3 + 2 * size]
        fn = sums[..., 3 + 2 * size : 3 + 3 * size]
        f1 = _ratio(2 * tp, 2 * tp + fp + fn)
        if self.padded:
            # Every label of the taxonomies of the scenarios scored, whether it occurs or not.
            present = np.zeros(f1.shape, dtype=bool)
            for k, scenario in enumerate(SCENARIOS):
                scored = sums[..., self.scenario_offset + k] > 0
                for label in self.scenario_labels[scenario]:
                    present[..., self.index[label]] |= scored
        else:
            present = (tp + fp + fn) > 0
        macro = _ratio((f1 * present).sum(axis=-1), present.sum(axis=-1))
        out = {"accuracy": _ratio(sums[..., 0], n), "macro_f1": macro, "recall@3": _ratio(sums[..., 1], n)}
        if self.padded:
            out["mrr"] = _ratio(sums[..., -1], n)
        return out


def intensity_match(pred: float, gold: int) -> float:
    return max(1.0, 5.0 - abs(pred - gold))


class EmotionScorer(Scorer):
    """ER, rule-based part: intensity match = max(1, 5 − |pred − gold|), a 1–5 score
    (``whole``: the prediction rounded to a whole number 0..10 first, as the public scorer reads it)."""

    task = "er"
    stat_names = ("score", "exact", "n")
    primary = "intensity_match"
    metric_names = ("intensity_match", "exact_intensity")

    def __init__(self, whole: bool = False):
        self.whole = whole

    def stats(self, inst, pred):
        gold = inst["gold"]["intensity"]
        if self.whole and pred is not None:
            pred = parse_intensity(pred)
        if pred is None:
            return [1.0, 0, 1]
        return [intensity_match(pred, gold), float(pred == gold), 1]

    def random_stats(self, inst):
        gold = inst["gold"]["intensity"]
        return [sum(intensity_match(p, gold) for p in range(11)) / 11, 1 / 11, 1]

    def summarise(self, sums):
        return {
            "intensity_match": _ratio(sums[..., 0], sums[..., 2]),
            "exact_intensity": _ratio(sums[..., 1], sums[..., 2]),
        }


class ViewpointScorer(Scorer):
    """VP, rule-based part: how many gold viewpoints' source, target and
    (source, target) pair the prediction recovers, and the precision of its pairs."""

    task = "vp"
    stat_names = ("gold", "source_hit", "target_hit", "pair_hit", "predicted_pairs", "correct_pairs")
    primary = None  # see PRIMARY_REASONS: a trivial rule saturates pair recovery
    metric_names = ("pair_recovery", "source_recovery", "target_recovery", "pair_precision")

    def stats(self, inst, pred):
        gold = inst["gold"]
        pred = pred or []
        sources = {p["source"] for p in pred}
        targets = {p["target"] for p in pred}
        pairs = {(p["source"], p["target"]) for p in pred}
        gold_pairs = {(g["source"], g["target"]) for g in gold}
        return [
            len(gold),
            sum(g["source"] in sources for g in gold),
            sum(g["target"] in targets for g in gold),
            sum((g["source"], g["target"]) in pairs for g in gold),
            len(pairs),
            len(pairs & gold_pairs),
        ]

    @staticmethod
    def people(inst) -> tuple[list[str], list[str]]:
        """(possible sources, every entity) of the instance's clip."""
        everyone = [inst["speaker"], *inst["candidates"]]
        persons = [p for p in everyone if p in inst["participants"] or p == THERAPIST]
        return persons, everyone

    def random_stats(self, inst):
        # One viewpoint: a uniform source among the people, a uniform target among the others.
        # The mean of ``stats`` over those predictions, each term counted from tallies of
        # the gold, and added up in plain floats in the order of the loops: bit for bit the
        # sum of the per-prediction vectors.
        persons, everyone = self.people(inst)
        gold = inst["gold"]
        by_source = Counter(g["source"] for g in gold)
        by_target = Counter(g["target"] for g in gold)
        by_pair = Counter((g["source"], g["target"]) for g in gold)
        total = [0.0] * len(self.stat_names)
        for source in persons:
            targets = [t for t in everyone if t != source]
            for target in targets:
                weight = len(persons) * len(targets)
                pair = by_pair[source, target]
                # = self.stats(inst, [{"source": source, "target": target}])
                for k, value in enumerate((len(gold), by_source[source], by_target[target], pair, 1, int(pair > 0))):
                    total[k] += value / weight
        return total

    def summarise(self, sums):
        gold = sums[..., 0]
        return {
            "pair_recovery": _ratio(sums[..., 3], gold),
            "source_recovery": _ratio(sums[..., 1], gold),
            "target_recovery": _ratio(sums[..., 2], gold),
            "pair_precision": _ratio(sums[..., 5], sums[..., 4]),
        }


# Why each task's primary metric is the one it is (the card and ``evaluate`` say so).
PRIMARY_REASONS = {
    "itp": (
        "F1 on `yes` (the therapist speaks next): the classes are balanced per clip, and F1 on the positive class "
        "does not reward always answering `no`."
    ),
    "rpp": (
        "top-1 accuracy, as in the original benchmark; macro-F1 is reported beside it because a few labels dominate."
    ),
    RPP_ANY_SPEAKER: "top-1 accuracy, as for RPP.",
    "stp": (
        "MRR over the top-3 ranking: it credits the right person or group label ranked second or third, which "
        "Recall@1 does not."
    ),
    "ssp": "MRR over the top-3 ranking, as for STP.",
    "er": (
        "the intensity match, the rule-based half of the task (the LLM judge's score of the emotion description is "
        "not computed by this tooling)."
    ),
    "vp": (
        "none of the rule-based metrics: a viewpoint's source is the speaker by construction and its target is nearly "
        "always "
        'another participant, so the trivial rule "the speaker about every other participant" recovers most (source, '
        "target) "
        "pairs. The task's primary metric is the LLM judge's score of the viewpoint text, which this tooling does not "
        "compute; "
        "the recovery figures only check that an output names the right people."
    ),
}


def scorer_for(task: str, taxonomy_version: str = "1", profile: str | None = None) -> Scorer:
    """The scorer of ``task`` under ``profile``'s scoring details (the default profile when None)."""
    rescue = get_profile(profile).rescue_scoring
    if task == "itp":
        return TimingScorer()
    if task in ("rpp", RPP_ANY_SPEAKER):
        return PatternScorer(task, taxonomy_version, padded=rescue)
    if task in ("stp", "ssp"):
        return RankingScorer(task, distinct_candidates=rescue)
    if task == "er":
        return EmotionScorer(whole=rescue)
    if task == "vp":
        return ViewpointScorer()
    raise ValueError(f"unknown task {task!r}")
