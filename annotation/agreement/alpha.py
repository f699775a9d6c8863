"""Krippendorff's alpha for one coder-by-unit matrix, from its coincidence matrix.

Alpha = 1 - D_o / D_e over the coincidence matrix o_ck (Krippendorff 2011,
"Computing Krippendorff's Alpha-Reliability"). The coincidences are summed
per pair of coders with ``np.bincount`` (cost: coders^2 x units, independent
of the number of distinct values), which keeps alpha fast for target sets
with ~90 distinct values, where the ``krippendorff`` package's dense
units x values x values tensor takes about 0.1 s per figure. The package is
the reference: ``library_alpha`` calls it on the same matrix, the tests
require equality on every level (the published examples, the synthetic
project, MASI through the package's distance-callable argument), and
``bench/bench_agreement.py`` times both.

The same matrix gives the bootstrap (``bootstrap``), the observed agreement,
the majority share and the confusion heatmaps.
"""

from __future__ import annotations

from dataclasses import dataclass

import krippendorff
import numpy as np

# --- distances --------------------------------------------------------------------


def masi_distance(a, b) -> float:
    """MASI distance between two sets (Passonneau 2006): 1 - Jaccard * monotonicity.

    Monotonicity is 1 for equal sets, 2/3 when one contains the other, 1/3 when
    they overlap otherwise, and 0 when they are disjoint.
    """
    a, b = set(a), set(b)
    if a == b:
        return 0.0
    common = len(a & b)
    if not common:
        return 1.0
    jaccard = common / len(a | b)
    monotonicity = 2 / 3 if a <= b or b <= a else 1 / 3
    return 1.0 - jaccard * monotonicity


def masi_matrix(domain: list) -> np.ndarray:
    """``masi_distance`` between every two sets of ``domain``, bit for bit, without a Python call per pair.

    Target sets grow with the people of a project (at 10x the release, about 1,100 sets of 760 names: 600,000
    pairs). The sizes of every intersection come from one product of the sets' incidence matrix (whole numbers,
    exact in float64); the formula is then ``masi_distance``'s, with the same operations in the same order, so
    each value is the same float (``test_masi_matrix_equals_masi_distance_on_every_pair``).
    """
    sets = [set(v) for v in domain]
    position = {name: k for k, name in enumerate(sorted({x for s in sets for x in s}, key=repr))}
    incidence = np.zeros((len(sets), len(position)))
    for i, s in enumerate(sets):
        incidence[i, [position[x] for x in s]] = 1.0
    common = incidence @ incidence.T
    size = incidence.sum(axis=1)
    a, b = size[:, None], size[None, :]
    equal = (common == a) & (common == b)
    nested = (common == a) | (common == b)
    with np.errstate(divide="ignore", invalid="ignore"):  # 0 / 0 only where both sets are empty: equal
        jaccard = common / (a + b - common)
    out = 1.0 - jaccard * np.where(nested, 2 / 3, 1 / 3)
    out[common == 0] = 1.0
    out[equal] = 0.0
    return out


def distance_matrix(level: str, domain: list) -> np.ndarray:
    """delta^2 between every two values of ``domain`` at a level of measurement."""
    n = len(domain)
    if level == "nominal":
        return 1.0 - np.eye(n)
    if level == "interval":
        v = np.asarray(domain, dtype=float)
        return (v[:, None] - v[None, :]) ** 2
    if level == "masi":
        return masi_matrix(domain)
    raise ValueError(f"unknown level of measurement {level!r}")


# --- the pairable part of a matrix ---------------------------------------------------


@dataclass
class Pairable:
    """What alpha is computed on: units with values from 2+ coders, and their coincidences."""

    o: np.ndarray  # coincidences among the values present (present x present)
    present: np.ndarray  # positions of those values in the full domain
    units: int
    values: int  # n.., the number of pairable values
    pairs: int  # sum over units of m_u (m_u - 1) / 2: the bootstrap's draws per resample
    coders: int  # coders with at least one pairable value
    # The non-zero cells of o, row by row (what ``np.nonzero(o)`` gives), when known.
    cells: tuple[np.ndarray, np.ndarray] | None = None

    def nonzero(self) -> tuple[np.ndarray, np.ndarray]:
        return self.cells if self.cells is not None else np.nonzero(self.o)


