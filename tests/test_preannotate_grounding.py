"""Drafts grounded in what the model can perceive (issue 16), through the real SDK against the fake Gemini.

One test (or a few) per numbered problem of the issue: the modality in every
request and the instructions that go with it, audio files and media URLs sent,
evidence handles that survive windows, null ("not annotated") kept apart from
"" ("no clear pattern"), the thinking budget and the window sized from it, and
a cut-off answer asked again in smaller windows. The taxonomy and prompt texts
are checked in test_preannotate.py.
"""

from __future__ import annotations

import io
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from annotation.models import Draft, Modality
from annotation.preannotate import conf
from annotation.preannotate.prompts import system_prompt
from annotation.preannotate.selectors import batch_status, draft_modality_label, latest_batch, project_clips
from annotation.preannotate.transcript import media_type
from annotation.rescue_format.exporter import ExportSource, export_rescue
from annotation.services import ServiceError

from .builders.gemini import assert_preannotated
from .fakes import gemini_server as g
from .fakes.clips import make_clip, make_family_clip

TRANSCRIPT_RULE = "stay `[]`, unless the words themselves report the behaviour"
AUDIO_RULE = "The clip's sound is attached; there is no picture."
VIDEO_RULE = "describe what you can see during the row's time span"


def drafts_of(clip):
    return list(Draft.objects.filter(row__clip=clip).select_related("row").order_by("row__row_index"))


# --- 1. the model is told what it can perceive, and audio and URLs reach it ------------------------


@pytest.mark.django_db
def test_a_transcript_only_clip_is_asked_as_such_with_the_transcript_only_instructions(fake, project, preannotate):
    clip = make_clip(project)
    preannotate()
    assert_preannotated(clip, 6)
    (request,) = fake.generate_requests
    assert request.modality == "transcript only" and request.file_uris == []
    assert "Nothing is attached: no picture and no sound." in request.prompt
    assert TRANSCRIPT_RULE in " ".join(request.system.split())
    assert "inferred from the words:" in request.system  # tone, when the words make it plain
    assert VIDEO_RULE not in request.system and AUDIO_RULE not in request.system
    assert {d.modality for d in drafts_of(clip)} == {Modality.TRANSCRIPT}
    assert draft_modality_label(drafts_of(clip)[0]) == "drafted from the transcript only"


@pytest.mark.django_db
def test_an_m4a_audio_file_is_uploaded_and_sent_with_the_audio_only_instructions(fake, project, preannotate):
    clip = make_clip(project, media=SimpleUploadedFile("session.m4a", b"\0" * 2048, content_type="audio/mp4"))
    preannotate()
    assert_preannotated(clip, 6)
    (request,) = fake.generate_requests
    uploads = [r for r in fake.requests if r.path.startswith("/upload-session/")]
    assert len(uploads) == 1
    assert request.file_uris and request.modality == "audio only"
    assert request.files[0][1] == "audio/mp4"
    flat = " ".join(request.system.split())
    assert AUDIO_RULE in flat and "`body_posture`, `facial_expressions` and `interaction_behavior` stay `[]`" in flat
    assert TRANSCRIPT_RULE not in flat
    draft = drafts_of(clip)[0]
    assert draft.modality == Modality.AUDIO and draft.provenance["media"].endswith(":2048")
    assert draft_modality_label(draft) == "drafted from the audio only"


def test_audio_and_video_files_and_urls_map_to_what_gemini_reads():
    assert media_type("x/session.mp3") == ("audio", "audio/mp3")
    assert media_type("x/session.WAV") == ("audio", "audio/wav")
    assert media_type("x/session.m4a") == ("audio", "audio/mp4")
    assert media_type("x/session.mp4") == ("video", "video/mp4")
    assert media_type("https://cdn.example.org/clips/7.mp3?sig=abc") == ("audio", "audio/mp3")
    assert media_type("https://www.youtube.com/watch?v=abc") == ("video", "")
    assert media_type("x/session.mkv") is None and media_type("https://example.org/page") is None


@pytest.mark.django_db
@pytest.mark.parametrize(
    "url, modality, mime",
    [
        ("https://media.example.org/couples/maya-001.mp3", "audio only", "audio/mp3"),
        ("https://www.youtube.com/watch?v=abc123", "video with audio", None),
    ],
)
def test_a_media_url_is_sent_to_the_model_by_its_uri_without_an_upload(fake, project, preannotate, url, modality, mime):
    clip = make_clip(project, media_url=url)
    preannotate()
    assert_preannotated(clip, 6)
    (request,) = fake.generate_requests
    assert not [r for r in fake.requests if r.path.startswith("/upload")]  # nothing uploaded
    assert request.file_uris == [url] and request.modality == modality
    assert request.files == [(url, mime)]
    assert drafts_of(clip)[0].provenance["media"] == f"url:{url}"


