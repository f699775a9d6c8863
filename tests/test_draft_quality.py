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
import re
from collections import Counter

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.urls import reverse

from annotation.preannotate.quality import draft_quality
from annotation.preannotate.response_schema import wire_row
from annotation.rescue_format.importer import import_rescue

from .fakes import gemini_server as g
from .test_preannotate import fake, preannotate  # noqa: F401 (fixtures)

VIDEO_CLIP = "alan_and_evelyn/001_s01e01_ct25_segment04"
AUDIO_CLIP = "alexes_and_casimar/001_s03e04_ct09_segment07"
INVENTED = {"description": "frowns at the floor"}


def read_sample(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def modality_of(sample_id: str) -> str:
    return {VIDEO_CLIP: "video", AUDIO_CLIP: "audio"}.get(sample_id, "transcript")


def invents_face(row: dict, modality: str) -> bool:
    speaker = row["primary_speaker"]
    own = [e for e in row["facial_expressions"] if e["person"] == speaker]
    return modality == "transcript" and speaker != "Therapist" and not own


def drops_strategies(row: dict) -> bool:
    return row["primary_speaker"] == "Therapist" and row["row_index"] % 2 == 1


def faulty_model(clips: list[dict]):
    """A responder answering each cue with its gold row (the sample has one cue per row), spoiled as above."""
    by_cue = {}
    for clip in clips:
        for row in clip["rows"]:
            by_cue[(round(row["start_time"], 2), round(row["end_time"], 2), row["primary_speaker"])] = row
    modalities = {"video with audio": "video", "audio only": "audio", "transcript only": "transcript"}

    def respond(body, prompt):
        modality = modalities[re.search(r"^Modality: ([a-z ]+)\.", prompt, re.MULTILINE)[1]]
        rows = []
        for cue in g.parse_transcript(prompt)[1]:
            gold = by_cue[(cue.start, cue.end, cue.speaker)]
            answer = wire_row(gold, lambda n: f"c{n}")  # one cue per row: row n is cue n
            if invents_face(gold, modality):
                answer["facial_expressions"] = [*answer["facial_expressions"], {"person": gold["primary_speaker"], **INVENTED}]
            if drops_strategies(gold):
                answer["support_strategy"] = []
            rows.append(answer)
        return {"rows": rows}

    return respond


@pytest.fixture
def drafted_sample(fake, project, preannotate, sample_path):  # noqa: F811
    """The sample drafted by the faulty model, with its gold attached to the drafted rows."""
    clips = read_sample(sample_path)
    import_rescue(sample_path, project, as_source="draft")  # clips, rows and cues as the release has them
    video = project.clips.get(sample_id=VIDEO_CLIP)
    video.media = SimpleUploadedFile("session.mp4", b"\0" * 1024)
    video.save()
    audio = project.clips.get(sample_id=AUDIO_CLIP)
    audio.media = SimpleUploadedFile("session.m4a", b"\0" * 1024)
    audio.save()
    fake.responder = faulty_model(clips)
    batch = preannotate(force=True)
    assert batch.state == "succeeded", batch.error
    import_rescue(sample_path, project, as_source="gold")  # the same rows: attached, not created
    return clips


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
                faces.update(rows=1, agreeing=not invented, drafted=gold_faces + invented, deleted=invented, human=gold_faces)
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
    assert all(next(f for f in g_["fields"] if f["field"] == "support_strategy")["missed"] > 0 for g_ in groups.values())
    # The relation pattern's three states came through the drafts: "" rows agree as "" rows.
    relation = next(f for f in groups["all"]["fields"] if f["field"] == "relation_pattern")
    labelled = sum(
        1 for clip in drafted_sample for r in clip["rows"]
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
