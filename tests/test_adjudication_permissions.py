"""Annotators can reach none of the lead's adjudication and assignment pages or
endpoints, by any method; anonymous visitors are sent to log in (pages) or
refused (API: 401, as for every endpoint of the project). Pages and endpoints
answer 403 to a signed-in non-lead."""

from __future__ import annotations

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.adjudication import urls as adjudication_urls
from annotation.models import Assignment, Gold
from annotation.services import create_user

from .builders.adjudication import reviewed_clip

pytestmark = pytest.mark.django_db


@pytest.fixture
def clip(project, tmp_path, annotator, other_annotator):
    return reviewed_clip(project, tmp_path, [annotator, other_annotator])


def kwargs_for(pattern, clip):
    """Real ids for each URL parameter, so that a 403 is the role check and not a 404."""
    names = set(pattern.pattern.converters)
    values = {
        "slug": clip.project.slug,
        "clip_id": clip.pk,
        "row_id": clip.rows.first().pk,
        "assignment_id": Assignment.objects.filter(clip=clip).first().pk,
    }
    return {k: values[k] for k in names}


def every_url(clip):
    for pattern in adjudication_urls.web_urlpatterns:
        yield "web", pattern.name, reverse(pattern.name, kwargs=kwargs_for(pattern, clip))
    for pattern in adjudication_urls.api_urlpatterns:
        yield "api", pattern.name, reverse(pattern.name, kwargs=kwargs_for(pattern, clip))


BODY = {
    "field": "utterance_type",
    "source": "ann1",
    "version": 0,
    "annotator": "ann1",
    "comment": 1,
    "content": {},
    "per_clip": 1,
}


def test_the_url_list_covers_every_page_and_endpoint(clip):
    urls = list(every_url(clip))
    assert len(urls) == len(adjudication_urls.web_urlpatterns) + len(adjudication_urls.api_urlpatterns) >= 20


@pytest.mark.parametrize("who", ["assigned annotator", "unassigned annotator"])
def test_annotators_get_403_everywhere_and_change_nothing(clip, annotator, who):
    user = annotator if who == "assigned annotator" else create_user("ann9", "annotator", password="x-pass-12345")[0]
    client = APIClient()
    client.force_login(user)
    state_before = clip.state
    for _kind, name, url in every_url(clip):
        for method in ("get", "post", "put"):
            response = getattr(client, method)(url, BODY, format="json") if method != "get" else client.get(url)
            assert response.status_code in (403, 405), f"{who} {method.upper()} {name}: {response.status_code}"
            if method == "get" and response.status_code != 405:
                assert response.status_code == 403
    clip.refresh_from_db()
    assert clip.state == state_before and not Gold.objects.exists()
    assert not Assignment.objects.filter(state="reopened").exists()


def test_anonymous_visitors_are_sent_to_log_in_or_refused(clip):
    client = APIClient()
    for kind, name, url in every_url(clip):
        response = client.get(url) if kind == "web" else client.post(url, BODY, format="json")
        if kind == "web":
            assert response.status_code in (302, 405), name
            if response.status_code == 302:
                assert response["Location"].startswith(reverse("login")), name
        else:
            # 401 with a WWW-Authenticate header since token auth comes first (settings).
            assert response.status_code in (401, 403), name


def test_leads_and_admins_reach_the_pages(client, clip, lead):
    admin = create_user("boss", "admin", password="x-pass-12345")[0]
    for user in (lead, admin):
        client.force_login(user)
        for name, args in (
            ("adjudication-index", [clip.project.slug]),
            ("adjudication-clip", [clip.pk]),
            ("assignment-index", [clip.project.slug]),
        ):
            assert client.get(reverse(name, args=args)).status_code == 200, (user.username, name)