@pytest.mark.django_db
def test_media_gemini_cannot_read_is_not_sent_and_the_draft_says_why(fake, project, preannotate):
    clip = make_clip(project, media=SimpleUploadedFile("session.mkv", b"\0" * 64))
    preannotate()
    assert_preannotated(clip, 6)
    (request,) = fake.generate_requests
    assert request.modality == "transcript only" and request.file_uris == []
    draft = drafts_of(clip)[0]
    assert (
        draft.modality == Modality.TRANSCRIPT
        and "(.mkv) is not a format Gemini reads" in draft.provenance["media_skipped"]
    )


@pytest.mark.django_db
def test_the_batch_page_lists_each_clips_prompt_version_and_modality(fake, project, preannotate, lead):
    clip = make_clip(project)
    preannotate()
    (row,) = [c for c in project_clips(lead, project) if c["clip"] == clip.pk]
    assert row["prompt_versions"] == ["couple-v2"] and row["modalities"] == ["transcript only"]
    # The API's batch status says it per clip job too.
    (job,) = batch_status(latest_batch(project))["clips"]
    assert (job["prompt_version"], job["modality"]) == ("couple-v2", "transcript")


# --- 2. evidence rows that cannot be misnumbered ----------------------------------------------------


def _family_answers_citing(cite):
    """A responder whose every row cites ``cite(cue_number)`` (a list of handles) as evidence."""

    def respond(body, prompt):
        answer = g.one_row_per_cue(body, prompt)
        for cue, row in zip(g.parse_transcript(prompt)[1], answer["rows"]):
            row["relation_pattern"] = "escalation_conflict"
            row["relation_pattern_reason"] = "voices rise on both sides"
            row["relation_pattern_evidence_cues"] = cite(cue.number)
        return answer

    return respond


@pytest.mark.django_db
def test_a_second_windows_answer_citing_cues_by_their_clip_wide_numbers_points_at_those_rows(
    fake, project, preannotate, settings
):
    settings.PREANNOTATE_WINDOW_CUES = 40
    clip = make_family_clip(project, n=70)
    # Bare clip-wide numbers (the easy mistake under the old row numbering) are read as the cue ids they are.
    fake.responder = _family_answers_citing(lambda n: [n - 2, n] if n > 2 else [n])
    preannotate()
    assert_preannotated(clip, 70)
    firsts = sorted(g.parse_transcript(r.prompt)[1][0].number for r in fake.generate_requests)
    assert len(firsts) == 3 and firsts[1] > 1  # later windows start inside the clip
    evidence = {d.row.row_index: d.content["relation_pattern_evidence_rows"] for d in drafts_of(clip)}
    assert all(evidence[i] == ([i - 2, i] if i > 2 else [i]) for i in range(1, 71))
    assert not Draft.objects.filter(row__clip=clip).exclude(warnings=[]).exists()


@pytest.mark.django_db
def test_row_numbers_mistaken_for_cue_ids_are_left_out_with_a_warning_not_remapped(
    fake, project, preannotate, settings
):
    settings.PREANNOTATE_WINDOW_CUES = 40
    clip = make_family_clip(project, n=70)
    # In each request the model cites its own row number (1, 2, ...) instead of the cue id.
    fake.responder = lambda body, prompt: _renumbered_locally(body, prompt)
    preannotate()
    assert_preannotated(clip, 70)
    drafts = drafts_of(clip)
    # First window: local row n is cue n, so the citation happens to be right.
    assert drafts[4].content["relation_pattern_evidence_rows"] == [5]
    # A later window (starting at cue 21 or after): local numbers name cues it never showed; nothing is invented.
    late = drafts[60]
    assert late.content["relation_pattern_evidence_rows"] == []
    message = next(w["message"] for w in late.warnings if w["path"] == "relation_pattern_evidence_rows")
    assert "was not shown to the model in this part" in message


def _renumbered_locally(body, prompt):
    answer = _family_answers_citing(lambda n: [])(body, prompt)
    for local, row in enumerate(answer["rows"], start=1):
        row["relation_pattern_evidence_cues"] = [local]
    return answer


