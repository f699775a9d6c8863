"""The annotator's workspace through its API: blind, safe saves, reviewing and submitting."""

import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.assignment.services import assign_clips
from annotation.models import AssignmentMode, AssignmentState, ClipState, Comment, Revision, RevisionStatus
from annotation.rescue_format.importer import import_rescue
from annotation.services import ServiceError, create_user
from annotation.starting import reassign, start_assignment

from .builders.api import api_for
from .builders.documents import client_row, couple_clip, family_clip, therapist_row

pytestmark = pytest.mark.django_db


@pytest.fixture
def clip(project, tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text(json.dumps(couple_clip()) + "\n", encoding="utf-8")
    import_rescue(path, project, as_source="draft")
    return project.clips.get()


@pytest.fixture
def assigned(clip, annotator):
    start_assignment(clip, annotator)
    return clip


def my_revision(clip, user, row_index=1):
    return Revision.objects.get(row__clip=clip, row__row_index=row_index, annotator=user)


def test_assignment_starts_from_a_copy_of_the_draft(assigned, annotator):
    revision = my_revision(assigned, annotator)
    assert revision.content == revision.row.draft.content
    assert revision.status == RevisionStatus.UNTOUCHED and revision.version == 1


def test_calibration_assignment_starts_empty_and_hides_the_draft(clip, annotator):
    start_assignment(clip, annotator, mode=AssignmentMode.FROM_EMPTY)
    revision = my_revision(clip, annotator)
    assert (
        revision.content["target"] == []
        and revision.content["utterance_type"] == ""
        and revision.content["relation_pattern"] is None
    )
    payload = api_for(annotator).get(f"/api/v1/clips/{clip.pk}/workspace/").json()
    assert all(row["draft"] is None for row in payload["rows"])


def test_save_validates_stores_and_bumps_the_version(assigned, annotator):
    revision = my_revision(assigned, annotator)
    content = {**revision.content, "utterance_type": "request", "target": ["Tobias"]}
    response = api_for(annotator).put(
        f"/api/v1/revisions/{revision.pk}/", {"content": content, "version": 1}, format="json"
    )
    assert response.status_code == 200, response.json()
    assert response.json()["version"] == 2 and response.json()["status"] == "edited"
    revision.refresh_from_db()
    assert revision.content["utterance_type"] == "request" and revision.content["target"] == ["Tobias"]
    assert revision.history.first().history_source == "api" and revision.history.first().history_user == annotator


def test_stale_save_is_refused_with_the_current_state(assigned, annotator):
    revision = my_revision(assigned, annotator)
    client = api_for(annotator)
    first = {**revision.content, "tone_of_voice": "first tab"}
    assert (
        client.put(f"/api/v1/revisions/{revision.pk}/", {"content": first, "version": 1}, format="json").status_code
        == 200
    )
    second = {**revision.content, "tone_of_voice": "second tab"}
    response = client.put(f"/api/v1/revisions/{revision.pk}/", {"content": second, "version": 1}, format="json")
    assert response.status_code == 409
    body = response.json()
    assert body["current"]["version"] == 2 and body["current"]["content"]["tone_of_voice"] == "first tab"
    revision.refresh_from_db()
    assert revision.content["tone_of_voice"] == "first tab", "the stale save changed nothing"


def test_invalid_save_is_refused_with_field_paths(assigned, annotator):
    revision = my_revision(assigned, annotator, row_index=2)  # a therapist row
    content = {**revision.content, "utterance_type": "request"}
    content["support_strategy"] = [
        {**content["support_strategy"][0], "target": ["Therapist"], "strategy_type": "validation"}
    ]
    response = api_for(annotator).put(
        f"/api/v1/revisions/{revision.pk}/", {"content": content, "version": 1}, format="json"
    )
    assert response.status_code == 422
    paths = {(i["path"], i["code"]) for i in response.json()["issues"]}
    assert {
        ("utterance_type", "utterance_type_on_therapist"),
        ("support_strategy[0].target[0]", "self_target"),
        ("support_strategy[0].strategy_type", "label_unknown"),
    } <= paths
    revision.refresh_from_db()
    assert revision.version == 1


def test_validate_endpoint_checks_without_saving(assigned, annotator):
    revision = my_revision(assigned, annotator)
    content = {**revision.content, "target": ["Maya"]}
    response = api_for(annotator).post(
        f"/api/v1/revisions/{revision.pk}/validate/", {"content": content}, format="json"
    )
    assert [(i["path"], i["code"]) for i in response.json()["issues"]] == [("target[0]", "self_target")]
    revision.refresh_from_db()
    assert revision.content["target"] == ["Therapist"]


def test_relation_pattern_edit_is_mirrored_on_therapist_rows_in_the_regular_convention(project, tmp_path, annotator):
    path = tmp_path / "f.jsonl"
    path.write_text(json.dumps(family_clip()) + "\n", encoding="utf-8")
    import_rescue(path, project, as_source="draft")
    clip = project.clips.get()
    clip.rows.get(row_index=5).draft.__class__.objects.update(layout={})  # documents made on the platform
    start_assignment(clip, annotator)
    revision = my_revision(clip, annotator, row_index=5)
    content = {
        **revision.content,
        "relation_pattern": "repair_softening",
        "relation_pattern_reason": "apology lands",
        "relation_pattern_evidence_rows": [4, 5],
    }
    content["relation_cycle_reason"], content["relation_cycle_evidence_rows"] = "", []
    response = api_for(annotator).put(
        f"/api/v1/revisions/{revision.pk}/", {"content": content, "version": 1}, format="json"
    )
    assert response.status_code == 200, response.json()
    stored = response.json()["content"]
    assert stored["relation_cycle_state"] == "repair_softening" and stored["relation_cycle_evidence_rows"] == [4, 5]


def test_mark_reviewed_requires_a_valid_row_and_submit_requires_every_row(assigned, annotator):
    client = api_for(annotator)
    assignment = assigned.assignments.get()
    response = client.post(f"/api/v1/assignments/{assignment.pk}/submit/")
    assert response.status_code == 422 and "3 rows are not reviewed yet" in response.json()["detail"]
    for index in (1, 2, 3):
        revision = my_revision(assigned, annotator, index)
        assert (
            client.post(
                f"/api/v1/revisions/{revision.pk}/review/", {"version": revision.version}, format="json"
            ).status_code
            == 200
        )
    response = client.post(f"/api/v1/assignments/{assignment.pk}/submit/")
    assert response.status_code == 200 and response.json()["state"] == "submitted"
    assigned.refresh_from_db()
    assert assigned.state == ClipState.REVIEWED, "the only coder submitted"
    revision = my_revision(assigned, annotator)
    late = client.put(
        f"/api/v1/revisions/{revision.pk}/", {"content": revision.content, "version": revision.version}, format="json"
    )
    assert late.status_code == 403 and "submitted" in late.json()["detail"]


def test_marking_an_invalid_row_reviewed_is_refused(clip, annotator):
    start_assignment(clip, annotator, mode=AssignmentMode.FROM_EMPTY)
    revision = my_revision(clip, annotator)
    response = api_for(annotator).post(f"/api/v1/revisions/{revision.pk}/review/", {"version": 1}, format="json")
    assert response.status_code == 422
    assert ("target", "target_empty") in {(i["path"], i["code"]) for i in response.json()["issues"]}


def test_annotators_never_reach_each_others_work(assigned, annotator, other_annotator, project, tmp_path):
    start_assignment(assigned, other_annotator)
    theirs = my_revision(assigned, other_annotator)
    mine = api_for(annotator)
    assert mine.get(f"/api/v1/revisions/{theirs.pk}/").status_code == 404
    assert (
        mine.put(
            f"/api/v1/revisions/{theirs.pk}/", {"content": theirs.content, "version": 1}, format="json"
        ).status_code
        == 404
    )
    assert mine.post(f"/api/v1/revisions/{theirs.pk}/validate/", {"content": {}}, format="json").status_code == 404
    assert mine.post(f"/api/v1/revisions/{theirs.pk}/review/", {"version": 1}, format="json").status_code == 404
    assert (
        mine.post(f"/api/v1/assignments/{assigned.assignments.get(annotator=other_annotator).pk}/submit/").status_code
        == 404
    )
    payload = mine.get(f"/api/v1/clips/{assigned.pk}/workspace/").json()
    assert {r["revision"]["id"] for r in payload["rows"]} == set(
        Revision.objects.filter(annotator=annotator).values_list("pk", flat=True)
    )
    # comments are private to their author
    api_for(other_annotator).post(
        f"/api/v1/clips/{assigned.pk}/comments/", {"row": 1, "body": "B's private note"}, format="json"
    )
    assert mine.get(f"/api/v1/clips/{assigned.pk}/comments/").json() == []
    assert [a["sample_id"] for a in mine.get("/api/v1/assignments/").json()] == [assigned.sample_id]
    # an unassigned clip does not exist for them
    path = tmp_path / "f.jsonl"
    path.write_text(json.dumps(family_clip()) + "\n", encoding="utf-8")
    import_rescue(path, project, as_source="draft")
    other_clip = project.clips.get(sample_id="okafor_family/001_dinner")
    assert mine.get(f"/api/v1/clips/{other_clip.pk}/workspace/").status_code == 404
    assert mine.post(f"/api/v1/clips/{other_clip.pk}/comments/", {"body": "x"}, format="json").status_code == 404


def test_comments_flags_and_discard_proposals(assigned, annotator):
    client = api_for(annotator)
    url = f"/api/v1/clips/{assigned.pk}/comments/"
    assert (
        client.post(url, {"row": 2, "kind": "flag_split", "body": "two addressees"}, format="json").status_code == 201
    )
    assert (
        client.post(url, {"kind": "discard_proposal", "body": "subtitles drift by 3 s"}, format="json").status_code
        == 201
    )
    assert client.post(url, {"kind": "flag_merge", "body": "no row"}, format="json").status_code == 422
    assert client.post(url, {"row": 9, "body": "x"}, format="json").status_code == 422
    assert (
        client.post(url, {"kind": "discard_proposal", "body": "   "}, format="json").status_code == 400
        or Comment.objects.count() == 2
    )
    assert Comment.objects.count() == 2
    assert {c.kind for c in Comment.objects.all()} == {"flag_split", "discard_proposal"}


def test_balanced_assignment_never_repeats_an_annotator(project, tmp_path):
    users = [create_user(f"a{i}", "annotator", password="pw-123456789")[0] for i in range(4)]
    path = tmp_path / "many.jsonl"
    path.write_text("".join(json.dumps(couple_clip(f"g{i}/c{i}")) + "\n" for i in range(6)), encoding="utf-8")
    import_rescue(path, project, as_source="draft")
    plan = assign_clips(project, per_clip=3, calibration=2, seed=1)
    assert len(plan.created) == 18
    loads = {u.username: u.assignments.count() for u in users}
    assert sorted(loads.values()) == [4, 4, 5, 5]
    for clip in project.clips.all():
        annotators = list(clip.assignments.values_list("annotator", flat=True))
        assert len(annotators) == len(set(annotators)) == 3
        assert clip.state == ClipState.IN_REVIEW
    modes = {c.sample_id: set(c.assignments.values_list("mode", flat=True)) for c in project.clips.all()}
    assert sum(m == {"from_empty"} for m in modes.values()) == 2
    assert assign_clips(project, per_clip=3).created == [], "assigning again adds nothing"
    with pytest.raises(ServiceError, match="only 4 annotators"):
        assign_clips(project, per_clip=5)


def test_reassign_keeps_edited_work_unless_told(assigned, annotator, other_annotator):
    assignment = assigned.assignments.get()
    revision = my_revision(assigned, annotator)
    api_for(annotator).put(
        f"/api/v1/revisions/{revision.pk}/",
        {"content": {**revision.content, "tone_of_voice": "x"}, "version": 1},
        format="json",
    )
    with pytest.raises(ServiceError, match="already edited"):
        reassign(assignment, other_annotator)
    new = reassign(assignment, other_annotator, discard_edits=True)
    assert new.annotator == other_annotator and new.state == AssignmentState.ASSIGNED
    assert not Revision.objects.filter(annotator=annotator).exists()


def test_workspace_payload_query_count_does_not_grow_with_rows(project, annotator, tmp_path):
    def clip_with(n, name):
        rows = [
            client_row(i, speaker="Maya" if i % 2 else "Tobias", target=("Therapist",)) if i % 3 else therapist_row(i)
            for i in range(1, n + 1)
        ]
        path = tmp_path / f"{name}.jsonl"
        path.write_text(json.dumps(couple_clip(f"g/{name}", rows)) + "\n", encoding="utf-8")
        import_rescue(path, project, as_source="draft")
        clip = project.clips.get(sample_id=f"g/{name}")
        start_assignment(clip, annotator)
        return clip

    client = api_for(annotator)
    counts = []
    for n in (15, 60):
        clip = clip_with(n, f"c{n}")
        with CaptureQueriesContext(connection) as ctx:
            assert client.get(f"/api/v1/clips/{clip.pk}/workspace/").status_code == 200
        counts.append(len(ctx.captured_queries))
    assert counts[0] == counts[1], counts


def test_annotators_see_what_leads_wrote_but_not_other_annotators(assigned, annotator, other_annotator, lead):
    from annotation.workspace.services import add_comment

    start_assignment(assigned, other_annotator)
    add_comment(assigned, lead, "Please re-check rows 2-3: the target is the couple.")
    add_comment(assigned, other_annotator, "B's private note")
    add_comment(assigned, annotator, "my own note")
    bodies = {c["body"] for c in api_for(annotator).get(f"/api/v1/clips/{assigned.pk}/comments/").json()}
    assert bodies == {"Please re-check rows 2-3: the target is the couple.", "my own note"}


def test_a_save_that_loses_the_race_is_a_conflict_not_an_overwrite(assigned, annotator):
    from annotation.workspace import services

    # Both saves read version 1; the first one to write wins, the other must not overwrite it.
    stale = services.load_for_save(my_revision(assigned, annotator).pk, annotator)
    services.save_revision(stale.revision_id, annotator, {**stale.content, "tone_of_voice": "winner"}, 1)
    with pytest.raises(services.VersionConflict):
        services.save_revision(
            stale.revision_id, annotator, {**stale.content, "tone_of_voice": "loser"}, 1, target=stale
        )
    current = my_revision(assigned, annotator)
    assert current.content["tone_of_voice"] == "winner" and current.version == 2
    history = list(current.history.order_by("history_date").values_list("history_type", "version"))
    assert history == [("+", 1), ("~", 2)], "one audit record per write"


@pytest.mark.parametrize(
    "change,path,code",
    [
        (
            lambda c: c["internal_emotion"].append({"person": "Maya", "emotion_description": "", "intensity": 5}),
            "internal_emotion[1].emotion_description",
            "text_empty",
        ),
        (
            lambda c: c.update(relation_pattern=None, relation_pattern_evidence_rows=[2]),
            "relation_pattern_evidence_rows",
            "evidence_without_pattern",
        ),
        (
            lambda c: c.update(relation_pattern="", relation_pattern_reason=""),
            "relation_pattern_reason",
            "relation_reason_missing",
        ),
    ],
    ids=["empty entry text", "evidence without a pattern", "no clear pattern without a reason"],
)
def test_the_api_refuses_a_phantom_save_with_the_schemas_path(assigned, annotator, change, path, code):
    revision = my_revision(assigned, annotator)
    content = json.loads(json.dumps(revision.content))
    change(content)
    client = api_for(annotator)
    response = client.put(f"/api/v1/revisions/{revision.pk}/", {"content": content, "version": 1}, format="json")
    assert response.status_code == 422
    assert (path, code) in {(i["path"], i["code"]) for i in response.json()["issues"]}
    checked = client.post(f"/api/v1/revisions/{revision.pk}/validate/", {"content": content}, format="json").json()[
        "issues"
    ]
    assert (path, code) in {(i["path"], i["code"]) for i in checked}, "the editor's live check says the same"
    revision.refresh_from_db()
    assert revision.version == 1


def test_marking_a_row_reviewed_refuses_a_pattern_without_a_reason(project, tmp_path, annotator):
    doc = couple_clip()
    doc["rows"][2]["relation_pattern_reason"] = ""  # the draft's tolerance: imported with it
    path = tmp_path / "c.jsonl"
    path.write_text(json.dumps(doc) + "\n", encoding="utf-8")
    import_rescue(path, project, as_source="draft")
    clip = project.clips.get()
    start_assignment(clip, annotator)
    revision = my_revision(clip, annotator, 3)
    response = api_for(annotator).post(f"/api/v1/revisions/{revision.pk}/review/", {"version": 1}, format="json")
    assert response.status_code == 422
    assert [(i["path"], i["code"]) for i in response.json()["issues"]] == [
        ("relation_pattern_reason", "relation_reason_missing")
    ]


def test_the_payload_says_why_a_clip_cannot_be_edited(assigned, annotator, lead):
    client = api_for(annotator)
    assert client.get(f"/api/v1/clips/{assigned.pk}/workspace/").json()["read_only"] is None
    assert api_for(lead).get(f"/api/v1/clips/{assigned.pk}/workspace/").json()["read_only"]["reason"] == "not_assigned"
    for index in (1, 2, 3):
        revision = my_revision(assigned, annotator, index)
        client.post(f"/api/v1/revisions/{revision.pk}/review/", {"version": revision.version}, format="json")
    client.post(f"/api/v1/assignments/{assigned.assignments.get().pk}/submit/")
    read_only = client.get(f"/api/v1/clips/{assigned.pk}/workspace/").json()["read_only"]
    assert read_only["reason"] == "submitted" and "A lead can reopen it" in read_only["message"] and read_only["since"]
    for state, reason in ((ClipState.RELEASED, "released"), (ClipState.DISCARDED, "discarded")):
        assigned.state = state
        assigned.discard_reason = "speaker mismatch" if state == ClipState.DISCARDED else ""
        assigned.save()
        read_only = client.get(f"/api/v1/clips/{assigned.pk}/workspace/").json()["read_only"]
        assert read_only["reason"] == reason
    # The reason may quote a coder's discard proposal: coders are blind to each other, so it is never shown.
    assert "speaker mismatch" not in read_only["message"] and "A lead discarded this clip" in read_only["message"]


def test_replay_settings_are_kept_per_annotator(assigned, annotator, other_annotator):
    client = api_for(annotator)
    assert client.get("/api/v1/me/workspace-settings/").json() == {"replay_speed": 1.0, "preroll": 0.0}
    saved = client.put("/api/v1/me/workspace-settings/", {"replay_speed": 0.75, "preroll": 0.5}, format="json")
    assert saved.status_code == 200 and saved.json() == {"replay_speed": 0.75, "preroll": 0.5}
    assert client.put("/api/v1/me/workspace-settings/", {"preroll": 0.25}, format="json").json() == {
        "replay_speed": 0.75,
        "preroll": 0.25,
    }
    assert client.put("/api/v1/me/workspace-settings/", {"replay_speed": 2}, format="json").status_code == 422
    assert client.put("/api/v1/me/workspace-settings/", {"preroll": 5}, format="json").status_code == 422
    assert client.get(f"/api/v1/clips/{assigned.pk}/workspace/").json()["settings"] == {
        "replay_speed": 0.75,
        "preroll": 0.25,
    }
    assert api_for(other_annotator).get("/api/v1/me/workspace-settings/").json() == {
        "replay_speed": 1.0,
        "preroll": 0.0,
    }, "each their own"
