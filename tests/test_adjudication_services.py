"""Adjudication as a lead relies on it: disagreements found per field, gold decided
field by field with every decision audited, unanimous rows in bulk, and the
clip-level decisions (discard, re-review, adjudicated)."""

from __future__ import annotations

import pytest

from annotation.adjudication import selectors, services
from annotation.adjudication.fields import FIELDS, RELATION_FIELD, compare_row
from annotation.models import Assignment, AssignmentState, ClipState, Comment, CommentKind, Gold, Revision
from annotation.services import ServiceError
from annotation.workspace.services import InvalidDocument, add_comment, save_revision, submit_assignment

from .builders.adjudication import reviewed_clip

pytestmark = pytest.mark.django_db


# What each coder changes in the draft, per row index. Row 1: the coders
# disagree on the utterance type; row 2 (therapist): on the tone of voice;
# row 3: nobody changes anything (unanimous).
@pytest.fixture
def clip(project, tmp_path, annotator, other_annotator):
    return reviewed_clip(project, tmp_path, [annotator, other_annotator])


def state_of(clip, index):
    return next(s for s in selectors.row_states(clip) if s.row.row_index == index)


def gold_of(clip, index) -> Gold:
    return Gold.objects.get(row__clip=clip, row__row_index=index)


# --- finding disagreements ---------------------------------------------------------


def test_disagreements_are_found_per_top_level_field(clip):
    states = {s.row.row_index: s for s in selectors.row_states(clip)}
    assert list(states[1].disputes) == ["utterance_type"]
    assert list(states[2].disputes) == ["tone_of_voice"]
    assert states[3].disputes == {} and states[3].unanimous


def test_the_relation_pattern_is_one_field_whatever_key_carries_it():
    base = {"target": ["Maya"], "relation_cycle_state": "pursue_withdraw", "relation_pattern": None}
    other = {**base, "relation_cycle_state": "attack_attack"}
    assert list(compare_row({"a": base, "b": other})) == [RELATION_FIELD]
    assert RELATION_FIELD in FIELDS and "relation_cycle_state" not in FIELDS and "relation_pattern_reason" not in FIELDS


def test_target_order_is_not_a_disagreement():
    assert compare_row({"a": {"target": ["Maya", "Tobias"]}, "b": {"target": ["Tobias", "Maya"]}}) == {}


def test_outvoted_coder_is_named_and_without_majority_everyone_is():
    three = {"a": {"tone_of_voice": "x"}, "b": {"tone_of_voice": "x"}, "c": {"tone_of_voice": "y"}}
    assert compare_row(three)["tone_of_voice"].outliers == ["c"]
    two = {"a": {"tone_of_voice": "x"}, "b": {"tone_of_voice": "y"}}
    assert compare_row(two)["tone_of_voice"].outliers == ["a", "b"]


def test_filters_by_disagreement_field_label_and_annotator(clip):
    states = selectors.row_states(clip)

    def shown(**kw):
        return [s.row.row_index for s in states if selectors.RowFilter(**kw).matches(s)]

    assert shown() == [1, 2, 3]
    assert shown(disagreements=True) == [1, 2]
    assert shown(field="tone_of_voice") == [2]
    assert shown(label="utterance:request") == [1]
    assert shown(label="strategy:track") == [2]
    assert shown(annotator="ann1", field="utterance_type") == [1]
    assert shown(open=True) == [1, 2, 3]


# --- deciding fields ---------------------------------------------------------------


def test_taking_a_coders_value_creates_the_gold_and_records_the_decision(clip, lead):
    row = state_of(clip, 1).row
    gold = services.decide(row.pk, lead, "utterance_type", "ann1", 0, note="a clear ask")
    assert gold.version == 1 and gold.content["utterance_type"] == "request"
    decision = gold.decisions["utterance_type"]
    assert (
        decision["source"] == "ann1"
        and decision["note"] == "a clear ask"
        and decision["by"] == "lead1"
        and decision["at"]
    )
    assert decision["same_as"] == ["ann1"]
    # Fields every coder agreed on are decided as unanimous; nothing is left open.
    assert gold.decisions["target"]["source"] == "unanimous"
    assert state_of(clip, 1).adjudicated
    history = gold.history.first()
    assert history.history_user == lead and "utterance_type" in history.history_change_reason


