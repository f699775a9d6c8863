"""Gemini pre-annotation: the real SDK against the fake Gemini server, tasks run in-process.

Each fault of the issue's matrix is its own test and ends in the documented
state: the clip ``preannotation_failed`` with the reason on its job and nothing
written, or ``preannotated`` with every problem shown as a row warning.
"""

from __future__ import annotations

import itertools
import json
import threading
import time

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from annotation.models import ClipState, Cue, Draft, DraftSource, Job, JobState, Revision, Row
from annotation.preannotate import conf, windows
from annotation.preannotate.client import GeminiClient
from annotation.preannotate.prompts import system_prompt
from annotation.preannotate.ratelimit import LocalRateLimiter, RedisRateLimiter
from annotation.preannotate.response_schema import ANSWER_ROW_KEYS, enum_value_count, lean_schema_dict
from annotation.preannotate.services import run_clip_job, start_preannotation
from annotation.preannotate.transcript import clip_input
from annotation.preannotate.validate import DraftRow
from annotation.schema import ANNOTATION_KEYS, CONVENTION_ROW_KEYS
from annotation.schema import Row as RowModel
from annotation.services import ServiceError
from annotation.taxonomy import load_taxonomy

from .builders.gemini import assert_preannotated, clip_job
from .conftest import require
from .fakes import gemini_server as g
from .fakes.clips import make_clip, make_family_clip


def assert_failed_cleanly(clip, reason: str, *, rows_before: int = 0):
    """The documented failure state: reason recorded, clip failed, nothing half-written."""
    clip.refresh_from_db()
    job = clip_job(clip)
    assert job.state == JobState.FAILED, job.result
    assert job.result["failure"]["reason"] == reason, job.result
    assert job.error and job.finished_at
    assert clip.state == ClipState.PREANNOTATION_FAILED
    assert Row.objects.filter(clip=clip).count() == rows_before
    assert Draft.objects.filter(row__clip=clip).count() == rows_before
    batch = Job.objects.get(pk=job.params["batch"])
    assert batch.state == JobState.FAILED and batch.progress_done == batch.progress_total
    return job


def with_row_change(change):
    """A responder that answers one row per cue, then lets ``change`` edit the answer."""

    def respond(body, prompt):
        answer = g.one_row_per_cue(body, prompt)
        change(answer["rows"])
        return answer

    return respond


# --- the fault matrix ----------------------------------------------------------------


@pytest.mark.django_db
def test_a_429_is_retried_and_the_clip_is_preannotated(fake, project, preannotate):
    clip = make_clip(project)
    fake.script(g.error(429))
    preannotate()
    job = assert_preannotated(clip, 6)
    assert len(fake.generate_requests) == 2
    assert job.result["summary"]["retries"] == 1


@pytest.mark.django_db
def test_a_schema_refused_as_too_complex_falls_back_to_json_mode_and_the_drafts_say_so(fake, project, preannotate):
    clip = make_clip(project)
    fake.enum_limit = 5  # the real rule, with a lower threshold: our lean schema is now "too complex"
    preannotate()
    assert_preannotated(clip, 6)
    first, second = fake.generate_requests
    assert first.response_schema is not None and second.response_schema is None
    assert "following exactly this schema" in second.prompt
    provenance = Draft.objects.filter(row__clip=clip).first().provenance
    assert provenance["schema_mode"] == "json_fallback"
    assert "too many states for serving" in provenance["schema_fallback_reason"]


@pytest.mark.django_db
def test_retry_after_of_a_429_is_honoured_before_the_next_attempt(fake, project, preannotate):
    clip = make_clip(project)
    fake.script(g.error(429, retry_after="1"))
    preannotate()
    assert_preannotated(clip, 6)
    first, second = fake.generate_requests
    assert second.at - first.at >= 1.0  # not the 0.01 s backoff


@pytest.mark.django_db
def test_three_server_errors_fail_the_clip_with_the_reason_and_write_nothing(fake, project, preannotate):
    clip = make_clip(project)
    fake.script(g.error(500), g.error(500), g.error(500))
    preannotate()
    job = assert_failed_cleanly(clip, "server_error")
    assert len(fake.generate_requests) == 3
    assert "after 3 attempts" in job.error and "500" in job.error
    assert len(job.result["attempts"]) == 3


@pytest.mark.django_db
def test_a_hanging_response_times_out_and_the_retry_succeeds(fake, project, preannotate, settings):
    settings.GEMINI_TIMEOUT_SECONDS = 0.5
    clip = make_clip(project)
    fake.script(g.Hang(3))
    preannotate()
    job = assert_preannotated(clip, 6)
    assert len(fake.generate_requests) == 2
    assert job.result["summary"]["retries"] == 1


@pytest.mark.django_db
def test_a_response_that_never_comes_fails_the_clip_as_a_timeout(fake, project, preannotate, settings):
    settings.GEMINI_TIMEOUT_SECONDS = 0.3
    clip = make_clip(project)
    fake.script(g.Hang(2), g.Hang(2), g.Hang(2))
    preannotate()
    job = assert_failed_cleanly(clip, "timeout")
    assert len(fake.generate_requests) == 3 and "Timeout" in job.error


