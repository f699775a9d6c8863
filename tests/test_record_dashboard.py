"""The per-annotator dashboard: leave-one-out and pairwise alpha against krippendorff, agreement with the
gold against a hand count, competence against crowd-kit called directly, drift per week, pace from the
agreement page's own rule (rows per hour and median seconds per row against a hand count of saves made at
set times), and the page served from the stored report."""

from __future__ import annotations

import statistics
from datetime import timedelta

import krippendorff
import numpy as np
import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone

from annotation.agreement.draft_pull import confirming
from annotation.agreement.extract import extract, scope_clips
from annotation.models import Assignment, AssignmentMode, Gold, Revision
from annotation.record import dashboard
from annotation.record.models import AnnotatorRecordReport
from annotation.rescue_format.importer import import_rescue
from annotation.services import create_user
from annotation.starting import start_assignment
from annotation.synthetic import generate
from annotation.workspace.services import save_revision, set_reviewed, submit_assignment

from .builders.documents import couple_clip, maya, therapist_row, tobias, write_jsonl
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
    assert (
        first.status_code == 200 and "This server is computing the dashboard" in first.content.decode()
    )  # no broker: no worker
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


class _Clock:
    """The coders' wall clock: every save happens at a time the test sets (the audit trail records it)."""

    def __init__(self):
        self.now = timezone.now() - timedelta(days=3)

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)

    def __call__(self):
        return self.now


def _six_rows():
    return [maya(1), tobias(2), therapist_row(3), maya(4), tobias(5), therapist_row(6)]


def _work(clip, user, clock, gaps, *, resave=None):
    """Save every row of ``user``'s assignment of ``clip`` in order, ``gaps[k]`` seconds after the previous
    save (the first gap opens the sitting), keeping the draft on anchored rows and writing the draft's words
    on from-empty ones; ``resave`` (row index, seconds): save that row once more, edited, after the others."""
    assignment = Assignment.objects.get(clip=clip, annotator=user)
    revisions = list(
        Revision.objects.filter(row__clip=clip, annotator=user).select_related("row__draft").order_by("row__row_index")
    )
    for revision, gap in zip(revisions, gaps, strict=True):
        clock.advance(gap)
        if assignment.mode == AssignmentMode.FROM_DRAFT:
            set_reviewed(revision.pk, user, revision.version)
        else:
            draft = revision.row.draft.content
            save_revision(revision.pk, user, {k: draft[k] for k in revision.content}, revision.version, reviewed=True)
    if resave is not None:
        index, gap = resave
        clock.advance(gap)
        revision = Revision.objects.get(row__clip=clip, row__row_index=index, annotator=user)
        save_revision(
            revision.pk, user, {**revision.content, "tone_of_voice": "sharper now"}, revision.version, reviewed=True
        )
    submit_assignment(assignment, user)


