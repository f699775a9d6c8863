"""The per-annotator dashboard: leave-one-out and pairwise alpha against krippendorff, agreement with the
gold against a hand count, competence against crowd-kit called directly, drift per week, pace from the
agreement page's own rule, and the page served from the stored report."""

from __future__ import annotations

from datetime import timedelta

import krippendorff
import numpy as np
import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone

from annotation.agreement.draft_pull import confirming
from annotation.agreement.extract import extract, scope_clips
from annotation.models import Assignment, Gold, Revision
from annotation.record import dashboard
from annotation.record.models import AnnotatorRecordReport
from annotation.services import create_user
from annotation.synthetic import generate

from .conftest import wait_for

pytestmark = pytest.mark.django_db


@pytest.fixture
def synthetic(project):
    counts = generate(project, clips=10, annotators=3, seed=5)
    return project, counts["annotators"]


def _client_utterances(project, scenario="couple"):
    """{username: {row_id: utterance_type}} and the gold's, on client rows of ``scenario``, read directly."""
    coders = {}
    for row_id, username, content, speaker in Revision.objects.filter(
        row__clip__project=project, row__clip__scenario=scenario
    ).values_list("row_id", "annotator__username", "content", "row__primary_speaker"):
        if speaker != "Therapist" and content.get("utterance_type"):
            coders.setdefault(username, {})[row_id] = content["utterance_type"]
    gold = {
        row_id: content["utterance_type"]
        for row_id, content, speaker in Gold.objects.filter(
            row__clip__project=project, row__clip__scenario=scenario
        ).values_list("row_id", "content", "row__primary_speaker")
        if speaker != "Therapist" and content.get("utterance_type")
    }
    return coders, gold


def _direct_alpha(coders: dict, names: list[str]) -> float:
    rows = sorted(set().union(*(coders[n] for n in names)))
    labels = sorted({v for n in names for v in coders[n].values()})
    data = np.array(
        [[labels.index(coders[n][r]) if r in coders[n] else np.nan for r in rows] for n in names], dtype=float
    )
    return krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")


def test_leave_one_out_pairwise_and_gold_against_direct_computations(synthetic):
    project, names = synthetic
    report = dashboard.build(project, "couple")
    coders, gold = _client_utterances(project)
    field = next(f for f in report["fields"] if f["key"] == "utterance_type")
    assert field["alpha_all"]["alpha"] == pytest.approx(_direct_alpha(coders, names), abs=1e-4)
    for entry in field["coders"]:
        others = [n for n in names if n != entry["coder"]]
        assert entry["alpha_without"]["alpha"] == pytest.approx(_direct_alpha(coders, others), abs=1e-4)
        lo, hi = entry["alpha_without"]["interval"]
        assert lo <= entry["alpha_without"]["alpha"] <= hi
        # Agreement with the gold: alpha of the coder and the gold as two coders, and a hand count.
        both = {"me": coders[entry["coder"]], "gold": gold}
        assert entry["with_gold"]["alpha"] == pytest.approx(_direct_alpha(both, ["me", "gold"]), abs=1e-4)
        same = sum(coders[entry["coder"]][r] == gold[r] for r in gold if r in coders[entry["coder"]])
        assert entry["with_gold"]["matching"]["same"] == same
        # The confusion table against the gold holds the same count on its diagonal.
        assert sum(entry["confusion"]["counts"][i][i] for i in range(len(entry["confusion"]["labels"]))) == same
    for pair in field["pairwise"]:
        assert pair["alpha"] == pytest.approx(_direct_alpha(coders, pair["pair"]), abs=1e-4)
    # Label distribution: each coder's shares sum to one, beside the team's.
    dist = field["distribution"]
    assert sum(dist["team"]) == pytest.approx(1, abs=1e-3)
    assert all(sum(v) == pytest.approx(1, abs=1e-3) for v in dist["coders"].values())


