"""Krippendorff's alpha of free texts with an embedding distance, and the figures beside it.

This module is the maths only, on arrays: which texts a report compares and
what it says of them is ``semantic`` (the free-text agreement report).

The distance between two texts a and b is

    delta(a, b) = 1 - cos(e(a), e(b))

over sentence embeddings e (``embeddings``): 0 for the same text (and for
texts the model reads as the same), about 1 for unrelated texts. The empty
text (a coder who coded the row and wrote nothing for this person, pair or
row) is given a direction orthogonal to every written text: it is at distance
1 from any written text and 0 from another empty text.

Alpha = 1 - Do/De over the coincidences of the texts, as for the labels
(``alpha``), but without a dense values x values matrix: a field may hold tens
of thousands of distinct texts. Because delta is one minus an inner product of
unit vectors f (the embedding with a 0 appended, or the extra axis for the
empty text), the expected disagreement over every pair of pairable values is

    n(n-1) De = n^2 - |sum_c n_c f_c|^2   (minus the diagonal, where delta is 0 by definition)

which costs one pass over the values; the observed disagreement sums
o_ck delta(c, k) over the cells that occur within units (a few per unit).
``library_alpha`` computes the same figure with the ``krippendorff`` package
and this distance as its callable; the tests require agreement to 1e-9.

Beside each alpha: the mean similarity (1 - delta) of paired coders, and the
same under a permutation baseline: the field's texts shuffled across the
units of their scenario, so that the coders of a unit are paired with texts
written about other moments. Its expectation is exact (the mean similarity of
two different values drawn from the scenario's pool); the tests check it
against shuffles.

The interval is the Hayes-Krippendorff bootstrap of ``bootstrap`` drawing from
the same cells; the cells' distances are grouped into classes 0.01 wide
(each class carrying the mean distance of its cells, exact zeros apart), which
makes a resample a multinomial draw over about a hundred classes.
"""

from __future__ import annotations

from dataclasses import dataclass

import krippendorff
import numpy as np

from .bootstrap import bootstrap_cells

# Width of the distance classes the bootstrap draws from (the report states it among its parameters).
BOOTSTRAP_RESOLUTION = 0.01


# --- vectors and distances --------------------------------------------------------------


def unit_vectors(domain: list[str], vectors: dict[str, np.ndarray]) -> np.ndarray:
    """f for every value of ``domain`` (``domain[0]`` is the empty text): unit length, kept as float32.

    The reference the report's ``unit_table`` / ``FieldVectors`` are tested against (a report never copies
    vectors per field); also the plain way to make ``f`` for a handful of texts.

    A field may hold tens of thousands of texts: the vectors are stored at the
    precision the model gives (float32) and every sum or product over them is
    taken in float64 (``rows``), a block at a time.
    """
    dims = len(next(iter(vectors.values()))) if vectors else 0
    f = np.zeros((len(domain), dims + 1), dtype=np.float32)
    f[0, dims] = 1.0
    for i, text in enumerate(domain[1:], start=1):
        f[i, :dims] = vectors[text]
    f /= np.linalg.norm(f.astype(np.float64), axis=1, keepdims=True).astype(np.float32)
    return f


def unit_table(vectors, *, in_place: bool = False):
    """A ``VectorTable`` whose rows are what ``unit_vectors`` makes of each text (the vector, a zero on the
    empty text's axis, normalised the same way) plus a last row for the empty text itself.

    ``in_place``: ``vectors`` is a table made with one extra row and column (``embed_texts(...,
    extra_rows=1, extra_columns=1)``) and is turned into the unit table without a copy: a full-scale
    report holds about a hundred thousand texts, which every field then reads through ``FieldVectors``.
    """
    from .embeddings import VectorTable

    table = vectors if in_place else VectorTable.of(vectors, extra_rows=1, extra_columns=1)
    m, dims = table.matrix, table.dimensions
    if m.shape != (len(table) + 1, dims + 1):
        raise ValueError("unit_table needs a table with one extra row and one extra column")
    m[-1, :] = 0.0
    m[-1, dims] = 1.0
    for start in range(0, len(m), BLOCK):
        block = m[start : start + BLOCK]
        block /= np.linalg.norm(block.astype(np.float64), axis=1, keepdims=True).astype(np.float32)
    table.unit = True
    return table


