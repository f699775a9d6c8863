"""Pages and API scoped by role: annotators see only what is assigned to them."""

import pytest

from annotation.models import Assignment
from annotation.rescue_format.importer import import_rescue
from annotation.services import create_project
from annotation.tokens import issue_token

from .builders.documents import couple_clip, family_clip

pytestmark = pytest.mark.django_db


@pytest.fixture
def two_clips(project, tmp_path):
    path = tmp_path / "c.jsonl"
    import json

    path.write_text("\n".join(json.dumps(c) for c in (couple_clip(), family_clip())), encoding="utf-8")
    import_rescue(path, project, as_source="draft")
    return list(project.clips.order_by("sample_id"))


def test_anonymous_users_are_sent_to_login(client):
    response = client.get("/")
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
    assert client.get("/api/v1/projects/").status_code == 401


def test_health_endpoint_needs_no_login(client):
    assert client.get("/healthz").json() == {"status": "ok"}


def test_lead_sees_every_project_and_clip(client, lead, project, two_clips):
    client.force_login(lead)
    page = client.get(f"/projects/{project.slug}/").content.decode()
    assert "maya_and_tobias/001_opening" in page and "okafor_family/001_dinner" in page
    assert [p["slug"] for p in client.get("/api/v1/projects/").json()] == [project.slug]


def test_annotator_sees_only_assigned_clips(client, annotator, other_annotator, project, two_clips):
    create_project("other")
    Assignment.objects.create(clip=two_clips[0], annotator=annotator)
    client.force_login(annotator)
    assert [p["slug"] for p in client.get("/api/v1/projects/").json()] == [project.slug]
    clips = client.get(f"/api/v1/projects/{project.slug}/clips/").json()
    assert [c["sample_id"] for c in clips] == ["maya_and_tobias/001_opening"]
    page = client.get(f"/projects/{project.slug}/").content.decode()
    assert "okafor_family" not in page
    assert client.get("/projects/other/").status_code == 404
    client.force_login(other_annotator)
    assert client.get(f"/projects/{project.slug}/").status_code == 404
    assert client.get(f"/api/v1/projects/{project.slug}/clips/").status_code == 404


def test_token_auth_works_for_scripts(client, lead, project):
    token = issue_token(lead, scope="read")[1]
    response = client.get("/api/v1/projects/", HTTP_AUTHORIZATION=f"Token {token}")
    assert response.status_code == 200 and response.json()[0]["slug"] == project.slug


def test_openapi_schema_is_served(client, lead):
    client.force_login(lead)
    response = client.get("/api/schema/")
    assert response.status_code == 200 and b"/api/v1/projects/" in response.content


def test_the_admin_lists_every_model_and_keeps_releases_and_history_read_only(client, two_clips):
    from django.contrib import admin

    from annotation.services import create_user

    client.force_login(create_user("root", "admin", password="pw-root-12345")[0])
    models = [m for m in admin.site._registry if m._meta.app_label == "annotation"]
    assert {m.__name__ for m in models} >= {
        "Project",
        "Clip",
        "Cue",
        "Row",
        "Draft",
        "Revision",
        "Gold",
        "Assignment",
        "Comment",
        "Job",
        "Release",
    }
    for model in models:
        url = f"/admin/annotation/{model._meta.model_name}/"
        assert client.get(url).status_code == 200, url
    assert client.get("/admin/annotation/release/add/").status_code == 403
    clip = two_clips[0]
    assert client.get(f"/admin/annotation/clip/{clip.pk}/history/").status_code == 200


# --- people-facing words -----------------------------------------------------------------

import datetime as dt  # noqa: E402
import io  # noqa: E402
import re  # noqa: E402
from html import unescape  # noqa: E402

from django.core.management import call_command  # noqa: E402
from django.template import Context, Template  # noqa: E402

from annotation.assignment.services import assign_clips  # noqa: E402
from annotation.labels import field_label, state_label  # noqa: E402
from annotation.models import AssignmentState, ClipState, Job, JobState, RevisionStatus  # noqa: E402
from annotation.preannotate.services import start_preannotation  # noqa: E402

from .builders.pages import RAW_NAMES  # noqa: E402
from .fakes.clips import make_clip  # noqa: E402