def test_taking_the_drafts_value_needs_a_reason_and_is_recorded_as_the_drafts(clip, lead):
    row = state_of(clip, 1).row
    with pytest.raises(ServiceError, match="needs a reason"):
        services.decide(row.pk, lead, "utterance_type", "draft", 0)
    with pytest.raises(ServiceError, match="needs a reason"):
        services.decide(row.pk, lead, "utterance_type", "draft", 0, note="   ")
    assert not Gold.objects.filter(row=row).exists()
    gold = services.decide(row.pk, lead, "utterance_type", "draft", 0, note="she discloses before she asks")
    assert gold.content["utterance_type"] == "disclosure" and gold.decisions["utterance_type"]["same_as"] == [
        "ann2",
        "draft",
    ]
    assert gold.decisions["utterance_type"]["source"] == "draft"
    gold = services.decide(row.pk, lead, "utterance_type", "gold", gold.version, note="the draft was right")
    assert (
        gold.decisions["utterance_type"]["source"] == "draft"
        and gold.decisions["utterance_type"]["note"] == "the draft was right"
    )
    assert gold.content["utterance_type"] == "disclosure"


def test_a_stale_decision_is_refused_and_changes_nothing(clip, lead):
    row = state_of(clip, 1).row
    services.decide(row.pk, lead, "utterance_type", "ann1", 0)
    with pytest.raises(services.GoldConflict):
        services.decide(row.pk, lead, "utterance_type", "ann2", 0)
    assert gold_of(clip, 1).content["utterance_type"] == "request"


def test_unknown_source_or_field_is_refused(clip, lead):
    row = state_of(clip, 1).row
    with pytest.raises(ServiceError, match="no value from 'nobody'"):
        services.decide(row.pk, lead, "utterance_type", "nobody", 0)
    with pytest.raises(ServiceError, match="unknown field"):
        services.decide(row.pk, lead, "relation_cycle_state", "ann1", 0)


def test_editing_the_gold_records_an_edit_decision_for_changed_fields_only(clip, lead):
    state = state_of(clip, 2)
    content = {**selectors.gold_document(state)["suggestion"]["content"], "tone_of_voice": "calm and warm"}
    gold = services.save_gold(state.row.pk, lead, content, 0, notes={"tone_of_voice": "both hold"})
    assert gold.decisions["tone_of_voice"] == {
        **gold.decisions["tone_of_voice"],
        "source": "edit",
        "note": "both hold",
        "same_as": [],
    }
    assert set(gold.decisions) == set(FIELDS), "the other fields were unanimous"
    assert gold.history.first().history_user == lead


def test_an_invalid_gold_edit_is_refused_with_field_paths(clip, lead):
    state = state_of(clip, 1)
    content = {
        **selectors.gold_document(state)["suggestion"]["content"],
        "utterance_type": "request",
        "target": ["Maya"],
    }
    with pytest.raises(InvalidDocument) as exc:
        services.save_gold(state.row.pk, lead, content, 0)
    assert [(i.path, i.code) for i in exc.value.issues] == [("target[0]", "self_target")]
    assert not Gold.objects.filter(row=state.row).exists()


def test_gold_of_an_adjudicated_clip_cannot_change(clip, lead):
    services.accept_unanimous(clip, lead)
    services.decide(state_of(clip, 1).row.pk, lead, "utterance_type", "ann1", 0)
    services.decide(state_of(clip, 2).row.pk, lead, "tone_of_voice", "ann2", 0)
    services.mark_adjudicated(clip, lead)
    with pytest.raises(ServiceError, match="request a re-review"):
        services.decide(state_of(clip, 1).row.pk, lead, "utterance_type", "ann2", 1)


# --- bulk and clip level -------------------------------------------------------------


def test_accept_unanimous_gives_gold_to_agreed_rows_only(clip, lead):
    result = services.accept_unanimous(clip, lead)
    assert result.accepted == [3] and not result.invalid
    gold = gold_of(clip, 3)
    assert gold.content == Revision.objects.get(row=gold.row, annotator__username="ann1").content
    assert all(d["source"] == "unanimous" for d in gold.decisions.values())
    assert gold.history.first().history_user == lead
    again = services.accept_unanimous(clip, lead)
    assert again.accepted == [] and again.already_gold == 1