@pytest.mark.django_db
def test_text_that_is_not_json_is_a_recorded_failure_not_an_empty_draft(fake, project, preannotate):
    clip = make_clip(project)
    fake.script(g.text("Sure! Here is the annotation you asked for:\n- row 1 ..."))
    preannotate()
    job = assert_failed_cleanly(clip, "invalid_json")
    assert "Sure! Here is" in job.error
    assert len(fake.generate_requests) == 1  # a bad answer is not retried blindly


@pytest.mark.django_db
def test_json_whose_rows_break_the_schema_is_a_recorded_failure(fake, project, preannotate):
    clip = make_clip(project)
    fake.script(
        g.ok(
            {
                "rows": [
                    {
                        "start_time": "00:01:40,000",
                        "end_time": 104.5,
                        "primary_speaker": "Maya",
                        "dialogue_cleaned": "hi",
                    }
                ]
            }
        )
    )
    preannotate()
    job = assert_failed_cleanly(clip, "schema_mismatch")
    assert "rows[0].start_time must be a number" in job.error


@pytest.mark.django_db
def test_an_annotation_field_with_the_wrong_structure_is_left_empty_with_a_warning(fake, project, preannotate):
    clip = make_clip(project)

    def break_intensity(rows):
        rows[0]["internal_emotion"] = [{"person": "Maya", "emotion_description": "feels unheard", "intensity": "high"}]
        del rows[2]["tone_of_voice"]

    fake.responder = with_row_change(break_intensity)
    preannotate()
    assert_preannotated(clip, 6)
    first = Draft.objects.get(row__clip=clip, row__row_index=1)
    assert first.content["internal_emotion"] == []
    warning = next(w for w in first.warnings if w["code"] == "llm_field_invalid")
    assert warning["path"] == "internal_emotion" and '"high"' in warning["message"] and warning["severity"] == "warning"
    third = Draft.objects.get(row__clip=clip, row__row_index=3)
    assert third.content["tone_of_voice"] == "" and any(w["code"] == "llm_field_missing" for w in third.warnings)


@pytest.mark.django_db
def test_an_entity_not_in_the_clip_is_kept_as_a_row_warning_and_the_therapists_name_is_normalised(
    fake, project, preannotate
):
    cues = [
        (0.0, 4.0, "Maya", "I keep waiting for him to notice."),
        (5.0, 9.0, "Dr. Weiss", "What do you hope he notices?"),
        (10.0, 14.0, "Tobias", "I notice more than she thinks."),
    ]
    clip = make_clip(project, cues=cues, speaker_map={"Maya": "Maya", "Tobias": "Tobias", "Dr. Weiss": "Therapist"})

    def answer_with_names(rows):
        rows[0]["target"] = ["Grandma"]  # off-screen person
        rows[1]["primary_speaker"] = "Dr. Weiss"  # the model copied the therapist's name
        rows[1]["target"] = ["maya"]

    fake.responder = with_row_change(answer_with_names)
    preannotate()
    assert_preannotated(clip, 3)
    first = Draft.objects.get(row__clip=clip, row__row_index=1)
    assert first.content["target"] == ["Grandma"]  # kept as the model said, never silently dropped
    assert [w["code"] for w in first.warnings] == ["entity_unknown"]
    assert (
        first.warnings[0]["severity"] == "warning"
        and "'Grandma' is not a person of this clip" in first.warnings[0]["message"]
    )
    second = Draft.objects.get(row__clip=clip, row__row_index=2)
    assert second.row.primary_speaker == "Therapist" and second.content["target"] == ["Maya"]
    assert second.warnings == []
    notes = " ".join(second.provenance["normalisations"])
    assert (
        "the therapist's personal name 'Dr. Weiss' replaced by 'Therapist'" in notes
        and "'maya' written as 'Maya'" in notes
    )
    assert not Row.objects.filter(primary_speaker="Dr. Weiss").exists()


@pytest.mark.django_db
def test_an_answer_cut_off_even_for_one_cue_is_a_recorded_failure_with_its_cost(fake, project, preannotate):
    clip = make_clip(project, n=2)
    fake.responder = lambda body, prompt: g.max_tokens()
    preannotate()
    job = assert_failed_cleanly(clip, "max_tokens")
    # The whole clip, then its first half (a single cue, which cannot be split): both cut off, both paid for.
    assert len(fake.generate_requests) == 2
    assert job.result["usage"]["tokens_out"] > 0 and job.result["usage"]["cost_usd"] > 0
    assert "(part 1.1 of 1)" in job.error


@pytest.mark.django_db
def test_an_answer_blocked_for_safety_is_a_recorded_failure(fake, project, preannotate):
    clip = make_clip(project)
    fake.script(g.safety())
    preannotate()
    job = assert_failed_cleanly(clip, "safety")
    assert "SAFETY" in job.error


@pytest.mark.django_db
def test_an_answer_without_candidates_is_a_recorded_failure(fake, project, preannotate):
    clip = make_clip(project)
    fake.script(g.no_candidates())
    preannotate()
    assert_failed_cleanly(clip, "no_candidates")


@pytest.mark.django_db
def test_an_empty_answer_is_a_recorded_failure(fake, project, preannotate):
    clip = make_clip(project)
    fake.script(g.ok({"rows": []}))
    preannotate()
    assert_failed_cleanly(clip, "empty")