def pairable(codes: np.ndarray, n_values: int) -> Pairable:
    """Coincidences of ``codes`` (coders x units, -1 missing, else a position in a domain of ``n_values``)."""
    valid = codes >= 0
    m = valid.sum(axis=0)
    keep = m >= 2
    if not keep.any():
        return Pairable(np.zeros((0, 0)), np.zeros(0, dtype=int), 0, 0, 0, 0)
    codes, valid, m = codes[:, keep], valid[:, keep], m[keep]
    weight = 1.0 / (m - 1)
    # Every value of a pairable unit pairs with another coder's: the values present are those, and the counts
    # are kept over them alone (a domain of a thousand target sets would otherwise be a million cells per pair).
    values = codes[valid]
    # Sorted distinct values and each code's position among them: by counting and a lookup table when the
    # domain is not much larger than the values (the presence measures' two values over 70,000 units at 10x),
    # else by sorting.
    if n_values <= 4 * len(values):
        present = np.flatnonzero(np.bincount(values, minlength=n_values))
        position = np.zeros(n_values, dtype=np.int64)
        position[present] = np.arange(len(present))
        compact = position[np.maximum(codes, 0)]
    else:
        present = np.unique(values)
        compact = np.searchsorted(present, np.maximum(codes, 0))
    p = len(present)
    o = np.zeros(p * p)
    # Each ordered pair of values from two different coders of a unit adds 1 / (m_u - 1).
    # Counted for coder i before coder j, then mirrored: (j, i) gives the transpose.
    for i in range(len(codes)):
        for j in range(i + 1, len(codes)):
            both = valid[i] & valid[j]
            if both.any():
                ids = compact[i][both] * p + compact[j][both]
                if p * p <= 4 * len(ids):  # a small domain: one count over all its cells
                    o += np.bincount(ids, weights=weight[both], minlength=p * p)
                else:
                    # Summed per cell that occurs, then added to those cells: what adding a p x p count gives (the
                    # same sums, in the same order), without a million-cell count for every pair of coders.
                    cells, at = np.unique(ids, return_inverse=True)
                    o[cells] += np.bincount(at.reshape(-1), weights=weight[both])
    # o + o.T, cell by cell where a count occurs (one addition each, as the dense sum makes it; a transposed
    # p x p addition reads memory out of order, which made it most of this function's time).
    counted = np.flatnonzero(o)
    mirrored = (counted % p) * p + counted // p
    o[mirrored] += o[counted]
    nonzero = np.union1d(counted, mirrored)
    return Pairable(
        o=o.reshape(p, p),
        present=present,
        units=int(keep.sum()),
        values=int(m.sum()),
        pairs=int((m * (m - 1) // 2).sum()),
        coders=int(valid.any(axis=1).sum()),
        cells=(nonzero // p, nonzero % p),
    )


# --- alpha ----------------------------------------------------------------------------


@dataclass
class Alpha:
    """Alpha of a ``Pairable`` (None when undefined, with the reason)."""

    alpha: float | None
    reason: str | None
    data: Pairable | None  # None once let go (a report's figure memo keeps alphas, not their matrices)
    delta: np.ndarray | None = None
    expected_disagreement: float | None = None  # D_e (the bootstrap keeps the data's)

    @property
    def observed_agreement(self) -> float | None:
        """Share of pairs of values within units that match exactly: trace(o) / n.."""
        if not self.data.units:
            return None
        return float(np.trace(self.data.o) / self.data.o.sum())


def expected_coincidences(totals: np.ndarray, n: float) -> np.ndarray:
    """e_ck = (n_c n_k - [c = k] n_c) / (n - 1), without a second values x values matrix for the diagonal."""
    expected = np.outer(totals, totals)
    expected[np.diag_indices(len(totals))] -= totals
    expected /= n - 1
    return expected


def compute_alpha(data: Pairable, delta: np.ndarray, only_value: str = "") -> Alpha:
    """Alpha from coincidences and the distances ``delta`` between the values present.

    Undefined (alpha None, with the reason) when no unit is pairable or when a
    single value occurs (D_e = 0): a reason, never a crash or a made-up number.
    """
    if data.units == 0:
        return Alpha(None, "no unit has values from two or more coders, so there is nothing to compare", data)
    if len(data.present) == 1:
        return Alpha(
            None,
            f"all {data.values} pairable values are {only_value!r}: with a single value there is no variation, "
            "so alpha is 0/0 (undefined), although observed agreement is 100%",
            data,
        )
    o = data.o
    n = o.sum()
    totals = o.sum(axis=0)
    # sum_ck e_ck delta_ck with e_ck = (n_c n_k - [c = k] n_c) / (n - 1), as two matrix-vector products: a domain
    # of a thousand target sets would otherwise build and multiply million-cell matrices for every figure.
    expected_total = (totals @ (delta @ totals) - totals @ np.diagonal(delta)) / (n - 1)
    # o is sparse (the pairs that occur within units): the observed sum runs over its non-zero cells only.
    c, k = data.nonzero()
    alpha = 1.0 - (o[c, k] * delta[c, k]).sum() / expected_total
    return Alpha(float(alpha), None, data, delta, expected_total / n)


# --- the reference ---------------------------------------------------------------------


def library_alpha(codes: np.ndarray, domain: list, level: str) -> float:
    """The ``krippendorff`` package's alpha on the same coder-by-unit matrix (-1 = missing).

    Nominal values go in as their positions, interval values as numbers, and
    target sets (MASI) as positions with a distance callable.
    """
    if level == "interval":
        values = np.asarray(domain, dtype=float)
        data = np.where(codes >= 0, values[np.maximum(codes, 0)], np.nan)
        return float(krippendorff.alpha(reliability_data=data, level_of_measurement="interval"))
    data = np.where(codes >= 0, codes, np.nan).astype(float)
    if level == "nominal":
        return float(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"))
    present = np.unique(codes[codes >= 0])
    delta = distance_matrix(level, [domain[i] for i in present])

    def lookup(v1, v2, i1, i2, n_v, dtype=np.float64):
        # The package passes positions within the value domain it was given.
        return delta[i1, i2].astype(dtype)

    return float(
        krippendorff.alpha(reliability_data=data, value_domain=present.astype(float), level_of_measurement=lookup)
    )
