"""The 14 real transcripts of ../shared/data/transcripts ingest into clips that
match the released rows of the same clips (read from ../shared, never copied)."""

from __future__ import annotations

import json

import pytest

from annotation.ingest.services import IngestOptions, Upload, ingest_files
from annotation.ingest.speakers import mapped_cues
from annotation.models import Clip

from .conftest import SAMPLE, TRANSCRIPTS, require

pytestmark = pytest.mark.django_db


@pytest.fixture
def released():
    require(SAMPLE.is_file() and TRANSCRIPTS.is_dir(), f"real data not found under {SAMPLE.parent}")
    with SAMPLE.open(encoding="utf-8") as fh:
        return {clip["sample_id"]: clip for clip in map(json.loads, fh)}


def _uploads():
    files = sorted(p for p in TRANSCRIPTS.rglob("*") if p.suffix in (".srt", ".vtt"))
    return [Upload(name=p.relative_to(TRANSCRIPTS).as_posix(), size=p.stat().st_size, read=p.read_bytes) for p in files]


def test_all_fourteen_transcripts_ingest_with_the_released_cues_speakers_and_times(project, released):
    results = ingest_files(project, _uploads(), IngestOptions("couple", speaker_map={}))
    assert len(results) == 14 and {r.status for r in results} == {"created"}, [r.message for r in results]
    assert {r.sample_id for r in results} == set(released)
    for result in results:
        clip = Clip.objects.get(pk=result.clip_id)
        rows = released[clip.sample_id]["rows"]
        cues = mapped_cues(clip)  # the speaker map was confirmed: every label matched a name
        assert len(cues) == len(rows), clip.sample_id
        assert [(c["start"], c["end"]) for c in cues] == [(r["start_time"], r["end_time"]) for r in rows], (
            clip.sample_id
        )
        assert [c["speaker"] for c in cues] == [r["primary_speaker"] for r in rows], clip.sample_id
        assert [c["text"] for c in cues] == [r["dialogue_cleaned"] for r in rows], clip.sample_id
        assert sorted(clip.participants) == sorted(released[clip.sample_id]["participants"])
        assert clip.duration == rows[-1]["end_time"]


def test_reingesting_the_folder_changes_nothing(project, released):
    ingest_files(project, _uploads(), IngestOptions("couple"))
    again = ingest_files(project, _uploads(), IngestOptions("couple"))
    assert {r.status for r in again} == {"unchanged"} and Clip.objects.count() == 14
