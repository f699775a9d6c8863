"""Bootstrap confidence intervals and the paired bootstrap test, by relationship group.

Instances of one couple or family share the same people (and those of one
clip the same conversation), so they are not independent: the unit of
independence is the relationship group, the same unit the splits keep whole.
Resampling groups (a cluster bootstrap) keeps that dependence in the
interval instead of pretending there are more independent units than there
are. Metrics are functions of summed statistics (``metrics``), so a resample
is a weighted sum of per-group sums: one matrix product.

Intervals are percentile intervals over ``resamples`` resamples drawn from
``numpy.random.default_rng(seed)``: the same inputs and seed give the same
interval. With fewer than ``MIN_GROUPS`` groups an interval is not given as
a range at all: so few clusters allow only a handful of distinct resamples,
and percentile intervals over them come out narrower than the uncertainty
they should show (cluster-bootstrap coverage falls well below 95% with
under about ten clusters). The report then says it is unreliable, and why.

A paired test's p-value is two-sided, from the share of resamples on the far
side of zero; with B resamples it cannot resolve values below 1/(B+1), so
when no resample crosses zero it is reported as ``p < 1/(B+1)``, never as 0.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .metrics import Scorer

DEFAULT_RESAMPLES = 1000
LEVEL = 0.95
MIN_GROUPS = 10  # below this many relationship groups, an interval is reported as unreliable
UNIT = "relationship group"
METHOD = (
    f"percentile bootstrap over {UNIT}s (a cluster bootstrap: whole couples or families are resampled with "
    f"replacement, never single clips or instances); 95% intervals; with fewer than {MIN_GROUPS} groups the "
    "interval, and a paired test's p-value, are reported as unreliable instead of given"
)


def cluster_sums(matrix: np.ndarray, cluster_ids: Sequence[str]) -> np.ndarray:
    """Per-cluster sums of per-instance statistics, clusters in first-seen order."""
    order: dict[str, int] = {}
    codes = np.array([order.setdefault(c, len(order)) for c in cluster_ids], dtype=int)
    return np.stack([np.bincount(codes, weights=column, minlength=len(order)) for column in matrix.T], axis=1).reshape(
        len(order), matrix.shape[1]
    )


def resample_weights(clusters: int, resamples: int = DEFAULT_RESAMPLES, seed: int = 0) -> np.ndarray:
    """How often each cluster is drawn in each resample: shape (resamples, clusters)."""
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, clusters, size=(resamples, clusters))
    # Counted per resample: resample r's draws land in cells r * clusters + cluster.
    cells = (draws + np.arange(resamples)[:, None] * clusters).ravel()
    return np.bincount(cells, minlength=resamples * clusters).reshape(resamples, clusters).astype(float)


def interval(values: np.ndarray, level: float = LEVEL) -> tuple[float, float]:
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(values, [tail, 100 - tail])
    return float(low), float(high)


def unreliable(groups: int) -> str:
    """Why an interval over ``groups`` groups is not given ("" when it is)."""
    if groups >= MIN_GROUPS:
        return ""
    return (
        f"only {groups} {UNIT}{'s' if groups != 1 else ''} (fewer than {MIN_GROUPS}): too few independent units for "
        "a bootstrap interval"
    )


def metric_intervals(scorer: Scorer, sums_by_group: np.ndarray, weights: np.ndarray) -> dict[str, dict]:
    """Point value of every metric of ``scorer``, with its 95% interval (``ci_low``, ``ci_high``)
    or, with fewer than ``MIN_GROUPS`` groups, ``unreliable`` saying why there is none."""
    point = scorer.summarise(sums_by_group.sum(axis=0))
    why = unreliable(len(sums_by_group))
    resampled = scorer.summarise(weights @ sums_by_group) if not why else {}
    out = {}
    for name in scorer.metric_names:
        if why:
            out[name] = {"value": float(point[name]), "ci_low": None, "ci_high": None, "unreliable": why}
        else:
            low, high = interval(resampled[name])
            out[name] = {"value": float(point[name]), "ci_low": low, "ci_high": high}
    return out


def p_value(diffs: np.ndarray) -> tuple[float, bool]:
    """(two-sided p-value of the resampled differences, whether it is only an upper bound).

    Twice the share of resamples at or beyond zero on the side away from the
    observed direction, capped at 1; when there are none, the bound 1/(B+1).
    """
    resamples = len(diffs)
    far = min(int(np.sum(diffs <= 0)), int(np.sum(diffs >= 0)))
    if far == 0:
        return 1 / (resamples + 1), True
    return min(1.0, 2 * far / resamples), False


def format_p(value: float, bound: bool) -> str:
    return f"p < {value:.2g}" if bound else f"p = {value:.4f}"


def paired_test(scorer: Scorer, sums_a: np.ndarray, sums_b: np.ndarray, weights: np.ndarray) -> dict[str, dict]:
    """Paired bootstrap of A − B on the same instances, for every metric.

    ``sums_a`` and ``sums_b`` are per-group sums over the same groups in the
    same order, resampled together. Each metric gets the observed difference,
    its interval and the p-value (``p_value_bound`` true when it is the
    ``p < 1/(B+1)`` bound); with fewer than ``MIN_GROUPS`` groups neither is
    given (``unreliable`` says why): the few distinct resamples of so few groups
    would make a p-value as falsely precise as an interval.
    """
    point_a, point_b = scorer.summarise(sums_a.sum(axis=0)), scorer.summarise(sums_b.sum(axis=0))
    res_a, res_b = scorer.summarise(weights @ sums_a), scorer.summarise(weights @ sums_b)
    why = unreliable(len(sums_a))
    out = {}
    for name in scorer.metric_names:
        diffs = res_a[name] - res_b[name]
        entry = {"difference": float(point_a[name] - point_b[name])}
        if why:
            entry.update(ci_low=None, ci_high=None, p_value=None, p_value_bound=False, p="no p-value", unreliable=why)
        else:
            p, bound = p_value(diffs)
            low, high = interval(diffs)
            entry.update(ci_low=low, ci_high=high, p_value=p, p_value_bound=bound, p=format_p(p, bound))
        out[name] = entry
    return out
