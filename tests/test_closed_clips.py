"""No work continues on a closed clip (it once did on a discarded one).

A discarded or released clip refuses revision saves, reviews, submissions and
comments with 409 and a message that says why (and quotes no coder's
proposal); nothing is written. Reading it stays possible.
"""

from __future__ import annotations

import json

import pytest
from django.test import RequestFactory

from annotation.adjudication.services import accept_discard
from annotation.middleware import RefusalMiddleware
from annotation.models import Clip, ClipState, Comment, CommentKind, Revision
from annotation.services import ClipClosed
from annotation.workspace import services as workspace

from .builders.api import api_for

pytestmark = pytest.mark.django_db

PROPOSAL = "the subtitles belong to another session"


@pytest.fixture
def clip(coded_clip):
    return coded_clip


def discard(clip, proposer, lead):
    proposal = workspace.add_comment(clip, proposer, PROPOSAL, kind=CommentKind.DISCARD_PROPOSAL)
    accept_discard(clip, proposal.pk, lead)


def release(clip):
    Clip.objects.filter(pk=clip.pk).update(state=ClipState.RELEASED)  # as freezing leaves it


def state_of(clip, user):
    return (
        list(
            Revision.objects.filter(row__clip=clip, annotator=user)
            .order_by("pk")
            .values_list("version", "status", "content")
        ),
        Comment.objects.filter(clip=clip).count(),
        clip.assignments.get(annotator=user).state,
    )


def every_write(client, clip, user):
    """(what, response) for a save, a review, a submission, a comment and a flag on ``clip`` by ``user``."""
    revision = Revision.objects.get(row__clip=clip, row__row_index=1, annotator=user)
    content = {**revision.content, "tone_of_voice": "after the discard"}
    assignment = clip.assignments.get(annotator=user)
    return [
        (
            "save",
            client.put(
                f"/api/v1/revisions/{revision.pk}/", {"content": content, "version": revision.version}, format="json"
            ),
        ),
        (
            "review",
            client.post(f"/api/v1/revisions/{revision.pk}/review/", {"version": revision.version}, format="json"),
        ),
        ("submit", client.post(f"/api/v1/assignments/{assignment.pk}/submit/")),
        ("comment", client.post(f"/api/v1/clips/{clip.pk}/comments/", {"body": "one more thought"}, format="json")),
        (
            "flag",
            client.post(
                f"/api/v1/clips/{clip.pk}/comments/",
                {"body": "split here", "row": 1, "kind": "flag_split"},
                format="json",
            ),
        ),
    ]


def test_a_discarded_clip_refuses_saves_reviews_submissions_and_comments(clip, annotator, other_annotator, lead):
    discard(clip, other_annotator, lead)
    before = state_of(clip, annotator)
    for what, response in every_write(api_for(annotator), clip, annotator):
        assert response.status_code == 409, (what, response.status_code, response.content[:200])
        body = response.json()
        assert (
            body["clip_state"] == "discarded"
            and "was discarded by a lead" in body["detail"]
            and "nothing was saved" in body["detail"]
        ), what
        assert "current" not in body, "nothing to merge"
        assert PROPOSAL not in body["detail"] and other_annotator.username not in body["detail"], (
            "the proposal and its author stay with the leads"
        )
    assert state_of(clip, annotator) == before


def test_a_released_clip_refuses_the_same_writes(clip, annotator, lead):
    release(clip)
    before = state_of(clip, annotator)
    for what, response in every_write(api_for(annotator), clip, annotator):
        assert response.status_code == 409, (what, response.status_code)
        assert response.json()["clip_state"] == "released" and "frozen in a release" in response.json()["detail"]
    assert state_of(clip, annotator) == before


def test_a_lead_cannot_comment_on_a_closed_clip_either(clip, other_annotator, lead):
    discard(clip, other_annotator, lead)
    response = api_for(lead).post(f"/api/v1/clips/{clip.pk}/comments/", {"body": "noted"}, format="json")
    assert response.status_code == 409


def test_a_closed_clip_can_still_be_read(clip, annotator, other_annotator, lead):
    discard(clip, other_annotator, lead)
    client = api_for(annotator)
    assert client.get(f"/api/v1/clips/{clip.pk}/workspace/").status_code == 200
    revision = Revision.objects.get(row__clip=clip, row__row_index=1, annotator=annotator)
    assert client.get(f"/api/v1/revisions/{revision.pk}/").status_code == 200


def test_a_discard_landing_between_reading_and_writing_a_save_wins(clip, annotator, other_annotator, lead):
    """The save's compare-and-set checks the clip's state too: a discard after the read refuses the write."""
    revision = Revision.objects.get(row__clip=clip, row__row_index=1, annotator=annotator)
    target = workspace.load_for_save(revision.pk, annotator)
    discard(clip, other_annotator, lead)
    with pytest.raises(ClipClosed):
        workspace.save_revision(
            revision.pk, annotator, {**revision.content, "tone_of_voice": "late"}, revision.version, target=target
        )
    revision.refresh_from_db()
    assert revision.version == 1 and revision.content["tone_of_voice"] != "late"


def test_a_page_that_meets_a_closed_clip_answers_409_with_the_reason(clip, lead, annotator):
    release(clip)
    clip.refresh_from_db()
    request = RequestFactory().post(f"/work/clips/{clip.pk}/")
    request.user = annotator
    response = RefusalMiddleware(lambda r: None).process_exception(request, ClipClosed(clip, "comments"))
    assert response.status_code == 409 and "frozen in a release and takes no more comments" in response.content.decode()
    api = RefusalMiddleware(lambda r: None).process_exception(
        RequestFactory().post("/api/v1/x/"), ClipClosed(clip, "comments")
    )
    assert api.status_code == 409 and json.loads(api.content)["clip_state"] == "released"
