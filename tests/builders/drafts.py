"""The real sample drafted through the whole pipeline by a fake model with two known faults (see test_draft_quality)."""

from __future__ import annotations

import json
import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from annotation.preannotate.response_schema import wire_row
from annotation.rescue_format.importer import import_rescue

from ..fakes import gemini_server as g

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
                answer["facial_expressions"] = [
                    *answer["facial_expressions"],
                    {"person": gold["primary_speaker"], **INVENTED},
                ]
            if drops_strategies(gold):
                answer["support_strategy"] = []
            rows.append(answer)
        return {"rows": rows}

    return respond


@pytest.fixture
def drafted_sample(fake, project, preannotate, sample_path):
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
