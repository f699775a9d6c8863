"""Agreement against published reference values, through the whole pipeline:
revisions in the database -> extraction -> report.

Reference data: Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability"
(Annenberg School for Communication, departmental papers 43): example A (two
observers, binary data, alpha = 0.095) and example C (four observers, five
values, missing data: nominal 0.743, ordinal 0.815, interval 0.849, ratio 0.797).
"""

from __future__ import annotations

import json

import krippendorff
import numpy as np
import pytest

from annotation.agreement.extract import extract, scope_clips
from annotation.agreement.report import compute_project_report
from annotation.models import AssignmentMode

from .builders.agreement import (
    EXAMPLE_C,
    SUBMITTED,
    UTTERANCE_LABELS,
    annotators,
    client_content,
    coded_client_content,
    make_clip,
    reliability_project,
    report_slice,
    therapist_content,
)

pytestmark = pytest.mark.django_db

EXAMPLE_A = [
    [0, 1, 0, 0, 0, 0, 0, 0, 1, 0],
    [1, 1, 1, 0, 0, 1, 0, 0, 0, 0],
]


def overall(report: dict, measure: str, coders: str = "humans") -> dict:
    return report_slice(report)["measures"][measure][coders]


def test_example_a_two_coders_binary_gives_0_095(project):
    reliability_project(project, EXAMPLE_A, lambda v: client_content(utterance_type=UTTERANCE_LABELS[v]))
    fig = overall(compute_project_report(project), "utterance_type")
    assert fig["alpha"] == pytest.approx(0.095, abs=5e-4)
    assert (fig["units"], fig["coders"], fig["pairable_values"]) == (10, 2, 20)
    assert fig["observed_agreement"] == pytest.approx(0.6)  # 6 of 10 units agree


def test_example_c_with_missing_values_nominal_and_interval(project):
    reliability_project(project, EXAMPLE_C, coded_client_content)
    report = compute_project_report(project)
    nominal, interval = overall(report, "utterance_type"), overall(report, "emotion_intensity")
    assert nominal["alpha"] == pytest.approx(0.743, abs=5e-4)
    assert interval["alpha"] == pytest.approx(0.849, abs=5e-4)
    # Unit 12 has one value only: 11 pairable units, 40 pairable values, 4 coders.
    assert (nominal["units"], nominal["pairable_values"], nominal["coders"]) == (11, 40, 4)
    assert (interval["units"], interval["pairable_values"]) == (11, 40)


def test_example_c_extracted_matrix_gives_ordinal_and_ratio_through_the_package(project):
    reliability_project(project, EXAMPLE_C, coded_client_content)
    ex = extract(scope_clips(project))
    values = ex.values["emotion_intensity"]
    matrix = np.where(values.codes >= 0, np.asarray(values.domain, dtype=float)[np.maximum(values.codes, 0)], np.nan)
    humans = matrix[ex.humans]
    expected = np.array([[np.nan if v is None else v for v in row] for row in EXAMPLE_C])
    np.testing.assert_array_equal(humans, expected)  # the extraction gives back the published table
    assert krippendorff.alpha(humans, level_of_measurement="ordinal") == pytest.approx(0.815, abs=5e-4)
    assert krippendorff.alpha(humans, level_of_measurement="ratio") == pytest.approx(0.797, abs=5e-4)


def test_identical_coders_give_alpha_one_with_a_degenerate_interval(project):
    table = [[0, 1, 2, 3, 1, 0], [0, 1, 2, 3, 1, 0], [0, 1, 2, 3, 1, 0]]
    reliability_project(project, table, coded_client_content)
    report = compute_project_report(project)
    for measure in ("utterance_type", "emotion_intensity"):
        fig = overall(report, measure)
        assert fig["alpha"] == 1.0
        assert fig["ci95"] == [1.0, 1.0]
        assert fig["p_alpha_below_0_800"] == 0.0 and fig["observed_agreement"] == 1.0


