"""Pre-annotation on real Celery workers over the real Redis broker, against the fake Gemini server.

The workers are started here the way ``conftest.celery_worker_process`` starts
its worker (same command, DATABASE_URL pointed at the test database), with
what this capability needs in their environment: the fake server as
GEMINI_BASE_URL, a test key, short backoffs, and a private queue so no other
worker takes these messages. ``tests.fakes.celery_app`` is the project's app
with the pre-annotation tasks imported (and, for the crash test, a short
broker visibility timeout so the unacknowledged message comes back quickly).
"""

from __future__ import annotations

import pytest

from annotation.models import ClipState, Draft, Job, JobState, Row
from annotation.preannotate.services import start_preannotation

from .conftest import wait_for
from .fakes import gemini_server as g
from .fakes.clips import make_clip

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


def finished(batch_id):
    batch = Job.objects.get(pk=batch_id)
    return batch if batch.state in (JobState.SUCCEEDED, JobState.FAILED) else None


def test_preannotation_runs_on_real_workers_over_the_redis_broker(workers, worker_fake, project):
    clips = [make_clip(project, f"maya_and_tobias/00{i}_session") for i in range(1, 4)]
    worker_fake.latency = 0.2
    workers.start(concurrency=2)
    batch = start_preannotation(project)
    batch = wait_for(lambda: finished(batch.pk), timeout=90)
    assert batch.state == JobState.SUCCEEDED, batch.error
    for clip in clips:
        clip.refresh_from_db()
        job = Job.objects.get(kind="preannotate", clip=clip)
        assert job.celery_task_id and job.attempts == 1, "dispatched through the broker, run once"
        assert clip.state == ClipState.PREANNOTATED
        assert Row.objects.filter(clip=clip).count() == Draft.objects.filter(row__clip=clip).count() == 6
        assert Draft.objects.filter(row__clip=clip).first().provenance["model_version"] == g.MODEL_VERSION
    assert len(worker_fake.generate_requests) == 3


def test_killing_the_worker_mid_clip_finishes_the_clip_exactly_once_after_a_restart(workers, worker_fake, project):
    clip = make_clip(project)
    hold = g.Hold()
    worker_fake.script(hold)  # the first answer never comes while the first worker lives
    short_visibility = {"TEST_BROKER_VISIBILITY_TIMEOUT": "3"}
    first = workers.start(extra_env=short_visibility)
    batch = start_preannotation(project)
    assert hold.arrived.wait(60), "the worker never called the model"
    job = Job.objects.get(kind="preannotate", clip=clip)
    assert job.state == JobState.RUNNING and Row.objects.filter(clip=clip).count() == 0

    workers.kill(first)  # in the middle of the clip: the request is open, nothing is written
    hold.release.set()
    clip.refresh_from_db()
    assert clip.state == ClipState.PREANNOTATING and Row.objects.filter(clip=clip).count() == 0

    workers.start(extra_env=short_visibility)  # the broker hands the unacknowledged task to the new worker
    batch = wait_for(lambda: finished(batch.pk), timeout=90)
    assert batch.state == JobState.SUCCEEDED, batch.error
    job.refresh_from_db()
    clip.refresh_from_db()
    assert job.state == JobState.SUCCEEDED and job.attempts == 2
    assert clip.state == ClipState.PREANNOTATED
    rows = Row.objects.filter(clip=clip)
    assert rows.count() == 6 and Draft.objects.filter(row__clip=clip).count() == 6  # one draft per row
    # One set of rows was ever created for the clip, not a second one on top or replaced.
    assert Row.history.filter(clip_id=clip.pk, history_type="+").count() == 6
    assert Row.history.filter(clip_id=clip.pk, history_type="-").count() == 0
    assert len(worker_fake.generate_requests) == 2
