"""The lead's adjudication and assignment API and pages: the same operations for
scripts, leads only, and a page whose query count does not grow with its rows."""

from __future__ import annotations

import json
import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation.adjudication import selectors
from annotation.models import Assignment, AssignmentMode, ClipState, CommentKind, Gold, Revision
from annotation.rescue_format.importer import import_rescue
from annotation.services import create_user
from annotation.starting import start_assignment
from annotation.workspace.services import add_comment

from .builders.adjudication import reviewed_clip
from .builders.api import api_for
from .builders.documents import client_row, couple_clip, therapist_row

pytestmark = pytest.mark.django_db


@pytest.fixture
def clip(project, tmp_path, annotator, other_annotator):
    return reviewed_clip(project, tmp_path, [annotator, other_annotator])


def row_id(clip, index):
    return clip.rows.get(row_index=index).pk


# --- the adjudication API ------------------------------------------------------------


def test_clip_payload_sets_draft_and_coders_side_by_side(clip, lead):
    body = api_for(lead).get(f"/api/v1/clips/{clip.pk}/adjudication/").json()
    assert [c["username"] for c in body["coders"]] == ["ann1", "ann2"]
    first = body["rows"][0]
    assert first["disputed"] == ["utterance_type"] and first["outliers"] == {"utterance_type": ["ann1", "ann2"]}
    assert first["coders"]["ann1"]["content"]["utterance_type"] == "request"
    assert first["draft"]["content"]["utterance_type"] == "disclosure"
    assert first["gold"] == {**first["gold"], "id": None, "version": 0, "status": "open"}
    assert body["rows"][2]["gold"]["status"] == "new" and body["rows"][2]["unanimous"]
    assert body["summary"] == {
        **body["summary"],
        "rows": 3,
        "disputed_rows": 2,
        "undecided_fields": 2,
        "unanimous_without_gold": 1,
    }


def test_clip_payload_filters_rows(clip, lead):
    client = api_for(lead)

    def indices(query):
        return [r["row_index"] for r in client.get(f"/api/v1/clips/{clip.pk}/adjudication/?{query}").json()["rows"]]

    assert indices("disagreements=1") == [1, 2]
    assert indices("field=tone_of_voice") == [2]
    assert indices("label=utterance:request") == [1]
    assert indices("annotator=ann2&field=utterance_type") == [1]


def test_decide_save_validate_and_conflict_through_the_api(clip, lead):
    client = api_for(lead)
    taken = client.post(
        f"/api/v1/rows/{row_id(clip, 1)}/gold/decide/",
        {"field": "utterance_type", "source": "ann1", "version": 0, "note": "clear ask"},
        format="json",
    )
    assert taken.status_code == 200, taken.json()
    assert taken.json()["version"] == 1 and taken.json()["status"] == "decided"
    assert taken.json()["decisions"]["utterance_type"]["note"] == "clear ask"
    stale = client.post(
        f"/api/v1/rows/{row_id(clip, 1)}/gold/decide/",
        {"field": "utterance_type", "source": "ann2", "version": 0},
        format="json",
    )
    assert stale.status_code == 409 and stale.json()["current"]["content"]["utterance_type"] == "request"

    gold = client.get(f"/api/v1/rows/{row_id(clip, 2)}/gold/").json()
    content = {**gold["suggestion"]["content"], "tone_of_voice": "calm and warm"}
    bad = client.post(
        f"/api/v1/rows/{row_id(clip, 2)}/gold/validate/", {"content": {**content, "target": []}}, format="json"
    )
    assert [i["code"] for i in bad.json()["issues"]] == ["target_empty"]
    refused = client.put(
        f"/api/v1/rows/{row_id(clip, 2)}/gold/", {"content": {**content, "target": []}, "version": 0}, format="json"
    )
    assert refused.status_code == 422 and refused.json()["issues"][0]["path"] == "target"
    saved = client.put(
        f"/api/v1/rows/{row_id(clip, 2)}/gold/",
        {"content": content, "version": 0, "notes": {"tone_of_voice": "both"}},
        format="json",
    )
    assert saved.status_code == 200, saved.json()
    assert saved.json()["decisions"]["tone_of_voice"]["source"] == "edit"
    stored = Gold.objects.get(row_id=row_id(clip, 2))
    assert stored.history.first().history_source == "api" and stored.history.first().history_user == lead


