"""``stats.json``: what a reader needs to judge the release, computed from its files.

Every number here can be recomputed from ``data/`` and ``tasks/`` alone
(the ``provenance`` section, which comes from the database, is the
exception and says so). Values are rounded to 4 decimals, keys come in a
fixed order, and nothing depends on when the release was made.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from itertools import islice, pairwise

import numpy as np

from tasks import bootstrap
from tasks.baselines import rule_matrix, trivial_rules
from tasks.draft_system import NOT_APPLICABLE
from tasks.instances import Instance
from tasks.metrics import PRIMARY_REASONS, scorer_for
from tasks.rules import ALL_TASKS

from ..schema import relation_label
from ..taxonomy import SCENARIOS, THERAPIST, load_taxonomy
from .labels import NO_PATTERN, NO_STRATEGY, NOT_ANNOTATED
from .splits import SPLITS

ALL = "all"
DIGITS = 4
# The baselines' intervals: fixed, so that stats.json is reproducible.
BASELINE_RESAMPLES = bootstrap.DEFAULT_RESAMPLES
BASELINE_SEED = 0


def _round(value: float) -> float:
    return round(float(value), DIGITS)


def scenarios_of(clips: Iterable[dict]) -> list[str]:
    present = {c["scenario"] for c in clips}
    return [s for s in SCENARIOS if s in present] + sorted(present - set(SCENARIOS))


def clip_duration(clip: dict) -> float:
    """Seconds from 0 to the end of the clip's last row."""
    return max((r["end_time"] for r in clip["rows"]), default=0.0)


def corpus_table(clips: list[dict], splits: dict[str, str], groups: dict[str, str]) -> dict:
    """{scenario | all: {split | all: {clips, groups, rows, duration_seconds}}}; ``groups``
    gives each clip's relationship group (``splits.SplitPlan.group_of``)."""
    cells: dict[tuple[str, str], dict] = defaultdict(
        lambda: {"clips": 0, "groups": set(), "rows": 0, "duration_seconds": 0.0}
    )
    for clip in clips:
        for scenario in (clip["scenario"], ALL):
            for split in (splits[clip["sample_id"]], ALL):
                cell = cells[scenario, split]
                cell["clips"] += 1
                cell["groups"].add(groups[clip["sample_id"]])
                cell["rows"] += len(clip["rows"])
                cell["duration_seconds"] += clip_duration(clip)
    out = {}
    for scenario in [*scenarios_of(clips), ALL]:
        out[scenario] = {}
        for split in (*SPLITS, ALL):
            cell = cells.get((scenario, split)) or {"clips": 0, "groups": set(), "rows": 0, "duration_seconds": 0.0}
            out[scenario][split] = {
                "clips": cell["clips"],
                "groups": len(cell["groups"]),
                "rows": cell["rows"],
                "duration_seconds": _round(cell["duration_seconds"]),
            }
    return out


def _row_values(field: str, clip: dict, row: dict) -> list:
    speaker = row["primary_speaker"]
    if field == "utterance_type":
        return [row["utterance_type"]] if speaker != THERAPIST else []
    if field == "support_strategy":
        if speaker != THERAPIST:
            return []
        strategies = row.get("support_strategy") or []
        return [strategies[0]["strategy_type"] if strategies else NO_STRATEGY]
    if field == "relation_pattern":
        label = relation_label(row)
        return [NOT_ANNOTATED if label is None else NO_PATTERN if label == "" else label]
    if field == "intensity":
        return [e["intensity"] for e in row.get("internal_emotion") or []]
    raise ValueError(field)


# Closed fields and what is counted for each.
LABEL_FIELDS = {
    "relation_pattern": (
        "every row, by the label under the key the row carries (relation_pattern, or "
        "relation_cycle_state on therapist rows of imported clips)"
    ),
    "support_strategy": "therapist rows, by the first strategy's type",
    "utterance_type": "client rows",
    "intensity": "every internal_emotion entry, by intensity (0–10)",
}


