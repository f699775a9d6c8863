"""Background work through a real Celery worker on the real Redis broker."""

import pytest

from annotation.celery_tasks import start_recheck
from annotation.models import Job, JobState
from annotation.rescue_format.importer import import_rescue

from .conftest import wait_for


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_recheck_job_runs_on_a_real_worker_and_records_its_result(celery_worker_process, project, sample_path):
    import_rescue(sample_path, project)
    job = start_recheck(project)
    done = wait_for(
        lambda: Job.objects.filter(pk=job.pk, state__in=[JobState.SUCCEEDED, JobState.FAILED]).first(), timeout=90
    )
    assert done.state == JobState.SUCCEEDED, done.error
    assert done.celery_task_id, "dispatched through the broker, not run in-process"
    assert done.attempts == 1 and done.progress_done == done.progress_total == 14
    assert done.result["documents"] == 406
    assert done.result["errors"] == {} and done.result["warnings"] == {"evidence_row_missing": 5}


@pytest.mark.django_db
def test_without_a_broker_tasks_run_in_process(project, sample_path, django_capture_on_commit_callbacks):
    from rescue_annot.celery import app

    # The embedded default (no CELERY_BROKER_URL) is eager; force it when CI configured a broker.
    was_eager = app.conf.task_always_eager
    app.conf.task_always_eager = True
    try:
        import_rescue(sample_path, project)
        with django_capture_on_commit_callbacks(execute=True):
            job = start_recheck(project)
    finally:
        app.conf.task_always_eager = was_eager
    job.refresh_from_db()
    assert job.state == JobState.SUCCEEDED and job.result["warnings"] == {"evidence_row_missing": 5}


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_a_free_text_report_is_computed_by_a_real_worker_with_progress(celery_worker_process, project):
    """The semantic report as the agreement page starts it: a job on the broker, the model loaded in the worker,
    texts embedded and cached, the report stored; the figures equal an in-process computation of the same data."""
    from annotation.agreement import services
    from annotation.agreement.semantic import build_semantic_report
    from annotation.models import TextEmbedding
    from annotation.synthetic import generate

    generate(project, clips=2, annotators=3, seed=11)
    params = services.Params()
    state = services.ensure_report(project, params, kind=services.TEXTS, compute=services.Compute.AS_JOB)
    assert state.job is not None, state.status
    done = wait_for(
        lambda: Job.objects.filter(pk=state.job.pk, state__in=[JobState.SUCCEEDED, JobState.FAILED]).first(),
        timeout=120,
    )
    assert done.state == JobState.SUCCEEDED, done.error
    assert done.celery_task_id, "dispatched through the broker, not run in-process"
    assert done.progress_total > 0 and done.progress_done == done.progress_total
    run = done.result["run"]
    assert run["embedded"] > 0 and run["embedded"] + run["from_cache"] == run["texts"]
    assert TextEmbedding.objects.count() == run["texts"]
    stored = services.report_state(project, params, kind=services.TEXTS)
    assert stored.status == "ready"
    # The same data computed here (from the vectors the worker cached) gives the same report.
    here, facts = build_semantic_report(project)
    assert facts["embedded"] == 0
    assert here["slices"] == stored.report.report["slices"]


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_a_freeze_on_a_real_worker_carries_the_free_text_figures(celery_worker_process, project, settings, tmp_path):
    """A lead's freeze runs on a worker: the release's agreement.json holds both reports, byte for byte what
    computing them in this process gives (the worker stored them; here they are read back)."""
    import json

    from annotation.models import Release
    from annotation.releases.agreement_report import agreement_document
    from annotation.releases.manifest import dumps_json
    from annotation.releases.services import start_freeze
    from annotation.synthetic import generate

    settings.RELEASES_ROOT = str(tmp_path / "releases")
    generate(project, clips=12, annotators=3, seed=6)
    job = start_freeze(project, version="1.0.0", seed=1)
    done = wait_for(
        lambda: Job.objects.filter(pk=job.pk, state__in=[JobState.SUCCEEDED, JobState.FAILED]).first(), timeout=240
    )
    assert done.state == JobState.SUCCEEDED, done.error
    assert done.celery_task_id, "dispatched through the broker, not run in-process"
    release = Release.objects.get(project=project, version="1.0.0")
    written = (tmp_path / "releases" / project.slug / "1.0.0" / "agreement.json").read_bytes()
    document = json.loads(written)
    assert document["semantic"]["available"] is True and document["report"]["slices"], document["semantic"]
    released = [c["sample_id"] for c in release.manifest["clips"]]
    assert written == dumps_json(agreement_document(project, released), sort_keys=True)
