"""Pre-annotation for leads: the batch page, the API and the command (tasks run in-process)."""

from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.models import ClipState, Draft, Job, JobState
from annotation.preannotate.services import start_preannotation

from .fakes import gemini_server as g
from .fakes.clips import make_clip


@pytest.fixture
def fake(settings, eager_celery):
    with g.FakeGemini() as server:
        settings.GEMINI_API_KEY = "test-key"
        settings.GEMINI_BASE_URL = server.url
        settings.GEMINI_RPM = 100_000
        settings.PREANNOTATE_MAX_ATTEMPTS = 2
        settings.PREANNOTATE_RETRY_BASE_DELAY = 0.01
        yield server


@pytest.fixture
def clips(project):
    return [make_clip(project, f"maya_and_tobias/00{i}_session") for i in (1, 2)]


@pytest.fixture
def lead_client(client, lead):
    client.force_login(lead)
    return client


@pytest.fixture
def annotator_client(client, annotator):
    client.force_login(annotator)
    return client


@pytest.fixture
def lead_api(lead):
    api = APIClient()
    api.force_authenticate(lead)
    return api


@pytest.fixture
def annotator_api(annotator):
    api = APIClient()
    api.force_authenticate(annotator)
    return api


def one_failed_one_done(fake, project, django_capture_on_commit_callbacks):
    # Clips run in sample-id order: the first gets two 500s (out of its two attempts).
    fake.script(g.error(500), g.error(500))
    with django_capture_on_commit_callbacks(execute=True):
        return start_preannotation(project)


# --- permissions ----------------------------------------------------------------------


@pytest.mark.django_db
def test_annotators_get_403_from_every_preannotation_page_and_endpoint(
    annotator_client, annotator_api, project, clips, fake, django_capture_on_commit_callbacks
):
    batch = one_failed_one_done(fake, project, django_capture_on_commit_callbacks)
    failed = Job.objects.get(kind="preannotate", state=JobState.FAILED)
    pages = [
        ("get", reverse("preannotate-batch", args=[project.slug])),
        ("post", reverse("preannotate-start", args=[project.slug])),
        ("post", reverse("preannotate-retry", args=[failed.pk])),
    ]
    for method, url in pages:
        assert getattr(annotator_client, method)(url).status_code == 403, url
    endpoints = [
        ("get", reverse("api-preannotate-project", args=[project.slug])),
        ("post", reverse("api-preannotate-project", args=[project.slug])),
        ("get", reverse("api-preannotate-batch", args=[batch.pk])),
        ("post", reverse("api-preannotate-retry", args=[failed.pk])),
    ]
    for method, url in endpoints:
        assert getattr(annotator_api, method)(url, format="json").status_code == 403, url
    failed.refresh_from_db()
    assert failed.state == JobState.FAILED  # nothing was retried


@pytest.mark.django_db
def test_anonymous_visitors_are_sent_to_login_and_refused_by_the_api(client, project):
    page = client.get(reverse("preannotate-batch", args=[project.slug]))
    assert page.status_code == 302 and reverse("login") in page["Location"]
    assert APIClient().get(reverse("api-preannotate-project", args=[project.slug])).status_code in (401, 403)


# --- the batch page ---------------------------------------------------------------------


@pytest.mark.django_db
def test_the_batch_page_shows_progress_each_clips_state_the_error_and_a_retry_button(
    lead_client, project, clips, fake, django_capture_on_commit_callbacks
):
    batch = one_failed_one_done(fake, project, django_capture_on_commit_callbacks)
    failed = Job.objects.get(kind="preannotate", state=JobState.FAILED)
    page = lead_client.get(reverse("preannotate-batch", args=[project.slug]))
    assert page.status_code == 200
    html = page.content.decode()
    assert '<progress max="2" value="2"' in html
    assert "2 of 2 clips finished · 1 pre-annotated · 1 failed" in html
    assert "Pre-annotation failed" in html or "preannotation_failed" in html
    assert "the API kept answering with a server error (5xx) after every retry" in html
    assert f'action="{reverse("preannotate-retry", args=[failed.pk])}"' in html
    assert html.count(">Retry</button>") == 1
    assert f'data-status-url="{reverse("api-preannotate-batch", args=[batch.pk])}"' in html
    assert "<script src=" in html and "<script>" not in html  # no inline script


@pytest.mark.django_db
def test_the_batch_page_escapes_what_the_model_and_the_transcript_say(
    lead_client, project, fake, django_capture_on_commit_callbacks
):
    make_clip(project, "evil/<script>alert(1)</script>")
    fake.script(g.text("<img src=x onerror=alert(2)>"))
    with django_capture_on_commit_callbacks(execute=True):
        start_preannotation(project)
    html = lead_client.get(reverse("preannotate-batch", args=[project.slug])).content.decode()
    assert "<script>alert(1)" not in html and "&lt;script&gt;alert(1)" in html
    assert "<img src=x" not in html


@pytest.mark.django_db
def test_the_retry_button_queues_the_failed_clip_again_and_it_is_preannotated(
    lead_client, project, clips, fake, django_capture_on_commit_callbacks
):
    one_failed_one_done(fake, project, django_capture_on_commit_callbacks)
    failed = Job.objects.get(kind="preannotate", state=JobState.FAILED)
    with django_capture_on_commit_callbacks(execute=True):
        response = lead_client.post(reverse("preannotate-retry", args=[failed.pk]))
    assert response.status_code == 302
    failed.refresh_from_db()
    failed.clip.refresh_from_db()
    assert failed.state == JobState.SUCCEEDED and failed.clip.state == ClipState.PREANNOTATED
    assert failed.result["previous_failures"][0]["reason"] == "server_error"
    batch = Job.objects.get(pk=failed.params["batch"])
    assert batch.state == JobState.SUCCEEDED and batch.progress_done == 2
    html = lead_client.get(reverse("preannotate-batch", args=[project.slug])).content.decode()
    assert ">Retry</button>" not in html and "2 of 2 clips finished · 2 pre-annotated · 0 failed" in html


