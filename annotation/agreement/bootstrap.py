"""Krippendorff's bootstrap of alpha (Hayes & Krippendorff 2007; Krippendorff's
"Algorithm for bootstrapping a distribution of alpha", 2006, revised 2011).

Unlike a percentile bootstrap over units, this resamples *pairable values*:
each resample draws M pairs of values with replacement, a pair (c, k) with
probability o_ck / n.. read from the observed coincidence matrix (diagonal
cells once, off-diagonal cells counted in both orders), where M is the number
of value pairs the data hold inside units (sum of m_u (m_u - 1) / 2 — for the
example in Hayes & Krippendorff 2007, 239). The resample's observed
disagreement is the mean distance of its M pairs; the expected disagreement
stays the one of the data, so

    alpha* = 1 - (sum of the M drawn distances) / (M * D_e)

As in Krippendorff's algorithm, alpha* is bounded below by -1, and a resample
whose pairs all repeat one single value (no variation: alpha would be 0/0)
counts as 0, not as perfect agreement. From the distribution: the 95%
interval (2.5th and 97.5th percentiles) and the probability q that alpha is
below a threshold (0.800 reliable, 0.667 tentative).

Vectorised: a resample depends only on how many of its M draws fall on each
distinct distance, so each resample is one multinomial draw over those few
distance classes — exactly the distribution of M single draws, at a cost
independent of M. (Ports of the algorithm that draw pairs one by one cap M for
speed, e.g. at 25 times the number of non-empty coincidence cells; a smaller M
widens the interval, and there is no speed reason for a cap here.)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .alpha import expected_coincidences

METHOD = (
    "Krippendorff's bootstrap of alpha (Hayes & Krippendorff 2007): each resample draws M pairs of "
    "pairable values with replacement, with probabilities from the observed coincidence matrix "
    "(M = the number of value pairs within units), and sets alpha* = 1 - (sum of drawn distances) / (M * De) "
    "with the data's expected disagreement De; alpha* is bounded below by -1 and a resample drawing one "
    "single value only counts as 0. The interval is the 2.5th-97.5th percentile of alpha*; "
    "P(alpha < t) is the share of resamples below t."
)


@dataclass
class Distribution:
    alphas: np.ndarray

    def interval(self, level: float = 0.95) -> tuple[float, float]:
        tail = (1 - level) / 2
        low, high = np.quantile(self.alphas, [tail, 1 - tail])
        return float(low), float(high)

    def p_below(self, threshold: float) -> float:
        return float(np.mean(self.alphas < threshold))


def bootstrap_alpha(
    o: np.ndarray,
    delta: np.ndarray,
    *,
    pairs: int,
    resamples: int,
    rng: np.random.Generator,
    expected_d: float | None = None,
    cells: tuple[np.ndarray, np.ndarray] | None = None,
) -> Distribution:
    """The bootstrap distribution of alpha from coincidences ``o`` and distances ``delta``.

    ``pairs`` is M; ``rng`` a seeded numpy Generator (same seed, same distribution); ``expected_d``: the data's
    D_e when the caller has it (``alpha.Alpha.expected_disagreement``), else computed here; ``cells``: the
    non-zero cells of ``o`` row by row (``alpha.Pairable.nonzero``), else found here.
    """
    if pairs < 1:
        raise ValueError("the bootstrap needs at least one pair of values")
    n = o.sum()
    if expected_d is None:
        totals = o.sum(axis=0)
        expected = expected_coincidences(totals, n)
        expected_d = (expected * delta).sum() / n

    # Unordered cells c <= k that occur, row by row, with their probability of being drawn as a pair (a
    # domain of a thousand target sets has half a million unordered cells, a few thousand of them non-zero).
    c, k = cells if cells is not None else np.nonzero(o)
    upper = c <= k
    c, k = c[upper], k[upper]
    prob = np.where(c == k, o[c, k], 2 * o[c, k]) / n
    diagonal = np.diag(o)[np.diag(o) > 0] / n
    return bootstrap_cells(prob, delta[c, k], diagonal, expected_d, pairs=pairs, resamples=resamples, rng=rng)


def bootstrap_cells(
    prob: np.ndarray,
    distance: np.ndarray,
    diagonal: np.ndarray,
    expected_d: float,
    *,
    pairs: int,
    resamples: int,
    rng: np.random.Generator,
) -> Distribution:
    """The same bootstrap from the unordered cells of a coincidence matrix.

    ``prob``: each cell's probability of being drawn as a pair; ``distance``:
    its distance; ``diagonal``: the probabilities of the diagonal cells (one
    value paired with itself); ``expected_d``: the data's De. The free-text
    figures (``semantic``), whose value domains are too large for a dense
    matrix, come in here directly.
    """
    if pairs < 1:
        raise ValueError("the bootstrap needs at least one pair of values")
    # Group cells by distance: the sum of a resample only depends on those counts.
    classes, cls = np.unique(np.round(distance, 12), return_inverse=True)
    class_prob = np.bincount(cls, weights=prob, minlength=len(classes))
    class_prob = class_prob / class_prob.sum()
    counts = rng.multinomial(pairs, class_prob, size=resamples)
    alphas = 1.0 - (counts @ classes) / (pairs * expected_d)
    np.maximum(alphas, -1.0, out=alphas)

    # Resamples whose pairs all agree may still have drawn one single value
    # only; split their draws over the diagonal cells to find those.
    if classes[0] == 0.0:
        all_agree = np.flatnonzero(counts[:, 0] == pairs)
        if all_agree.size:
            split = rng.multinomial(pairs, diagonal / diagonal.sum(), size=all_agree.size)
            alphas[all_agree[(split == pairs).any(axis=1)]] = 0.0
    return Distribution(alphas)