@pytest.mark.django_db
def test_a_cited_cue_that_the_model_split_into_two_rows_stands_for_both(fake, project, preannotate):
    clip = make_clip(project, n=3)

    def split_first(body, prompt):
        answer = g.one_row_per_cue(body, prompt)
        first = answer["rows"][0]
        words = first["dialogue_cleaned"].split()
        second = {**first, "start_time": 2.0, "dialogue_cleaned": " ".join(words[5:]), "target": ["Tobias"]}
        first.update(end_time=2.0, dialogue_cleaned=" ".join(words[:5]))
        answer["rows"].insert(1, second)
        last = answer["rows"][-1]
        last.update(relation_pattern="pursue_withdraw", relation_pattern_reason="she presses, he retreats")
        last["relation_pattern_evidence_cues"] = ["c1", "c3"]
        return answer

    fake.responder = split_first
    preannotate()
    assert_preannotated(clip, 4)
    assert drafts_of(clip)[3].content["relation_pattern_evidence_rows"] == [1, 2, 4]


@pytest.mark.django_db
def test_a_cited_cue_that_the_model_merged_into_the_row_before_stands_for_that_row(fake, project, preannotate):
    clip = make_clip(project, n=4)

    def merge_first_two(body, prompt):
        answer = g.one_row_per_cue(body, prompt)
        first, second = answer["rows"][0], answer["rows"].pop(1)
        first.update(
            end_time=second["end_time"], dialogue_cleaned=first["dialogue_cleaned"] + " " + second["dialogue_cleaned"]
        )
        last = answer["rows"][-1]
        last.update(relation_pattern="pursue_withdraw", relation_pattern_reason="she presses, he retreats")
        last["relation_pattern_evidence_cues"] = ["c2", "c3"]  # c2 now lives inside row 1
        return answer

    fake.responder = merge_first_two
    preannotate()
    last = drafts_of(clip)[-1]
    assert last.content["relation_pattern_evidence_rows"] == [1, 2]
    assert not [w for w in last.warnings if w["code"] == "evidence_row_missing"]


# --- 4. null ("not annotated") and "" ("no clear pattern") stay apart --------------------------------


@pytest.mark.django_db
def test_not_annotated_and_no_clear_pattern_survive_the_round_trip_to_the_release_format(fake, project, preannotate):
    clip = make_clip(project, n=4)

    def three_states(body, prompt):
        answer = g.one_row_per_cue(body, prompt)
        rows = answer["rows"]
        rows[0].update(relation_pattern=None, relation_pattern_reason=None)
        rows[1].update(
            relation_pattern="no_clear_pattern", relation_pattern_reason="each speaks to the therapist alone"
        )
        rows[1]["relation_pattern_evidence_cues"] = ["c1", "c2"]
        rows[2].update(relation_pattern="pursue_withdraw", relation_pattern_reason="she presses, he retreats")
        rows[2]["relation_pattern_evidence_cues"] = ["c2", "c3"]
        rows[3].update(relation_pattern="no_clear_pattern", relation_pattern_reason="")  # no reason given
        rows[3]["relation_pattern_evidence_cues"] = ["c4"]
        return answer

    fake.responder = three_states
    preannotate()
    assert_preannotated(clip, 4)
    drafts = drafts_of(clip)
    stored = [
        (
            d.content["relation_pattern"],
            d.content["relation_pattern_reason"],
            d.content["relation_pattern_evidence_rows"],
        )
        for d in drafts
    ]
    assert stored == [
        (None, None, []),
        ("", "each speaks to the therapist alone", [1, 2]),
        ("pursue_withdraw", "she presses, he retreats", [2, 3]),
        ("", "", [4]),
    ]
    assert [w["code"] for w in drafts[3].warnings] == ["relation_reason_missing"]
    assert all(d.warnings == [] for d in drafts[:3])
    # The therapist row (row 2) mirrors its "" into relation_cycle_state, as the release does.
    assert (drafts[1].content["relation_cycle_state"], drafts[1].content["relation_cycle_reason"]) == (
        "",
        "each speaks to the therapist alone",
    )
    out = io.StringIO()
    export_rescue(project, ExportSource("draft"), out)
    exported = json.loads(out.getvalue())["rows"]
    assert [r["relation_pattern"] for r in exported] == [None, "", "pursue_withdraw", ""]
    assert exported[0]["relation_pattern_reason"] is None and exported[1]["relation_pattern_reason"] != ""


# --- 5. budgets: thinking, window size, cut-off answers ---------------------------------------------


@pytest.mark.django_db
def test_every_request_sets_the_thinking_budget_and_the_output_limit_from_configuration(
    fake, project, preannotate, settings
):
    settings.GEMINI_THINKING_BUDGET = 4096
    make_clip(project)
    preannotate()
    (request,) = fake.generate_requests
    assert (request.thinking_budget, request.max_output_tokens) == (4096, 65536)


