"""The agreement dashboard and API: leads only, stored until the data change, computed by background jobs.

The page never computes a report in the request: it starts a job (run
in-process here, where tasks are eager, when the test lets the transaction
"commit") and shows the last stored report of its scope meanwhile.
"""

from __future__ import annotations

import os
import re

import pytest

from annotation.agreement import services
from annotation.models import AgreementReport, Assignment, AssignmentMode, AssignmentState, Job, JobState, Revision
from annotation.tokens import issue_token

from .builders.agreement import SUBMITTED, annotators, coded_client_content, make_clip
from .builders.pages import parse_page
from .conftest import require, wait_for

BROKER = bool(os.environ.get("CELERY_BROKER_URL"))


def _small_project(project, draft=True, state=SUBMITTED):
    a, b = annotators("web", 2)
    contents = {a: [coded_client_content(v) for v in (0, 1, 2, 3)], b: [coded_client_content(v) for v in (0, 1, 2, 1)]}
    return (
        make_clip(
            project,
            "web/001",
            contents,
            draft=[coded_client_content(v) for v in (0, 1, 2, 2)] if draft else None,
            state=state,
        ),
        a,
        b,
    )


def page_once_computed(client, commits, url: str) -> str:
    """The page after the job its first visit starts has run in-process (``commits``:
    django_capture_on_commit_callbacks; the test asks for eager tasks)."""
    with commits(execute=True):
        first = client.get(url)
    assert first.status_code == 200
    response = client.get(url)
    assert response.status_code == 200
    return response.content.decode()


@pytest.mark.django_db
class TestWhoMaySee:
    def test_anonymous_users_are_sent_to_login_and_refused_by_the_api(self, client, project):
        response = client.get(f"/projects/{project.slug}/agreement/")
        assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
        assert client.get(f"/api/v1/projects/{project.slug}/agreement/").status_code in (401, 403)

    def test_annotators_of_the_project_get_403_on_page_and_api(self, client, project):
        _clip, a, _ = _small_project(project)
        client.force_login(a)
        assert client.get(f"/projects/{project.slug}/agreement/").status_code == 403
        assert client.get(f"/api/v1/projects/{project.slug}/agreement/").status_code == 403
        assert client.get(f"/api/v1/projects/{project.slug}/agreement/status/").status_code == 403
        assert not AgreementReport.objects.exists()  # nothing was computed for them

    def test_annotators_of_other_projects_get_404_on_the_page(self, client, project, annotator):
        _small_project(project)
        client.force_login(annotator)
        assert client.get(f"/projects/{project.slug}/agreement/").status_code == 404


