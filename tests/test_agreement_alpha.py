"""Our alpha equals the krippendorff package's, including MASI through its distance callable."""

from __future__ import annotations

import krippendorff
import numpy as np
import pytest

from annotation.agreement.alpha import (
    compute_alpha,
    distance_matrix,
    library_alpha,
    masi_distance,
    masi_matrix,
    pairable,
)
from annotation.agreement.extract import extract, scope_clips
from annotation.agreement.fields import MEASURES
from annotation.agreement.report import Slice, _availability, _coder_sets, _Computer, compute_project_report
from annotation.synthetic import generate

from .builders.agreement import SUBMITTED, annotators, make_clip, therapist_content


@pytest.mark.parametrize(
    "a, b, distance",
    [
        ({"Maya"}, {"Maya"}, 0.0),
        ({"Maya"}, {"Tobias"}, 1.0),
        ({"Maya"}, {"Maya", "Tobias"}, 1 - (1 / 2) * (2 / 3)),  # subset: J = 1/2, M = 2/3
        ({"Maya", "Tobias"}, {"Tobias", "Couple"}, 1 - (1 / 3) * (1 / 3)),  # overlap: J = 1/3, M = 1/3
        ({"Ada", "Ben", "Chidi"}, {"Ada"}, 1 - (1 / 3) * (2 / 3)),
    ],
)
def test_masi_distance_by_hand(a, b, distance):
    assert masi_distance(a, b) == pytest.approx(distance)
    assert masi_distance(b, a) == pytest.approx(distance)


def test_masi_matrix_equals_masi_distance_on_every_pair():
    """Bit for bit: a release's figures (and so its bytes) must not depend on which of the two computed them."""
    rng = np.random.default_rng(3)
    names = [f"P{i}" for i in range(12)]
    domain = [(), ("P0",), ("P0", "P1"), ("P1", "P0", "P2")]
    domain += [tuple(rng.choice(names, size=rng.integers(1, 5), replace=False)) for _ in range(150)]
    fast = masi_matrix(domain)
    slow = np.array(
        [[0.0 if i == j else masi_distance(a, b) for j, b in enumerate(domain)] for i, a in enumerate(domain)]
    )
    assert fast.shape == slow.shape and np.array_equal(fast, slow)
    assert fast[0, 1] == 1.0 and fast[1, 2] == 1.0 - 0.5 * (2 / 3) and fast[0, 0] == 0.0


def test_pairable_counts_equal_a_dense_count_over_the_whole_domain():
    """The coincidences kept over the values present equal those counted over the whole domain, then cut."""
    rng = np.random.default_rng(5)
    n_values = 40
    codes = rng.integers(-1, n_values, size=(4, 300))
    codes[:, rng.random(300) < 0.2] = -1
    data = pairable(codes, n_values)
    dense = np.zeros((n_values, n_values))
    for u in range(codes.shape[1]):
        values = codes[:, u][codes[:, u] >= 0]
        for i in range(len(values)):
            for j in range(len(values)):
                if i != j:
                    dense[values[i], values[j]] += 1 / (len(values) - 1)
    present = np.flatnonzero(dense.sum(axis=0) > 0)
    assert np.array_equal(data.present, present)
    assert np.allclose(data.o, dense[np.ix_(present, present)], atol=1e-12)
    # Mirrored cell by cell: exactly symmetric, and the cells it names are exactly the non-zero ones.
    assert np.array_equal(data.o, data.o.T)
    for found, expected in zip(data.nonzero(), np.nonzero(data.o)):
        assert np.array_equal(found, expected)


def test_masi_alpha_of_a_hand_computed_case():
    # Two coders, three units: {M}/{M}, {M}/{M,T}, {T}/{T}.
    # o: ({M},{M}) = 2, ({M},{M,T}) = ({M,T},{M}) = 1, ({T},{T}) = 2; n = 6; n_M = 3, n_MT = 1, n_T = 2.
    # D_o = 2 * (2/3) / 6 = 2/9; D_e = 2 * (3*1*(2/3) + 3*2*1 + 1*2*(2/3)) / (6*5) = 28/45; alpha = 1 - 5/14.
    domain = [("Maya",), ("Maya", "Tobias"), ("Tobias",)]
    codes = np.array([[0, 0, 2], [0, 1, 2]])
    data = pairable(codes, 3)
    result = compute_alpha(data, distance_matrix("masi", domain))
    assert result.alpha == pytest.approx(9 / 14)
    assert library_alpha(codes, domain, "masi") == pytest.approx(9 / 14)


def test_masi_alpha_through_the_pipeline_for_support_targets(project):
    a, b = annotators("masi", 2)

    def rows(*targets):
        return [therapist_content(target=t, strategy="track") for t in targets]

    make_clip(
        project,
        "masi/001",
        {a: rows(("Maya",), ("Maya",), ("Tobias",)), b: rows(("Maya",), ("Maya", "Tobias"), ("Tobias",))},
        speakers=["Therapist"] * 3,
        state=SUBMITTED,
    )
    report = compute_project_report(project)
    measures = next(s for s in report["slices"] if s["key"] == "all/all")["measures"]
    assert measures["support_target_masi"]["humans"]["alpha"] == pytest.approx(9 / 14, abs=1e-6)
    assert measures["target_masi"]["humans"]["alpha"] == pytest.approx(9 / 14, abs=1e-6)
    # Nominal on the same sets: {M} vs {M,T} is a plain disagreement.
    assert measures["support_target"]["humans"]["alpha"] < measures["support_target_masi"]["humans"]["alpha"]


def test_masi_equals_nominal_when_sets_never_overlap_partly():
    # Singletons only: MASI distance is 0 or 1, exactly the nominal distance.
    rng = np.random.default_rng(3)
    codes = rng.integers(0, 4, size=(3, 200))
    codes[rng.random(codes.shape) < 0.1] = -1
    domain = [("Ada",), ("Ben",), ("Chidi",), ("Dora",)]
    assert library_alpha(codes, domain, "masi") == pytest.approx(library_alpha(codes, domain, "nominal"))
    assert library_alpha(codes, domain, "nominal") == pytest.approx(
        krippendorff.alpha(np.where(codes >= 0, codes, np.nan), level_of_measurement="nominal")
    )


@pytest.mark.django_db
def test_every_figure_of_a_synthetic_project_equals_the_package_on_the_same_matrix(project):
    generate(project, clips=8, annotators=3, seed=5)
    ex = extract(scope_clips(project))
    computer = _Computer(ex, resamples=1000, seed=0)
    available = _availability(ex, Slice("all", "all"))
    humans, everyone, pairs = _coder_sets(ex, available)
    compared = 0
    for measure in MEASURES:
        for coders in [humans, everyone, *map(list, pairs)]:
            _fig, result = computer.figure(measure, available, coders)
            if result.alpha is None:
                continue
            codes = computer.matrix(measure, available, coders)
            expected = library_alpha(codes, ex.values[measure.source].domain, measure.level)
            assert result.alpha == pytest.approx(expected, abs=1e-9), (measure.key, coders)
            compared += 1
    assert compared == len(MEASURES) * (2 + len(pairs))
