"""Krippendorff's bootstrap of alpha: reproducible, centred on alpha, and sensible at the extremes."""

from __future__ import annotations

import numpy as np
import pytest

from annotation.agreement.alpha import compute_alpha, distance_matrix, pairable
from annotation.agreement.bootstrap import bootstrap_alpha
from annotation.agreement.report import compute_project_report
from annotation.synthetic import generate


def _fit(codes: np.ndarray, n_values: int, level: str = "nominal"):
    data = pairable(codes, n_values)
    result = compute_alpha(data, distance_matrix(level, list(range(n_values)))[np.ix_(data.present, data.present)])
    return data, result


def _boot(data, result, seed=0, resamples=1000):
    return bootstrap_alpha(data.o, result.delta, pairs=data.pairs, resamples=resamples, rng=np.random.default_rng(seed))


def _noisy(rng, units: int, coders: int, values: int, keep: float) -> np.ndarray:
    truth = rng.integers(0, values, size=units)
    codes = np.tile(truth, (coders, 1))
    flip = rng.random(codes.shape) > keep
    codes[flip] = rng.integers(0, values, size=flip.sum())
    return codes


# Hayes & Krippendorff (2007), table 1: 40 units, 5 observers, ordinal 0-3, "." missing.
HAYES_KRIPPENDORFF_2007 = """
1 1 2 . 2|1 1 0 1 .|2 3 3 3 .|. 0 0 . 0|0 0 0 . 0|0 0 0 . 0|1 0 2 . 1|1 . 2 0 .|2 2 2 . 2|2 1 1 1 .
. 1 0 0 .|0 0 0 0 .|1 2 2 2 .|3 3 2 2 3|1 1 1 . 1|1 1 1 . 1|2 1 2 . 2|1 2 3 3 .|1 1 0 1 .|0 0 0 . 0
0 0 1 1 .|0 0 . 0 0|2 3 3 3 .|0 0 0 0 .|1 2 . 2 2|0 1 1 1 .|0 0 0 1 0|1 2 1 2 .|1 1 2 2 .|1 1 2 . 2
1 1 0 . 0|2 1 2 1 .|2 2 . 2 2|3 2 2 2 .|2 2 2 . 2|2 2 3 . 2|2 2 2 . 2|2 2 . 1 2|2 2 2 2 .|1 1 1 . 1
"""


def test_the_number_of_draws_is_the_number_of_value_pairs_239_in_hayes_krippendorff():
    units = [unit.split() for unit in HAYES_KRIPPENDORFF_2007.replace("\n", "|").split("|") if unit.strip()]
    codes = np.array([[-1 if v == "." else int(v) for v in unit] for unit in units]).T
    assert codes.shape == (5, 40)
    data = pairable(codes, 4)
    assert (data.units, data.values, data.pairs) == (40, 159, 239)


def test_same_seed_same_distribution_other_seed_other_draws():
    rng = np.random.default_rng(1)
    data, result = _fit(_noisy(rng, 300, 3, 5, 0.8), 5)
    a, b, c = _boot(data, result, seed=3), _boot(data, result, seed=3), _boot(data, result, seed=4)
    np.testing.assert_array_equal(a.alphas, b.alphas)
    assert not np.array_equal(a.alphas, c.alphas)


def test_distribution_is_centred_on_alpha_and_its_interval_contains_it():
    rng = np.random.default_rng(2)
    data, result = _fit(_noisy(rng, 2000, 3, 6, 0.75), 6)
    dist = _boot(data, result, resamples=4000)
    low, high = dist.interval(0.95)
    assert low < result.alpha < high
    assert abs(dist.alphas.mean() - result.alpha) < 0.005
    assert 0.005 < high - low < 0.1


def test_multinomial_resampling_matches_drawing_pairs_one_by_one():
    """The vectorised bootstrap has the same distribution as Krippendorff's per-draw algorithm."""
    rng = np.random.default_rng(5)
    codes = _noisy(rng, 60, 3, 4, 0.7)
    data, result = _fit(codes, 4, "interval")
    fast = _boot(data, result, resamples=4000).alphas
    # The literal algorithm: M draws of a cell (c, k) with probability o_ck / n.., summing delta.
    o, delta, n = data.o, result.delta, data.o.sum()
    totals = o.sum(axis=0)
    d_e = ((np.outer(totals, totals) - np.diag(totals)) / (n - 1) * delta).sum() / n
    cells = (o / n).ravel()
    draws = np.random.default_rng(9).choice(cells.size, size=(4000, data.pairs), p=cells / cells.sum())
    slow = np.maximum(1 - delta.ravel()[draws].sum(axis=1) / (data.pairs * d_e), -1)
    assert fast.mean() == pytest.approx(slow.mean(), abs=0.01)
    assert fast.std() == pytest.approx(slow.std(), rel=0.1)


def test_near_perfect_agreement_has_almost_no_chance_of_missing_0_667():
    rng = np.random.default_rng(6)
    data, result = _fit(_noisy(rng, 500, 3, 5, 0.97), 5)
    dist = _boot(data, result)
    assert result.alpha > 0.9 and dist.p_below(0.667) == 0.0 and dist.p_below(0.800) < 0.01


def test_random_coding_almost_surely_misses_0_667():
    rng = np.random.default_rng(7)
    codes = rng.integers(0, 5, size=(3, 500))
    data, result = _fit(codes, 5)
    dist = _boot(data, result)
    assert abs(result.alpha) < 0.1 and dist.p_below(0.667) == 1.0


def test_resamples_that_draw_a_single_value_count_as_zero_not_perfect():
    # Two units, both coders agree; values 0 (9 of 10 pairs) and 1: often only 0 is drawn.
    codes = np.array([[0] * 9 + [1], [0] * 9 + [1]])
    data, result = _fit(codes, 2)
    assert result.alpha == 1.0 and data.pairs == 10
    dist = _boot(data, result, resamples=20000)
    single_value = 0.9**10  # all 10 pairs from the cell (0, 0)
    assert np.mean(dist.alphas == 0.0) == pytest.approx(single_value, abs=0.01)
    assert set(np.unique(dist.alphas)) == {0.0, 1.0}


@pytest.mark.django_db
def test_on_a_synthetic_project_every_interval_contains_its_alpha(project):
    generate(project, clips=24, annotators=3, seed=11)
    report = compute_project_report(project, resamples=1000, seed=0)
    overall = next(s for s in report["slices"] if s["key"] == "all/all")
    checked = 0
    for item in overall["measures"].values():
        for fig in [item["humans"], item["with_llm"], *item["pairs"]]:
            if fig["defined"]:
                low, high = fig["ci95"]
                assert low <= fig["alpha"] <= high
                checked += 1
    assert checked >= 100