def _label_order(field: str, scenario: str, taxonomy_version: str) -> list:
    if field == "intensity":
        return list(range(11))
    if scenario not in SCENARIOS:
        return []
    tax = load_taxonomy(scenario, taxonomy_version)
    if field == "relation_pattern":
        return [x.label for x in tax.relation_patterns] + [NO_PATTERN, NOT_ANNOTATED]
    if field == "support_strategy":
        return [x.label for x in tax.support_strategies] + [NO_STRATEGY]
    return [x.label for x in tax.utterance_types]


def label_distributions(clips: list[dict], splits: dict[str, str], taxonomy_version: str) -> dict:
    """{field: {scenario: {split | all: {label: count}}}}, every label of the scenario listed."""
    counts: dict[tuple[str, str, str], Counter] = defaultdict(Counter)
    for clip in clips:
        split = splits[clip["sample_id"]]
        for row in clip["rows"]:
            for field in LABEL_FIELDS:
                for value in _row_values(field, clip, row):
                    counts[field, clip["scenario"], split][value] += 1
                    counts[field, clip["scenario"], ALL][value] += 1
    out = {}
    for field in LABEL_FIELDS:
        out[field] = {}
        for scenario in scenarios_of(clips):
            order = _label_order(field, scenario, taxonomy_version)
            out[field][scenario] = {}
            for split in (*SPLITS, ALL):
                c = counts.get((field, scenario, split), Counter())
                extra = sorted((k for k in c if k not in order), key=str)
                out[field][scenario][split] = {str(k): c[k] for k in [*order, *extra]}
    return out


def transition_matrices(clips: list[dict], taxonomy_version: str) -> dict:
    """Relation-pattern transitions between consecutive labelled rows of a clip.

    Rows without a label of the scenario (null, "" or unknown) are skipped;
    self-transitions are excluded; each row of the matrix is normalised to 1
    (a label never followed by another gives a row of zeros).
    """
    out = {}
    for scenario in scenarios_of(clips):
        if scenario not in SCENARIOS:
            continue
        labels = [x.label for x in load_taxonomy(scenario, taxonomy_version).relation_patterns]
        index = {label: i for i, label in enumerate(labels)}
        counts = np.zeros((len(labels), len(labels)), dtype=int)
        for clip in clips:
            if clip["scenario"] != scenario:
                continue
            sequence = [label for label in (relation_label(r) for r in clip["rows"]) if label in index]
            for a, b in pairwise(sequence):
                if a != b:
                    counts[index[a], index[b]] += 1
        totals = counts.sum(axis=1, keepdims=True)
        normalised = np.divide(counts, totals, out=np.zeros(counts.shape), where=totals != 0)
        out[scenario] = {
            "labels": labels,
            "counts": counts.tolist(),
            "row_normalised": [[_round(v) for v in row] for row in normalised],
        }
    return out


def _gold_key(task: str, inst: Instance):
    if task == "er":
        return inst.gold["intensity"]
    if task == "vp":
        return len(inst.gold)
    if task == "stp":
        return "group label" if inst.gold not in inst.participants else "a participant"
    return inst.gold


def task_counts(instances: dict[str, list[Instance]], clips: list[dict]) -> dict:
    """{task: {scenario | all: {split | all: {instances, clips}}, gold: {...}}}."""
    scenarios = [*scenarios_of(clips), ALL]
    out = {}
    for task, items in instances.items():
        cells: dict[tuple[str, str], list] = defaultdict(lambda: [0, set()])
        gold = Counter()
        for inst in items:
            for scenario in (inst.scenario, ALL):
                for split in (inst.split, ALL):
                    cells[scenario, split][0] += 1
                    cells[scenario, split][1].add(inst.clip_id)
            gold[_gold_key(task, inst)] += 1
        table = {
            scenario: {
                split: {"instances": cells[scenario, split][0], "clips": len(cells[scenario, split][1])}
                for split in (*SPLITS, ALL)
            }
            for scenario in scenarios
        }
        out[task] = {
            "counts": table,
            "gold_distribution": {str(k): gold[k] for k in sorted(gold, key=lambda k: (-gold[k], str(k)))},
        }
    return out