def test_gold_accepted_within_a_threshold_records_the_guidance_in_force(clip, lead):
    from annotation.codebook.services import write_guidance

    version = write_guidance(
        clip.project,
        lead,
        field="utterance_type",
        labels=["accusation", "disclosure"],
        text="Blame is an accusation even with a feeling in it.",
        why="coders split",
    )
    result = services.accept_agreeing(clip, lead, 0.8)
    assert result.accepted == [3]
    assert gold_of(clip, 3).guidance_version_id == version.pk


def test_accepting_agreeing_rows_counts_only_submitted_coders_and_waits_for_the_required_number(
    project, tmp_path, annotator, other_annotator, lead
):
    """Three coders assigned; ann3 never opens the clip (their revisions stay untouched copies of the draft, never
    submitted). Their copy never makes a row agreeing and is never the value taken; rows are accepted only on the
    submitted coders' agreement, and the readiness setting refuses the bulk accept until enough have submitted."""
    import json

    from annotation.rescue_format.importer import import_rescue
    from annotation.services import create_user
    from annotation.starting import start_assignment
    from annotation.study.services import update_design

    from .builders.documents import couple_clip

    third = create_user("ann3", "annotator", password="ann-pass-789")[0]
    path = tmp_path / "clip.jsonl"
    path.write_text(json.dumps(couple_clip()) + "\n", encoding="utf-8")
    import_rescue(path, project, as_source="draft")
    clip = project.clips.get()
    for user in (annotator, other_annotator, third):
        start_assignment(clip, user)
    draft_type = state_of(clip, 1).draft.content["utterance_type"]
    assert draft_type != "request"
    edits = {"ann1": {1: {"utterance_type": "request"}, 2: {"tone_of_voice": "calm"}}}
    edits["ann2"] = {1: {"utterance_type": "request"}, 2: {"tone_of_voice": "warm"}}

    def code_and_submit(user):
        for revision in Revision.objects.filter(row__clip=clip, annotator=user).select_related("row"):
            content = {**revision.content, **edits[user.username].get(revision.row.row_index, {})}
            save_revision(revision.pk, user, content, revision.version, reviewed=True)
        submit_assignment(Assignment.objects.get(clip=clip, annotator=user), user)

    # One coder submitted and the project needs one: row 3 is ann1's draft value, and the two untouched copies
    # hold the same value, yet one coder's work alone is never "agreeing" (counting the copies would make it so).
    code_and_submit(annotator)
    update_design(project, lead, adjudication_min_coders=1)
    clip.refresh_from_db()
    assert list(state_of(clip, 3).revisions) == ["ann1"] and sorted(state_of(clip, 3).uncoded) == ["ann2", "ann3"]
    assert services.accept_agreeing(clip, lead, 0.8).accepted == []
    assert not Gold.objects.filter(row__clip=clip).exists()

    # Two submitted, the project needs every assigned coder (three): the bulk accept is refused, nothing written.
    code_and_submit(other_annotator)
    update_design(project, lead, adjudication_min_coders=None)
    clip.refresh_from_db()
    with pytest.raises(
        ServiceError, match="cannot be adjudicated yet: 2 of 3 required coders submitted; waiting for 1 more \\(ann3\\)"
    ):
        services.accept_agreeing(clip, lead, 0.8)
    assert not Gold.objects.filter(row__clip=clip).exists()

    # Two required: ann1 and ann2 agree on rows 1 and 3 (row 1 against ann3's untouched draft value), split on row 2.
    update_design(project, lead, adjudication_min_coders=2)
    clip.refresh_from_db()
    result = services.accept_agreeing(clip, lead, 0.8)
    assert result.accepted == [1, 3] and result.near == [] and not result.invalid
    gold = gold_of(clip, 1)
    assert gold.content["utterance_type"] == "request" != draft_type
    for row_gold in Gold.objects.filter(row__clip=clip):
        assert {d["source"] for d in row_gold.decisions.values()} == {"unanimous"}
        assert all("ann3" not in d["same_as"] for d in row_gold.decisions.values())
    assert not Gold.objects.filter(row__clip=clip, row__row_index=2).exists()


