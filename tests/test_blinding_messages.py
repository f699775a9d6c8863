"""Blinding holds in messages (it once leaked through re-review notes).

A message that names a coder, or quotes a lead's note to one coder, is read
only by that coder and the leads. And every other place where an annotator
reads text someone else wrote (comments, notes, decisions, discard reasons,
audit entries) keeps the same rule: one test per place, each reading
everything the annotator can open.
"""

from __future__ import annotations

import pytest

from annotation.adjudication.services import accept_discard, decide, request_rereview
from annotation.models import Comment, CommentKind
from annotation.services import create_user
from annotation.starting import start_assignment
from annotation.workspace.services import add_comment

from .builders.api import client_for

pytestmark = pytest.mark.django_db


@pytest.fixture
def clip(coded_clip):
    return coded_clip


def everything_readable_by(user, clip) -> str:
    """The text of every page and endpoint ``user`` can open about their work on ``clip``."""
    client = client_for(user)
    slug = clip.project.slug
    urls = [
        "/",
        "/work/",
        f"/projects/{slug}/",
        f"/work/clips/{clip.pk}/",
        f"/api/v1/clips/{clip.pk}/workspace/",
        f"/api/v1/clips/{clip.pk}/comments/",
        "/api/v1/assignments/",
        "/api/v1/projects/",
        f"/api/v1/projects/{slug}/",
        f"/api/v1/projects/{slug}/clips/",
    ]
    urls += [f"/api/v1/revisions/{r.pk}/" for r in user.revisions.filter(row__clip=clip)]
    texts = []
    for url in urls:
        response = client.get(url)
        assert response.status_code == 200, (url, response.status_code)
        texts.append(response.content.decode())
    return "\n".join(texts)


def lead_only_places(clip, row) -> list[str]:
    slug = clip.project.slug
    return [
        f"/projects/{slug}/history/",
        f"/api/v1/projects/{slug}/history/",
        f"/adjudication/clips/{clip.pk}/",
        f"/api/v1/clips/{clip.pk}/adjudication/",
        f"/api/v1/rows/{row.pk}/gold/",
        f"/projects/{slug}/adjudication/",
        f"/api/v1/projects/{slug}/adjudication/",
    ]


# --- comments -------------------------------------------------------------------------------


def test_a_re_review_request_is_read_only_by_its_coder_and_the_leads(clip, annotator, other_annotator, lead):
    request_rereview(clip, "ann1", lead, "look again at row 2: the tone reads as blame")
    other = everything_readable_by(other_annotator, clip)
    assert "Re-review requested" not in other and "the tone reads as blame" not in other
    assert "ann1" not in other, "ann2 must not learn who else codes the clip"
    mine = everything_readable_by(annotator, clip)
    assert "Re-review requested from ann1: look again at row 2: the tone reads as blame" in mine
    leads = client_for(lead).get(f"/api/v1/clips/{clip.pk}/comments/").json()
    (note,) = [c for c in leads if c["body"].startswith("Re-review requested")]
    assert note["to"] == "ann1" and note["author"] == "lead1"


def test_a_re_review_message_naming_another_coder_is_refused(clip, lead):
    from annotation.services import ServiceError

    with pytest.raises(ServiceError, match="must not name other coders of the clip \\(ann2\\)"):
        request_rereview(clip, "ann1", lead, "compare with what ann2 did")
    assert not Comment.objects.exists()
    assert clip.assignments.get(annotator__username="ann1").state != "reopened", "nothing was written"


def test_a_lead_comment_that_names_one_coder_is_for_that_coder_alone(clip, annotator, other_annotator, lead):
    response = client_for(lead).post(
        f"/api/v1/clips/{clip.pk}/comments/",
        {"body": "ANN1, row 3 looks like blame to me"},
        content_type="application/json",
    )
    assert response.status_code == 201 and response.json()["to"] == "ann1"
    assert "row 3 looks like blame" not in everything_readable_by(other_annotator, clip)
    assert "row 3 looks like blame" in everything_readable_by(annotator, clip)