# Internal names that must never reach a person outside the two rich pages (the editor and adjudication).
def visible_text(response) -> str:
    """What a person reads: the page without tags, scripts and styles (attributes such as class names are not read)."""
    html = re.sub(r"(?s)<(script|style)\b.*?</\1>", " ", response.content.decode())
    return unescape(re.sub(r"<[^>]+>", " ", html))


@pytest.mark.parametrize(
    "value, words",
    [
        ("in_review", "in review"),
        ("preannotation_failed", "pre-annotation failed"),
        ("preannotating", "pre-annotating"),
        ("in_progress", "in progress"),
        ("succeeded", "succeeded"),
        ("untouched", "untouched"),
    ],
)
def test_states_read_as_words(value, words):
    assert state_label(value) == words


def test_every_state_of_every_kind_has_its_words():
    for kind in (ClipState, AssignmentState, RevisionStatus, JobState):
        for value, label in kind.choices:
            assert state_label(value) == label, value  # the one wording: the label on the state's choice
            assert "_" not in state_label(value) and state_label(value).strip() == state_label(value)


@pytest.mark.parametrize(
    "path, words",
    [
        ("rows[12].support_strategy[0].target[1]", "Row 13 › Support strategy 1 › for, entry 2"),
        ("relation_pattern_evidence_rows[2]", "Relation pattern › evidence rows, entry 3"),
        ("relation_cycle_reason", "Relation pattern › reason"),
        ("internal_emotion[1].emotion_description", "Internal emotion 2 › emotion"),
        ("content.tone_of_voice", "Tone of voice"),
        ("target[0]", "Target, entry 1"),
        ("speaker_map_confirmed", "Speaker map confirmed"),
        ("not a path!", "not a path!"),
    ],
)
def test_field_paths_read_as_the_editor_names_them(path, words):
    assert field_label(path) == words


def test_dates_are_marked_up_for_the_readers_locale_and_time_zone():
    berlin = dt.timezone(dt.timedelta(hours=2))
    template = Template("{% load people %}{{ when|local_time }}|{{ iso|local_time:'date' }}|{{ nothing|local_time }}")
    out = template.render(
        Context(
            {
                "when": dt.datetime(2026, 3, 1, 16, 5, 9, tzinfo=berlin),
                "iso": "2026-03-01T23:30:00+00:00",
                "nothing": None,
            }
        )
    )
    assert out == (
        '<time datetime="2026-03-01T14:05:09Z" data-local-time="datetime" title="2026-03-01 14:05:09 UTC">2026-03-01 '
        "14:05 UTC</time>|"
        '<time datetime="2026-03-01T23:30:00Z" data-local-time="date" title="2026-03-01 23:30:00 '
        'UTC">2026-03-01</time>|'
    )


def test_annotators_land_on_their_queue_and_leads_on_the_projects(client, lead, annotator, project, two_clips):
    Assignment.objects.create(clip=two_clips[0], annotator=annotator)
    signed_in = client.post("/accounts/login/", {"username": "ann1", "password": "ann-pass-123"}, follow=True)
    assert signed_in.redirect_chain[-1][0] == "/"
    assert "workspace/queue.html" in [t.name for t in signed_in.templates]
    page = signed_in.content.decode()
    assert "<h1>My queue</h1>" in page and "maya_<wbr>and_<wbr>tobias/<wbr>001_<wbr>opening" in page
    assert (
        f'href="/projects/{project.slug}/"' in page and ">Projects</a>" not in page
    )  # the project through its clips, no list
    client.force_login(lead)
    page = client.get("/").content.decode()
    assert "<h1>Projects</h1>" in page and ">Projects</a>" in page


