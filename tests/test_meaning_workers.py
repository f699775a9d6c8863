"""The LLM judge's run on a real Celery worker over the real Redis broker, against the fake Gemini server
answering from the hard-pair fixture (the workers and their environment as in test_preannotate_workers)."""

from __future__ import annotations

import json

import pytest

from annotation.meaning import judge, services
from annotation.meaning.models import JudgeVerdict, pair_sha256
from annotation.meaning.tasks import start_judge_job
from annotation.models import Job, JobState
from annotation.synthetic import generate

from .builders import meaning_hard_pairs as hard
from .builders.meaning import FIXTURE, fixture_responder
from .conftest import wait_for

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


def test_the_judge_runs_on_a_real_worker_and_caches_every_verdict(workers, worker_fake, project, lead):
    generate(project, clips=1, annotators=2, seed=5)
    rows = services.read_judgements("\n".join(json.dumps(r) for r in hard.rows()), "team.jsonl")
    services.import_judgements(project, rows, source="file:team.jsonl")
    worker_fake.responder = fixture_responder
    workers.start(concurrency=1)
    job = start_judge_job(project, user=lead)
    job = wait_for(
        lambda: Job.objects.filter(pk=job.pk, state__in=(JobState.SUCCEEDED, JobState.FAILED)).first(), timeout=240
    )
    assert job.state == JobState.SUCCEEDED, job.error
    assert job.celery_task_id, "dispatched through the broker"
    assert job.result["usage"]["asked"] == len(worker_fake.generate_requests) == JudgeVerdict.objects.count()
    for r in rows:  # every pair people judged was read by the judge, with the fixture's verdict
        v = JudgeVerdict.objects.get(
            pair_sha256=pair_sha256(r.field, r.text_a, r.text_b), prompt_version=judge.PROMPT_VERSION
        )
        assert v.verdict == FIXTURE[v.pair_sha256] and v.cost_usd > 0
    assert any(f["alpha"] is not None for f in job.result["fields"].values())