def test_pace_rows_per_hour_and_median_seconds_equal_a_hand_count_and_the_page_shows_them(
    project, lead, tmp_path, monkeypatch, django_capture_on_commit_callbacks, eager_celery
):
    anna, ben = (create_user(name, "annotator", password=f"pw-{name}-123456")[0] for name in ("anna", "ben"))
    anchored = couple_clip("pace_group/001_anchored", _six_rows())
    empty = couple_clip("pace_group/002_empty", _six_rows()[:3])
    import_rescue(write_jsonl(tmp_path / "pace.jsonl", [anchored, empty]), project, as_source="draft")
    anchored, empty = (project.clips.get(sample_id=d["sample_id"]) for d in (anchored, empty))
    clock = _Clock()
    with monkeypatch.context() as patched:
        patched.setattr(timezone, "now", clock)
        for user in (anna, ben):
            start_assignment(anchored, user, mode=AssignmentMode.FROM_DRAFT, actor=lead)
        start_assignment(empty, anna, mode=AssignmentMode.FROM_EMPTY, actor=lead)
        # Anna: a sitting's first save has no gap; 700 s is a break (over 10 minutes: counts nothing, and row 4,
        # saved once, is not timed); row 2 is saved again 15 s after row 6, so it took 30 + 15 s.
        _work(anchored, anna, clock, [3600, 30, 50, 700, 20, 90], resave=(2, 15))
        _work(empty, anna, clock, [3600, 40, 40])
        # Ben: exactly 600 s is not a break yet.
        _work(anchored, ben, clock, [3600, 60, 60, 120, 30, 600])

    # By hand: the seconds of each timed row, per coder and assignment.
    anna_anchored, anna_empty, ben_anchored = [45, 50, 20, 90], [40, 40], [60, 60, 120, 30, 600]
    anna_all, everyone = anna_anchored + anna_empty, anna_anchored + anna_empty + ben_anchored
    expected = {
        # rows per hour: every timed row over the hours measured, from-empty work included;
        # median seconds per row: the agreement page's rule (``confirming``), over rows of anchored work only.
        "anna": {"rows_per_hour": round(len(anna_all) / (sum(anna_all) / 3600), 1), "median": 47.5},
        "ben": {"rows_per_hour": round(len(ben_anchored) / (sum(ben_anchored) / 3600), 1), "median": 60.0},
        "team": {"rows_per_hour": round(len(everyone) / (sum(everyone) / 3600), 1), "median": 60.0},
    }
    assert expected["anna"] == {"rows_per_hour": 75.8, "median": 47.5}  # 6 rows in 285 s
    assert expected["ben"]["rows_per_hour"] == 20.7  # 5 rows in 870 s
    assert expected["team"]["rows_per_hour"] == 34.3  # 11 rows in 1155 s
    assert statistics.median(anna_anchored) == 47.5 and statistics.median(anna_anchored + ben_anchored) == 60.0

    report = dashboard.build(project, "couple")
    for name, figures in expected.items():
        pace = report["pace"][name]
        assert pace["rows_per_hour"] == figures["rows_per_hour"], name
        assert pace["median_seconds"] == figures["median"], name
    assert report["pace"]["anna"]["hours"] == round(sum(anna_all) / 3600, 3)
    # The rows each figure is over: the median's (timed anchored rows) and the hourly rate's (all timed rows).
    assert report["pace"]["anna"]["timed_rows"] == len(anna_anchored)
    assert report["pace"]["anna"]["timed_rows_all_work"] == len(anna_all)
    assert report["pace"]["team"]["timed_rows"] == len(anna_anchored + ben_anchored)
    assert report["pace"]["team"]["timed_rows_all_work"] == len(everyone)
    # Anchored rows kept as the draft: all of Ben's six, five of Anna's (row 2 was edited).
    assert report["pace"]["anna"]["rows"] == 6 and report["pace"]["anna"]["unchanged_rows"] == 5
    assert report["pace"]["ben"]["unchanged_share"] == 1.0
    # All of it was saved in the study's first week: the week's figures are the same.
    (week,) = report["weeks"]
    for name in ("anna", "ben"):
        assert week["coders"][name]["rows_per_hour"] == expected[name]["rows_per_hour"]
        assert week["coders"][name]["median_seconds"] == expected[name]["median"]

    client = Client()
    client.force_login(lead)
    with django_capture_on_commit_callbacks(execute=True):
        client.get(f"/projects/{project.slug}/record/?scenario=couple")
    page = client.get(f"/projects/{project.slug}/record/?scenario=couple").content.decode()
    for name in ("anna", "ben"):
        card = page.split(f'id="coder-{name}"', 1)[1].split("</section>", 1)[0]
        figures = expected[name]
        assert (
            f"<dt>Median seconds per row</dt><dd>{figures['median']} "
            f'<small class="muted">(team {expected["team"]["median"]})</small>'
        ) in card
        assert (
            f"<dt>Rows per hour of work</dt><dd>{figures['rows_per_hour']} "
            f'<small class="muted">(team {expected["team"]["rows_per_hour"]})</small>'
        ) in card


def test_a_coders_confused_pair_links_to_the_guidance_form_for_that_pair(synthetic, lead):
    """The dashboard's "write guidance for this pair" opens the lead's guidance form with the field, the scenario and
    the coder's two labels ticked; "edit the guidance" where the pair already has some."""
    import html
    import re
    from urllib.parse import parse_qs, urlsplit

    from annotation.codebook.services import write_guidance

    project, _names = synthetic
    stored = dashboard.compute_and_store(project, "couple")
    pairs = [
        (f["key"], p)
        for f in stored.report["fields"]
        for c in f["coders"]
        for p in (c.get("confusion") or {}).get("pairs", [])
        if p.get("link")
    ]
    assert pairs, "the synthetic coders confuse labels with the gold's"
    client = Client()
    client.force_login(lead)
    page = client.get(f"/projects/{project.slug}/record/?scenario=couple").content.decode()
    links = [html.unescape(h) for h in re.findall(r'<a href="([^"]+)" class="write-guidance">', page)]
    assert links and set(links) <= {p["link"] for _, p in pairs}
    query = parse_qs(urlsplit(links[0]).query)
    form = client.get(links[0])
    assert form.status_code == 200
    for label in query["labels"]:
        assert re.search(rf'value="{re.escape(label)}"[^>]*checked', form.content.decode()), label

    # Guidance written for that pair: the card offers to edit it instead.
    write_guidance(
        project,
        lead,
        field=query["field"][0],
        labels=query["labels"],
        scenario=query["scenario"][0],
        text="Say how.",
        why="a coder confused them",
    )
    stored = dashboard.compute_and_store(project, "couple")
    page = client.get(f"/projects/{project.slug}/record/?scenario=couple").content.decode()
    assert "edit the guidance</a>" in page
