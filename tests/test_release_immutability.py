"""A frozen release cannot be changed or deleted: not through the ORM, the admin, the API or the pages."""

import re

import pytest
from django.urls import reverse

from annotation.models import FrozenReleaseError, Release
from annotation.services import create_user

pytestmark = pytest.mark.django_db

MANIFEST = {
    "format": "rescue-release/1",
    "release": {"version": "1.0.0"},
    "inputs": {"seed": 3},
    "clips": [],
    "tasks": {},
    "files": {},
}


@pytest.fixture
def release(project, lead, tmp_path):
    return Release.objects.create(
        project=project,
        version="1.0.0",
        seed=3,
        split_ratios=[0.7, 0.1, 0.2],
        path=str(tmp_path / "nowhere"),
        manifest=MANIFEST,
        created_by=lead,
    )


def unchanged(release):
    fresh = Release.objects.get(pk=release.pk)
    return (fresh.version, fresh.seed, fresh.manifest, fresh.path) == ("1.0.0", 3, MANIFEST, release.path)


def test_the_orm_refuses_to_change_or_delete_a_release(release):
    release.seed = 4
    with pytest.raises(FrozenReleaseError):
        release.save()
    with pytest.raises(FrozenReleaseError):
        release.delete()
    with pytest.raises(FrozenReleaseError):
        Release.objects.filter(pk=release.pk).update(seed=5)
    with pytest.raises(FrozenReleaseError):
        Release.objects.filter(pk=release.pk).delete()
    assert unchanged(release)


def test_the_admin_shows_a_release_but_cannot_add_change_or_delete_one(client, release):
    admin = create_user("root", "admin", password="admin-pass-123")[0]
    client.force_login(admin)
    change = reverse("admin:annotation_release_change", args=[release.pk])
    page = client.get(change)
    assert page.status_code == 200 and b'name="_save"' not in page.content
    assert client.post(change, {"version": "9.9.9", "seed": 1}).status_code == 403
    assert (
        client.post(reverse("admin:annotation_release_delete", args=[release.pk]), {"post": "yes"}).status_code == 403
    )
    assert client.get(reverse("admin:annotation_release_add")).status_code == 403
    changelist = client.post(
        reverse("admin:annotation_release_changelist"),
        {"action": "delete_selected", "_selected_action": [release.pk], "post": "yes"},
    )
    assert changelist.status_code in (200, 302)
    assert unchanged(release)


def test_the_api_offers_no_way_to_change_or_delete_a_release(client, lead, release, project):
    client.force_login(lead)
    url = f"/api/v1/projects/{project.slug}/releases/1.0.0/"
    assert client.get(url).json()["manifest"] == MANIFEST
    assert client.put(url, {"seed": 9}, content_type="application/json").status_code == 405
    assert client.patch(url, {"seed": 9}, content_type="application/json").status_code == 405
    assert client.delete(url).status_code == 405
    assert client.post(url, {"seed": 9}, content_type="application/json").status_code == 405
    again = client.post(
        f"/api/v1/projects/{project.slug}/releases/", {"version": "1.0.0", "seed": 9}, content_type="application/json"
    )
    assert again.status_code == 400 and "already exists" in again.json()["detail"]
    assert unchanged(release)


def test_the_release_pages_offer_no_way_to_change_or_delete_a_release(client, lead, release, project):
    client.force_login(lead)
    url = reverse("releases-detail", args=[project.slug, "1.0.0"])
    page = client.get(url)
    assert page.status_code == 200
    assert b"delete" not in page.content.lower() and f'action="{url}'.encode() not in page.content
    assert client.post(url, {"seed": 9}).status_code == 405
    assert client.delete(url).status_code == 405
    listing = client.get(reverse("releases-list", args=[project.slug])).content.decode()
    # The only forms: previewing (then freezing) a new version, comparing two, logging out.
    allowed = {
        reverse("releases-preview", args=[project.slug]),
        reverse("releases-diff", args=[project.slug]),
        reverse("logout"),
    }
    assert set(re.findall(r'action="([^"]*)"', listing)) <= allowed
    response = client.post(
        reverse("releases-preview", args=[project.slug]), {"version": "1.0.0", "seed": 9, "splits": "0.7,0.1,0.2"}
    )
    assert b"already exists" in response.content
    response = client.post(
        reverse("releases-freeze", args=[project.slug]),
        {"version": "1.0.0", "seed": 9, "splits": "0.7,0.1,0.2", "confirmed": "x"},
        follow=True,
    )
    assert b"already exists" in response.content
    assert unchanged(release)
