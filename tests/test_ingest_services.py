"""The ingest service: clips and cues from files, idempotency and replacement,
refusals that write nothing, and the speaker-mapping step."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from django.core.files.base import ContentFile

from annotation.ingest import services
from annotation.ingest.services import (
    IngestOptions,
    Upload,
    accept_suggested_speakers,
    confirm_speaker_map,
    ingest_files,
)
from annotation.ingest.speakers import SpeakerMapNotConfirmed, mapped_cues
from annotation.models import Clip, ClipState, Cue, Draft, Gold, Revision, Row
from annotation.schema import CLIP_KEYS
from annotation.services import ServiceError

pytestmark = pytest.mark.django_db
CORPUS = Path(__file__).resolve().parent / "ingest_corpus"


def corpus_upload(relative: str) -> Upload:
    path = CORPUS / relative
    return Upload(name=relative, size=path.stat().st_size, read=path.read_bytes)


def bytes_upload(name: str, raw: bytes) -> Upload:
    return Upload(name=name, size=len(raw), read=lambda: raw)


def ingest(project, *relatives, **options):
    options.setdefault("scenario", "couple")
    return ingest_files(project, [corpus_upload(r) for r in relatives], IngestOptions(**options))


def db_state():
    return (Clip.objects.count(), Cue.objects.count(), sorted(Clip.objects.values_list("content_hash", flat=True)))


SIMPLE = b"1\n00:00:00,000 --> 00:00:02,000\nMaya: Hello.\n\n2\n00:00:02,500 --> 00:00:04,000\nTherapist: Hi.\n"
CHANGED = SIMPLE.replace(b"Hello.", b"Hello again.")


# --- what a clip gets ---------------------------------------------------------


def test_ingest_creates_an_imported_clip_with_cues_metadata_and_report(project):
    [result] = ingest(project, "maya_and_tobias/001_clean.srt")
    assert (result.status, result.sample_id, result.cues) == ("created", "maya_and_tobias/001_clean", 4)
    clip = Clip.objects.get(pk=result.clip_id)
    raw = (CORPUS / "maya_and_tobias/001_clean.srt").read_bytes()
    assert clip.project == project and clip.state == ClipState.IMPORTED and clip.scenario == "couple"
    assert clip.participants == ["Maya", "Tobias"]  # the therapist's labels are not participants
    assert clip.source_file == "maya_and_tobias/001_clean.srt"
    assert clip.release_keys == list(CLIP_KEYS)
    assert clip.content_hash == hashlib.sha256(raw).hexdigest()
    assert clip.duration == 14.25
    assert list(clip.cues.values_list("position", "start_time", "end_time", "speaker", "text")) == [
        (1, 0.0, 3.2, "Dr. Weiss", "What brings you both in today?"),
        (2, 3.5, 7.9, "Maya", "He works every evening. I wait, and he doesn't notice."),
        (3, 8.1, 10.0, "Tobias", "That's not fair."),
        (4, 10.4, 14.25, "Dr. Weiss", "Tobias, what happens for you when Maya says that?"),
    ]
    report = clip.ingest_report
    assert report["format"] == "srt" and report["encoding"]["encoding"] == "UTF-8"
    assert report["speaker_tags"] == {"Dr. Weiss": 2, "Maya": 1, "Tobias": 1}
    assert clip.speaker_map == {"Dr. Weiss": "Therapist", "Maya": "Maya", "Tobias": "Tobias"}
    assert clip.speaker_map_confirmed is False
    assert not clip.rows.exists()  # rows are built by pre-annotation, not by ingest


@pytest.mark.parametrize(
    "relative, cues, fmt",
    [
        ("maya_and_tobias/002_messy.srt", 4, "srt"),
        ("maya_and_tobias/003_cp1252.srt", 3, "srt"),
        ("maya_and_tobias/004_utf16.srt", 2, "srt"),
        ("maya_and_tobias/005_utf16le_nobom.vtt", 2, "vtt"),
        ("maya_and_tobias/006_no_speakers.srt", 2, "srt"),
        ("maya_and_tobias/007_overlap.srt", 5, "srt"),
        ("maya_and_tobias/008_voices.vtt", 4, "vtt"),
        ("maya_and_tobias/009_labels.vtt", 3, "vtt"),
        ("maya_and_tobias/010_table.csv", 3, "csv"),
        ("maya_and_tobias/011_seconds.tsv", 3, "tsv"),
        ("maya_and_tobias/012_diarised.json", 4, "diarisation_json"),
        ("maya_and_tobias/013_rescue_clip.json", 3, "rescue_json"),
    ],
)
def test_every_corpus_file_becomes_a_clip(project, relative, cues, fmt):
    options = {"participants": ["Maya", "Tobias"]} if "no_speakers" in relative else {}
    [result] = ingest(project, relative, **options)
    assert result.status == "created", result.message
    clip = Clip.objects.get(pk=result.clip_id)
    assert clip.cues.count() == cues and clip.ingest_report["format"] == fmt


ROLLING_NOTE = (
    "rolling auto-captions: 5 cues, each repeating the line before it, collapsed into 3 lines (word timings "
    "kept in this report)"
)


def test_rolling_auto_captions_become_one_cue_per_spoken_line_with_word_timings_in_the_report(project):
    [result] = ingest(project, "rolling/001_auto_captions.vtt", participants=["Maya", "Tobias"])
    assert (result.status, result.cues, result.notes) == ("created", 3, [ROLLING_NOTE])
    clip = Clip.objects.get(pk=result.clip_id)
    assert list(clip.cues.values_list("position", "start_time", "end_time", "text")) == [
        (1, 0.16, 2.879, "so what would you like to start with today"),
        (2, 2.879, 5.519, "the money thing I guess it keeps coming back"),
        (3, 5.519, 8.43, "every time one of us ends up leaving the room"),
    ]
    assert clip.duration == 8.43
    report = clip.ingest_report
    assert report["cues"] == 3 and ROLLING_NOTE in [n["message"] for n in report["normalisations"]]
    rolled = report["rolling_captions"]
    assert (rolled["cues_read"], rolled["lines"], rolled["words_timed"]) == (5, 3, 28)
    # Every kept line's words, in order, are exactly the words of its cue.
    for cue, timed in zip(clip.cues.order_by("position"), rolled["word_timings"]):
        assert " ".join(word for _, word in timed["words"]) == cue.text
        assert timed["words"][0][0] == cue.start_time and all(at < cue.end_time for at, _ in timed["words"])
    [again] = ingest(project, "rolling/001_auto_captions.vtt", participants=["Maya", "Tobias"])
    assert again.status == "unchanged" and Cue.objects.count() == 3


def test_the_encoding_detection_is_recorded_on_the_clip(project):
    [result] = ingest(project, "maya_and_tobias/003_cp1252.srt")
    report = Clip.objects.get(pk=result.clip_id).ingest_report
    assert report["encoding"]["encoding"] == "Windows-1252" and report["encoding"]["method"] == "charset-normalizer"
    assert {n["code"] for n in report["normalisations"]} >= {"encoding_converted", "line_ends"}


def test_tolerated_oddities_are_recorded_with_their_lines(project):
    [result] = ingest(project, "maya_and_tobias/002_messy.srt")
    oddities = {(o["code"], o["line"]) for o in Clip.objects.get(pk=result.clip_id).ingest_report["oddities"]}
    assert {("numbering_gap", 11), ("empty_cue", 21)} <= oddities


def test_a_family_clip_maps_a_group_answer_to_the_group_label(project):
    [result] = ingest(project, "okafor_family/001_dinner.srt", scenario="family")
    clip = Clip.objects.get(pk=result.clip_id)
    assert clip.scenario == "family" and clip.participants == ["Ada", "Ben", "Chidi", "Dora"]
    assert clip.speaker_map == {
        "Counsellor": "Therapist",
        "Ada": "Ada",
        "Ben": "Ben",
        "Chidi": "Chidi",
        "Dora": "Dora",
        "ALL": "Family",
    }


def test_a_rescue_clip_brings_its_own_sample_id_participants_and_source(project):
    [result] = ingest(project, "maya_and_tobias/013_rescue_clip.json")
    clip = Clip.objects.get(pk=result.clip_id)
    assert (clip.sample_id, clip.participants, clip.source_file) == (
        "maya_and_tobias/013_rescue_clip",
        ["Tobias", "Maya"],
        "fictional/maya_and_tobias/013.json",
    )


def test_a_rescue_clip_of_another_scenario_is_refused(project):
    [result] = ingest(project, "maya_and_tobias/013_rescue_clip.json", scenario="family")
    assert result.status == "refused" and "says scenario 'couple'" in result.message
    assert Clip.objects.count() == 0


def test_sample_id_defaults_to_folder_and_stem_and_can_be_given(project):
    [a] = ingest_files(project, [bytes_upload("x/y/session_one.srt", SIMPLE)], IngestOptions("couple"))
    assert a.sample_id == "y/session_one"
    [b] = ingest_files(project, [bytes_upload("two.srt", CHANGED)], IngestOptions("couple", group="maya_and_tobias"))
    assert b.sample_id == "maya_and_tobias/two"
    [c] = ingest_files(
        project, [bytes_upload("two.srt", CHANGED + b"\n")], IngestOptions("couple", sample_id="g/custom")
    )
    assert c.sample_id == "g/custom"


def test_a_file_without_folder_or_group_is_refused(project):
    [result] = ingest_files(project, [bytes_upload("lonely.srt", SIMPLE)], IngestOptions("couple"))
    assert result.status == "refused" and "no folder" in result.message


def test_options_that_cannot_apply_are_refused_before_any_file(project):
    two = [bytes_upload("g/a.srt", SIMPLE), bytes_upload("g/b.srt", CHANGED)]
    for options, words in [
        (IngestOptions("solo"), "scenario must be"),
        (IngestOptions("couple", sample_id="g/x"), "single transcript"),
        (IngestOptions("couple", media_url="https://example.org/a.mp4"), "single transcript"),
        (IngestOptions("couple", participants=["Maya", "Therapist"]), "reserved"),
        (IngestOptions("couple", speaker_map={"Maya": 3}), "speaker map"),
    ]:
        with pytest.raises(ServiceError, match=words):
            ingest_files(project, two, options)
    assert Clip.objects.count() == 0


# --- idempotency and replacement ---------------------------------------------------


def test_the_same_file_again_is_unchanged_not_duplicated(project):
    ingest(project, "maya_and_tobias/001_clean.srt")
    before = db_state()
    [again] = ingest(project, "maya_and_tobias/001_clean.srt", replace=True)
    assert again.status == "unchanged" and again.sample_id == "maya_and_tobias/001_clean"
    assert db_state() == before


def test_the_same_bytes_under_another_name_are_unchanged(project):
    ingest_files(project, [bytes_upload("g/a.srt", SIMPLE)], IngestOptions("couple"))
    [result] = ingest_files(project, [bytes_upload("h/b.srt", SIMPLE)], IngestOptions("couple"))
    assert result.status == "unchanged" and result.sample_id == "g/a" and "from g/a.srt" in result.message
    assert Clip.objects.count() == 1


def test_two_files_for_one_sample_in_one_upload_do_not_replace_each_other(project):
    uploads = [
        bytes_upload("g/a.srt", SIMPLE),
        bytes_upload("g/a.vtt", b"WEBVTT\n\n00:00.000 --> 00:01.000\n<v Maya>Other.\n"),
    ]
    results = ingest_files(project, uploads, IngestOptions("couple", replace=True))
    assert [r.status for r in results] == ["created", "refused"]
    assert "g/a.srt in the same upload is already sample g/a" in results[1].message
    assert list(Clip.objects.get().cues.values_list("text", flat=True)) == ["Hello.", "Hi."]
    again = ingest_files(
        project, [bytes_upload("h/b.srt", CHANGED), bytes_upload("h/b.srt", CHANGED)], IngestOptions("couple")
    )
    assert [r.status for r in again] == ["created", "unchanged"]


def test_the_same_file_in_another_project_is_a_new_clip(project):
    from annotation.services import create_project

    other = create_project("other")
    ingest(project, "maya_and_tobias/001_clean.srt")
    [result] = ingest(other, "maya_and_tobias/001_clean.srt")
    assert result.status == "created" and Clip.objects.count() == 2


def test_a_changed_file_for_an_existing_sample_is_refused_without_replace(project):
    ingest_files(project, [bytes_upload("g/a.srt", SIMPLE)], IngestOptions("couple"))
    before = db_state()
    [result] = ingest_files(project, [bytes_upload("g/a.srt", CHANGED)], IngestOptions("couple"))
    assert result.status == "refused" and "already exists with different content; pass replace" in result.message
    assert db_state() == before


def _rows_with_draft(clip):
    row = Row.objects.create(
        clip=clip, row_index=1, start_time=0.0, end_time=2.0, primary_speaker="Maya", dialogue_cleaned="Hello."
    )
    Draft.objects.create(row=row, content={"target": ["Therapist"]})
    return row


def test_replace_swaps_cues_rows_and_drafts_of_an_untouched_clip(project):
    [first] = ingest_files(project, [bytes_upload("g/a.srt", SIMPLE)], IngestOptions("couple"))
    clip = Clip.objects.get(pk=first.clip_id)
    _rows_with_draft(clip)
    Clip.objects.filter(pk=clip.pk).update(state=ClipState.PREANNOTATED)
    [result] = ingest_files(project, [bytes_upload("g/a.srt", CHANGED)], IngestOptions("couple", replace=True))
    assert (result.status, result.clip_id) == ("replaced", clip.pk)
    clip.refresh_from_db()
    assert clip.state == ClipState.IMPORTED and clip.content_hash == hashlib.sha256(CHANGED).hexdigest()
    assert list(clip.cues.values_list("text", flat=True)) == ["Hello again.", "Hi."]
    assert not Row.objects.filter(clip=clip).exists() and not Draft.objects.exists()
    assert clip.history.first().history_change_reason == "transcript replaced from g/a.srt"


@pytest.mark.parametrize("work", ["revision", "gold"])
def test_replace_is_refused_once_a_human_has_worked_on_the_clip(project, annotator, work):
    [first] = ingest_files(project, [bytes_upload("g/a.srt", SIMPLE)], IngestOptions("couple"))
    clip = Clip.objects.get(pk=first.clip_id)
    row = _rows_with_draft(clip)
    if work == "revision":
        Revision.objects.create(row=row, annotator=annotator, content={})
    else:
        Gold.objects.create(row=row, content={})
    before = (db_state(), Row.objects.count(), Draft.objects.count())
    [result] = ingest_files(project, [bytes_upload("g/a.srt", CHANGED)], IngestOptions("couple", replace=True))
    assert result.status == "refused" and "human work" in result.message
    assert (db_state(), Row.objects.count(), Draft.objects.count()) == before


def test_replace_is_refused_while_the_clip_is_being_preannotated(project):
    [first] = ingest_files(project, [bytes_upload("g/a.srt", SIMPLE)], IngestOptions("couple"))
    Clip.objects.filter(pk=first.clip_id).update(state=ClipState.PREANNOTATING)
    [result] = ingest_files(project, [bytes_upload("g/a.srt", CHANGED)], IngestOptions("couple", replace=True))
    assert result.status == "refused" and "being pre-annotated" in result.message


# --- refusals write nothing ---------------------------------------------------------


@pytest.mark.parametrize("relative", sorted(p.relative_to(CORPUS).as_posix() for p in (CORPUS / "refused").iterdir()))
def test_a_refused_file_writes_nothing_and_names_file_and_line(project, relative):
    before = db_state()
    [result] = ingest(project, relative)
    assert result.status == "refused" and result.message.startswith(f"{relative}, line ")
    assert result.line is not None and db_state() == before


def test_one_bad_file_does_not_stop_the_others(project):
    results = ingest(
        project, "maya_and_tobias/001_clean.srt", "refused/backwards.srt", "maya_and_tobias/008_voices.vtt"
    )
    assert [r.status for r in results] == ["created", "refused", "created"]
    assert Clip.objects.count() == 2


def test_a_file_over_the_size_limit_is_refused_unread(project, settings):
    settings.MAX_UPLOAD_BYTES = 50
    reads = []
    upload = Upload(name="g/big.srt", size=len(SIMPLE), read=lambda: reads.append(1) or SIMPLE)
    [result] = ingest_files(project, [upload], IngestOptions("couple"))
    assert (
        result.status == "refused" and "g/big.srt" in result.message and "over the limit of 50 bytes" in result.message
    )
    assert reads == [] and Clip.objects.count() == 0


# --- speakers -----------------------------------------------------------------------


def test_suggestions_match_names_ignoring_case_and_first_names(project):
    raw = (
        b"1\n00:00:00,000 --> 00:00:01,000\nEVELYN ROSS: Hi.\n\n2\n00:00:01,000 --> 00:00:02,000\nALAN: "
        b"Hey.\n\n3\n00:00:02,000 --> 00:00:03,000\nDR. WEISS: Welcome.\n\n4\n00:00:03,000 --> 00:00:04,000\nBOTH: "
        b"Thanks.\n"
    )
    [result] = ingest_files(
        project, [bytes_upload("g/a.srt", raw)], IngestOptions("couple", participants=["Evelyn", "Alan"])
    )
    clip = Clip.objects.get(pk=result.clip_id)
    assert clip.speaker_map == {"EVELYN ROSS": "Evelyn", "ALAN": "Alan", "DR. WEISS": "Therapist", "BOTH": "Couple"}


def test_capitalised_labels_become_readable_participant_names(project):
    [result] = ingest(project, "maya_and_tobias/002_messy.srt")
    clip = Clip.objects.get(pk=result.clip_id)
    assert clip.participants == ["Maya", "Tobias"]
    assert clip.speaker_map == {"MAYA": "Maya", "TOBIAS": "Tobias", "THERAPIST": "Therapist"}


def test_diarisation_labels_wait_for_the_lead_and_confirmation_names_them(project, lead):
    [result] = ingest(project, "maya_and_tobias/012_diarised.json")
    clip = Clip.objects.get(pk=result.clip_id)
    assert clip.speaker_map == {"SPEAKER_00": "", "SPEAKER_01": "", "": "", "SPEAKER_02": ""}
    assert result.unmapped_speakers == ["SPEAKER_00", "SPEAKER_01", "", "SPEAKER_02"]
    with pytest.raises(SpeakerMapNotConfirmed):
        mapped_cues(clip)
    confirm_speaker_map(
        clip,
        {"SPEAKER_00": "Therapist", "SPEAKER_01": "Maya", "": "", "SPEAKER_02": "Tobias"},
        participants=["Maya", "Tobias"],
        actor=lead,
    )
    clip.refresh_from_db()
    assert clip.speaker_map_confirmed and clip.participants == ["Maya", "Tobias"]
    assert [c["speaker"] for c in mapped_cues(clip)] == ["Therapist", "Maya", "", "Tobias"]
    assert clip.history.first().history_user == lead


def test_a_given_speaker_map_confirms_directly(project):
    given = {"SPEAKER_00": "Therapist", "SPEAKER_01": "Maya", "SPEAKER_02": "Tobias", "": ""}
    [result] = ingest(project, "maya_and_tobias/012_diarised.json", speaker_map=given)
    clip = Clip.objects.get(pk=result.clip_id)
    assert result.speaker_map_confirmed and clip.speaker_map_confirmed
    assert clip.participants == ["Maya", "Tobias"]  # named by the map, not the diarisation labels


def test_an_empty_given_map_accepts_complete_suggestions_only(project):
    [ok] = ingest(project, "maya_and_tobias/001_clean.srt", speaker_map={})
    [partial] = ingest(project, "maya_and_tobias/012_diarised.json", speaker_map={"SPEAKER_00": "Therapist"})
    assert ok.speaker_map_confirmed is True
    assert partial.speaker_map_confirmed is False and partial.unmapped_speakers == ["SPEAKER_01", "", "SPEAKER_02"]


def test_a_given_map_naming_someone_outside_the_clip_is_refused(project):
    [result] = ingest(
        project, "maya_and_tobias/001_clean.srt", participants=["Maya", "Tobias"], speaker_map={"Maya": "Mia"}
    )
    assert result.status == "refused" and "'Maya' maps to 'Mia', which is not a person of this clip" in result.message
    [result] = ingest(project, "maya_and_tobias/001_clean.srt", speaker_map={"Dr. Weiss": "Dr. Weiss"})
    assert result.status == "refused" and "'Dr. Weiss' looks like the therapist" in result.message
    assert Clip.objects.count() == 0


def test_mapped_cues_carry_entities_never_the_therapists_name(project):
    [result] = ingest(project, "maya_and_tobias/008_voices.vtt", speaker_map={})
    clip = Clip.objects.get(pk=result.clip_id)
    cues = mapped_cues(clip)
    assert [c["speaker"] for c in cues] == ["Maya", "Tobias", "Therapist", "Tobias"]
    assert cues[3] == {
        "start": 9.1,
        "end": 10.0,
        "speaker": "Tobias",
        "text": "I'm on your side.",
        "position": 4,
    }  # leading label removed
    assert all("Weiss" not in c["speaker"] for c in cues)


def test_clips_imported_from_the_release_need_no_speaker_map(project, tmp_path):
    import json

    from annotation.rescue_format.importer import import_rescue

    from .builders.documents import couple_clip

    path = tmp_path / "clip.jsonl"
    path.write_text(json.dumps(couple_clip()), encoding="utf-8")
    import_rescue(path, project, as_source="draft")
    clip = Clip.objects.get()
    assert [c["speaker"] for c in mapped_cues(clip)] == ["Maya", "Therapist", "Tobias"]


def test_confirmation_refuses_incomplete_or_foreign_maps(project):
    [result] = ingest(project, "maya_and_tobias/001_clean.srt")
    clip = Clip.objects.get(pk=result.clip_id)
    with pytest.raises(ServiceError, match="'Tobias' has no mapping"):
        confirm_speaker_map(clip, {"Dr. Weiss": "Therapist", "Maya": "Maya"})
    with pytest.raises(ServiceError, match="not a person of this clip"):
        confirm_speaker_map(clip, {"Dr. Weiss": "Dr. Weiss", "Maya": "Maya", "Tobias": "Tobias"})
    with pytest.raises(ServiceError, match="'Ghost' is not a speaker tag"):
        confirm_speaker_map(clip, {"Dr. Weiss": "Therapist", "Maya": "Maya", "Tobias": "Tobias", "Ghost": "Maya"})
    clip.refresh_from_db()
    assert clip.speaker_map_confirmed is False


def test_confirmation_is_refused_once_rows_exist(project):
    [result] = ingest(project, "maya_and_tobias/001_clean.srt")
    clip = Clip.objects.get(pk=result.clip_id)
    _rows_with_draft(clip)
    with pytest.raises(ServiceError, match="already has rows"):
        confirm_speaker_map(clip, dict(clip.speaker_map))


def test_accepting_suggestions_confirms_only_clips_where_every_label_matched(project):
    results = ingest(project, "maya_and_tobias/001_clean.srt", "maya_and_tobias/012_diarised.json")
    clips = Clip.objects.filter(pk__in=[r.clip_id for r in results])
    confirmed, left = accept_suggested_speakers(clips)
    assert [c.sample_id for c in confirmed] == ["maya_and_tobias/001_clean"]
    assert [c.sample_id for c in left] == ["maya_and_tobias/012_diarised"]


# --- media ---------------------------------------------------------------------------


def test_a_media_file_is_paired_with_the_transcript_of_the_same_name(project):
    media = ContentFile(b"\x00\x00\x00\x18ftypmp42", name="a.mp4")
    uploads = [bytes_upload("g/a.srt", SIMPLE), Upload(name="g/a.mp4", size=media.size, read=media.read, file=media)]
    [result] = ingest_files(project, uploads, IngestOptions("couple"))
    clip = Clip.objects.get(pk=result.clip_id)
    assert clip.media.name.endswith(".mp4") and clip.media.read() == b"\x00\x00\x00\x18ftypmp42"


def test_a_media_file_without_transcript_is_refused(project):
    media = ContentFile(b"data", name="b.mp3")
    uploads = [bytes_upload("g/a.srt", SIMPLE), Upload(name="g/b.mp3", size=4, read=media.read, file=media)]
    results = ingest_files(project, uploads, IngestOptions("couple"))
    assert [r.status for r in results] == ["created", "refused"]
    assert "media file with no transcript" in results[1].message


def test_a_media_url_is_stored_for_a_single_transcript(project):
    [result] = ingest_files(
        project, [bytes_upload("g/a.srt", SIMPLE)], IngestOptions("couple", media_url="https://media.example.org/a.mp4")
    )
    assert Clip.objects.get(pk=result.clip_id).media_url == "https://media.example.org/a.mp4"


def test_media_brought_later_is_attached_to_an_unchanged_clip(project):
    ingest_files(project, [bytes_upload("g/a.srt", SIMPLE)], IngestOptions("couple"))
    [result] = ingest_files(
        project, [bytes_upload("g/a.srt", SIMPLE)], IngestOptions("couple", media_url="https://media.example.org/a.mp4")
    )
    assert result.status == "unchanged" and "media attached" in result.message
    assert Clip.objects.get().media_url == "https://media.example.org/a.mp4"


def test_statuses_are_the_documented_four():
    assert (services.CREATED, services.UNCHANGED, services.REPLACED, services.REFUSED) == (
        "created",
        "unchanged",
        "replaced",
        "refused",
    )