@pytest.mark.django_db
def test_a_failed_rerun_leaves_the_previous_drafts_exactly_as_they_were(fake, project, preannotate):
    clip = make_clip(project)
    preannotate()
    before = list(Draft.objects.filter(row__clip=clip).order_by("row__row_index").values_list("pk", "content"))
    fake.script(g.text("not json"))
    preannotate(force=True)
    assert_failed_cleanly(clip, "invalid_json", rows_before=6)
    assert list(Draft.objects.filter(row__clip=clip).order_by("row__row_index").values_list("pk", "content")) == before


# --- schema and prompt -------------------------------------------------------------------


def test_the_lean_schema_is_the_row_model_without_bounds_or_entity_enums():
    schema = lean_schema_dict("family")
    row = schema["properties"]["rows"]["items"]
    # Derived from the pydantic model: the release keys minus the mirrored relation_cycle_* ones and
    # row_index (the platform numbers rows), evidence asked by cue id under its wire name.
    expected = tuple(
        "relation_pattern_evidence_cues" if k == "relation_pattern_evidence_rows" else k
        for k in CONVENTION_ROW_KEYS
        if not k.startswith("relation_cycle") and k != "row_index"
    )
    assert tuple(row["properties"]) == ANSWER_ROW_KEYS == expected
    assert set(ANSWER_ROW_KEYS) - {"relation_pattern_evidence_cues"} <= set(RowModel.model_fields)
    assert row["property_ordering"] == list(ANSWER_ROW_KEYS)
    assert row["properties"]["relation_pattern_evidence_cues"] == {"type": "ARRAY", "items": {"type": "STRING"}}
    text = json.dumps(schema)
    for bound in ("minimum", "maximum", "min_items", "max_items", "minItems", "maxItems"):
        assert bound not in text
    family = load_taxonomy("family")
    assert row["properties"]["primary_speaker"] == {"type": "STRING"}  # no per-clip entity enum
    # null is "not annotated"; "no clear pattern" has its own member, stored as "".
    assert row["properties"]["relation_pattern"] == {
        "type": "STRING",
        "enum": [x.label for x in family.relation_patterns] + ["no_clear_pattern"],
        "nullable": True,
    }
    assert row["properties"]["relation_pattern_reason"] == {"type": "STRING", "nullable": True}
    assert (
        enum_value_count(schema)
        == len(family.utterance_types) + len(family.support_strategies) + len(family.relation_patterns) + 1
    )
    assert g.schema_problem(schema, enum_limit=40) is None


def test_the_fake_server_refuses_what_gemini_refuses():
    bounded = json.loads(json.dumps(lean_schema_dict("couple")))
    bounded["properties"]["rows"]["items"]["properties"]["internal_emotion"]["items"]["properties"]["intensity"].update(
        minimum=0, maximum=10
    )
    assert g.schema_problem(bounded, 40) == "bound maximum"
    entity_enums = json.loads(json.dumps(lean_schema_dict("couple")))
    row = entity_enums["properties"]["rows"]["items"]["properties"]
    for key in ("primary_speaker",):
        row[key]["enum"] = ["Maya", "Tobias", "Therapist", "Couple"]
    for key in ("target",):
        row[key]["items"]["enum"] = ["Maya", "Tobias", "Therapist", "Couple"] * 3
    expected = enum_value_count(lean_schema_dict("couple")) + 4 + 12
    assert g.schema_problem(entity_enums, 30) == f"{expected} enum values"


@pytest.mark.parametrize("scenario", ["couple", "family"])
def test_the_prompt_of_each_scenario_carries_the_taxonomy_and_the_rules(scenario):
    prompt = system_prompt(scenario)
    taxonomy = load_taxonomy(scenario)
    assert prompt.version == f"{scenario}-v2" and taxonomy.version == "2"
    for label in [*taxonomy.relation_patterns, *taxonomy.support_strategies, *taxonomy.utterance_types]:
        assert f"`{label.label}`: {label.definition}" in prompt.text
    for rule in taxonomy.rules:
        assert f"- {rule.title}: {rule.text}" in prompt.text
    flat = " ".join(prompt.text.split()).lower()
    for must in (
        "no extra keys",
        "Never write the therapist's personal name",
        "Nobody is their own target",
        "seconds",
        "every cue that contains words",
        "Before you answer, check",
        f"`{taxonomy.group_label}`",
        "An empty list is not the safe choice",  # the counterweight to under-labelling
        "list each of them" if scenario == "family" else 'list both names, for example `["Evelyn", "Alan"]`',
        "a laugh, sigh or murmur with no outward target is not background dialogue",
        "on therapist rows leave it `[]`",  # internal emotion
        "`no_clear_pattern`",
        "Copy the ids; do not count rows",
    ):
        assert " ".join(must.split()).lower() in flat, must
    assert "$" not in prompt.text  # every placeholder filled
    if scenario == "family":
        assert "evoke" not in prompt.text  # not a family label


