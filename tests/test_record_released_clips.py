"""Released gold clips stay usable by the annotator's record: a qualification round and a known-answer
check code them, while production work on them is refused (409) exactly as before, and nothing a trainee
writes reaches the release (rebuilt byte for byte), the production agreement or adjudication."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from annotation.adjudication.selectors import coders_of, row_states
from annotation.adjudication.services import accept_unanimous, mark_adjudicated
from annotation.agreement.extract import extract, scope_clips
from annotation.agreement.report import compute_project_report
from annotation.models import Assignment, AssignmentPurpose, ClipState, Revision
from annotation.record import services
from annotation.releases.freeze import freeze, reproduce
from annotation.releases.manifest import verify
from annotation.releases.services import release_dir
from annotation.services import ClipClosed, create_user
from annotation.starting import start_assignment
from annotation.workspace.selectors import read_only_reason
from annotation.workspace.services import add_comment, save_revision, submit_assignment

from .builders.adjudication import reviewed_clip
from .builders.documents import couple_clip
from .builders.record import UTTERANCES, code_like_gold

pytestmark = pytest.mark.django_db


@pytest.fixture
def released(project, tmp_path, lead, annotator, other_annotator):
    """A clip two coders coded in production, adjudicated by the lead and frozen in release 1.0.0."""
    clip = reviewed_clip(
        project, tmp_path, [annotator, other_annotator], edits={}, doc=couple_clip("rel_group/001_gold")
    )
    accept_unanimous(clip, lead)
    mark_adjudicated(clip, lead)
    release, _ = freeze(
        project, version="1.0.0", seed=1, out_dir=release_dir(project, "1.0.0"), user=lead, accept_incomplete=["couple"]
    )
    clip.refresh_from_db()
    assert clip.state == ClipState.RELEASED
    return {"project": project, "clip": clip, "release": release, "lead": lead, "coders": [annotator, other_annotator]}


def _wrong_utterances(index, doc):
    if doc.get("utterance_type"):
        doc["utterance_type"] = UTTERANCES[(UTTERANCES.index(doc["utterance_type"]) + 1) % len(UTTERANCES)]
    return doc


def test_a_trainee_codes_a_released_clip_and_the_release_is_untouched(released, tmp_path):
    project, clip, release, lead = released["project"], released["clip"], released["release"], released["lead"]
    before = compute_project_report(project, resamples=1000, seed=0)
    before_ex = extract(scope_clips(project))
    states = row_states(clip)
    coders_before = coders_of(clip, states=states)
    assert coders_before and before_ex.stats["revisions"] > 0

    trainee = create_user("newbie", "annotator", password="newbie-pass-123")[0]
    services.mark_training(project, clip, actor=lead)  # a released clip with gold is training material
    services.set_rule(
        project, "couple", fields=["utterance_type"], min_score=0.8, min_rows=1, max_attempts=3, actor=lead
    )
    attempt = services.start_round(project, "couple", trainee, actor=lead)
    assert attempt.sample_ids == [clip.sample_id]
    assignment = Assignment.every.get(clip=clip, annotator=trainee)
    assert assignment.purpose == AssignmentPurpose.QUALIFICATION
    assert read_only_reason(trainee, clip, assignment) is None  # the editor opens for writing

    code_like_gold(clip, trainee, _wrong_utterances)  # through the workspace's save
    attempt = services.submit_round(attempt, trainee)
    assert attempt.state == "scored" and attempt.rows == clip.rows.count()
    assert attempt.scores["utterance_type"]["matching"]["same"] == 0 and attempt.passed is False

    # The release is what it was: its folder verifies, and rebuilt from the database it is byte-identical.
    assert verify(release.path, release.manifest).ok
    _, again = reproduce(release, tmp_path / "again")
    assert again.ok, again.lines()
    assert again.checked == len(release.manifest["files"])
    folder_text = "".join(
        p.read_text(encoding="utf-8", errors="replace") for p in (tmp_path / "again").rglob("*") if p.is_file()
    )
    assert "newbie" not in folder_text
    # Production agreement and adjudication are unchanged.
    after_ex = extract(scope_clips(project))
    assert after_ex.coders == before_ex.coders and after_ex.stats == before_ex.stats
    after = compute_project_report(project, resamples=1000, seed=0)
    assert json.dumps(after["slices"], sort_keys=True) == json.dumps(before["slices"], sort_keys=True)
    states = row_states(clip)
    assert coders_of(clip, states=states) == coders_before
    assert all("newbie" not in s.revisions and "newbie" not in s.uncoded for s in states)


def test_production_work_on_a_released_clip_is_still_refused(released):
    clip, (ann1, _) = released["clip"], released["coders"]
    revision = Revision.objects.filter(row__clip=clip, annotator=ann1).first()
    with pytest.raises(ClipClosed):
        save_revision(revision.pk, ann1, revision.content, revision.version, reviewed=True)
    assignment = Assignment.objects.get(clip=clip, annotator=ann1)
    assert read_only_reason(ann1, clip, assignment)["reason"] == "released"
    # Through the API: the 409 of a closed clip, nothing saved.
    client = Client()
    client.force_login(ann1)
    response = client.put(
        f"/api/v1/revisions/{revision.pk}/",
        data=json.dumps({"content": revision.content, "version": revision.version}),
        content_type="application/json",
    )
    assert response.status_code == 409
    assert Revision.objects.get(pk=revision.pk).version == revision.version
    # A record's assignment does not open comments either (comments are production's conversation).
    trainee = create_user("newbie2", "annotator", password="newbie-pass-123")[0]
    start_assignment(clip, trainee, mode="from_empty", purpose=AssignmentPurpose.KNOWN_ANSWER)
    with pytest.raises(ClipClosed):
        add_comment(clip, trainee, "a note")


def test_a_known_answer_check_on_a_released_clip_is_coded_through_the_api(released):
    project, clip = released["project"], released["clip"]
    assert clip in services.known_answer_pool(project)  # released gold clips are known answers too
    checker = create_user("kim", "annotator", password="kim-pass-1234")[0]
    check = start_assignment(clip, checker, mode="from_draft", purpose=AssignmentPurpose.KNOWN_ANSWER)
    revision = (
        Revision.objects.filter(row__clip=clip, annotator=checker)
        .select_related("row")
        .order_by("row__row_index")
        .first()
    )
    client = Client()
    client.force_login(checker)
    response = client.put(
        f"/api/v1/revisions/{revision.pk}/",
        data=json.dumps({"content": revision.content, "version": revision.version, "reviewed": True}),
        content_type="application/json",
    )
    assert response.status_code == 200, response.content
    Revision.objects.filter(row__clip=clip, annotator=checker).update(status="reviewed")
    submit_assignment(check, checker)
    check.refresh_from_db()
    assert check.state == "submitted"
    clip.refresh_from_db()
    assert clip.state == ClipState.RELEASED  # a record's submission moves no clip


def test_a_discarded_clip_takes_no_work_of_any_purpose(project, tmp_path, lead):
    from annotation.services import transition

    clip = reviewed_clip(project, tmp_path, [], doc=couple_clip("dis_group/001_x"))
    transition(clip, ClipState.DISCARDED, actor=lead, reason="test")
    trainee = create_user("newbie3", "annotator", password="newbie-pass-123")[0]
    start_assignment(clip, trainee, mode="from_empty", purpose=AssignmentPurpose.QUALIFICATION)
    revision = Revision.objects.filter(row__clip=clip, annotator=trainee).first()
    with pytest.raises(ClipClosed):
        save_revision(revision.pk, trainee, revision.content, revision.version)
    with pytest.raises(services.ServiceError):
        services.mark_training(project, clip, actor=lead)