class _Context(Sequence):
    """Rows ``start``..``end - 1`` of a clip, as an instance's ``context``, without copying them."""

    def __init__(self, rows: list[dict], end: int, start: int = 0):
        self.rows, self.start = rows, start
        self.end = max(start, min(end, len(rows)))

    def __len__(self) -> int:
        return self.end - self.start

    def __iter__(self):
        return islice(self.rows, self.start, self.end)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return self.rows[self.start : self.end][index]
        size = len(self)
        if not -size <= index < size:
            raise IndexError(index)
        return self.rows[self.start + index % size]


def _scoring_view(inst: Instance, clip: dict) -> dict:
    """The instance as its task file holds it, for scoring (context rows with every key of the row)."""
    return {**inst.head(), "context": _Context(clip["rows"], inst.context_end, inst.context_start), **inst.tail()}


def baseline_table(
    instances: dict[str, list[Instance]],
    clips_by_id: dict[str, dict],
    groups: dict[str, str],
    taxonomy_version: str,
    draft_predictions: dict[str, dict] | None = None,
    task_profile: str | None = None,
) -> tuple[dict, dict]:
    """(every trivial rule of each task (``tasks.baselines``, fitted on train) on each split, overall and per
    scenario, the strongest by the task's headline metric with its 95% interval over relationship groups (or
    why there is none); the drafting model's scores on the same instances (``drafting_model_scores``)).

    ``draft_predictions``: per task, the drafting model's prediction per instance id (``tasks.draft_system``);
    None when the release has no draft to read (then the second table is empty)."""
    out, drafting = {}, {}
    for task, items in instances.items():
        scorer = scorer_for(task, taxonomy_version, task_profile)
        views = [_scoring_view(i, clips_by_id[i.clip_id]) for i in items]
        rules = trivial_rules(task, [v for v in views if v["split"] == "train"])
        matrices = {rule.name: rule_matrix(rule, scorer, views) for rule in rules}
        draft = None
        if draft_predictions is not None and task not in NOT_APPLICABLE:
            answers = draft_predictions.get(task, {})
            draft = (
                scorer.matrix(views, [answers.get(i.id) for i in items]),
                np.array([i.id in answers for i in items], dtype=bool),
            )
        per_split, draft_split = {}, {}
        for split in SPLITS:
            per_split[split], draft_split[split] = {}, {}
            for scope in [*scenarios_of(views), ALL]:
                rows = [k for k, v in enumerate(views) if v["split"] == split and scope in (v["scenario"], ALL)]
                cluster = [groups[views[k]["clip_id"]] for k in rows]
                per_split[split][scope] = cell = _rule_scores(scorer, matrices, rows, cluster)
                if draft is not None:
                    draft_split[split][scope] = _draft_scores(scorer, draft, matrices, cell, rows, cluster)
        out[task] = {
            "primary_metric": scorer.primary,
            "primary_metric_reason": PRIMARY_REASONS[task],
            "headline_metric": scorer.headline,
            "metrics": list(scorer.metric_names),
            "rules": {rule.name: rule.description for rule in rules},
            "interval": {"method": bootstrap.METHOD, "resamples": BASELINE_RESAMPLES, "seed": BASELINE_SEED},
            "splits": per_split,
        }
        if draft_predictions is not None:
            drafting[task] = (
                {"applicable": False, "reason": NOT_APPLICABLE[task]}
                if task in NOT_APPLICABLE
                else {"applicable": True, "headline_metric": scorer.headline, "splits": draft_split}
            )
    return out, drafting


def _rule_scores(scorer, matrices: dict, rows: list[int], groups: list[str]) -> dict:
    """{instances, groups, scores: {rule: {metric: value}}, best_rule, best_interval} over ``rows``."""
    entry: dict = {"instances": len(rows), "groups": len(set(groups))}
    if not rows:
        return {**entry, "scores": {}, "best_rule": None, "best_interval": None}
    entry["scores"] = {name: _rounded(scorer.values(m[rows])) for name, m in matrices.items()}
    best = max(entry["scores"], key=lambda name: entry["scores"][name][scorer.headline])  # first wins ties
    sums = bootstrap.cluster_sums(matrices[best][rows], groups)
    weights = bootstrap.resample_weights(len(sums), BASELINE_RESAMPLES, BASELINE_SEED)
    figure = bootstrap.metric_intervals(scorer, sums, weights)[scorer.headline]
    entry["best_rule"] = best
    entry["best_interval"] = _interval_entry(figure)
    return entry