def test_the_rules_the_issue_asked_for_are_taxonomy_data_linked_to_the_labels_they_separate():
    couple, family = load_taxonomy("couple"), load_taxonomy("family")
    specific = next(r for r in couple.rules if r.id == "more-specific-beats-track")
    assert {"evoke", "repair", "join"} <= set(specific.labels) and "evoke, repair or join" in specific.text
    for tax in (couple, family):
        ids = {r.id for r in tax.rules}
        assert {
            "function-not-wording-support-strategy",
            "function-not-wording-relation-pattern",
            "no-strategy-vs-strategy",
            "join-not-warmth-alone",
            "safeguard-not-agreement",
            "no-fallback-strategy",
            "no-clear-pattern-vs-not-annotated",
        } <= ids
        # "" is the empty choice: the counterweight shows where an annotator is about to leave the list empty.
        assert "no-strategy-vs-strategy" in {r.id for r in tax.rules_for("support_strategy", "")}
        assert "join-not-warmth-alone" in {r.id for r in tax.rules_for("support_strategy", "join")}
        for rule in tax.rules:
            allowed = tax.strategy_labels if rule.field == "support_strategy" else tax.relation_labels
            assert set(rule.labels) <= allowed | {""}, rule.id
    assert {"goal-align-not-a-summary", "detach-needs-both-partners"} <= {r.id for r in couple.rules}
    assert "evoke" not in {label for r in family.rules for label in r.labels}
    repair = next(x for x in family.relation_patterns if x.label == "repair_softening").definition
    assert all(word in repair for word in ("vulnerability", "validation", "reconnect"))
    # Version 1 stays as it was: releases frozen under it must reproduce.
    assert "no-strategy-vs-strategy" not in {r.id for r in load_taxonomy("couple", "1").rules}


# --- provenance and convention -------------------------------------------------------------


@pytest.mark.django_db
def test_every_draft_records_model_version_prompt_input_hash_tokens_latency_and_cost(
    fake, project, preannotate, settings
):
    settings.GEMINI_PRICE_IN_PER_MTOK = 1.0
    settings.GEMINI_PRICE_OUT_PER_MTOK = 10.0
    clip = make_clip(project)
    preannotate()
    drafts = list(Draft.objects.filter(row__clip=clip))
    assert {d.source for d in drafts} == {DraftSource.LLM}
    p = drafts[0].provenance
    assert p["provider"] == "gemini" and p["model"] == "gemini-2.5-flash"
    assert p["model_version"] == g.MODEL_VERSION  # reported by the API, not assumed
    assert p["prompt_version"] == "couple-v2" and p["input_hash"] == clip_input(clip).input_hash()
    assert p["tokens_in"] > 0 and p["tokens_out"] > 0 and p["latency_s"] > 0
    assert p["cost_usd"] == pytest.approx(p["tokens_in"] * 1.0 / 1e6 + p["tokens_out"] * 10.0 / 1e6)
    assert p["key"] == f"sha256:{p['input_hash']}|couple-v2|gemini-2.5-flash"
    assert p["modality"] == "transcript" and {d.modality for d in drafts} == {"transcript"}
    assert (p["thinking_budget"], p["window_cues"]) == (8192, 82)
    assert all(d.provenance["input_hash"] == p["input_hash"] for d in drafts)


@pytest.mark.django_db
def test_drafts_follow_the_platform_convention_with_the_relation_label_mirrored_on_therapist_rows(
    fake, project, preannotate
):
    clip = make_clip(project)

    def label_rows(rows):
        for number, row in enumerate(rows, start=1):  # one row per cue
            row["relation_pattern"] = "pursue_withdraw"
            row["relation_pattern_reason"] = "she presses, he retreats"
            row["relation_pattern_evidence_cues"] = [f"c{number}"]

    fake.responder = with_row_change(label_rows)
    preannotate()
    assert_preannotated(clip, 6)
    for draft in Draft.objects.filter(row__clip=clip).select_related("row"):
        assert set(draft.content) == set(ANNOTATION_KEYS) and draft.layout == {}  # (jsonb does not keep key order)
        assert draft.content["relation_pattern"] == "pursue_withdraw"
        if draft.row.primary_speaker == "Therapist":
            assert draft.content["utterance_type"] == ""
            assert (draft.content["relation_cycle_state"], draft.content["relation_cycle_evidence_rows"]) == (
                "pursue_withdraw",
                [draft.row.row_index],
            )
        else:
            assert (
                draft.content["relation_cycle_state"],
                draft.content["relation_cycle_reason"],
                draft.content["relation_cycle_evidence_rows"],
            ) == ("", "", [])


# --- checks of the answer against the transcript -------------------------------------------------


@pytest.mark.django_db
def test_a_dropped_cue_and_a_row_moved_into_silence_are_warnings_on_the_rows(fake, project, preannotate):
    clip = make_clip(project)

    def drop_and_move(rows):
        del rows[3]  # cue 4 is not covered any more
        rows[0]["start_time"], rows[0]["end_time"] = 40.0, 43.0  # after the last cue: a silence

    fake.responder = with_row_change(drop_and_move)
    preannotate()
    job = assert_preannotated(clip, 5)
    warnings = {w["code"]: w for d in Draft.objects.filter(row__clip=clip) for w in d.warnings}
    assert "cue 4 (15.0–19.0 s" in warnings["cue_not_covered"]["message"]
    assert "lies where no cue is spoken" in warnings["time_outside_cues"]["message"]
    assert job.result["summary"]["uncovered_cues"] == [1, 4]