def test_one_value_everywhere_is_undefined_with_the_reason_not_a_number(project):
    reliability_project(project, [[0] * 5, [0] * 5], lambda v: client_content(utterance_type="disclosure"))
    report = compute_project_report(project)
    fig = overall(report, "utterance_type")
    assert fig["alpha"] is None and fig["defined"] is False
    assert "'disclosure'" in fig["undefined_reason"] and "undefined" in fig["undefined_reason"]
    assert fig["ci95"] is None and fig["p_alpha_below_0_667"] is None
    assert fig["observed_agreement"] == 1.0 and fig["majority_share"] == 1.0
    json.dumps(report)  # still a complete, serialisable report


def test_a_measure_nobody_can_compare_is_undefined(project):
    # A single annotator: no unit has two values.
    (solo,) = annotators("solo", 1)
    make_clip(
        project, "solo/001", {solo: [client_content(), client_content(utterance_type="defense")]}, state=SUBMITTED
    )
    fig = overall(compute_project_report(project), "utterance_type")
    assert fig["alpha"] is None and "two or more coders" in fig["undefined_reason"]


def test_relation_pattern_null_is_missing_and_blank_is_a_value(project):
    a, b = annotators("rel", 2)
    contents = {
        a: [
            client_content(relation_pattern="pursue_withdraw"),
            client_content(relation_pattern=""),
            client_content(relation_pattern=None),
            client_content(relation_pattern=""),
        ],
        b: [
            client_content(relation_pattern="pursue_withdraw"),
            client_content(relation_pattern=""),
            client_content(relation_pattern="attack_attack"),
            client_content(relation_pattern="attack_attack"),
        ],
    }
    make_clip(project, "rel/001", contents, state=SUBMITTED)
    fig = overall(compute_project_report(project), "relation_pattern")
    # Row 3 has one value (a's is null): 3 pairable units; "" counts as "(no clear pattern)".
    assert fig["units"] == 3 and fig["pairable_values"] == 6
    assert fig["observed_agreement"] == pytest.approx(2 / 3)


def test_whether_a_pattern_is_marked_is_a_measure_of_its_own_equal_to_the_package_on_a_hand_made_table(project):
    # Three coders, eight rows. A label or "" is "marked", an unset pattern (null) is "not marked": the rows
    # where one coder marked a pattern and the others left it unset count here, where the label's alpha drops them.
    # The report gives figures to six places.
    P, B, N = "pursue_withdraw", "", None
    table = [
        [P, P, N, B, N, P, N, "attack_attack"],
        [P, N, N, B, N, N, P, "attack_attack"],
        [P, N, B, N, N, P, N, P],
    ]
    coders = annotators("mark", 3)
    contents = {c: [client_content(relation_pattern=v) for v in row] for c, row in zip(coders, table)}
    make_clip(project, "mark/001", contents, state=SUBMITTED)
    report = compute_project_report(project)

    marked = np.array([[0.0 if v is None else 1.0 for v in row] for row in table])
    presence = overall(report, "relation_pattern_presence")
    assert presence["alpha"] == pytest.approx(krippendorff.alpha(marked, level_of_measurement="nominal"), abs=5e-7)
    assert (presence["units"], presence["pairable_values"]) == (8, 24)  # never missing: every coded row counts

    # The label's own alpha: null is missing, "" is a value; rows with fewer than two values drop out.
    codes = {P: 0.0, B: 1.0, "attack_attack": 2.0}
    labels = np.array([[np.nan if v is None else codes[v] for v in row] for row in table])
    label = overall(report, "relation_pattern")
    assert label["alpha"] == pytest.approx(krippendorff.alpha(labels, level_of_measurement="nominal"), abs=5e-7)
    assert label["units"] == sum(np.sum(~np.isnan(labels[:, u])) >= 2 for u in range(8)) == 4