@pytest.mark.django_db
class TestLeads:
    def test_page_shows_the_table_and_svg_plots_drawn_on_request_without_external_assets(
        self, client, lead, project, django_capture_on_commit_callbacks, eager_celery
    ):
        _small_project(project)
        client.force_login(lead)
        page = page_once_computed(client, django_capture_on_commit_callbacks, f"/projects/{project.slug}/agreement/")
        assert "Utterance type" in page and "web1" in page and "LLM draft" in page
        assert "Krippendorff" in page and "Hayes &amp; Krippendorff 2007" in page
        assert "Scope: <b>submitted work</b>" in page and "up to date" in page
        plots = re.findall(r'<img src="(/projects/[^"]+/agreement/plot\.svg\?[^"]+)"', page)
        assert len(plots) >= 3
        assert not re.search(r'(src|href)="(https?:)?//', page)  # no CDN, no external asset
        assert "<script>" not in page  # no inline script blocks
        drawn = client.get(plots[0].replace("&amp;", "&"))
        assert drawn.status_code == 200 and drawn["Content-Type"].startswith("image/svg+xml")
        assert drawn.content.startswith(b"<svg") and "immutable" in drawn["Cache-Control"]
        # Every plot names fields in people's words, as the tables do (no report key such as internal_emotion).
        from annotation.agreement.fields import MEASURES

        for url in plots:
            svg = client.get(url.replace("&amp;", "&")).content.decode()
            assert not [m.key for m in MEASURES if f">{m.key}<" in svg or f"{m.key} present" in svg], url

    def test_plots_of_unknown_reports_slices_or_names_are_refused(self, client, lead, project):
        _small_project(project)
        stored = services.ensure_report(project, services.Params(), compute=services.Compute.IN_PROCESS).report
        client.force_login(lead)
        url = f"/projects/{project.slug}/agreement/plot.svg"
        assert client.get(url).status_code == 400
        assert client.get(url, {"report": "x", "slice": "all/all", "plot": "alpha"}).status_code == 400
        assert client.get(url, {"report": stored.pk + 1, "slice": "all/all", "plot": "alpha"}).status_code == 404
        assert client.get(url, {"report": stored.pk, "slice": "all/all", "plot": "nope"}).status_code == 404
        assert client.get(url, {"report": stored.pk, "slice": "calibration/all", "plot": "alpha"}).status_code == 404
        assert client.get(url, {"report": stored.pk, "slice": "all/all", "plot": "alpha"}).status_code == 200

    def test_undefined_figures_show_their_reason(
        self, client, lead, project, django_capture_on_commit_callbacks, eager_celery
    ):
        a, b = annotators("one", 2)
        content = coded_client_content(0)
        make_clip(project, "one/001", {a: [content] * 3, b: [content] * 3}, state=SUBMITTED)
        client.force_login(lead)
        page = page_once_computed(client, django_capture_on_commit_callbacks, f"/projects/{project.slug}/agreement/")
        assert "undefined</b>: all 6 pairable values are &#x27;disclosure&#x27;" in page

    def test_low_alpha_from_a_rare_value_is_flagged_with_the_majority_share(
        self, client, lead, project, django_capture_on_commit_callbacks, eager_celery
    ):
        a, b = annotators("rare", 2)
        mostly = [coded_client_content(0)] * 18
        make_clip(
            project,
            "rare/001",
            {
                a: [*mostly, coded_client_content(1), coded_client_content(0)],
                b: [*mostly, coded_client_content(0), coded_client_content(1)],
            },
            state=SUBMITTED,
        )
        client.force_login(lead)
        page = page_once_computed(client, django_capture_on_commit_callbacks, f"/projects/{project.slug}/agreement/")
        # 38 of 40 values are "disclosure": observed agreement 90%, alpha below zero.
        assert "disclosure (95%)" in page and "unevenly spread" in page and "observed agreement (90%)" in page

    @pytest.mark.parametrize(
        "mode, why",
        [
            (AssignmentMode.FROM_DRAFT, "no from-empty work counts in this scope"),
            (AssignmentMode.FROM_EMPTY, "no anchored (from-draft) work counts in this scope"),
        ],
    )
    def test_the_drafts_pull_section_says_why_it_is_not_measured(self, client, lead, project, mode, why):
        _clip, a, b = _small_project(project)
        Assignment.objects.filter(clip__project=project).update(mode=mode)
        stored = services.ensure_report(project, services.Params(), compute=services.Compute.IN_PROCESS).report
        anchoring = stored.report["draft_pull"]["anchoring"]
        assert anchoring["measurable"] is False and anchoring["reason"].startswith(why)
        client.force_login(lead)
        page = parse_page(client.get(f"/projects/{project.slug}/agreement/").content.decode())
        section = page.by_id("section-pull").by_id("draft-pull")
        assert section.find(id="anchoring-effect") is None, "no table of figures that were not measured"
        assert section.by_id("anchoring-unmeasured").text() == (
            f"The anchoring effect is not measured: {anchoring['reason']}. The study design sets the share of clips "
            "coded from empty."
        )
        link = section.by_id("anchoring-unmeasured").find("a")
        assert link.attrs["href"] == f"/projects/{project.slug}/design/" and link.text() == "study design"
        # Confirming the draft is counted over anchored rows only: shown for anchored work, absent without it.
        confirming = section.find(id="confirming")
        if mode == AssignmentMode.FROM_EMPTY:
            assert confirming is None and stored.report["draft_pull"]["confirming"]["team"] is None
        else:
            rows = [row for row in confirming.find_all("tr") if "data-coder" in row.attrs]
            shown = {row.attrs["data-coder"]: int(row.cell("rows")) for row in rows}
            assert shown == {a.username: 4, b.username: 4, "team": 8}

    def test_the_relation_pattern_presence_row_shows_the_stored_alpha_and_the_api_gives_the_same(
        self, client, lead, project
    ):
        from .builders.agreement import client_content, report_slice

        # Three coders, six rows: where one coder marked a pattern ("" is "no clear pattern", also marked) and the
        # others left it unset, the presence measure counts the row; null never goes missing here.
        P, N = "pursue_withdraw", None
        table = [[P, P, N, "", N, P], [P, N, N, "", N, N], [P, N, "", N, N, P]]
        coders = annotators("pres", 3)
        contents = {c: [client_content(relation_pattern=v) for v in row] for c, row in zip(coders, table)}
        make_clip(project, "pres/001", contents, state=SUBMITTED)
        stored = services.ensure_report(project, services.Params(), compute=services.Compute.IN_PROCESS).report
        figure = report_slice(stored.report)["measures"]["relation_pattern_presence"]["humans"]
        assert figure["defined"] and figure["units"] == 6 and 0 < abs(figure["alpha"]) < 1

        client.force_login(lead)
        page = parse_page(client.get(f"/projects/{project.slug}/agreement/").content.decode())
        table_rows = [
            tr
            for tr in page.by_id("section-fields").find_all("tr")
            if tr.find("th") is not None and tr.find("th").text().startswith("Relation pattern marked here or not")
        ]
        assert len(table_rows) == 1
        assert table_rows[0].cell("alpha") == f"{figure['alpha']:.3f}"

        body = client.get(f"/api/v1/projects/{project.slug}/agreement/").json()
        assert body["status"] == "ready"
        api_figure = report_slice(body["report"])["measures"]["relation_pattern_presence"]["humans"]
        assert api_figure["alpha"] == figure["alpha"] and api_figure["ci95"] == figure["ci95"]

    def test_api_returns_the_report_and_validates_parameters(self, client, lead, project):
        _small_project(project)
        client.force_login(lead)
        response = client.get(f"/api/v1/projects/{project.slug}/agreement/?resamples=1000&seed=3")
        assert response.status_code == 200
        body = response.json()
        assert body["status"] == "ready" and body["report"]["parameters"]["seed"] == 3
        assert (body["scope"], body["scope_label"], body["stale"], body["coded_work"]) == (
            "submitted",
            "submitted work",
            False,
            True,
        )
        assert body["computed_at"] and body["empty_reason"] is None
        assert body["report"]["summary"][2]["field"] == "utterance_type"
        assert client.get(f"/api/v1/projects/{project.slug}/agreement/?resamples=10").status_code == 400
        assert client.get(f"/api/v1/projects/{project.slug}/agreement/?scenario=zoo").status_code == 400
        refused = client.get(f"/api/v1/projects/{project.slug}/agreement/?scope=everything")
        assert refused.status_code == 400 and "scope must be one of submitted, reviewed" in refused.json()["detail"]
        assert client.get(f"/projects/{project.slug}/agreement/?scope=everything").status_code == 400
        assert client.get(f"/projects/{project.slug}/agreement/?seed=-1").status_code == 400
        assert client.get("/api/v1/projects/nope/agreement/").status_code == 404

    def test_token_clients_get_the_report_too(self, client, lead, project):
        _small_project(project)
        token = issue_token(lead, scope="read")[1]
        response = client.get(f"/api/v1/projects/{project.slug}/agreement/", HTTP_AUTHORIZATION=f"Token {token}")
        assert response.status_code == 200 and response.json()["status"] == "ready"

    def test_report_is_cached_until_a_revision_changes(self, client, lead, project):
        _clip, a, _ = _small_project(project)
        client.force_login(lead)
        first = client.get(f"/api/v1/projects/{project.slug}/agreement/").json()
        again = client.get(f"/api/v1/projects/{project.slug}/agreement/").json()
        assert AgreementReport.objects.count() == 1 and again["fingerprint"] == first["fingerprint"]
        revision = Revision.objects.filter(annotator=a).order_by("row__row_index").last()
        revision.content = coded_client_content(1)
        revision.version += 1
        revision.save()
        changed = client.get(f"/api/v1/projects/{project.slug}/agreement/").json()
        assert changed["fingerprint"] != first["fingerprint"]
        assert changed["report"]["slices"][0]["measures"]["utterance_type"]["humans"]["alpha"] == 1.0
        assert AgreementReport.objects.count() == 1  # the stale report of the same scope is gone

    def test_assignment_mode_changes_the_fingerprint(self, project):
        clip, a, _ = _small_project(project)
        params = services.Params()
        before = services.fingerprint(project, params)
        Assignment.objects.filter(clip=clip, annotator=a).update(mode="from_empty")
        assert services.fingerprint(project, params) != before
        assert services.fingerprint(project, services.Params(seed=1)) != services.fingerprint(project, params)

    def test_both_kinds_share_one_data_digest_and_still_have_their_own_fingerprints(self, project):
        clip, a, _ = _small_project(project)
        params = services.Params()
        data = services.data_digest(project, params)
        labels, texts = (services.fingerprint(project, params, kind) for kind in (services.LABELS, services.TEXTS))
        assert labels != texts  # a label report is never taken for a free-text one
        # The page takes the data's digest once and derives both; the same as each computed on its own.
        assert services.fingerprint(project, params, services.LABELS, data=data) == labels
        assert services.fingerprint(project, params, services.TEXTS, data=data) == texts
        Assignment.objects.filter(clip=clip, annotator=a).update(mode="from_empty")
        assert services.data_digest(project, params) != data
        assert services.fingerprint(project, params, services.TEXTS) != texts

    def test_free_text_jobs_go_to_the_embeddings_queue_and_label_jobs_to_the_default_one(self, project, settings):
        _small_project(project)
        settings.EMBEDDINGS_QUEUE = "embeddings-here"
        params = services.Params()
        for kind, queue in ((services.LABELS, "default"), (services.TEXTS, "embeddings-here")):
            job = services.start_job(project, params, services.fingerprint(project, params, kind), kind=kind)
            # The recorded task spec is what the broker got (and what the sweeper sends again).
            assert job.params["_task"]["options"] == {"queue": queue}, kind

    def test_any_change_a_report_depends_on_changes_the_fingerprint_and_nothing_else_does(self, project):
        from annotation.models import Draft, Row

        clip, a, _ = _small_project(project)
        params = services.Params()
        seen = {services.fingerprint(project, params)}
        assert services.fingerprint(project, params) in seen  # stable while nothing changes
        changes = (
            lambda: Revision.objects.filter(annotator=a).order_by("pk").first().save(),  # updated_at moves
            lambda: Draft.objects.filter(row__clip=clip).order_by("pk").last().save(),
            lambda: Row.objects.filter(clip=clip, row_index=1).update(primary_speaker="Tobias"),
            lambda: Revision.objects.filter(annotator=a).order_by("pk").last().delete(),
        )
        for change in changes:
            change()
            now = services.fingerprint(project, params)
            assert now not in seen
            seen.add(now)