@pytest.mark.django_db
def test_splitting_a_cue_into_two_rows_covers_it_without_warnings(fake, project, preannotate):
    clip = make_clip(project, n=3)

    def split_first(rows):
        first = rows[0]
        words = first["dialogue_cleaned"].split()
        half = len(words) // 2
        second = {**first, "start_time": 2.0, "dialogue_cleaned": " ".join(words[half:]), "target": ["Tobias"]}
        first.update(end_time=2.0, dialogue_cleaned=" ".join(words[:half]))
        rows.insert(1, second)
        for i, row in enumerate(rows, start=1):
            row["row_index"] = i

    fake.responder = with_row_change(split_first)
    preannotate()
    assert_preannotated(clip, 4)
    assert not Draft.objects.filter(row__clip=clip).exclude(warnings=[]).exists()


# --- long clips --------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_150_row_family_clip_is_split_into_windows_and_stitched_without_duplicates_or_gaps(
    fake, project, preannotate, settings
):
    settings.PREANNOTATE_WINDOW_CUES = 60
    settings.PREANNOTATE_WINDOW_OVERLAP = 4
    clip = make_family_clip(project, n=150)

    def label_with_evidence(body, prompt):
        # Evidence by the clip-wide cue ids the transcript prints: this cue and the one before.
        answer = g.one_row_per_cue(body, prompt)
        for cue, row in zip(g.parse_transcript(prompt)[1], answer["rows"]):
            row["relation_pattern"] = "escalation_conflict"
            row["relation_pattern_reason"] = "several members raise the stakes"
            row["relation_pattern_evidence_cues"] = [f"c{max(1, cue.number - 1)}", f"c{cue.number}"]
        return answer

    fake.responder = label_with_evidence
    preannotate()
    job = assert_preannotated(clip, 150)
    requests = fake.generate_requests
    assert len(requests) == 3
    # The windows are asked side by side, so they may arrive in any order.
    shown = sorted((g.parse_transcript(r.prompt)[1] for r in requests), key=lambda cues: cues[0].number)
    assert all(len(cues) <= 60 for cues in shown)
    assert shown[0][-1].number > shown[1][0].number  # the windows overlap
    cues = list(Cue.objects.filter(clip=clip).order_by("position"))
    rows = list(Row.objects.filter(clip=clip).order_by("row_index"))
    assert [r.dialogue_cleaned for r in rows] == [c.text for c in cues]
    assert [(r.start_time, r.end_time) for r in rows] == [(c.start_time, c.end_time) for c in cues]
    assert [r.row_index for r in rows] == list(range(1, 151))
    evidence = {
        d.row.row_index: d.content["relation_pattern_evidence_rows"]
        for d in Draft.objects.filter(row__clip=clip).select_related("row")
    }
    assert evidence[1] == [1] and all(
        evidence[i] == [i - 1, i] for i in range(2, 151)
    )  # never a window's local numbers
    assert not Draft.objects.filter(row__clip=clip).exclude(warnings=[]).exists()
    assert job.result["summary"]["windows"] == 3 and {
        d.provenance["window"] for d in Draft.objects.filter(row__clip=clip)
    } == {1, 2, 3}


@pytest.mark.django_db
def test_the_windows_of_a_long_clip_are_asked_at_the_same_time(fake, project, settings):
    from annotation.preannotate import gemini

    settings.PREANNOTATE_WINDOW_CUES = 60
    inp = clip_input(make_family_clip(project, n=150))
    held = g.Hold()
    fake.script(held)  # the first window to arrive waits until the others have arrived too
    outcome = {}
    worker = threading.Thread(target=lambda: outcome.update(result=gemini.annotate(inp)))
    worker.start()
    try:
        assert held.arrived.wait(10)
        deadline = time.monotonic() + 10
        while len(fake.generate_requests) < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert len(fake.generate_requests) == 3, "the other windows waited for the first one"
    finally:
        held.release.set()
        worker.join(30)
    result = outcome["result"]
    assert [r.dialogue_cleaned for r in result.rows] == [c.text for c in inp.cues]
    assert result.provenance["windows"] == result.provenance["requests"] == 3


@pytest.mark.django_db
def test_windows_asked_one_after_another_when_window_concurrency_is_one(fake, project, preannotate, settings):
    settings.PREANNOTATE_WINDOW_CUES = 60
    settings.PREANNOTATE_WINDOW_CONCURRENCY = 1
    clip = make_family_clip(project, n=150)
    fake.latency = 0.05
    preannotate()
    assert_preannotated(clip, 150)
    requests = fake.generate_requests
    firsts = [g.parse_transcript(r.prompt)[1][0].number for r in requests]
    assert firsts == sorted(firsts) and len(firsts) == 3
    assert all(b.at - a.at >= 0.05 for a, b in itertools.pairwise(requests))  # each waited for the last answer


@pytest.mark.django_db
def test_a_failed_window_fails_the_clip_with_its_part_and_counts_every_request_paid(
    fake, project, preannotate, settings
):
    settings.PREANNOTATE_WINDOW_CUES = 60
    clip = make_family_clip(project, n=150)

    def second_part_empty(body, prompt):
        if "This is part 2 of 3" in prompt:
            return {"rows": []}
        return g.one_row_per_cue(body, prompt)

    fake.responder = second_part_empty
    preannotate()
    job = assert_failed_cleanly(clip, "empty")
    assert "(part 2 of 3)" in job.error
    assert job.result["usage"]["requests"] == 3  # the windows in flight were billed too


@pytest.mark.django_db
def test_a_single_window_clip_finishes_with_its_progress_complete(fake, project, preannotate):
    clip = make_clip(project)
    preannotate()
    job = assert_preannotated(clip, 6)
    assert job.progress_done == job.progress_total == 1


