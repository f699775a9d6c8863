"""Our alpha equals the krippendorff package's, including MASI through its distance callable."""

from __future__ import annotations

import krippendorff
import numpy as np
import pytest

from annotation.agreement.alpha import compute_alpha, distance_matrix, library_alpha, masi_distance, pairable
from annotation.agreement.extract import extract, scope_clips
from annotation.agreement.fields import MEASURES
from annotation.agreement.report import Slice, _availability, _coder_sets, _Computer, build_report
from annotation.synthetic import generate

from .test_agreement_builders import SUBMITTED, annotators, make_clip, therapist_content


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
    rows = lambda *targets: [therapist_content(target=t, strategy="track") for t in targets]
    make_clip(
        project,
        "masi/001",
        {a: rows(("Maya",), ("Maya",), ("Tobias",)), b: rows(("Maya",), ("Maya", "Tobias"), ("Tobias",))},
        speakers=["Therapist"] * 3,
        state=SUBMITTED,
    )
    report = build_report(project)
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
