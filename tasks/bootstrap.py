"""Bootstrap confidence intervals and the paired bootstrap test, by clip.

Instances of one clip share the same conversation, so they are not
independent; resampling clips (a cluster bootstrap) keeps that dependence in
the interval instead of pretending there are more independent units than
there are. Metrics are functions of summed statistics (``metrics``), so a
resample is a weighted sum of per-clip sums: one matrix product.

Intervals are percentile intervals over ``resamples`` resamples drawn from
``numpy.random.default_rng(seed)``: the same inputs and seed give the same
interval.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .metrics import Scorer

DEFAULT_RESAMPLES = 1000
LEVEL = 0.95


def clip_sums(matrix: np.ndarray, clip_ids: Sequence[str]) -> np.ndarray:
    """Per-clip sums of per-instance statistics, clips in first-seen order."""
    order: dict[str, int] = {}
    for c in clip_ids:
        order.setdefault(c, len(order))
    sums = np.zeros((len(order), matrix.shape[1]))
    np.add.at(sums, np.array([order[c] for c in clip_ids], dtype=int), matrix)
    return sums


def resample_weights(clusters: int, resamples: int = DEFAULT_RESAMPLES, seed: int = 0) -> np.ndarray:
    """How often each cluster is drawn in each resample: shape (resamples, clusters)."""
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, clusters, size=(resamples, clusters))
    weights = np.zeros((resamples, clusters))
    np.add.at(weights, (np.arange(resamples)[:, None], draws), 1)
    return weights


def interval(values: np.ndarray, level: float = LEVEL) -> tuple[float, float]:
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(values, [tail, 100 - tail])
    return float(low), float(high)


def metric_intervals(scorer: Scorer, sums_by_clip: np.ndarray, weights: np.ndarray) -> dict[str, dict]:
    """Point value and 95% interval of every metric of ``scorer``."""
    point = scorer.summarise(sums_by_clip.sum(axis=0))
    resampled = scorer.summarise(weights @ sums_by_clip) if len(sums_by_clip) else {}
    out = {}
    for name in scorer.metric_names:
        low, high = interval(resampled[name]) if len(sums_by_clip) else (float("nan"), float("nan"))
        out[name] = {"value": float(point[name]), "ci_low": low, "ci_high": high}
    return out


def paired_test(scorer: Scorer, sums_a: np.ndarray, sums_b: np.ndarray, weights: np.ndarray) -> dict[str, dict]:
    """Paired bootstrap of A − B on the same instances, for every metric.

    ``sums_a`` and ``sums_b`` are per-clip sums over the same clips in the same
    order. The p-value is two-sided: twice the share of resamples on the far
    side of zero from the observed difference (capped at 1).
    """
    point_a, point_b = scorer.summarise(sums_a.sum(axis=0)), scorer.summarise(sums_b.sum(axis=0))
    res_a, res_b = scorer.summarise(weights @ sums_a), scorer.summarise(weights @ sums_b)
    out = {}
    for name in scorer.metric_names:
        diffs = res_a[name] - res_b[name]
        observed = float(point_a[name] - point_b[name])
        low, high = interval(diffs)
        at_or_below, at_or_above = float(np.mean(diffs <= 0)), float(np.mean(diffs >= 0))
        p_value = min(1.0, 2 * min(at_or_below, at_or_above))
        out[name] = {"difference": observed, "ci_low": low, "ci_high": high, "p_value": p_value}
    return out
