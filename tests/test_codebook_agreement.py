"""The agreement report's confused label pairs and its LLM-vs-human figures per draft modality,
each checked against a count made here from the values themselves (and the krippendorff package),
then as the page, the API and the command show them."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from itertools import permutations

import krippendorff
import numpy as np
import pytest
from django.core.management import call_command
from django.urls import reverse

from annotation.agreement.report import CONFUSED_PAIRS, compute_project_report
from annotation.codebook.services import write_guidance

from .builders.agreement import report_slice
from .builders.codebook import TRANSCRIPT_CLIP, VIDEO_CLIP, A, R, build

pytestmark = pytest.mark.django_db


# Utterance types of three coders on two clips of client rows, and the LLM draft's.
def independent_pairs(units: list[list[str]]) -> dict[frozenset, tuple[float, int]]:
    """{pair of labels: (o[c,k] + o[k,c], rows with both)} counted by hand from each unit's values."""
    weight, rows = defaultdict(float), Counter()
    for values in units:
        m = len(values)
        for i, j in permutations(range(m), 2):
            if values[i] != values[j]:
                weight[frozenset((values[i], values[j]))] += 1 / (m - 1)
        for pair in {frozenset((a, b)) for a in values for b in values if a != b}:
            rows[pair] += 1
    return {pair: (w, rows[pair]) for pair, w in weight.items()}


def test_confused_pairs_equal_a_hand_count_of_the_coincidences(project):
    build(project)
    report = compute_project_report(project)
    pairs = report_slice(report)["measures"]["utterance_type"]["confused_pairs"]
    units = [list(col) for spec in (TRANSCRIPT_CLIP, VIDEO_CLIP) for col in zip(*spec["coders"])]
    expected = independent_pairs(units)
    total = sum(w for w, _ in expected.values())
    ranked = sorted(expected.items(), key=lambda kv: (-round(kv[1][0], 9), *sorted(kv[0])))
    assert len(pairs) == min(CONFUSED_PAIRS, len(expected))
    left_out = report_slice(report)["measures"]["utterance_type"]["confused_pairs_left_out"]
    assert left_out["pairs"] == max(0, len(expected) - CONFUSED_PAIRS)  # counted, never cut unsaid
    assert left_out["share"] == pytest.approx(sum(w for _, (w, _) in ranked[CONFUSED_PAIRS:]) / total, abs=1e-6)
    for got, (pair, (weight, rows)) in zip(pairs, ranked):
        assert frozenset(got["values"]) == pair
        assert got["coincidences"] == pytest.approx(weight, abs=1e-3)
        assert got["share"] == pytest.approx(weight / total, abs=1e-6)
        assert got["rows"] == rows
    # The pair the three coders split on most: accusation and request.
    assert set(pairs[0]["values"]) == {A, R} and pairs[0]["rows"] == 5


def test_llm_figures_per_draft_modality_equal_the_package_on_those_rows_alone(project):
    build(project)
    report = compute_project_report(project)
    groups = report_slice(report)["llm_by_modality"]
    assert [(g["modality"], g["label"], g["rows"]) for g in groups] == [
        ("video", "video with audio", 4),
        ("transcript", "transcript only", 6),
    ]
    for group, spec in zip(groups, (VIDEO_CLIP, TRANSCRIPT_CLIP)):
        item = group["measures"]["utterance_type"]
        table = [*spec["coders"], spec["draft"]]
        labels = sorted({v for row in table for v in row})
        matrix = np.array([[labels.index(v) for v in row] for row in table], dtype=float)
        assert item["with_llm"]["alpha"] == pytest.approx(
            krippendorff.alpha(matrix, level_of_measurement="nominal"), abs=1e-6
        )
        for pair in item["llm_pairs"]:
            coder = next(
                i for i, name in enumerate(report["coders"]) if name in pair["pair"] and name != report["llm_coder"]
            )
            two = matrix[[coder, 3]]
            if len(np.unique(two)) > 1:
                assert pair["alpha"] == pytest.approx(krippendorff.alpha(two, level_of_measurement="nominal"), abs=1e-6)
        changed = sum(c != d for row in spec["coders"] for c, d in zip(row, spec["draft"]))
        assert item["changed_from_draft"]["share"] == pytest.approx(changed / (3 * len(spec["draft"])))
    # Every modality's rows together are the slice's LLM figure.
    assert sum(g["rows"] for g in groups) == report_slice(report)["rows"]


def test_page_lists_confused_pairs_with_guidance_links_and_the_modality_table(client, lead, project):
    build(project)
    write_guidance(
        project, lead, field="utterance_type", labels=[R, A], text="Asks, or blames?", why="the coders split"
    )
    client.force_login(lead)
    call_command(
        "agreement", "--project", project.slug, stdout=open("/dev/null", "w")
    )  # stores the report the page shows
    page = client.get(reverse("agreement-dashboard", args=[project.slug])).content.decode()
    assert 'id="confused-pairs"' in page and "Labels coders confuse most" in page
    assert "accusation ↔ request" in page
    # The pair that has guidance links to it for editing; the others to write some, prefilled.
    assert 'edit the guidance</a> <span class="muted small">(version 1)</span>' in page
    link = (
        reverse("codebook-guidance", args=[project.slug])
        + "?field=utterance_type&amp;scenario=&amp;labels=accusation&amp;labels=disclosure"
    )
    assert link in page
    assert (
        'id="llm-by-modality"' in page
        and "transcript only</b>: 6 rows" in page
        and "video with audio</b>: 4 rows" in page
    )
    prefilled = client.get(
        reverse("codebook-guidance", args=[project.slug])
        + "?field=utterance_type&scenario=&labels=accusation&labels=request"
    ).content.decode()
    assert (
        "Asks, or blames?</textarea>" in prefilled
        and "This rewrites the guidance for <b>accusation vs request</b>" in prefilled
    )


def test_api_and_command_json_carry_the_pairs_and_the_modality_slices(client, lead, project, tmp_path, capsys):
    build(project)
    client.force_login(lead)
    body = client.get(f"/api/v1/projects/{project.slug}/agreement/").json()
    entry = report_slice(body["report"])
    assert entry["measures"]["utterance_type"]["confused_pairs"][0]["rows"] == 5
    assert [g["modality"] for g in entry["llm_by_modality"]] == ["video", "transcript"]
    out = tmp_path / "a.json"
    call_command("agreement", "--project", project.slug, "--json", str(out))
    text = capsys.readouterr().out
    assert "Labels coders confuse most:" in text and "utterance_type: accusation <-> request (5 rows" in text
    assert "LLM draft by modality (video with audio: 4 rows; transcript only: 6 rows)" in text
    saved = json.loads(out.read_text())
    assert report_slice(saved)["llm_by_modality"] == entry["llm_by_modality"]