def test_therapist_rows_read_the_relation_label_under_the_key_they_carry(project):
    a, b = annotators("cyc", 2)
    old_style = therapist_content(relation_cycle_state="pursue_withdraw")
    old_style.pop("relation_pattern", None)  # a release row carrying only the older key
    contents = {a: [old_style, therapist_content(strategy=None)], b: [old_style, therapist_content(strategy=None)]}
    make_clip(project, "cyc/001", contents, speakers=["Therapist", "Therapist"], state=SUBMITTED)
    report = compute_project_report(project)
    assert overall(report, "relation_pattern")["majority_value"] == "pursue_withdraw"
    strategies = overall(report, "strategy_type")
    # "no strategy" is a value: two units compared, both agree, values differ across units.
    assert (strategies["units"], strategies["alpha"]) == (2, 1.0)
    # Without a strategy there is no support target: only the first row is a unit.
    assert overall(report, "support_target")["units"] == 1


def test_only_revisions_of_assigned_annotators_count(project):
    a, b, c = annotators("asg", 3)
    contents = {
        a: [coded_client_content(0), coded_client_content(1)],
        b: [coded_client_content(0), coded_client_content(1)],
        c: [coded_client_content(2), coded_client_content(3)],
    }
    # c's revisions are left over from a reassignment.
    make_clip(project, "asg/001", contents, assigned=[a, b], state=SUBMITTED)
    report = compute_project_report(project)
    assert report["counts"]["revisions_left_out_unassigned"] == 2
    assert "asg3" not in report["coders"]
    assert overall(report, "utterance_type")["alpha"] == 1.0


def test_speaker_intensity_only_on_rows_where_every_coder_recorded_one(project):
    a, b, c = annotators("emo", 3)
    no_emotion = client_content(internal_emotion=[])
    other_person = client_content(
        internal_emotion=[{"person": "Tobias", "emotion_description": "tense", "intensity": 9}]
    )
    contents = {
        a: [coded_client_content(2), coded_client_content(3), coded_client_content(4)],
        b: [coded_client_content(2), no_emotion, coded_client_content(5)],
        c: [coded_client_content(3), coded_client_content(3), other_person],
    }
    make_clip(project, "emo/001", contents, state=SUBMITTED)
    fig = overall(compute_project_report(project), "emotion_intensity")
    assert fig["units"] == 1 and fig["pairable_values"] == 3  # row 1 only: b lacks row 2, c's row 3 is about Tobias


def test_llm_draft_is_one_more_coder_and_changes_are_counted(project):
    a, b = annotators("llm", 2)
    draft = [coded_client_content(v) for v in (0, 1, 2, 3)]
    contents = {a: [coded_client_content(v) for v in (0, 1, 2, 3)], b: [coded_client_content(v) for v in (0, 1, 2, 1)]}
    make_clip(project, "llm/001", contents, draft=draft, state=SUBMITTED)
    report = compute_project_report(project)
    assert report["llm_coder"] == "LLM draft" and report["coders"] == ["llm1", "llm2", "LLM draft"]
    item = next(s for s in report["slices"] if s["key"] == "all/all")["measures"]["utterance_type"]
    assert item["with_llm"]["coders"] == 3 and item["with_llm"]["units"] == 4
    pairs = {tuple(p["pair"]): p for p in item["pairs"]}
    assert set(pairs) == {("llm1", "llm2"), ("llm1", "LLM draft"), ("llm2", "LLM draft")}
    assert pairs[("llm1", "LLM draft")]["alpha"] == 1.0
    assert item["changed_from_draft"] == {"share": 0.125, "compared": 8, "by_annotator": {"llm1": 0.0, "llm2": 0.25}}
    rates = next(s for s in report["slices"] if s["key"] == "all/all")["edit_rates"]
    assert rates["llm2"]["any_field"] == 0.25 and rates["llm1"]["any_field"] == 0.0