def test_window_plans_never_show_more_cues_than_the_limit_and_their_cores_cover_every_cue_once():
    for n in (1, 59, 60, 61, 150, 173, 400):
        plan = windows.plan(n, 60, 4)
        assert all(w.stop - w.first <= 60 for w in plan)
        covered = [i for w in plan for i in range(w.core_first, w.core_stop)]
        assert covered == list(range(n))


def test_stitching_keeps_one_copy_of_a_cue_that_two_windows_annotated_differently():
    from annotation.preannotate.transcript import TranscriptCue

    cues = tuple(TranscriptCue(i + 1, i * 5.0, i * 5.0 + 4.0, "Maya", f"cue {i}") for i in range(10))
    plan = [windows.Window(1, 0, 7, 0, 5), windows.Window(2, 3, 10, 5, 10)]

    def row(start, end, text, window):
        return DraftRow(
            start, end, "Maya", text, {"relation_pattern_evidence_rows": []}, window=window, part=str(window)
        )

    # Window 1 splits cue 6 (a context cue for it) into two rows; window 2 owns cue 6 and keeps it whole.
    first = [row(c.start, c.end, c.text, 1) for c in cues[:5]]
    first += [row(25.0, 27.0, "cue", 1), row(27.0, 29.0, "5", 1), row(30.0, 34.0, "cue 6", 1)]
    second = [row(c.start, c.end, c.text, 2) for c in cues[3:]]
    stitched = windows.stitch(plan, [first, second], cues)
    assert [r.dialogue_cleaned for r in stitched] == [c.text for c in cues]


# --- idempotency, force and human work -------------------------------------------------------------


@pytest.mark.django_db
def test_identical_input_reuses_the_existing_drafts_without_calling_the_model(fake, project, preannotate):
    clip = make_clip(project)
    preannotate()
    drafts = list(Draft.objects.filter(row__clip=clip).values_list("pk", flat=True))
    batch = preannotate(clips=[clip])
    assert [c["sample_id"] for c in batch.params["reused"]] == [clip.sample_id]
    assert batch.params["queued"] == [] and batch.state == JobState.SUCCEEDED
    assert len(fake.generate_requests) == 1
    clip.refresh_from_db()
    assert clip.state == ClipState.PREANNOTATED
    assert list(Draft.objects.filter(row__clip=clip).values_list("pk", flat=True)) == drafts


@pytest.mark.django_db
def test_force_calls_the_model_again_and_replaces_rows_and_drafts_in_one_go(fake, project, preannotate):
    clip = make_clip(project)
    preannotate()
    old_rows = set(Row.objects.filter(clip=clip).values_list("pk", flat=True))
    preannotate(clips=[clip], force=True)
    assert_preannotated(clip, 6)
    assert len(fake.generate_requests) == 2
    assert not old_rows & set(Row.objects.filter(clip=clip).values_list("pk", flat=True))


@pytest.mark.django_db
def test_a_changed_transcript_is_not_reused(fake, project, preannotate):
    clip = make_clip(project)
    preannotate()
    Cue.objects.filter(clip=clip, position=2).update(text="Something else entirely.")
    batch = preannotate()
    assert batch.params["queued"] == [clip.pk] and len(fake.generate_requests) == 2


@pytest.mark.django_db
def test_a_clip_with_human_revisions_is_refused_and_left_untouched(fake, project, preannotate, annotator):
    clip = make_clip(project)
    preannotate()
    row = Row.objects.filter(clip=clip).first()
    Revision.objects.create(row=row, annotator=annotator, content=row.draft.content)
    rows = set(Row.objects.filter(clip=clip).values_list("pk", flat=True))
    batch = preannotate(clips=[clip], force=True)
    assert batch.params["refused"][0]["reason"].startswith("it already has human revisions or gold")
    assert len(fake.generate_requests) == 1
    assert set(Row.objects.filter(clip=clip).values_list("pk", flat=True)) == rows


@pytest.mark.django_db
def test_human_work_that_appears_while_the_model_answers_is_never_replaced(
    fake, project, preannotate, annotator, django_capture_on_commit_callbacks
):
    clip = make_clip(project)
    preannotate()
    drafts = set(Draft.objects.filter(row__clip=clip).values_list("pk", flat=True))
    with django_capture_on_commit_callbacks(execute=False):  # queued, not yet run
        start_preannotation(project, clips=[clip], force=True)
    row = Row.objects.filter(clip=clip).first()
    Revision.objects.create(row=row, annotator=annotator, content=row.draft.content)  # meanwhile, a human
    run_clip_job(clip_job(clip).pk)
    job = assert_failed_cleanly(clip, "human_work", rows_before=6)
    assert job.result["usage"]["requests"] == 1  # the answer was paid for, and is recorded
    assert set(Draft.objects.filter(row__clip=clip).values_list("pk", flat=True)) == drafts


@pytest.mark.django_db
def test_a_clip_whose_speaker_mapping_is_not_confirmed_is_refused(fake, project, preannotate):
    clip = make_clip(project, speaker_map={"SPEAKER_00": "Maya"})
    clip.speaker_map_confirmed = False
    clip.save()
    batch = preannotate()
    assert batch.params["refused"] == [
        {"clip": clip.pk, "sample_id": clip.sample_id, "reason": "its speaker mapping is not confirmed yet"}
    ]