@pytest.mark.django_db
def test_large_project_computes_on_a_job_and_shows_progress(
    client, lead, project, monkeypatch, django_capture_on_commit_callbacks, eager_celery
):
    _small_project(project)
    monkeypatch.setattr(services, "SYNC_MAX_ROWS", 0)
    client.force_login(lead)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = client.get(f"/projects/{project.slug}/agreement/")
    assert response.status_code == 200
    page = response.content.decode()
    assert 'id="agreement-progress"' in page and "<progress" in page and "agreement/agreement.js" in page
    # No broker here (the demo's mode): the page says the server computes it, never that a worker does.
    assert "The report is being computed in the background on this server" in page and "on a worker" not in page
    job = Job.objects.get(kind="agreement")
    assert job.state == JobState.QUEUED
    status = client.get(f"/api/v1/projects/{project.slug}/agreement/status/").json()
    assert status["status"] == "queued" and status["job"]["id"] == job.pk
    for callback in callbacks:  # the commit: the (eager) task runs
        callback()
    job.refresh_from_db()
    assert job.state == JobState.SUCCEEDED and job.progress_done == job.progress_total > 0
    assert client.get(f"/api/v1/projects/{project.slug}/agreement/").status_code == 200


@pytest.mark.django_db
def test_the_page_shows_the_last_report_marked_stale_while_a_worker_computes_the_new_one(
    client, lead, project, django_capture_on_commit_callbacks, eager_celery
):
    clip, a, b = _small_project(project)
    first = services.ensure_report(project, services.Params(), compute=services.Compute.IN_PROCESS).report
    # A lead reopens one coder's clip: what counts changed.
    Assignment.objects.filter(clip=clip, annotator=a).update(state=AssignmentState.REOPENED)
    client.force_login(lead)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = client.get(f"/projects/{project.slug}/agreement/")
    page = response.content.decode()
    assert response.status_code == 200 and 'id="agreement-progress"' in page
    assert "A new report for the current data is being computed" in page
    assert "stale: the data changed since it was computed" in page and first.created_at.strftime("%Y-%m-%d") in page
    assert "Utterance type" in page  # the old figures stay readable meanwhile
    job = Job.objects.get(kind="agreement", state=JobState.QUEUED)
    status = client.get(f"/api/v1/projects/{project.slug}/agreement/status/").json()
    assert (status["status"], status["stale"], status["job"]["id"]) == ("queued", True, job.pk)
    for callback in callbacks:
        callback()
    page = client.get(f"/projects/{project.slug}/agreement/").content.decode()
    assert "up to date" in page and 'id="agreement-progress"' not in page
    # One coder left: nothing to compare among annotators, and the report says what it left out.
    left_out = (
        'Left out of this slice: <span title="the assignment is not submitted"><b>4</b> revisions (not submitted)'
    )
    assert left_out in page


