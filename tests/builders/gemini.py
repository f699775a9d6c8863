"""The fake Gemini server as fixtures, and pre-annotation run the way a lead starts it (conftest registers the
fixtures)."""

from __future__ import annotations

import pytest

from annotation.models import ClipState, Draft, Job, JobState, Row
from annotation.preannotate.services import start_preannotation

from ..fakes import gemini_server as g


@pytest.fixture
def fake(settings, eager_celery):
    with g.FakeGemini() as server:
        settings.GEMINI_API_KEY = "test-key"  # pragma: allowlist secret
        settings.GEMINI_BASE_URL = server.url
        settings.GEMINI_TIMEOUT_SECONDS = 5
        settings.GEMINI_RPM = 100_000
        settings.PREANNOTATE_MAX_ATTEMPTS = 3
        settings.PREANNOTATE_RETRY_BASE_DELAY = 0.01
        settings.PREANNOTATE_RETRY_MAX_DELAY = 3.0
        settings.GEMINI_FILE_POLL_SECONDS = 0.01
        yield server


@pytest.fixture
def preannotate(project, django_capture_on_commit_callbacks):
    """Start a batch and run its tasks (eagerly, at commit); returns the refreshed batch."""

    def run(target_project=None, **kwargs):
        with django_capture_on_commit_callbacks(execute=True):
            batch = start_preannotation(target_project or project, **kwargs)
        batch.refresh_from_db()
        return batch

    return run


def clip_job(clip) -> Job:
    return Job.objects.filter(kind="preannotate", clip=clip).latest("created_at")


def assert_preannotated(clip, rows: int):
    clip.refresh_from_db()
    job = clip_job(clip)
    assert job.state == JobState.SUCCEEDED, job.error
    assert clip.state == ClipState.PREANNOTATED
    assert Row.objects.filter(clip=clip).count() == rows
    assert Draft.objects.filter(row__clip=clip).count() == rows
    return job