@pytest.mark.django_db
def test_a_lead_starts_the_offline_provider_from_the_page_without_a_key(
    lead_client, project, clips, settings, eager_celery, django_capture_on_commit_callbacks
):
    settings.GEMINI_API_KEY = ""
    page = lead_client.get(reverse("preannotate-batch", args=[project.slug])).content.decode()
    assert 'value="gemini" disabled' in page and "set GEMINI_API_KEY to use it" in page
    with django_capture_on_commit_callbacks(execute=True):
        response = lead_client.post(reverse("preannotate-start", args=[project.slug]), {"provider": "offline"})
    assert response.status_code == 302
    assert set(Draft.objects.filter(row__clip__project=project).values_list("source", flat=True)) == {"offline"}
    html = lead_client.get(reverse("preannotate-batch", args=[project.slug])).content.decode()
    assert "offline skeleton (no LLM)" in html
    # Asking for Gemini without a key is refused with the reason, not half-started.
    response = lead_client.post(
        reverse("preannotate-start", args=[project.slug]), {"provider": "gemini", "force": "on"}, follow=True
    )
    assert "GEMINI_API_KEY is not set" in response.content.decode()


# --- the API -----------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_lead_starts_follows_and_retries_through_the_api(
    lead_api, project, clips, fake, django_capture_on_commit_callbacks
):
    fake.script(g.error(500), g.error(500))
    with django_capture_on_commit_callbacks(execute=True):
        started = lead_api.post(
            reverse("api-preannotate-project", args=[project.slug]),
            {"clips": [c.sample_id for c in clips]},
            format="json",
        )
    assert started.status_code == 202
    body = started.json()
    assert body["total"] == 2 and body["provider"] == "gemini"
    latest = lead_api.get(reverse("api-preannotate-project", args=[project.slug])).json()
    assert latest["batch"] == body["batch"] and latest["finished"] and latest["failed"] == 1
    failed = next(c for c in latest["clips"] if c["state"] == "failed")
    assert failed["reason"] == "server_error" and failed["retryable"] and failed["clip_state"] == "preannotation_failed"
    with django_capture_on_commit_callbacks(execute=True):
        retried = lead_api.post(reverse("api-preannotate-retry", args=[failed["job"]]))
    assert retried.status_code == 202
    status = lead_api.get(reverse("api-preannotate-batch", args=[body["batch"]])).json()
    assert status["succeeded"] == 2 and status["state"] == "succeeded"
    again = lead_api.post(reverse("api-preannotate-retry", args=[failed["job"]]))
    assert again.status_code == 409  # only failed or stalled jobs


@pytest.mark.django_db
def test_the_api_names_unknown_clips_and_a_missing_key(lead_api, project, clips, settings, eager_celery):
    unknown = lead_api.post(
        reverse("api-preannotate-project", args=[project.slug]), {"clips": ["nope/none"]}, format="json"
    )
    assert unknown.status_code == 400 and "nope/none" in unknown.json()["detail"]
    settings.GEMINI_API_KEY = ""
    missing = lead_api.post(reverse("api-preannotate-project", args=[project.slug]), {}, format="json")
    assert missing.status_code == 400 and "GEMINI_API_KEY" in missing.json()["detail"]


# --- the command ---------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)  # the command commits; eager tasks run at commit
def test_the_command_waits_with_a_progress_bar_and_exits_with_an_error_when_a_clip_failed(project, clips, fake):
    fake.script(g.error(500), g.error(500))
    out = io.StringIO()
    with pytest.raises(CommandError, match="1 clips failed"):
        call_command("preannotate", "--project", project.slug, "--wait", stdout=out)
    text = out.getvalue()
    assert "2 clips queued" in text
    assert "[##############################] 2/2 clips  ok 1  failed 1" in text
    assert f"failed {clips[0].sample_id}" in text and "server error" in text


@pytest.mark.django_db(transaction=True)  # the command commits; eager tasks run at commit
def test_the_command_preannotates_named_clips_and_reuses_identical_ones(project, clips, fake):
    out = io.StringIO()
    call_command(
        "preannotate", "--project", project.slug, "--clips", clips[1].sample_id, str(clips[0].pk), "--wait", stdout=out
    )
    assert "2 pre-annotated, 0 failed" in out.getvalue()
    out = io.StringIO()
    call_command("preannotate", "--project", project.slug, "--clips", clips[0].sample_id, stdout=out)
    assert f"reused {clips[0].sample_id}" in out.getvalue()
    with pytest.raises(CommandError, match="no clip 'missing/clip'"):
        call_command("preannotate", "--project", project.slug, "--clips", "missing/clip", stdout=io.StringIO())


@pytest.mark.django_db(transaction=True)  # the command commits; eager tasks run at commit
def test_the_command_runs_the_offline_provider_without_a_key(project, clips, settings, eager_celery):
    settings.GEMINI_API_KEY = ""
    with pytest.raises(CommandError, match="offline"):
        call_command("preannotate", "--project", project.slug, stdout=io.StringIO())
    out = io.StringIO()
    call_command("preannotate", "--project", project.slug, "--offline", "--wait", stdout=out)
    assert "offline skeleton (no LLM)" in out.getvalue() and "2 pre-annotated" in out.getvalue()