@pytest.mark.django_db
def test_each_scope_has_its_own_report_and_the_page_names_it(client, lead, project, eager_celery):
    _small_project(project, state=AssignmentState.IN_PROGRESS)
    Revision.objects.filter(row__row_index__lte=2).update(status="reviewed")
    client.force_login(lead)
    default = client.get(f"/api/v1/projects/{project.slug}/agreement/").json()
    reviewed = client.get(f"/api/v1/projects/{project.slug}/agreement/?scope=reviewed").json()
    assert default["coded_work"] is False and default["empty_reason"].startswith("no coded work yet")
    assert reviewed["coded_work"] is True and reviewed["scope"] == "reviewed"
    assert reviewed["report"]["slices"][0]["measures"]["utterance_type"]["humans"]["units"] == 2
    assert reviewed["report"]["slices"][0]["left_out"] == {"not_reviewed": 4, "discarded_clip": 0, "unassigned": 0}
    assert AgreementReport.objects.count() == 2
    page = client.get(f"/projects/{project.slug}/agreement/?scope=reviewed").content.decode()
    assert "Scope: <b>submitted work and rows marked reviewed</b>" in page
    assert '<option value="reviewed" selected' in page


@pytest.mark.django_db
def test_a_failed_job_is_shown_and_can_be_started_again(
    client, lead, project, monkeypatch, django_capture_on_commit_callbacks, eager_celery
):
    _small_project(project)
    monkeypatch.setattr(services, "SYNC_MAX_ROWS", 0)
    real = services.report_from_extraction
    monkeypatch.setattr(services, "report_from_extraction", lambda *args, **kwargs: 1 / 0)
    client.force_login(lead)
    with django_capture_on_commit_callbacks(execute=True):
        client.get(f"/api/v1/projects/{project.slug}/agreement/")
    response = client.get(f"/api/v1/projects/{project.slug}/agreement/")
    assert response.status_code == 500 and "ZeroDivisionError" in response.json()["job"]["error"]
    assert "Try again" in client.get(f"/projects/{project.slug}/agreement/").content.decode()
    monkeypatch.setattr(services, "report_from_extraction", real)
    with django_capture_on_commit_callbacks(execute=True):
        client.post(f"/projects/{project.slug}/agreement/", {"resamples": "1000", "seed": "0"})
    assert client.get(f"/api/v1/projects/{project.slug}/agreement/").status_code == 200


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_large_project_is_computed_by_the_real_worker(celery_worker_process, client, lead, project, monkeypatch):
    require(BROKER, "CELERY_BROKER_URL is not set")
    _small_project(project)
    monkeypatch.setattr(services, "SYNC_MAX_ROWS", 0)
    client.force_login(lead)
    response = client.get(f"/api/v1/projects/{project.slug}/agreement/")
    assert response.status_code in (200, 202)  # 200 only if the worker was already done
    job = Job.objects.get(kind="agreement")
    wait_for(lambda: Job.objects.get(pk=job.pk).state in (JobState.SUCCEEDED, JobState.FAILED), timeout=90)
    job.refresh_from_db()
    assert job.state == JobState.SUCCEEDED, job.error
    assert job.progress_done == job.progress_total > 0
    body = client.get(f"/api/v1/projects/{project.slug}/agreement/").json()
    assert body["status"] == "ready" and body["report"]["counts"]["rows"] == 4


