"""``manage.py agreement``: a readable table, the full report as JSON, clear errors."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from annotation.models import AgreementReport

from .test_agreement_builders import coded_client_content, reliability_project
from .test_agreement_reference import EXAMPLE_C

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
    line = next(l for l in text.splitlines() if l.startswith("utterance_type "))
    assert "0.743" in line and " 11 " in line and " 40 " in line
    assert next(l for l in text.splitlines() if l.startswith("emotion_intensity ")).split()[2] == "0.849"
    assert (
        "== calibration assignments, all scenarios: no coded work yet: no submitted work in calibration (from-empty) "
        "assignments in this scope" in text
    )
    report = json.loads(target.read_text(encoding="utf-8"))
    assert report["parameters"] == {"resamples": 1000, "seed": 4, "confidence": 0.95, "thresholds": [0.8, 0.667]}
    assert AgreementReport.objects.filter(project=project).count() == 1  # the dashboard can serve it


def test_scenario_and_clips_narrow_the_scope(project):
    reliability_project(project, EXAMPLE_C, coded_client_content)
    text = run("--project", project.slug, "--clips", "reference/002,reference/003", "--scenario", "couple")
    assert "(2 clips, 9 rows, 35 revisions;" in text


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
    ],
)
def test_bad_arguments_are_refused_with_a_message(project, args, message):
    with pytest.raises(CommandError, match=message):
        run(*args)