def test_anchored_and_calibration_assignments_are_reported_apart(project):
    a, b = annotators("mode", 2)
    same = {a: [coded_client_content(v) for v in (0, 1, 2)], b: [coded_client_content(v) for v in (0, 1, 2)]}
    differ = {a: [coded_client_content(v) for v in (0, 1, 2)], b: [coded_client_content(v) for v in (1, 2, 0)]}
    make_clip(project, "mode/001", same, mode=AssignmentMode.FROM_DRAFT, state=SUBMITTED)
    make_clip(project, "mode/002", differ, mode=AssignmentMode.FROM_EMPTY, state=SUBMITTED)
    report = compute_project_report(project)
    by_key = {s["key"]: s for s in report["slices"]}
    assert by_key["anchored/all"]["measures"]["utterance_type"]["humans"]["alpha"] == 1.0
    assert by_key["calibration/all"]["measures"]["utterance_type"]["humans"]["alpha"] < 0
    assert by_key["all/all"]["measures"]["utterance_type"]["humans"]["units"] == 6
    assert report["counts"]["assignments"] == {"anchored": 2, "calibration": 2, "imported": 0}


def test_per_scenario_slices_and_an_empty_calibration_slice(project):
    a, b = annotators("scn", 2)
    make_clip(
        project,
        "scn/001",
        {a: [coded_client_content(0), coded_client_content(1)], b: [coded_client_content(0), coded_client_content(1)]},
        state=SUBMITTED,
    )
    family = {
        a: [coded_client_content(2, "Ada"), coded_client_content(3, "Ben")],
        b: [coded_client_content(3, "Ada"), coded_client_content(2, "Ben")],
    }
    make_clip(project, "fam/001", family, speakers=["Ada", "Ben"], scenario="family", state=SUBMITTED)
    report = compute_project_report(project)
    by_key = {s["key"]: s for s in report["slices"]}
    assert set(by_key) == {f"{m}/{s}" for m in ("all", "anchored", "calibration") for s in ("all", "couple", "family")}
    assert by_key["all/couple"]["measures"]["utterance_type"]["humans"]["alpha"] == 1.0
    assert by_key["all/family"]["measures"]["utterance_type"]["humans"]["units"] == 2
    assert by_key["calibration/all"]["empty"] is True and "calibration" in by_key["calibration/all"]["reason"]
    only_family = compute_project_report(project, scenario="family")
    assert only_family["scope"] == {"scenario": "family", "clips": None, "work": "submitted"}
    assert only_family["counts"]["clips"] == 1


def test_report_is_deterministic_and_names_its_method(project):
    reliability_project(project, EXAMPLE_C, coded_client_content)
    first = compute_project_report(project, resamples=1000, seed=7)
    second = compute_project_report(project, resamples=1000, seed=7)
    assert json.dumps(first, sort_keys=True) == json.dumps(second, sort_keys=True)
    assert "Hayes & Krippendorff 2007" in first["method"]["interval"]
    other_seed = compute_project_report(project, resamples=1000, seed=8)
    assert overall(other_seed, "utterance_type")["ci95"] != overall(first, "utterance_type")["ci95"]
    assert overall(other_seed, "utterance_type")["alpha"] == overall(first, "utterance_type")["alpha"]


def test_clip_scope_accepts_sample_ids_and_objects(project):
    reliability_project(project, EXAMPLE_C, coded_client_content)
    clips = list(project.clips.order_by("sample_id"))
    by_name = compute_project_report(project, clips=[c.sample_id for c in clips[1:2]])
    by_object = compute_project_report(project, clips=clips[1:2])
    assert by_name == by_object and by_name["counts"]["rows"] == 8
    with pytest.raises(ValueError, match="no clip nope/1"):
        compute_project_report(project, clips=["nope/1"])
    with pytest.raises(ValueError, match="resamples"):
        compute_project_report(project, resamples=10)


def test_a_project_without_revisions_gives_an_empty_report_not_an_error(project):
    make_clip(project, "draft-only/001", {}, draft=[coded_client_content(0), coded_client_content(1)])
    report = compute_project_report(project)
    assert report["summary"] == [] and report["coders"] == ["LLM draft"]
    assert all(s["empty"] for s in report["slices"])
    json.dumps(report)
    empty = compute_project_report(project, clips=[])
    assert empty["counts"]["rows"] == 0 and all(s["empty"] for s in empty["slices"])
