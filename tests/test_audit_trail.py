"""The audit trail as leads read it: every write of a project, who, when, from where, what changed."""

import pytest

from annotation.audit_trail import selectors
from annotation.models import Revision
from annotation.services import create_project
from annotation.starting import start_assignment
from annotation.workspace.services import add_comment, save_revision

from .builders.api import api_for


@pytest.fixture
def clip(draft_clip):
    return draft_clip


pytestmark = pytest.mark.django_db


def _edited(clip, annotator, tone="soft and slow"):
    start_assignment(clip, annotator)
    revision = Revision.objects.get(row__clip=clip, row__row_index=1, annotator=annotator)
    api_for(annotator).put(
        f"/api/v1/revisions/{revision.pk}/",
        {"content": {**revision.content, "tone_of_voice": tone}, "version": 1},
        format="json",
    )
    return revision


def test_a_save_through_the_api_is_listed_with_who_where_and_the_changed_field(client, clip, annotator, lead):
    revision = _edited(clip, annotator)
    before = revision.content["tone_of_voice"]
    client.force_login(lead)
    response = client.get(f"/api/v1/projects/{clip.project.slug}/history/", {"kind": "revision"})
    assert response.status_code == 200
    newest = response.json()["entries"][0]
    assert newest["action"] == "changed" and newest["user"] == annotator.username and newest["source"] == "api"
    assert newest["object"] == f"revision of {clip.sample_id} row 1 by {annotator.username}"
    assert {"field": "content.tone_of_voice", "old": before, "new": "soft and slow"} in newest["changes"]
    # the bookkeeping columns are left out of the diff
    assert all(not c["field"].startswith(("version", "updated_at")) for c in newest["changes"])


def test_the_page_shows_the_timeline_and_filters_by_user_source_kind_and_clip(client, clip, annotator, lead):
    _edited(clip, annotator)
    add_comment(clip, lead, "Row 1: check the target")
    client.force_login(lead)
    url = f"/projects/{clip.project.slug}/history/"
    page = client.get(url).content.decode()
    assert "soft and slow" in page and "Row 1: check the target" in page and f"clip {clip.sample_id}" in page
    only_api = client.get(url, {"source": "api"}).content.decode()
    assert "soft and slow" in only_api and "check the target" not in only_api
    by_lead = client.get(url, {"user": lead.username}).content.decode()
    assert "check the target" in by_lead and "soft and slow" not in by_lead
    comments = client.get(f"/api/v1/projects/{clip.project.slug}/history/", {"kind": "comment"}).json()["entries"]
    assert [e["kind"] for e in comments] == ["comment"] and comments[0]["action"] == "created"
    elsewhere = client.get(f"/api/v1/projects/{clip.project.slug}/history/", {"clip": "nobody/000"}).json()
    assert elsewhere["entries"] == []
    this_clip = client.get(f"/api/v1/projects/{clip.project.slug}/history/", {"clip": clip.sample_id}).json()["entries"]
    assert this_clip and all(e["kind"] != "project" for e in this_clip)


def test_pages_follow_each_other_without_gaps_or_repeats_even_when_records_share_a_timestamp(clip, annotator, lead):
    # The import wrote every row, draft and the clip with one timestamp; paging must not skip any of them.
    revision = _edited(clip, annotator)
    for i in range(3):
        current = Revision.objects.get(pk=revision.pk)
        save_revision(current.pk, annotator, {**current.content, "tone_of_voice": f"take {i}"}, current.version)
    everything = selectors.project_history(clip.project, selectors.Filters(), page_size=10_000).entries
    seen, cursor = [], ""
    while True:
        page = selectors.project_history(clip.project, selectors.Filters(cursor=cursor), page_size=4)
        seen += [(e.kind.key, e.history_id) for e in page.entries]
        if not page.next_cursor:
            break
        cursor = page.next_cursor
    assert seen == [(e.kind.key, e.history_id) for e in everything]
    assert len(seen) == len(set(seen)) > 8
    dates = [e.date for e in everything]
    assert dates == sorted(dates, reverse=True)


def test_annotators_cannot_read_the_trail_and_other_projects_are_hidden(client, clip, annotator, lead):
    _edited(clip, annotator)
    client.force_login(annotator)
    assert client.get(f"/projects/{clip.project.slug}/history/").status_code == 403
    assert client.get(f"/api/v1/projects/{clip.project.slug}/history/").status_code == 403
    other = create_project("other-study")
    client.force_login(lead)
    entries = client.get(f"/api/v1/projects/{other.slug}/history/").json()["entries"]
    assert all(clip.sample_id not in e["object"] for e in entries)


def test_a_bad_filter_or_cursor_is_a_clear_400(client, clip, lead):
    client.force_login(lead)
    api = f"/api/v1/projects/{clip.project.slug}/history/"
    assert "unknown kind" in client.get(api, {"kind": "nonsense"}).json()["detail"]
    assert "unknown source" in client.get(api, {"source": "email"}).json()["detail"]
    assert "cursor" in client.get(api, {"cursor": "1999|x|y"}).json()["detail"]
    page = client.get(f"/projects/{clip.project.slug}/history/", {"cursor": "garbage"})
    assert page.status_code == 400 and "start again from the first page" in page.content.decode()


def test_the_trail_shows_text_verbatim_and_inert(client, clip, annotator, lead):
    add_comment(clip, lead, '<img src=x onerror="alert(1)"> {{ secret }}')
    client.force_login(lead)
    page = client.get(f"/projects/{clip.project.slug}/history/").content.decode()
    assert "<img src=x" not in page and "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in page