def test_a_lead_comment_that_names_several_coders_is_refused(clip, lead):
    response = client_for(lead).post(
        f"/api/v1/clips/{clip.pk}/comments/",
        {"body": "ann1 and ann2 disagree on row 3"},
        content_type="application/json",
    )
    assert response.status_code == 422 and "write to each of them on their own" in response.json()["detail"]
    assert not Comment.objects.exists()


def test_a_lead_note_for_every_coder_reaches_every_coder(clip, annotator, other_annotator, lead):
    client_for(lead).post(
        f"/api/v1/clips/{clip.pk}/comments/", {"body": "Evidence rows are 1-based."}, content_type="application/json"
    )
    for coder in (annotator, other_annotator):
        assert "Evidence rows are 1-based." in everything_readable_by(coder, clip)


def test_coders_never_read_each_others_comments_flags_or_discard_proposals(clip, annotator, other_annotator):
    add_comment(clip, other_annotator, "my private doubt about row 2")
    add_comment(
        clip, other_annotator, "row 1 holds two turns", row=clip.rows.get(row_index=1), kind=CommentKind.FLAG_SPLIT
    )
    add_comment(clip, other_annotator, "audio does not match", kind=CommentKind.DISCARD_PROPOSAL)
    seen = everything_readable_by(annotator, clip)
    for text in ("my private doubt about row 2", "row 1 holds two turns", "audio does not match", "ann2"):
        assert text not in seen, text


def test_a_lead_who_also_codes_the_clip_comments_as_a_coder(clip, annotator):
    coding_lead = create_user("lead2", "lead", password="lead-two-pass-123")[0]
    start_assignment(clip, coding_lead)
    add_comment(clip, coding_lead, "I read row 2 as withdrawal")
    assert "I read row 2 as withdrawal" not in everything_readable_by(annotator, clip)


# --- discard reasons, decision notes, audit entries ------------------------------------------


def test_discard_reasons_stay_with_the_leads(clip, annotator, other_annotator, lead):
    proposal = add_comment(
        clip, other_annotator, "the couple is not the one in the video", kind=CommentKind.DISCARD_PROPOSAL
    )
    accept_discard(clip, proposal.pk, lead)
    clip.refresh_from_db()
    assert "the couple is not the one in the video (proposed by ann2)" == clip.discard_reason
    seen = everything_readable_by(annotator, clip)
    assert "the couple is not the one in the video" not in seen and "ann2" not in seen
    assert "discarded" in seen, "the state itself is no secret"
    leads = client_for(lead).get(f"/api/v1/clips/{clip.pk}/adjudication/").content.decode()
    assert "the couple is not the one in the video" in leads


def test_decision_notes_stay_with_the_leads(clip, annotator, other_annotator, lead):
    from annotation.models import Assignment, Revision
    from annotation.workspace.services import set_reviewed, submit_assignment

    for coder in (annotator, other_annotator):  # the coders hand their work in: only then is there gold to decide
        for revision in Revision.objects.filter(row__clip=clip, annotator=coder):
            set_reviewed(revision.pk, coder, revision.version)
        submit_assignment(Assignment.objects.get(clip=clip, annotator=coder), coder)
    row = clip.rows.get(row_index=1)
    decide(row.pk, lead, "tone_of_voice", "draft", 0, note="sided with the second coder here")
    client = client_for(annotator)
    assert "sided with the second coder" not in everything_readable_by(annotator, clip)
    for url in lead_only_places(clip, row):
        response = client.get(url)
        assert response.status_code in (403, 404), url
        assert b"sided with the second coder" not in response.content