def test_competence_against_crowd_kit_called_directly_on_the_same_matrix(synthetic):
    import pandas as pd
    from crowdkit.aggregation import DawidSkene

    project, names = synthetic
    report = dashboard.build(project, "couple")
    ex = extract(scope_clips(project, scenario="couple"), project.work_scope)
    codes = ex.values["utterance_type"].codes
    rows = [
        (j, ex.coders[c], int(codes[c, j]))
        for c in ex.humans
        for j in range(ex.units)
        if codes[c, j] >= 0 and ex.unit_speaker[j] != "Therapist" and ex.coding[c, j] > 0
    ]
    model = DawidSkene(n_iter=100, tol=1e-6).fit(pd.DataFrame(rows, columns=["task", "worker", "label"]))
    for name in names:
        expected = sum(
            model.priors_[k] * model.errors_.loc[(name, k), k]
            for k in model.priors_.index
            if (name, k) in model.errors_.index
        )
        assert report["competence"]["fields"]["utterance_type"][name] == pytest.approx(expected, abs=1e-4)
    assert "three coders" in report["competence"]["caveat"]


def test_drift_per_week_and_pace_from_the_agreement_rule(synthetic):
    project, names = synthetic
    now = timezone.now()
    Assignment.objects.filter(clip__project=project).update(created_at=now - timedelta(days=15))
    first = list(project.clips.filter(scenario="couple").order_by("sample_id").values_list("pk", flat=True))[:2]
    Revision.objects.filter(row__clip_id__in=first).update(updated_at=now - timedelta(days=14))
    report = dashboard.build(project, "couple")
    weeks = {w["week"]: w for w in report["weeks"]}
    assert 1 in weeks and 3 in weeks
    early = Revision.objects.filter(
        row__clip_id__in=first, annotator__username=names[0], row__primary_speaker__isnull=False
    ).count()
    assert weeks[1]["coders"][names[0]]["rows"] == early
    assert report["plots"][names[0]].startswith("data:image/svg+xml;base64,")
    pull = confirming(
        extract(scope_clips(project, scenario="couple"), project.work_scope), project.quick_confirm_seconds
    )
    for name in names:
        assert report["pace"][name]["unchanged_share"] == pull["coders"][name]["unchanged_share"]


def test_the_page_is_served_from_the_stored_report_and_agrees_with_the_api(
    synthetic, lead, django_capture_on_commit_callbacks, eager_celery
):
    project, names = synthetic
    client = Client()
    client.force_login(lead)
    from annotation.models import Job

    assert dashboard.report_state(project, "couple").status == "missing" and not Job.objects.exists()  # only reads
    with django_capture_on_commit_callbacks(execute=True):
        first = client.get(
            f"/projects/{project.slug}/record/?scenario=couple"
        )  # the job runs in-process once committed
    assert first.status_code == 200 and "A worker is computing the dashboard" in first.content.decode()
    assert [(j.state, j.error) for j in Job.objects.filter(kind=dashboard.JOB_KIND)] == [("succeeded", "")]
    stored = AnnotatorRecordReport.objects.get(project=project, scenario="couple")
    page = client.get(f"/projects/{project.slug}/record/?scenario=couple").content.decode()
    assert AnnotatorRecordReport.objects.get(project=project, scenario="couple").pk == stored.pk  # not recomputed
    assert dashboard.report_state(project, "couple").status == "ready"
    api = client.get(f"/api/v1/projects/{project.slug}/record/?scenario=couple").json()
    field = next(f for f in api["fields"] if f["key"] == "utterance_type")
    assert f"{field['alpha_all']['alpha']:.3f}" in page
    for entry in field["coders"]:
        assert f"{entry['alpha_without']['alpha']:.3f}" in page and entry["coder"] in page
    assert "Send back to qualification" in page and "cross-check" in page