def test_clip_level_operations_through_the_api(clip, lead, annotator):
    client = api_for(lead)
    accepted = client.post(f"/api/v1/clips/{clip.pk}/adjudication/accept-unanimous/").json()
    assert accepted["accepted"] == [3]
    refused = client.post(f"/api/v1/clips/{clip.pk}/adjudication/mark-adjudicated/")
    assert refused.status_code == 422 and "2 row(s) have no gold (rows 1, 2)" in refused.json()["detail"]
    for index, name in ((1, "utterance_type"), (2, "tone_of_voice")):
        assert (
            client.post(
                f"/api/v1/rows/{row_id(clip, index)}/gold/decide/",
                {"field": name, "source": "ann2", "version": 0},
                format="json",
            ).status_code
            == 200
        )
    done = client.post(f"/api/v1/clips/{clip.pk}/adjudication/mark-adjudicated/")
    assert done.status_code == 200 and done.json()["state"] == "adjudicated"
    reopened = client.post(
        f"/api/v1/clips/{clip.pk}/adjudication/rereview/", {"annotator": "ann1", "message": "row 1"}, format="json"
    )
    assert reopened.json() == {**reopened.json(), "state": "reopened", "clip_state": "in_review"}
    proposal = add_comment(clip, annotator, "audio is missing", kind=CommentKind.DISCARD_PROPOSAL)
    discarded = client.post(
        f"/api/v1/clips/{clip.pk}/adjudication/accept-discard/", {"comment": proposal.pk}, format="json"
    )
    assert discarded.json()["state"] == "discarded" and discarded.json()["discard_reason"].startswith(
        "audio is missing"
    )


def test_project_progress_endpoint(clip, lead):
    body = api_for(lead).get(f"/api/v1/projects/{clip.project.slug}/adjudication/").json()
    assert body["rows"] == 3 and body["disagreements_left_total"] == 2
    assert body["per_clip"][0]["sample_id"] == clip.sample_id and body["per_clip"][0]["discard_proposals"] == 0


# --- assignment ----------------------------------------------------------------------


@pytest.fixture
def imported(project, tmp_path):
    for n in range(4):
        doc = couple_clip(sample_id=f"maya_and_tobias/{n:03d}_clip")
        path = tmp_path / f"{n}.jsonl"
        path.write_text(json.dumps(doc) + "\n", encoding="utf-8")
        import_rescue(path, project, as_source="draft")
    return project


def test_bulk_assignment_with_a_calibration_list_through_the_api(imported, lead, annotator, other_annotator):
    create_user("ann3", "annotator", password="x-pass-12345")
    client = api_for(lead)
    response = client.post(
        f"/api/v1/projects/{imported.slug}/assignments/",
        {"per_clip": 2, "calibration_clips": ["maya_and_tobias/001_clip"]},
        format="json",
    )
    assert response.status_code == 201, response.json()
    assert len(response.json()["created"]) == 8
    modes = {(a.clip.sample_id, a.mode) for a in Assignment.objects.select_related("clip")}
    assert ("maya_and_tobias/001_clip", AssignmentMode.FROM_EMPTY) in modes
    assert sum(1 for _, m in modes if m == AssignmentMode.FROM_EMPTY) == 1
    listing = client.get(f"/api/v1/projects/{imported.slug}/assignments/").json()
    assert sorted(p["clips"] for p in listing["progress"]) == [2, 3, 3]


def test_bulk_assignment_with_a_calibration_number_and_bad_input(imported, lead, annotator, other_annotator):
    client = api_for(lead)
    both = client.post(
        f"/api/v1/projects/{imported.slug}/assignments/", {"calibration": 1, "calibration_clips": ["x"]}, format="json"
    )
    assert both.status_code == 400
    too_many = client.post(f"/api/v1/projects/{imported.slug}/assignments/", {"per_clip": 3}, format="json")
    assert too_many.status_code == 422 and "only 2 annotators" in too_many.json()["detail"]
    ok = client.post(
        f"/api/v1/projects/{imported.slug}/assignments/", {"per_clip": 2, "calibration": 2, "seed": 7}, format="json"
    )
    assert ok.status_code == 201
    assert Assignment.objects.filter(mode=AssignmentMode.FROM_EMPTY).values("clip").distinct().count() == 2


def test_reassign_through_the_api(imported, lead, annotator, other_annotator):
    clip = imported.clips.first()
    assignment = start_assignment(clip, annotator)
    response = api_for(lead).post(
        f"/api/v1/assignments/{assignment.pk}/reassign/", {"annotator": "ann2"}, format="json"
    )
    assert response.status_code == 201 and response.json()["annotator"] == "ann2"
    assert not Revision.objects.filter(row__clip=clip, annotator=annotator).exists()