class FieldVectors:
    """``unit_vectors`` of one field, read from the report's one ``unit_table`` instead of copied out of it
    (every field's matrix beside the table would double what a full-scale report holds)."""

    def __init__(self, domain: list[str], table):
        self.matrix = table.matrix
        self.index = np.empty(len(domain), dtype=np.int64)
        self.index[0] = len(table)  # the empty text's row, after the texts
        self.index[1:] = [table.row_of[t] for t in domain[1:]]

    def __len__(self) -> int:
        return len(self.index)

    def __getitem__(self, positions) -> np.ndarray:
        return self.matrix[self.index[positions]]


BLOCK = 2048  # rows gathered at once: bounds the memory a figure takes, whatever its number of cells (and fits a cache)


def rows(f: np.ndarray, index) -> np.ndarray:
    """The rows ``index`` of ``f`` in float64, the precision of every computation on them."""
    return f[index].astype(np.float64)


def distances(f: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """delta between the values ``a`` and ``b`` (aligned positions into ``f``); exactly 0 where they are the same."""
    out = np.empty(len(a))
    for start in range(0, len(a), BLOCK):
        ia, ib = a[start : start + BLOCK], b[start : start + BLOCK]
        out[start : start + BLOCK] = np.where(ia == ib, 0.0, 1.0 - np.einsum("ij,ij->i", rows(f, ia), rows(f, ib)))
    return out


class PairDistances:
    """``distances`` over one field's ``f``, each pair of values computed once.

    The figures of a field (all coders, with the LLM, every pair of coders, per
    scenario and mode) look at overlapping pairs of the same texts; a report
    computes each distance once and looks it up after.
    """

    def __init__(self, f: np.ndarray):
        self.f = f
        self.n = len(f)
        self.known = np.zeros(0, dtype=np.int64)  # sorted pair ids lo * n + hi
        self.values = np.zeros(0)

    def __call__(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        a, b = np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64)
        ids = np.minimum(a, b) * self.n + np.maximum(a, b)
        wanted = np.unique(ids)
        # Both sorted: where each wanted pair would go among the known ones says whether it is known, and where
        # to insert it (a merge, instead of sorting every known pair again on every call).
        at = np.searchsorted(self.known, wanted)
        known = at < len(self.known)
        known[known] = self.known[at[known]] == wanted[known]
        new, at = wanted[~known], at[~known]
        if len(new):
            computed = distances(self.f, new // self.n, new % self.n)
            self.known, self.values = np.insert(self.known, at, new), np.insert(self.values, at, computed)
        return self.values[np.searchsorted(self.known, ids)]


def distance_matrix(f: np.ndarray) -> np.ndarray:
    """delta between every two rows of ``f`` (for small domains: the reference computation and tests)."""
    f = f.astype(np.float64)
    delta = 1.0 - f @ f.T
    np.fill_diagonal(delta, 0.0)
    return delta


# --- coincidences, alpha, baseline ----------------------------------------------------------


@dataclass
class Cells:
    """The non-zero cells of a coincidence matrix (ordered pairs, both directions)."""

    c: np.ndarray
    k: np.ndarray
    o: np.ndarray
    totals: np.ndarray  # n_c over the whole domain
    units: int
    values: int  # n..
    pairs: int  # M: value pairs within units
    coders: int


def coincidence_cells(codes: np.ndarray, n_values: int) -> Cells:
    """Coincidences of ``codes`` (coders x units, -1 missing) as sparse cells."""
    valid = codes >= 0
    m = valid.sum(axis=0)
    keep = m >= 2
    codes, valid, m = codes[:, keep], valid[:, keep], m[keep]
    weight = 1.0 / np.maximum(m - 1, 1)
    firsts, seconds, weights = [], [], []
    for i in range(len(codes)):
        for j in range(i + 1, len(codes)):
            both = valid[i] & valid[j]
            if both.any():
                firsts += [codes[i][both], codes[j][both]]
                seconds += [codes[j][both], codes[i][both]]
                weights += [weight[both], weight[both]]
    if not firsts:
        empty = np.zeros(0, dtype=np.int64)
        return Cells(empty, empty, np.zeros(0), np.zeros(n_values), 0, 0, 0, 0)
    first, second, w = (np.concatenate(x) for x in (firsts, seconds, weights))
    cell_ids, inverse = np.unique(first.astype(np.int64) * n_values + second, return_inverse=True)
    o = np.bincount(inverse.reshape(-1), weights=w)
    return Cells(
        c=cell_ids // n_values,
        k=cell_ids % n_values,
        o=o,
        totals=np.bincount(first, weights=w, minlength=n_values),
        units=int(keep.sum()),
        values=int(m.sum()),
        pairs=int((m * (m - 1) // 2).sum()),
        coders=int(valid.any(axis=1).sum()),
    )


def expected_disagreement(totals: np.ndarray, f) -> float:
    """De = sum_{c,k} n_c n_k delta(c, k) / (n (n - 1)), in one pass (delta(c, c) = 0), a block of rows at a time.

    ``semantic_alpha`` uses it when it is not handed De; the report takes De from ``value_sums``, which is
    tested against this.
    """
    # Only the values that occur: a figure of one pair or one scenario uses a small part of the field's domain.
    present = np.flatnonzero(totals)
    totals = totals[present]
    n = totals.sum()
    s, off_diagonal_gap = 0.0, 0.0
    for start in range(0, len(present), BLOCK):
        block, t = rows(f, present[start : start + BLOCK]), totals[start : start + BLOCK]
        s = s + t @ block
        off_diagonal_gap += (t**2 * (1.0 - np.einsum("ij,ij->i", block, block))).sum()
    s = np.asarray(s)
    return float((n * n - s @ s - off_diagonal_gap) / (n * (n - 1)))


@dataclass
class SemanticAlpha:
    alpha: float | None
    reason: str | None
    cells: Cells
    observed: float | None = None  # Do
    expected: float | None = None  # De
    delta: np.ndarray | None = None  # per cell


def semantic_alpha(codes: np.ndarray, f: np.ndarray, dist=None, expected: float | None = None) -> SemanticAlpha:
    """Alpha of ``codes`` (positions into the rows of ``f``, -1 missing) with delta = 1 - f.f
    (``dist(a, b)``: those distances, e.g. a ``PairDistances`` shared by a field's figures;
    ``expected``: De when the caller has it, from ``value_sums``)."""
    cells = coincidence_cells(codes, len(f))
    if cells.units == 0:
        return SemanticAlpha(None, "no unit has texts from two or more coders, so there is nothing to compare", cells)
    delta = (dist or (lambda a, b: distances(f, a, b)))(cells.c, cells.k)
    n = cells.o.sum()
    observed = float((cells.o * delta).sum() / n)
    if expected is None:
        expected = expected_disagreement(cells.totals, f)
    if expected <= 1e-12:
        return SemanticAlpha(
            None,
            f"all {cells.values} pairable texts are the same, so there is no variation: alpha is 0/0 (undefined)",
            cells,
            observed,
            expected,
            delta,
        )
    return SemanticAlpha(1.0 - observed / expected, None, cells, observed, expected, delta)


def library_alpha(codes: np.ndarray, f: np.ndarray) -> float:
    """The ``krippendorff`` package's alpha on the same matrix, with delta as its distance callable."""
    present = np.unique(codes[codes >= 0])
    delta = distance_matrix(f[present])

    def lookup(v1, v2, i1, i2, n_v, dtype=np.float64):
        return delta[i1, i2].astype(dtype)

    data = np.where(codes >= 0, codes, np.nan).astype(float)
    return float(
        krippendorff.alpha(reliability_data=data, value_domain=present.astype(float), level_of_measurement=lookup)
    )


def paired_similarity(codes: np.ndarray, f: np.ndarray, dist=None) -> tuple[float | None, float | None, int]:
    """(mean similarity 1 - delta over the pairs of coders within pairable units, share of those pairs
    where exactly one coder wrote a text, number of pairs)."""
    dist = dist or (lambda a, b: distances(f, a, b))
    sims, one_empty = [], []
    for i in range(len(codes)):
        for j in range(i + 1, len(codes)):
            both = (codes[i] >= 0) & (codes[j] >= 0)
            if both.any():
                a, b = codes[i][both], codes[j][both]
                sims.append(1.0 - dist(a, b))
                one_empty.append((a == 0) != (b == 0))
    if not sims:
        return None, None, 0
    sims_all, empty_all = np.concatenate(sims), np.concatenate(one_empty)
    return float(sims_all.mean()), float(empty_all.mean()), len(sims_all)


def baseline_similarity(codes: np.ndarray, f: np.ndarray, unit_group: np.ndarray) -> float | None:
    """Expected mean similarity of paired coders when the texts are shuffled across the units of their group.

    The report takes the same figure from ``value_sums`` (one pass for De and the baseline); this is the
    direct computation it is tested against, and that is tested against real shuffles.

    Every pair of coders of a unit then holds two different values drawn at
    random from the group's pool of pairable values, whose mean similarity is
    (|sum f|^2 - sum |f|^2) / (n (n - 1)); pairs are weighted as they occur.
    """
    valid = codes >= 0
    m = valid.sum(axis=0)
    keep = m >= 2
    total_pairs, weighted = 0, 0.0
    for group in np.unique(unit_group[keep]):
        cols = keep & (unit_group == group)
        values = codes[:, cols][valid[:, cols]]
        n = len(values)
        pairs = int((m[cols] * (m[cols] - 1) // 2).sum())
        if n < 2 or not pairs:
            continue
        s = sum(rows(f, values[start : start + BLOCK]).sum(axis=0) for start in range(0, n, BLOCK))
        mean = (s @ s - n) / (n * (n - 1))  # |f| = 1
        weighted += pairs * mean
        total_pairs += pairs
    return float(weighted / total_pairs) if total_pairs else None


@dataclass
class ValueSums:
    """What De and the permutation baseline need from a figure's pairable values, in one pass over their vectors.

    Both are sums of unit vectors over the pairable values (De over all of them,
    the baseline per group of units), so a figure gathers each distinct value's
    vector once for both instead of once per value for each.
    """

    expected: float | None  # De, as ``expected_disagreement`` gives it
    baseline: float | None  # as ``baseline_similarity`` gives it


def value_sums(codes: np.ndarray, f, unit_group: np.ndarray) -> ValueSums:
    valid = codes >= 0
    m = valid.sum(axis=0)
    keep = m >= 2
    codes, valid, m, unit_group = codes[:, keep], valid[:, keep], m[keep], unit_group[keep]
    if not keep.any():
        return ValueSums(None, None)
    groups, group_of_unit = np.unique(unit_group, return_inverse=True)
    values = codes[valid]
    value_group = np.broadcast_to(group_of_unit, codes.shape)[valid]
    present, value_position = np.unique(values, return_inverse=True)
    # counts[g, p]: pairable values of group g equal to present[p].
    counts = np.zeros((len(groups), len(present)))
    np.add.at(counts, (value_group, value_position.reshape(-1)), 1.0)
    totals = counts.sum(axis=0)
    sums, gap = 0.0, 0.0
    for start in range(0, len(present), BLOCK):
        block = rows(f, present[start : start + BLOCK])
        sums = sums + counts[:, start : start + BLOCK] @ block
        gap += (totals[start : start + BLOCK] ** 2 * (1.0 - np.einsum("ij,ij->i", block, block))).sum()
    sums = np.asarray(sums)
    n = totals.sum()
    s = sums.sum(axis=0)
    expected = float((n * n - s @ s - gap) / (n * (n - 1))) if n > 1 else None
    # The baseline: per group, two different values drawn from its pool, pairs weighted as they occur.
    pairs = np.bincount(group_of_unit, weights=m * (m - 1) // 2, minlength=len(groups))
    per_group = counts.sum(axis=1)
    total_pairs, weighted = 0, 0.0
    for g in range(len(groups)):
        k = per_group[g]
        if k < 2 or not pairs[g]:
            continue
        weighted += pairs[g] * (sums[g] @ sums[g] - k) / (k * (k - 1))  # |f| = 1
        total_pairs += pairs[g]
    return ValueSums(expected, float(weighted / total_pairs) if total_pairs else None)


def bootstrap(result: SemanticAlpha, *, resamples: int, rng: np.random.Generator):
    """Krippendorff's bootstrap from the figure's cells, distances grouped into classes ``BOOTSTRAP_RESOLUTION``
    wide."""
    cells = result.cells
    n = cells.o.sum()
    upper = cells.c <= cells.k
    c, k, o, delta = cells.c[upper], cells.k[upper], cells.o[upper], result.delta[upper]
    prob = np.where(c == k, o, 2 * o) / n
    diagonal = prob[c == k]
    zero = delta == 0.0
    bins = np.where(zero, 0, 1 + np.floor(delta / BOOTSTRAP_RESOLUTION)).astype(np.int64)
    _, inverse = np.unique(bins, return_inverse=True)
    weight = np.bincount(inverse, weights=prob)
    mean = np.bincount(inverse, weights=prob * delta) / np.where(weight > 0, weight, 1)
    grouped = np.where(zero, 0.0, mean[inverse])
    return bootstrap_cells(prob, grouped, diagonal, result.expected, pairs=cells.pairs, resamples=resamples, rng=rng)