def test_the_release_carries_the_anonymised_coders_record(synthetic, tmp_path):
    import json

    from annotation.record import services
    from annotation.releases.freeze import freeze
    from annotation.releases.services import release_dir

    project, names = synthetic
    services.set_rule(project, "couple", fields=["utterance_type"], min_score=0.5, min_rows=5, max_attempts=2)
    lead = create_user("lead9", "lead", password="lead9-pass-123")[0]
    services.decide(
        project, "couple", get_user_model().objects.get(username=names[0]), "waived", "pilot coder", actor=lead
    )
    freeze(
        project, version="1.0.0", seed=1, out_dir=release_dir(project, "1.0.0"), accept_incomplete=["couple", "family"]
    )
    text = (release_dir(project, "1.0.0") / "stats.json").read_text()
    stats = json.loads(text)["coders"]
    assert stats["count"] == 3 and [q["coder"] for q in stats["qualification"]] == ["coder 1", "coder 2", "coder 3"]
    assert all(name not in text for name in names)
    # Assignments were made in username order, so coder 1 is the first username; the waiver shows, not the name.
    assert {q["status"] for q in stats["qualification"]} == {"waived", "not passed"}
    both = {}  # the release holds both scenarios
    for scenario in ("couple", "family"):
        found, _ = _client_utterances(project, scenario)
        for name, values in found.items():
            both.setdefault(name, {}).update(values)
    for k, entry in enumerate(stats["per_coder"]):
        others = [n for n in names if n != names[k]]
        assert entry["alpha_without"] == pytest.approx(_direct_alpha(both, others), abs=1e-4)
        assert entry["alpha_all"] == pytest.approx(_direct_alpha(both, names), abs=1e-4)


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_the_dashboard_is_computed_by_the_real_worker(celery_worker_process, project, lead):
    import os

    from annotation.models import Job, JobState

    from .conftest import require, wait_for

    require(bool(os.environ.get("CELERY_BROKER_URL")), "CELERY_BROKER_URL is not set")
    generate(project, clips=6, annotators=3, seed=2)
    client = Client()
    client.force_login(lead)
    response = client.get(f"/api/v1/projects/{project.slug}/record/?scenario=couple")
    assert response.status_code in (200, 202)  # 200 only if the worker was already done
    job = Job.objects.get(kind=dashboard.JOB_KIND)
    wait_for(lambda: Job.objects.get(pk=job.pk).state in (JobState.SUCCEEDED, JobState.FAILED), timeout=120)
    job.refresh_from_db()
    assert job.state == JobState.SUCCEEDED, job.error
    body = client.get(f"/api/v1/projects/{project.slug}/record/?scenario=couple").json()
    assert body["stale"] is False and len(body["coders"]) == 3


def test_before_anyone_submitted_the_page_says_so_instead_of_a_table_of_undefined_figures(
    project, lead, django_capture_on_commit_callbacks, eager_celery
):
    client = Client()
    client.force_login(lead)
    with django_capture_on_commit_callbacks(execute=True):
        client.get(f"/projects/{project.slug}/record/?scenario=couple")
    page = client.get(f"/projects/{project.slug}/record/?scenario=couple").content.decode()
    assert dashboard.report_state(project, "couple").report["coders"] == []
    assert "coders: none yet." in page and 'id="record-no-work"' in page
    assert 'id="summary"' not in page and 'id="pairwise"' not in page and "undefined" not in page


@pytest.mark.django_db(transaction=True)
def test_with_no_broker_the_page_answers_before_any_computation_and_reloads_until_it_is_there(
    synthetic, lead, settings, eager_celery
):
    """The demo's mode: the dashboard and its free-text part (the embedding model) run in a thread after the
    response, never inside the request."""
    from annotation.models import Job, JobState

    settings.JOBS_EAGER_IN_THREAD = True
    project, _ = synthetic
    client = Client()
    client.force_login(lead)
    page = client.get(f"/projects/{project.slug}/record/?scenario=couple").content.decode()
    # Made before the computation ran: a request that had waited would show the figures.
    assert 'id="record-state"' in page and 'http-equiv="refresh"' in page and 'id="summary"' not in page
    wait_for(lambda: not Job.objects.filter(state__in=[JobState.QUEUED, JobState.RUNNING]).exists(), timeout=180)
    assert set(Job.objects.values_list("state", flat=True)) == {JobState.SUCCEEDED}
    page = client.get(f"/projects/{project.slug}/record/?scenario=couple").content.decode()
    assert 'id="summary"' in page and 'http-equiv="refresh"' not in page