def test_targets_ticked_in_another_order_agree_within_a_threshold_too():
    from annotation.adjudication.disagreement import near_agreement

    a = {"target": ["Maya", "Tobias"], "tone_of_voice": "calm"}
    b = {"target": ["Tobias", "Maya"], "tone_of_voice": "calm"}
    found = near_agreement({"ann1": a, "ann2": b}, "Therapist", vectors=None, threshold=0.8)
    assert found is not None and found["near"] == [] and found["fields"]["target"] == "ann1"


def test_mark_adjudicated_needs_gold_on_every_row_and_no_open_disagreement(clip, lead):
    with pytest.raises(ServiceError, match="3 row\\(s\\) have no gold"):
        services.mark_adjudicated(clip, lead)
    services.accept_unanimous(clip, lead)
    services.decide(state_of(clip, 1).row.pk, lead, "tone_of_voice", "gold", 0, note="the words hold")
    with pytest.raises(ServiceError, match="not decided yet \\(rows 1\\)"):
        services.mark_adjudicated(clip, lead)
    services.decide(state_of(clip, 1).row.pk, lead, "utterance_type", "ann1", 1)
    services.decide(state_of(clip, 2).row.pk, lead, "tone_of_voice", "ann1", 0)
    services.mark_adjudicated(clip, lead)
    clip.refresh_from_db()
    assert clip.state == ClipState.ADJUDICATED
    assert clip.history.first().history_user == lead


def test_mark_adjudicated_refuses_gold_that_does_not_validate(clip, lead):
    services.accept_unanimous(clip, lead)
    for index, name in ((1, "utterance_type"), (2, "tone_of_voice")):
        services.decide(state_of(clip, index).row.pk, lead, name, "ann1", 0)
    Gold.objects.filter(row__clip=clip, row__row_index=3).update(content={**gold_of(clip, 3).content, "target": []})
    with pytest.raises(ServiceError, match="does not validate \\(rows 3\\)"):
        services.mark_adjudicated(clip, lead)


def test_mark_adjudicated_waits_for_every_coder(project, tmp_path, annotator, other_annotator, lead):
    clip = reviewed_clip(project, tmp_path, [annotator, other_annotator], submit=False)
    with pytest.raises(ServiceError, match="0 of 2 required coders submitted; waiting for 2 more \\(ann1, ann2\\)"):
        services.mark_adjudicated(clip, lead)


def test_no_gold_is_decided_before_the_coders_the_project_requires_have_submitted(
    project, tmp_path, annotator, other_annotator, lead
):
    clip = reviewed_clip(project, tmp_path, [annotator, other_annotator], submit=False)
    row = state_of(clip, 1).row
    for write in (
        lambda: services.decide(row.pk, lead, "utterance_type", "ann1", 0),
        lambda: services.accept_suggestion(row.pk, lead, 0),
        lambda: services.accept_unanimous(clip, lead),
        lambda: services.save_gold(row.pk, lead, state_of(clip, 1).base()[0], 0),
    ):
        with pytest.raises(ServiceError, match="cannot be adjudicated yet"):
            write()
    assert not Gold.objects.filter(row__clip=clip).exists()
    # One coder of two submitted, and the project needs one: ann1's work is the only coded work.
    submit_assignment(Assignment.objects.get(clip=clip, annotator=annotator), annotator)
    project.adjudication_min_coders = 1
    project.save()
    clip.refresh_from_db()
    state = state_of(clip, 1)
    assert list(state.revisions) == ["ann1"] and list(state.uncoded) == ["ann2"]
    assert state.uncoded["ann2"].words == "not coded yet (not submitted)"
    assert state.disputes == {} and state.suggestions()["utterance_type"].kind == "single"
    with pytest.raises(ServiceError, match="not coded yet \\(not submitted\\): it is not a source of gold"):
        services.decide(row.pk, lead, "utterance_type", "ann2", 0)
    services.accept_suggestion(row.pk, lead, 0)
    assert gold_of(clip, 1).content["utterance_type"] == "request"
    # The clip closes in review: the project needs one coder, and ann2 still works on theirs.
    services.accept_unanimous(clip, lead)
    services.mark_adjudicated(clip, lead)
    clip.refresh_from_db()
    assert clip.state == ClipState.ADJUDICATED