def test_audit_entries_stay_with_the_leads(clip, annotator, other_annotator, lead):
    request_rereview(clip, "ann2", lead, "please recheck the targets")
    add_comment(clip, other_annotator, "I think the clip is cut short", kind=CommentKind.DISCARD_PROPOSAL)
    client = client_for(annotator)
    for url in lead_only_places(clip, clip.rows.get(row_index=1)):
        response = client.get(url)
        assert response.status_code in (403, 404), url
        assert b"please recheck" not in response.content and b"cut short" not in response.content
    admin = client.get("/admin/annotation/comment/")
    assert admin.status_code == 302 and "/admin/login/" in admin["Location"]
    seen = everything_readable_by(annotator, clip)
    assert "please recheck the targets" not in seen and "cut short" not in seen


# --- addressees in every written form -------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    ["@ann1 please look at row 4", "ann1: please look at row 4", "@ANN1, please look at row 4", "Row 4, (ann1)."],
)
def test_a_lead_comment_naming_a_coder_in_any_written_form_is_for_that_coder_alone(
    clip, annotator, other_annotator, lead, body
):
    response = client_for(lead).post(
        f"/api/v1/clips/{clip.pk}/comments/", {"body": body}, content_type="application/json"
    )
    assert response.status_code == 201 and response.json()["to"] == "ann1", response.content
    assert body not in everything_readable_by(other_annotator, clip)
    assert body in everything_readable_by(annotator, clip)
    assert Comment.objects.get().addressee == annotator


@pytest.mark.parametrize("body", ["@ann1 and @ann2 disagree on row 3", "@ann1: compare with @Ann2"])
def test_a_lead_comment_mentioning_two_coders_is_refused(clip, lead, body):
    response = client_for(lead).post(
        f"/api/v1/clips/{clip.pk}/comments/", {"body": body}, content_type="application/json"
    )
    assert response.status_code == 422 and "write to each of them on their own" in response.json()["detail"]
    assert not Comment.objects.exists()


def test_a_re_review_request_that_mentions_another_coder_is_refused_and_writes_nothing(clip, lead):
    response = client_for(lead).post(
        f"/api/v1/clips/{clip.pk}/adjudication/rereview/",
        {"annotator": "ann1", "message": "see what @ann2 chose on row 2"},
        content_type="application/json",
    )
    assert response.status_code in (400, 422), response.content
    assert "must not name other coders of the clip (ann2)" in response.content.decode()
    assert not Comment.objects.exists()
    assert clip.assignments.get(annotator__username="ann1").state != "reopened", "nothing was written"


def test_a_lead_comment_naming_a_coder_of_another_clip_is_refused(clip, project, lead):
    """ann3 codes another clip of the project: the coders of this one must not learn that either."""
    from annotation.models import Clip

    other_clip = Clip.objects.create(
        project=project, sample_id="g/other", scenario="couple", participants=["Maya", "Tobias"]
    )
    start_assignment(
        other_clip,
        create_user("ann3", "annotator", password="ann-three-pass-123")[0],  # pragma: allowlist secret
    )
    response = client_for(lead).post(
        f"/api/v1/clips/{clip.pk}/comments/", {"body": "as @ann3 did elsewhere"}, content_type="application/json"
    )
    assert (
        response.status_code == 422
        and "who do not code clip" in response.json()["detail"]
        and "ann3" in response.json()["detail"]
    )
    assert not Comment.objects.exists()


def test_usernames_are_matched_in_every_written_form_and_only_as_whole_names():
    from annotation.addressees import names_in

    coders = ["ann1", "ann2", "ann1.b"]
    for text in (
        "ann1",
        "@ann1",
        "ann1:",
        "ANN1,",
        "(@Ann1)",
        "thanks, ann1.",
        "ann1's rows",
        "ann1@clinic.org",
        "@@ann1",
    ):
        assert names_in(text, coders) == ["ann1"], text
    for text in ("ann10", "xann1", "ann1_old", "annie", ""):
        assert names_in(text, coders) == [], text
    assert names_in("ann1.b said", coders) == ["ann1.b"], "the longer username is the one named"
    assert names_in("@ann1 and @ann2", coders) == ["ann1", "ann2"] == names_in("ann1/ann2", coders)
