"""``manage.py agreement``: a readable table, the full report as JSON, clear errors."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from annotation.models import AgreementReport, AssignmentState, Revision, RevisionStatus

from .builders.agreement import EXAMPLE_C, annotators, coded_client_content, make_clip, reliability_project

pytestmark = pytest.mark.django_db


def run(*args) -> str:
    out = io.StringIO()
    call_command("agreement", *args, stdout=out)
    return out.getvalue()


def test_prints_a_table_per_slice_and_writes_the_json_report(project, tmp_path):
    reliability_project(project, EXAMPLE_C, coded_client_content)
    target = tmp_path / "out" / "agreement.json"
    text = run("--project", project.slug, "--json", str(target), "--seed", "4")
    assert "Scope: submitted work (submitted)." in text
    assert (
        "== all assignments, all scenarios (5 clips, 12 rows, 41 revisions; annotators: coder1, coder2, coder3, coder4)"
        in text
    )
    line = next(text_line for text_line in text.splitlines() if text_line.startswith("utterance_type "))
    assert "0.743" in line and " 11 " in line and " 40 " in line
    assert (
        next(text_line for text_line in text.splitlines() if text_line.startswith("emotion_intensity ")).split()[2]
        == "0.849"
    )
    assert (
        "== calibration assignments, all scenarios: no coded work yet: no submitted work in calibration (from-empty) "
        "assignments in this scope" in text
    )
    report = json.loads(target.read_text(encoding="utf-8"))
    assert report["parameters"] == {"resamples": 1000, "seed": 4, "confidence": 0.95, "thresholds": [0.8, 0.667]}
    # The dashboard can serve both: the label figures, and the free-text figures (written under "semantic").
    stored = sorted(r.scope.get("measure", "labels") for r in AgreementReport.objects.filter(project=project))
    assert stored == ["labels", "semantic"]
    assert report["semantic"]["model"]["model"] == "sentence-transformers/all-MiniLM-L6-v2"
    assert "Free text: semantic agreement (model sentence-transformers/all-MiniLM-L6-v2" in text


def test_scenario_and_clips_narrow_the_scope(project):
    reliability_project(project, EXAMPLE_C, coded_client_content)
    text = run("--project", project.slug, "--clips", "reference/002,reference/003", "--scenario", "couple")
    assert "(2 clips, 9 rows, 35 revisions;" in text


def test_scope_reviewed_adds_rows_marked_reviewed_in_open_assignments(project):
    a, b = annotators("cmd", 2)
    contents = {user: [coded_client_content(v) for v in (0, 1, 2, 3)] for user in (a, b)}
    make_clip(project, "cmd/001", contents, state=AssignmentState.IN_PROGRESS)
    Revision.objects.filter(row__row_index__lte=3).update(status=RevisionStatus.REVIEWED)
    default = run("--project", project.slug)
    assert "Scope: submitted work (submitted)." in default
    assert "Left out: 8 revisions left out (8 not submitted)." in default
    assert "No figures: no coded work yet: no submitted work in this scope; 8 revisions left out" in default
    reviewed = run("--project", project.slug, "--scope", "reviewed")
    assert "Scope: submitted work and rows marked reviewed (reviewed)." in reviewed
    assert "== all assignments, all scenarios (1 clips, 3 rows, 6 revisions; annotators: cmd1, cmd2); " in reviewed
    assert "2 revisions left out (2 not reviewed)" in reviewed
    assert next(line for line in reviewed.splitlines() if line.startswith("utterance_type ")).split()[2] == "1.000"


def test_undefined_fields_are_listed_with_their_reason(project):
    reliability_project(project, [[0] * 4, [0] * 4], coded_client_content)
    text = run("--project", project.slug)
    assert "utterance_type: undefined: all 8 pairable values are 'disclosure'" in text


@pytest.mark.parametrize(
    "args, message",
    [
        (["--project", "nope"], "no project 'nope'"),
        (["--project", "bench", "--clips", "missing/001"], "no clip missing/001"),
        (["--project", "bench", "--resamples", "50"], "resamples must be"),
        (["--project", "bench", "--seed", "-2"], "--seed must be 0 or more"),
        (["--project", "bench", "--scope", "everything"], "invalid choice: 'everything'"),
    ],
)
def test_bad_arguments_are_refused_with_a_message(project, args, message):
    with pytest.raises(CommandError, match=message):
        run(*args)