@pytest.mark.django_db
def test_a_clip_imported_with_drafts_from_the_release_is_preannotated_from_its_cues(
    fake, project, preannotate, sample_path
):
    from annotation.rescue_format.importer import import_rescue

    import_rescue(sample_path, project, as_source="draft")
    clip = project.clips.order_by("sample_id").first()
    cues = clip.cues.count()
    preannotate(clips=[clip])
    assert_preannotated(clip, cues)
    assert set(Draft.objects.filter(row__clip=clip).values_list("source", flat=True)) == {DraftSource.LLM}


# --- offline provider ---------------------------------------------------------------------------


@pytest.mark.django_db
def test_without_a_key_the_gemini_provider_is_refused_with_a_pointer_to_the_offline_one(
    project, settings, eager_celery
):
    settings.GEMINI_API_KEY = ""
    make_clip(project)
    with pytest.raises(ServiceError, match="GEMINI_API_KEY is not set.*offline"):
        start_preannotation(project)


@pytest.mark.django_db
def test_the_offline_provider_builds_one_empty_row_per_cue_and_says_it_is_offline(fake, project, preannotate, settings):
    settings.GEMINI_API_KEY = ""
    cues = [
        (0.0, 4.0, "Maya", "I keep waiting."),
        (5.0, 9.0, "Therapist", "For what?"),
        (10.0, 14.0, "Tobias", "Here we go."),
        (15.0, 16.0, "Maya", "  "),
    ]
    clip = make_clip(project, cues=cues)
    batch = preannotate(offline_provider=True)
    assert batch.params["provider"] == "offline"
    assert_preannotated(clip, 3)  # the cue without words gives no row
    assert fake.requests == []
    drafts = list(Draft.objects.filter(row__clip=clip).select_related("row").order_by("row__row_index"))
    assert {d.source for d in drafts} == {DraftSource.OFFLINE}
    assert drafts[0].provenance["provider"] == "offline" and drafts[0].provenance["model"] is None
    assert [(d.row.primary_speaker, d.content["target"]) for d in drafts] == [
        ("Maya", ["Therapist"]),
        ("Therapist", ["Maya"]),
        ("Tobias", ["Therapist"]),
    ]
    for d in drafts:
        assert d.content["utterance_type"] == "" and d.content["relation_pattern"] is None
        assert all(
            d.content[k] == [] for k in ("body_posture", "internal_emotion", "support_strategy", "viewpoints_attitudes")
        )
        assert d.warnings == []


# --- video ---------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_clip_with_a_video_uploads_it_through_the_files_api_and_sends_it_with_the_transcript(
    fake, project, preannotate
):
    clip = make_clip(project)
    text_only_hash = clip_input(clip).input_hash()
    clip.media = SimpleUploadedFile("session.mp4", b"\0" * 4096, content_type="video/mp4")
    clip.save()
    preannotate()
    assert_preannotated(clip, 6)
    paths = [(r.method, r.path.split("?")[0]) for r in fake.requests]
    assert paths[:2] == [("POST", "/upload/v1/files"), ("POST", "/upload-session/1")]  # resumable upload
    assert paths[-1] == ("DELETE", "/v1/files/file2")  # removed afterwards
    (request,) = fake.generate_requests
    assert request.file_uris and request.file_uris[0].endswith("/files/file2")
    draft = Draft.objects.filter(row__clip=clip).first()
    assert draft.provenance["media"].endswith(":4096") and draft.provenance["input_hash"] != text_only_hash
    assert draft.modality == "video" and request.modality == "video with audio"


# --- exactly once (in-process) ---------------------------------------------------------------------


@pytest.mark.django_db
def test_a_redelivered_task_for_a_finished_clip_changes_nothing(fake, project, preannotate):
    clip = make_clip(project)
    preannotate()
    job = clip_job(clip)
    drafts = list(Draft.objects.filter(row__clip=clip).values_list("pk", flat=True))
    run_clip_job(job.pk)
    assert len(fake.generate_requests) == 1
    assert list(Draft.objects.filter(row__clip=clip).values_list("pk", flat=True)) == drafts


@pytest.mark.django_db
def test_a_task_run_again_after_a_crash_mid_clip_finishes_it_once(fake, project, django_capture_on_commit_callbacks):
    from annotation import jobs

    clip = make_clip(project)
    with django_capture_on_commit_callbacks(execute=False):  # the worker took it ...
        start_preannotation(project)
    job = clip_job(clip)
    jobs.mark_running(job.pk)  # ... began, and died before writing anything
    run_clip_job(job.pk)  # the broker delivers it again
    run_clip_job(job.pk)  # and once more, late
    job = assert_preannotated(clip, 6)
    assert job.attempts == 2 and len(fake.generate_requests) == 1