def test_no_page_outside_the_editor_and_adjudication_shows_an_internal_name(
    client, lead, annotator, other_annotator, project, two_clips, eager_celery
):
    make_clip(project, "maya_and_tobias/009_new")  # a transcript without rows yet
    assign_clips(project, clips=project.clips.filter(pk=two_clips[0].pk), per_clip=2, actor=lead)
    start_preannotation(project, offline_provider=True, user=lead)
    client.force_login(lead)
    pages = [
        "/",
        f"/projects/{project.slug}/",
        f"/projects/{project.slug}/assignments/",
        f"/projects/{project.slug}/adjudication/",
        f"/projects/{project.slug}/preannotation/",
        f"/projects/{project.slug}/history/",
        f"/projects/{project.slug}/agreement/",
        f"/projects/{project.slug}/releases/",
    ]
    for url in pages:
        response = client.get(url)
        assert response.status_code == 200, url
        text = visible_text(response)
        assert not RAW_NAMES.search(text), (url, RAW_NAMES.search(text).group())
    history = visible_text(client.get(f"/projects/{project.slug}/history/"))
    assert re.search(r"State\s*:\s*pre-annotated\s*→\s*in review", history)  # the clip's transition, in words
    # The page shows a stored report (a worker computes it): store it, as the worker would.
    from annotation.agreement.services import Params, compute_and_store

    compute_and_store(project, Params())
    agreement = visible_text(client.get(f"/projects/{project.slug}/agreement/"))
    assert "Internal emotion present" in agreement and "Viewpoints & attitudes present" in agreement
    client.force_login(annotator)
    for url in ("/", "/work/", f"/projects/{project.slug}/"):
        text = visible_text(client.get(url))
        assert not RAW_NAMES.search(text), (url, RAW_NAMES.search(text).group())
        assert "in review" in text or "assigned" in text


def test_flash_messages_say_their_kind(client, lead, annotator, project, two_clips):
    client.force_login(lead)
    every = [c.sample_id for c in two_clips]
    done = client.post(
        f"/projects/{project.slug}/assignments/", {"per_clip": 1, "clips": every, "seed": 0}, follow=True
    )
    assert (
        '<li class="message message-success" role="status">2 assignments created, 0 clips skipped; 0 of them start '
        "empty (coded from empty, to measure the draft&#x27;s pull).</li>" in done.content.decode()
    )
    first = Assignment.objects.first()
    refused = client.post(f"/assignments/{first.pk}/reassign/", {"annotator": "nobody"}, follow=True)
    assert (
        '<li class="message message-error" role="alert">Choose an active annotator to hand the clip to.</li>'
        in refused.content.decode()
    )


# --- pre-annotation batch numbers --------------------------------------------------------


def test_preannotation_batches_are_numbered_one_two_three_per_project(
    client, lead, project, eager_celery, django_capture_on_commit_callbacks
):
    other = create_project("other")
    mine = make_clip(project, "maya_and_tobias/001_session")
    theirs = make_clip(other, "okafor_family/001_dinner")
    started = []
    for target, clip in ((project, mine), (other, theirs), (project, mine), (project, mine)):
        with django_capture_on_commit_callbacks(execute=True):  # each batch runs (in-process) before the next starts
            started.append(start_preannotation(target, [clip], force=True, offline_provider=True, user=lead))
    ids = [b.pk for b in started]
    # Job ids are shared by every kind of job (one per clip of a batch): as numbers they jump.
    assert ids[3] > ids[2] + 1 and ids[2] > ids[1] + 1
    client.force_login(lead)
    numbers = [client.get(f"/api/v1/preannotation/batches/{b.pk}/").json() for b in started]
    assert [(n["batch"], n["number"]) for n in numbers] == [(ids[0], 1), (ids[1], 1), (ids[2], 2), (ids[3], 3)]
    page = client.get(f"/projects/{project.slug}/preannotation/").content.decode()
    assert "<h2>Batch 3 " in page and f"/api/v1/preannotation/batches/{ids[3]}/" in page  # the id stays the reference
    out = io.StringIO()
    with django_capture_on_commit_callbacks(execute=True):
        call_command(
            "preannotate", "--project", project.slug, "--offline", "--force", "--clips", mine.sample_id, stdout=out
        )
    assert out.getvalue().startswith(
        f"batch 4 (id {Job.objects.filter(kind='preannotate_batch').latest('pk').pk}, offline skeleton"
    )
    start = client.post(
        f"/projects/{project.slug}/preannotation/start",
        {"provider": "offline", "force": "on", "clips": [mine.pk]},
        follow=True,
    )
    assert "Batch 5: 1 clips queued" in start.content.decode()
    assert JobState.SUCCEEDED in Job.objects.filter(kind="preannotate_batch").values_list("state", flat=True)