@pytest.mark.django_db
def test_report_state_only_reads_and_ensure_report_computes_the_way_its_caller_names(
    project, monkeypatch, django_capture_on_commit_callbacks, eager_celery
):
    _small_project(project)
    params = services.Params()
    for kind in (services.LABELS, services.TEXTS):
        assert services.report_state(project, params, kind=kind).status == "missing"
    assert not Job.objects.exists()
    # The API's choice: a small label scope is computed in place, without a job.
    small = services.ensure_report(project, params, compute=services.Compute.IN_PROCESS_IF_SMALL)
    assert (small.status, small.job) == ("ready", None) and not Job.objects.exists()
    assert services.report_state(project, params).status == "ready"
    # A larger one gets a job; once it failed, it is not started again unless retried.
    monkeypatch.setattr(services, "SYNC_MAX_ROWS", 0)
    monkeypatch.setattr(services, "report_from_extraction", lambda *args, **kwargs: 1 / 0)
    other = services.Params(seed=1)
    with django_capture_on_commit_callbacks(execute=True):
        started = services.ensure_report(project, other, compute=services.Compute.IN_PROCESS_IF_SMALL)
    assert started.job is not None and started.job.kind == "agreement"
    assert services.report_state(project, other).status == "failed"
    assert services.ensure_report(project, other, compute=services.Compute.AS_JOB).status == "failed"
    assert Job.objects.count() == 1
    with django_capture_on_commit_callbacks(execute=True):
        services.ensure_report(project, other, compute=services.Compute.AS_JOB, retry=True)
    assert Job.objects.count() == 2


def test_progress_lines_name_a_worker_only_when_there_is_a_broker():
    from annotation.context_processors import background
    from rescue_annot.celery import app

    before = app.conf.task_always_eager
    try:
        app.conf.task_always_eager = True
        assert background(None)["background"]["on"] == "in the background on this server"
        app.conf.task_always_eager = False
        assert background(None)["background"] == {"subject": "a worker", "on": "on a worker"}
    finally:
        app.conf.task_always_eager = before