def test_assignment_page_assigns_in_bulk_with_a_calibration_number(client, imported, lead, annotator, other_annotator):
    client.force_login(lead)
    page = client.get(reverse("assignment-index", args=[imported.slug]))
    assert page.status_code == 200 and b"Calibration draw" in page.content
    every_clip = list(imported.clips.values_list("sample_id", flat=True))
    response = client.post(
        reverse("assignment-index", args=[imported.slug]),
        {"per_clip": 2, "clips": every_clip, "calibration": "1", "seed": 0},
        follow=True,
    )
    assert b"8 assignments created" in response.content
    assert Assignment.objects.filter(mode=AssignmentMode.FROM_EMPTY).count() == 2
    assert (
        b"ann1" in response.content and b"4 / 12" not in response.content
    )  # progress table shows rows reviewed of rows
    first = Assignment.objects.filter(annotator=annotator).first()
    create_user("ann3", "annotator", password="x-pass-12345")
    moved = client.post(reverse("assignment-reassign", args=[first.pk]), {"annotator": "ann3"}, follow=True)
    assert b"ann1 \xe2\x86\x92 ann3" in moved.content


def test_assignment_page_refuses_unknown_calibration_clips(client, imported, lead, annotator, other_annotator):
    client.force_login(lead)
    ticked = ["maya_and_tobias/000_clip"]
    response = client.post(
        reverse("assignment-index", args=[imported.slug]),
        {"per_clip": 2, "clips": ticked, "calibration_clips": ["maya_and_tobias/001_clip"], "seed": 0},
    )
    assert (
        response.status_code == 422
        and b"Calibration clips must be ticked for assignment too: maya_and_tobias/001_clip" in response.content
    )
    assert not Assignment.objects.exists()


# --- pages ---------------------------------------------------------------------------


def test_clip_page_embeds_the_payload_and_escapes_text(client, project, tmp_path, annotator, other_annotator, lead):
    doc = couple_clip()
    doc["rows"][0]["dialogue_cleaned"] = "<script>alert(1)</script>"
    clip = reviewed_clip(project, tmp_path, [annotator, other_annotator], doc=doc)
    client.force_login(lead)
    page = client.get(reverse("adjudication-clip", args=[clip.pk]) + "?disagreements=1&field=tone_of_voice")
    assert page.status_code == 200
    text = page.content.decode()
    assert "<script>alert(1)</script>" not in text
    embedded = json.loads(
        re.search(r'<script id="workspace-data" type="application/json">(.*?)</script>', text, re.S).group(1)
    )
    assert embedded["filters"] == {
        "disagreements": True,
        "open": False,
        "field": "tone_of_voice",
        "label": "",
        "annotator": "",
        "order": "",
    }, "the page starts filtered"
    assert embedded["summary"]["unanimous_without_gold"] == 1 and embedded["can_mark"] is True
    assert embedded["rows"][0]["dialogue_cleaned"] == "<script>alert(1)</script>", "kept as text, inert inside the JSON"


def test_clip_page_forms_carry_out_clip_decisions_and_keep_the_filters(client, clip, lead, annotator):
    client.force_login(lead)
    url = reverse("adjudication-accept-unanimous", args=[clip.pk]) + "?disagreements=1"
    response = client.post(url, {"row": "2"})
    assert response.status_code == 302 and response["Location"].endswith("?disagreements=1#row-2")
    assert Gold.objects.filter(row__clip=clip).count() == 1
    response = client.post(reverse("adjudication-mark-adjudicated", args=[clip.pk]), follow=True)
    assert "not adjudicated yet" in response.content.decode()
    proposal = add_comment(clip, annotator, "wrong couple", kind=CommentKind.DISCARD_PROPOSAL)
    page = client.get(reverse("adjudication-clip", args=[clip.pk])).content.decode()
    assert "wrong couple" in page
    client.post(reverse("adjudication-accept-discard", args=[clip.pk]), {"comment": proposal.pk})
    clip.refresh_from_db()
    assert clip.state == ClipState.DISCARDED


def test_progress_page_shows_counts(client, clip, lead):
    client.force_login(lead)
    page = client.get(reverse("adjudication-index", args=[clip.project.slug])).content.decode()
    assert clip.sample_id in page and "Disagreements left: 2" in page


# --- performance -----------------------------------------------------------------------


def long_clip(project, tmp_path, n_rows, sample_id):
    rows = []
    for i in range(1, n_rows + 1):
        start = float(i * 5)
        rows.append(
            therapist_row(i, start=start)
            if i % 3 == 0
            else client_row(i, speaker="Maya" if i % 2 else "Tobias", target=("Therapist",), start=start)
        )
    doc = couple_clip(sample_id=sample_id, rows=rows)
    path = tmp_path / f"{n_rows}.jsonl"
    path.write_text(json.dumps(doc) + "\n", encoding="utf-8")
    import_rescue(path, project, as_source="draft")
    return project.clips.get(sample_id=sample_id)