def test_accepting_a_discard_proposal_keeps_its_reason(clip, lead, annotator):
    proposal = add_comment(clip, annotator, "speaker labels are wrong from 2:10", kind=CommentKind.DISCARD_PROPOSAL)
    services.accept_discard(clip, proposal.pk, lead)
    clip.refresh_from_db()
    assert clip.state == ClipState.DISCARDED and clip.discarded_by == lead
    assert clip.discard_reason.startswith("speaker labels are wrong from 2:10") and "ann1" in clip.discard_reason
    proposal.refresh_from_db()
    assert proposal.resolved
    with pytest.raises(ServiceError, match="already decided"):
        services.accept_discard(clip, proposal.pk, lead)


def test_dismissing_a_discard_proposal_keeps_the_clip(clip, lead, annotator):
    proposal = add_comment(clip, annotator, "too short", kind=CommentKind.DISCARD_PROPOSAL)
    services.dismiss_discard(clip, proposal.pk, lead)
    clip.refresh_from_db()
    proposal.refresh_from_db()
    assert clip.state == ClipState.REVIEWED and proposal.resolved


def test_rereview_reopens_the_assignment_and_the_annotator_can_edit_again(clip, lead, annotator):
    assignment = services.request_rereview(clip, "ann1", lead, "row 2: check the tone")
    assert assignment.state == AssignmentState.REOPENED
    clip.refresh_from_db()
    assert clip.state == ClipState.IN_REVIEW
    assert Comment.objects.filter(clip=clip, author=lead, body__contains="row 2: check the tone").exists()
    revision = Revision.objects.get(row__clip=clip, row__row_index=2, annotator=annotator)
    save_revision(
        revision.pk, annotator, {**revision.content, "tone_of_voice": "warm"}, revision.version, reviewed=True
    )
    submit_assignment(Assignment.objects.get(clip=clip, annotator=annotator), annotator)
    clip.refresh_from_db()
    assert clip.state == ClipState.REVIEWED
    assert "tone_of_voice" not in state_of(clip, 2).disputes, "the re-review settled the disagreement"


def test_rereview_of_someone_not_assigned_is_refused(clip, lead):
    with pytest.raises(ServiceError, match="not assigned"):
        services.request_rereview(clip, "lead1", lead)


# --- progress -------------------------------------------------------------------------


def test_project_progress_counts_rows_and_open_disagreements_per_field(clip, lead):
    progress = selectors.project_progress(clip.project)
    assert progress["clips"] == 1 and progress["clips_adjudicated"] == 0
    assert progress["rows"] == 3 and progress["rows_adjudicated"] == 0
    assert (
        progress["disagreements_left"]["utterance_type"] == 1 and progress["disagreements_left"]["tone_of_voice"] == 1
    )
    assert progress["disagreements_left_total"] == 2
    services.accept_unanimous(clip, lead)
    services.decide(state_of(clip, 1).row.pk, lead, "utterance_type", "ann1", 0)
    progress = selectors.project_progress(clip.project)
    assert progress["rows_adjudicated"] == 2 and progress["disagreements_left_total"] == 1
    assert progress["per_clip"][0]["coders"] == 2 and progress["per_clip"][0]["disputed_rows"] == 2


# --- gold is empty until decided; suggestions ----------------------------------------


