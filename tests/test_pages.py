"""Pages and API scoped by role: annotators see only what is assigned to them."""
import pytest
from rest_framework.authtoken.models import Token

from annotation.models import Assignment
from annotation.rescue_format.importer import import_rescue
from annotation.services import create_project

from .factories import couple_clip, family_clip

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
    token = Token.objects.create(user=lead)
    response = client.get("/api/v1/projects/", HTTP_AUTHORIZATION=f"Token {token.key}")
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
    assert {m.__name__ for m in models} >= {"Project", "Clip", "Cue", "Row", "Draft", "Revision", "Gold", "Assignment", "Comment", "Job", "Release"}
    for model in models:
        url = f"/admin/annotation/{model._meta.model_name}/"
        assert client.get(url).status_code == 200, url
    assert client.get("/admin/annotation/release/add/").status_code == 403
    clip = two_clips[0]
    assert client.get(f"/admin/annotation/clip/{clip.pk}/history/").status_code == 200