def seeded_disagreements(clip, coders, lead):
    for user in coders:
        start_assignment(clip, user)
    # A disagreement on every other row, and gold on a third of them.
    for revision in Revision.objects.filter(row__clip=clip, annotator=coders[0], row__row_index__in=range(1, 1000, 2)):
        revision.content = {**revision.content, "tone_of_voice": "sharp"}
        revision.save()
    for state in selectors.row_states(clip)[::3]:
        Gold.objects.create(row=state.row, content=state.base()[0], decided_by=lead)


def test_adjudication_page_query_count_does_not_grow_with_rows(
    client, project, tmp_path, annotator, other_annotator, lead
):
    small = long_clip(project, tmp_path, 15, "maya_and_tobias/015_rows")
    large = long_clip(project, tmp_path, 150, "maya_and_tobias/150_rows")
    for clip in (small, large):
        seeded_disagreements(clip, [annotator, other_annotator], lead)
    client.force_login(lead)
    counts = {}
    for clip in (small, large):
        url = reverse("adjudication-clip", args=[clip.pk])
        client.get(url)  # warm caches (session, taxonomy files)
        with CaptureQueriesContext(connection) as page:
            response = client.get(url)
        assert response.status_code == 200
        with CaptureQueriesContext(connection) as payload:
            body = selectors.adjudication_payload(clip)
        assert len(body["rows"]) == clip.rows.count()
        counts[clip.rows.count()] = (len(page), len(payload))
    print(
        f"\nadjudication page queries: 15 rows -> {counts[15][0]}, 150 rows -> {counts[150][0]}; payload alone: "
        f"{counts[15][1]} / {counts[150][1]}"
    )
    assert counts[15] == counts[150]
    assert counts[150][1] <= 10


def test_nav_landing_goes_straight_to_the_only_project_or_lists_them(client, project, lead):
    client.force_login(lead)
    response = client.get(reverse("adjudication-projects"))
    assert response.status_code == 302 and response["Location"] == reverse("adjudication-index", args=[project.slug])
    assert client.get(reverse("assignment-projects"))["Location"] == reverse("assignment-index", args=[project.slug])
    from annotation.services import create_project

    create_project("second", name="Second benchmark")
    listing = client.get(reverse("assignment-projects")).content.decode()
    assert (
        reverse("assignment-index", args=["second"]) in listing
        and reverse("assignment-index", args=[project.slug]) in listing
    )


def test_accepting_the_suggestion_through_the_api(clip, lead, annotator):
    client = api_for(lead)
    url = f"/api/v1/rows/{row_id(clip, 1)}/gold/accept-suggestion/"
    before = client.get(f"/api/v1/rows/{row_id(clip, 1)}/gold/").json()
    assert before["content"] is None and "utterance_type" not in before["suggestion"]["fields"], (
        "the coders split: no suggestion"
    )
    split = client.post(url, {"version": 0, "fields": ["utterance_type"]}, format="json")
    assert split.status_code == 422 and "the lead must take a value" in split.json()["detail"]
    accepted = client.post(url, {"version": 0, "fields": ["tone_of_voice"]}, format="json")
    assert accepted.status_code == 200, accepted.json()
    assert (
        accepted.json()["decisions"]["tone_of_voice"]["source"] == "unanimous" and accepted.json()["status"] == "open"
    )
    assert client.post(url, {"version": 0}, format="json").status_code == 409
    draft = client.post(
        f"/api/v1/rows/{row_id(clip, 1)}/gold/decide/",
        {"field": "utterance_type", "source": "draft", "version": 1},
        format="json",
    )
    assert draft.status_code == 422 and "needs a reason" in draft.json()["detail"]
    draft = client.post(
        f"/api/v1/rows/{row_id(clip, 1)}/gold/decide/",
        {"field": "utterance_type", "source": "draft", "version": 1, "note": "the words are a disclosure"},
        format="json",
    )
    assert (
        draft.status_code == 200
        and draft.json()["decisions"]["utterance_type"]["source"] == "draft"
        and draft.json()["status"] == "decided"
    )
    unknown = client.post(url, {"version": 2, "fields": ["mood"]}, format="json")
    assert unknown.status_code == 422 and "unknown field(s) mood" in unknown.json()["detail"]
    assert client.post(url, {"version": 2}, format="json").status_code == 422, "nothing left to accept"
    assert api_for(annotator).post(url, {"version": 2}, format="json").status_code == 403