def test_no_gold_until_a_decision_and_the_suggestion_says_where_it_comes_from(
    project, tmp_path, annotator, other_annotator
):
    from annotation.services import create_user

    third = create_user("ann3", "annotator", password="pw-ann3-123456")[0]
    edits = {
        "ann1": {1: {"utterance_type": "request"}, 2: {"tone_of_voice": "calm"}},
        "ann3": {1: {"utterance_type": "request"}, 2: {"tone_of_voice": "warm"}},
        "ann2": {2: {"tone_of_voice": "soft"}},
    }
    clip = reviewed_clip(project, tmp_path, [annotator, other_annotator, third], edits)
    first, second, third_row = (selectors.gold_document(state_of(clip, i)) for i in (1, 2, 3))
    assert first["content"] is None and first["decisions"] == {} and first["version"] == 0
    assert first["suggestion"]["fields"]["utterance_type"] == {
        "kind": "majority",
        "source": "ann1",
        "agree": ["ann1", "ann3"],
    }
    assert first["suggestion"]["content"]["utterance_type"] == "request"
    assert "tone_of_voice" not in second["suggestion"]["fields"], (
        "three ways apart: no suggestion, the draft never decides"
    )
    assert second["suggestion"]["content"]["tone_of_voice"] == "", "the open field is empty, not the draft's value"
    assert third_row["suggestion"]["fields"]["target"]["kind"] == "unanimous"
    assert not Gold.objects.filter(row__clip=clip).exists()


def test_accepting_a_suggestion_never_takes_the_draft_where_the_coders_split(clip, lead):
    row = state_of(clip, 2).row  # ann1 "calm", ann2 "warm": no majority, so no suggestion
    gold = services.accept_suggestion(row.pk, lead, 0)
    assert "tone_of_voice" not in gold.decisions and gold.decisions["target"]["source"] == "unanimous"
    assert gold.content["tone_of_voice"] == "" != state_of(clip, 2).draft.content["tone_of_voice"]
    assert not state_of(clip, 2).adjudicated, "the split field stays open for the lead"
    with pytest.raises(ServiceError, match="nothing to accept on row 2"):
        services.accept_suggestion(row.pk, lead, gold.version)
    with pytest.raises(services.GoldConflict):
        services.accept_suggestion(state_of(clip, 1).row.pk, lead, 3)
    with pytest.raises(ServiceError, match="nothing to accept on row 1"):
        services.accept_suggestion(state_of(clip, 1).row.pk, lead, 0, ["utterance_type"])
    taken = services.decide(row.pk, lead, "tone_of_voice", "ann2", gold.version)
    assert taken.decisions["tone_of_voice"]["source"] == "ann2" and state_of(clip, 2).adjudicated


# --- the schema's completeness rules at adjudication ----------------------------------


def test_gold_is_held_to_a_persons_rules_at_every_entry_point(project, tmp_path, lead, annotator, other_annotator):
    # Both coders' row 3 has a relation pattern without its reason (as revisions imported from elsewhere may).
    clip = reviewed_clip(project, tmp_path, [annotator, other_annotator], edits={})
    for revision in Revision.objects.filter(row__clip=clip, row__row_index=3):
        Revision.objects.filter(pk=revision.pk).update(content={**revision.content, "relation_pattern_reason": ""})
    result = services.accept_unanimous(clip, lead)
    assert 3 in result.invalid and result.invalid[3][0]["code"] == "relation_reason_missing"
    state = state_of(clip, 3)
    with pytest.raises(InvalidDocument) as refused:
        services.save_gold(
            state.row.pk, lead, {**state.base()[0], "relation_pattern_evidence_rows": [1], "relation_pattern": None}, 0
        )
    assert {i.code for i in refused.value.issues} == {"evidence_without_pattern"}
    assert {i.code for i in services.validate_gold(state.row, state.base()[0])} == {"relation_reason_missing"}
    # Accepted anyway (a suggestion is taken as it is), the gold keeps the issue and the clip cannot close on it.
    services.accept_suggestion(state.row.pk, lead, 0)
    assert [w["code"] for w in gold_of(clip, 3).warnings] == ["relation_reason_missing"]
    with pytest.raises(ServiceError, match="gold that does not validate \\(rows 3\\)"):
        services.mark_adjudicated(clip, lead)


def test_the_label_filter_offers_each_label_once_and_matches_any_kind(clip):
    payload = selectors.adjudication_payload(clip)
    labels = [c["label"] for c in payload["label_choices"]]
    assert labels.count("repair") == 1 and {"utterance type", "strategy"} == set(
        next(c for c in payload["label_choices"] if c["label"] == "repair")["kinds"]
    )
    shown = lambda **f: [s.row.row_index for s in selectors.row_states(clip) if selectors.RowFilter(**f).matches(s)]  # noqa: E731
    assert shown(label="request") == [1] and shown(label="track") == [2] and shown(label="utterance:track") == []
