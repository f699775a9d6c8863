"""The draft-quality report on the real sample: its gold against drafts the fake Gemini made with known faults.

The 14 real clips are drafted through the whole pipeline (the real SDK against
the fake server), one with a video, one with an audio file, the rest from the
transcript only. The fake model answers with the gold itself, spoiled in two
deliberate ways: it invents a facial expression for the speaker of every
client row that has none when it has only the transcript, and it leaves out
the strategies of the therapist turns on odd-numbered cues. The gold is then
attached to the same rows. The expected figures are computed here directly
from the sample file and those two faults, without the report's code.
"""

from __future__ import annotations

import io
import json
from collections import Counter

import pytest
from django.core.management import call_command
from django.urls import reverse

from annotation.preannotate.quality import draft_quality

from .builders.drafts import drops_strategies, invents_face, modality_of


def expected_figures(clips: list[dict]) -> dict:
    """Per modality and all together: {field: (rows, agreeing, drafted, deleted, human, missed)} for the
    two spoiled fields, counted straight from the sample."""
    out: dict[str, dict] = {}
    for clip in clips:
        modality = modality_of(clip["sample_id"])
        for key in (modality, "all"):
            figures = out.setdefault(key, {"facial_expressions": Counter(), "support_strategy": Counter(), "rows": 0})
            for row in clip["rows"]:
                figures["rows"] += 1
                faces = figures["facial_expressions"]
                gold_faces = len(row["facial_expressions"])
                invented = invents_face(row, modality)
                faces.update(
                    rows=1, agreeing=not invented, drafted=gold_faces + invented, deleted=invented, human=gold_faces
                )
                if row["primary_speaker"] == "Therapist":
                    strategies = figures["support_strategy"]
                    gold_strategies = len(row["support_strategy"])
                    dropped = gold_strategies if drops_strategies(row) else 0
                    strategies.update(
                        rows=1,
                        agreeing=dropped == 0,
                        drafted=gold_strategies - dropped,
                        human=gold_strategies,
                        missed=dropped,
                    )
    return out


@pytest.mark.django_db
def test_the_report_finds_the_invented_faces_and_the_missing_strategies_and_nothing_else(drafted_sample, project):
    report = draft_quality(project)
    expected = expected_figures(drafted_sample)
    assert report["compared_with"] == {"gold": 406, "reviewed_revisions": 0} and report["drafted_rows"] == 406
    groups = {group["modality"]: group for group in report["modalities"]}
    assert list(groups) == ["video", "audio", "transcript", "all"]
    for modality, group in groups.items():
        assert group["rows"] == group["comparisons"] == expected[modality]["rows"]
        fields = {f["field"]: f for f in group["fields"]}
        for name in ("facial_expressions", "support_strategy"):
            want = expected[modality][name]
            got = fields[name]
            assert (got["rows"], got["agreeing_rows"], got["drafted"], got["deleted"], got["human"], got["missed"]) == (
                want["rows"],
                want["agreeing"],
                want["drafted"],
                want["deleted"],
                want["human"],
                want["missed"],
            ), (modality, name)
            assert got["agreement"] == want["agreeing"] / want["rows"]
            assert got["deleted_share"] == (want["deleted"] / want["drafted"] if want["drafted"] else None)
            assert got["missed_share"] == (want["missed"] / want["human"] if want["human"] else None)
        for f in group["fields"]:
            if f["field"] not in ("facial_expressions", "support_strategy"):
                assert (f["agreement"], f["deleted"], f["missed"]) == (1.0, 0, 0), (modality, f["field"])
    # The faults show where they were made: invented faces only without a picture, strategies missing everywhere.
    faces = {m: next(f for f in g_["fields"] if f["field"] == "facial_expressions") for m, g_ in groups.items()}
    assert faces["video"]["deleted"] == faces["audio"]["deleted"] == 0 < faces["transcript"]["deleted"]
    assert all(
        next(f for f in g_["fields"] if f["field"] == "support_strategy")["missed"] > 0 for g_ in groups.values()
    )
    # The relation pattern's three states came through the drafts: "" rows agree as "" rows.
    relation = next(f for f in groups["all"]["fields"] if f["field"] == "relation_pattern")
    labelled = sum(
        1
        for clip in drafted_sample
        for r in clip["rows"]
        if r.get("relation_cycle_state" if r["primary_speaker"] == "Therapist" else "relation_pattern") is not None
    )
    assert relation["human"] == relation["drafted"] == labelled

    out = io.StringIO()
    call_command("draft_quality", "--project", project.slug, "--json", stdout=out)
    assert json.loads(out.getvalue()) == json.loads(json.dumps(report))
    out = io.StringIO()
    call_command("draft_quality", "--project", project.slug, stdout=out)
    text = out.getvalue()
    assert "transcript only: 12 clips" in text and "compared with gold 406 times" in text


@pytest.mark.django_db
def test_the_pre_annotation_page_shows_the_report_per_modality(drafted_sample, project, lead, client):
    expected = expected_figures(drafted_sample)
    client.force_login(lead)
    page = client.get(reverse("preannotate-batch", args=[project.slug])).content.decode()
    section = page[page.index('id="draft-quality"') :]
    table = section[section.index('<table class="list" data-modality="transcript">') :]
    row = table[table.index('<tr data-field="facial_expressions">') :]
    row = row[: row.index("</tr>")]
    faces = expected["transcript"]["facial_expressions"]
    agree = round(100 * faces["agreeing"] / faces["rows"])
    deleted = round(100 * faces["deleted"] / faces["drafted"])
    assert f'<td data-figure="agreement">{agree}%</td>' in row
    assert f'<td data-figure="deleted">{faces["deleted"]} <span class="muted">({deleted}%)</span></td>' in row
    assert "drafted from" not in section and "Audio only" in section and "Video with audio" in section
    assert "couple-v2 · transcript only" in page  # each clip says what its drafts were made from