def _interval_entry(figure: dict) -> dict:
    if figure.get("unreliable"):
        return {"unreliable": figure["unreliable"]}
    return {"ci_low": _round(figure["ci_low"]), "ci_high": _round(figure["ci_high"])}


def _draft_scores(
    scorer, draft: tuple[np.ndarray, np.ndarray], matrices: dict, cell: dict, rows: list[int], groups: list[str]
) -> dict:
    """The drafting model on ``rows``: every metric, the headline's 95% interval, how many instances it answered,
    and a paired bootstrap against the strongest trivial rule there (the same resampled groups)."""
    matrix, answered = draft
    entry: dict = {
        "instances": len(rows),
        "answered": int(answered[rows].sum()) if rows else 0,
        "groups": len(set(groups)),
    }
    if not rows:
        return {**entry, "scores": None, "interval": None, "against_best_rule": None}
    entry["scores"] = _rounded(scorer.values(matrix[rows]))
    sums = bootstrap.cluster_sums(matrix[rows], groups)
    weights = bootstrap.resample_weights(len(sums), BASELINE_RESAMPLES, BASELINE_SEED)
    entry["interval"] = _interval_entry(bootstrap.metric_intervals(scorer, sums, weights)[scorer.headline])
    best = cell["best_rule"]
    test = bootstrap.paired_test(scorer, sums, bootstrap.cluster_sums(matrices[best][rows], groups), weights)[
        scorer.headline
    ]
    entry["against_best_rule"] = {
        "rule": best,
        "difference": _round(test["difference"]),
        **(
            {"unreliable": test["unreliable"]}
            if test.get("unreliable")
            else {
                "ci_low": _round(test["ci_low"]),
                "ci_high": _round(test["ci_high"]),
                "p": test["p"],
            }
        ),
    }
    return entry


def _rounded(values: dict[str, float]) -> dict[str, float]:
    return {k: _round(v) for k, v in values.items()}


def compute_stats(
    clips: list[dict],
    splits: dict[str, str],
    instances: dict[str, list[Instance]],
    *,
    groups: dict[str, str],
    taxonomy_version: str,
    provenance: dict,
    drafting_model: dict | None = None,
    task_profile: str | None = None,
) -> dict:
    """Everything of ``stats.json``; ``groups`` gives each clip's relationship group; ``task_profile``
    names the scoring rules of the baselines (``tasks.profiles``; the instances were built by it).

    ``drafting_model``: {"system": who drafted (model, provider, prompt version), "predictions": {task: {id:
    prediction}}} when the released rows have drafts (``drafting_model`` of ``stats.json`` then scores them)."""
    clips_by_id = {c["sample_id"]: c for c in clips}
    ordered = {t: instances[t] for t in ALL_TASKS if t in instances}
    baselines, drafting = baseline_table(
        ordered,
        clips_by_id,
        groups,
        taxonomy_version,
        drafting_model["predictions"] if drafting_model else None,
        task_profile,
    )
    out = {
        "corpus": corpus_table(clips, splits, groups),
        "label_fields": LABEL_FIELDS,
        "label_distributions": label_distributions(clips, splits, taxonomy_version),
        "relation_pattern_transitions": transition_matrices(clips, taxonomy_version),
        "tasks": task_counts(ordered, clips),
        "baselines": baselines,
    }
    if drafting_model:
        out["drafting_model"] = {"system": drafting_model["system"], "method": DRAFTING_METHOD, "tasks": drafting}
    out["provenance"] = provenance
    return out


DRAFTING_METHOD = (
    "The stored LLM drafts of the released rows read as one more system's predictions: for each instance, the "
    "task's builder applied to the draft's version of the same row (sampling caps lifted) gives the draft's answer, "
    "a one-item ranking where the task asks for a top 3; a row the draft leaves without an answer is scored as "
    "wrong. Same metrics, group-bootstrap intervals and paired tests as the trivial rules; the predictions are in "
    "predictions/drafting_model/."
)