def test_the_window_is_sized_from_the_output_limit_minus_the_thinking_budget(settings):
    # The defaults: (65,536 - 8,192) / (357 tokens per row x 1.3 rows per cue x 1.5 headroom).
    assert conf.window_cues() == int((65536 - 8192) / (357 * 1.3 * 1.5)) == 82
    settings.GEMINI_THINKING_BUDGET = 24576  # the most gemini-2.5-flash thinks: the window shrinks with it
    assert conf.window_cues() == int((65536 - 24576) / (357 * 1.3 * 1.5)) == 58
    settings.PREANNOTATE_WINDOW_CUES = 30  # an explicit size wins
    assert conf.window_cues() == 30


@pytest.mark.django_db
def test_a_thinking_budget_that_leaves_no_room_for_the_answer_is_refused_at_start(fake, project, settings):
    settings.GEMINI_THINKING_BUDGET = 70000
    make_clip(project)
    from annotation.preannotate.services import start_preannotation

    with pytest.raises(
        ServiceError, match=r"GEMINI_THINKING_BUDGET \(70000\) leaves nothing of GEMINI_MAX_OUTPUT_TOKENS"
    ):
        start_preannotation(project)


@pytest.mark.django_db
def test_an_answer_cut_off_at_the_limit_is_asked_again_in_smaller_windows(fake, project, preannotate, settings):
    settings.PREANNOTATE_WINDOW_CUES = 60
    clip = make_family_clip(project, n=50)

    def cut_off_when_long(body, prompt):
        # Like a real model whose answer outgrows its output budget past 25 cues.
        if len(g.parse_transcript(prompt)[1]) > 25:
            return g.max_tokens()
        return g.one_row_per_cue(body, prompt)

    fake.responder = cut_off_when_long
    preannotate()
    job = assert_preannotated(clip, 50)
    shown = [len(g.parse_transcript(r.prompt)[1]) for r in fake.generate_requests]
    # The clip, then its two halves (25 cues + context), all cut off; then four quarters answered.
    assert shown[0] == 50 and sum(1 for n in shown if n > 25) == 3 and len(shown) == 7
    rows = [d.row for d in drafts_of(clip)]
    assert [r.dialogue_cleaned for r in rows] == [c.text for c in clip.cues.order_by("position")]
    assert job.result["summary"]["cut_off_parts"] == ["1", "1.1", "1.2"]
    assert {d.provenance.get("part") for d in drafts_of(clip)} == {"1.1.1", "1.1.2", "1.2.1", "1.2.2"}
    assert (
        job.result["provenance"]["requests"] == 7
        and not Draft.objects.filter(row__clip=clip).exclude(warnings=[]).exists()
    )


# --- prompt versions ------------------------------------------------------------------------------


@pytest.mark.django_db
def test_drafts_made_under_prompt_v1_stay_labelled_v1_and_are_not_reused_by_a_v2_batch(fake, project, preannotate):
    old = make_clip(project, "maya_and_tobias/001_opening")
    preannotate()
    # Make them what prompt v1 left behind: its version and key, no modality recorded yet.
    for draft in Draft.objects.filter(row__clip=old):
        draft.provenance = {
            **draft.provenance,
            "prompt_version": "couple-v1",
            "key": draft.provenance["key"].replace("couple-v2", "couple-v1"),
        }
        draft.modality = ""
        draft.save()
    from importlib import import_module

    from django.apps import apps

    import_module("annotation.migrations.0006_draft_modality").record_modalities(apps, None)
    assert {d.modality for d in drafts_of(old)} == {"transcript"}  # v1 only ever sent videos
    assert {d.provenance["prompt_version"] for d in drafts_of(old)} == {"couple-v1"}
    new = make_clip(project, "maya_and_tobias/002_later")
    batch = preannotate(clips=[new])
    assert batch.params["queued"] == [new.pk]
    assert {d.provenance["prompt_version"] for d in drafts_of(old)} == {"couple-v1"}  # untouched
    assert {d.provenance["prompt_version"] for d in drafts_of(new)} == {"couple-v2"}
    # A later batch over both does not take the v1 drafts for current ones.
    batch = preannotate()
    assert [c for c in batch.params["queued"]] == [old.pk]


def test_every_modality_renders_its_own_instructions_into_the_v2_prompt():
    texts = {m: " ".join(system_prompt("family", modality=m).text.split()) for m in Modality.values}
    assert VIDEO_RULE in texts["video"] and AUDIO_RULE in texts["audio"] and TRANSCRIPT_RULE in texts["transcript"]
    assert len({texts[m] for m in texts}) == 3
    assert all("${" not in t for t in texts.values())