@pytest.mark.django_db(transaction=True)
def test_two_deliveries_of_the_same_clip_running_at_once_write_one_set_of_rows(fake, project, settings):
    """What a broker redelivery while the first worker is still busy looks like."""
    import os
    import uuid

    from django.db import connection, connections

    require(connection.vendor == "postgresql", "concurrent writers need PostgreSQL (DATABASE_URL)")
    broker = os.environ.get("CELERY_BROKER_URL", "")
    require(broker.startswith("redis"), "CELERY_BROKER_URL (Redis) is not set")
    from rescue_annot.celery import app

    # Dispatch for real, to a queue nobody consumes: the two deliveries are made by hand below.
    settings.PREANNOTATE_QUEUE = f"test-unconsumed-{uuid.uuid4().hex}"
    app.conf.task_always_eager = False
    try:
        clip = make_clip(project)
        start_preannotation(project)
    finally:
        app.conf.task_always_eager = True
        g.forget_queue(broker, settings.PREANNOTATE_QUEUE)
    job = clip_job(clip)
    fake.latency = 0.5

    def deliver():
        try:
            run_clip_job(job.pk)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=deliver) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert_preannotated(clip, 6)
    assert len(fake.generate_requests) == 2  # both called the model; only one wrote


# --- rate limit ------------------------------------------------------------------------------------


def _hammer(fake, make_limiter, threads=8, per_thread=2):
    def work():
        client = GeminiClient(
            api_key="k",
            base_url=fake.url,
            model="gemini-2.5-flash",
            timeout=5,
            max_output_tokens=100,
            temperature=None,
            limiter=make_limiter(),
            max_attempts=1,
            base_delay=0.01,
            max_delay=1,
        )
        for _ in range(per_thread):
            client.generate("system", "Allowed person labels: Maya, Therapist, Couple\n[1] 0.00-1.00 | Maya | hi")

    pool = [threading.Thread(target=work) for _ in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    return len(fake.generate_requests)


# The limiter widens its window by a margin larger than the delay between taking a
# slot and the request reaching the server (here: up to ~0.2 s for a fresh SDK client).
MARGIN = 0.3


def test_the_in_process_rate_limit_is_never_exceeded_by_concurrent_requests():
    limit, window = 4, 0.5
    limiter = LocalRateLimiter(limit, window + MARGIN)
    with g.FakeGemini() as fake:
        started = time.monotonic()
        sent = _hammer(fake, lambda: limiter)
        elapsed = time.monotonic() - started
        assert sent == 16
        assert fake.max_in_window(window) <= limit
    assert elapsed >= (16 / limit - 1) * window  # it really waited


def test_the_shared_redis_rate_limit_is_never_exceeded_by_several_workers():
    import os
    import uuid

    url = os.environ.get("CELERY_BROKER_URL", "")
    require(url.startswith("redis"), "CELERY_BROKER_URL (Redis) is not set")
    limit, window, key = 4, 0.5, f"test:rate:{uuid.uuid4().hex}"
    with g.FakeGemini() as fake:
        # One limiter (own connection) per thread: like separate worker processes.
        sent = _hammer(fake, lambda: RedisRateLimiter(limit, window + MARGIN, url=url, key=key))
        assert sent == 16
        assert fake.max_in_window(window) <= limit


def test_the_worker_warm_up_builds_the_configured_client_without_sending_anything(fake, monkeypatch):
    """What a prefork worker's parent does before forking, so its pool processes start warm."""
    from annotation.preannotate import client as client_module
    from annotation.preannotate import gemini

    monkeypatch.setattr(client_module, "_SDK_CLIENTS", {})
    gemini.warm_up()
    assert fake.requests == []  # the SDK's first call went to an in-memory transport
    (prepared,) = client_module._SDK_CLIENTS.values()
    assert GeminiClient.from_settings()._sdk is prepared  # the clips' client is that one


def test_settings_fall_back_to_the_environment_then_to_defaults(monkeypatch, settings):
    monkeypatch.setenv("PREANNOTATE_RETRY_BASE_DELAY", "0.05")
    assert conf.get("PREANNOTATE_RETRY_BASE_DELAY") == 0.05
    settings.PREANNOTATE_RETRY_BASE_DELAY = 0.5
    assert conf.get("PREANNOTATE_RETRY_BASE_DELAY") == 0.5
    monkeypatch.delenv("PREANNOTATE_WINDOW_CUES", raising=False)
    assert conf.get("PREANNOTATE_WINDOW_CUES") == 0  # 0: sized from the output budget


@pytest.mark.django_db
def test_a_429_whose_body_names_a_retry_delay_is_honoured_too(fake, project, preannotate):
    clip = make_clip(project)
    retry_info = {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "1s"}
    fake.script(g.error(429, details=[retry_info]))
    preannotate()
    assert_preannotated(clip, 6)
    first, second = fake.generate_requests
    assert second.at - first.at >= 1.0


@pytest.mark.django_db
def test_a_clip_whose_worker_vanished_can_be_dispatched_again_by_a_lead(
    fake, project, django_capture_on_commit_callbacks, settings
):
    from datetime import timedelta

    from django.utils import timezone

    from annotation.preannotate.services import retry_clip_job

    clip = make_clip(project)
    with django_capture_on_commit_callbacks(execute=False):  # queued, but no worker ever ran it
        start_preannotation(project)
    job = clip_job(clip)
    with pytest.raises(ServiceError, match="only a failed or stalled"):
        retry_clip_job(job)
    Job.objects.filter(pk=job.pk).update(
        created_at=timezone.now() - timedelta(seconds=conf.get("PREANNOTATE_STALE_SECONDS") + 5)
    )
    with django_capture_on_commit_callbacks(execute=True):
        retry_clip_job(job)
    job = assert_preannotated(clip, 6)
    assert job.result["previous_failures"][0]["reason"] == "stalled"
