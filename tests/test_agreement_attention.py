"""The agreement page opens with what needs attention (issue 25, point 5): the fields below the thresholds with
their intervals, the confused pairs above a share with "n more", the coders furthest apart, what changed since
the last report; checked against the report's own tables computed here by hand. And it answers at once in the
demo's mode (no broker): the first view shows progress while a thread computes."""

from __future__ import annotations

import html as html_lib
import re
from statistics import mean

import pytest

from annotation.agreement import attention as attn
from annotation.agreement import services
from annotation.codebook.selectors import MEASURE_FIELDS
from annotation.models import AgreementReport, Assignment, AssignmentState
from annotation.synthetic import generate

from .builders.agreement import report_slice
from .conftest import wait_for


def words(html: str) -> str:
    return html_lib.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", html)))


@pytest.mark.django_db
def test_the_summary_names_what_the_tables_below_show(client, lead, project):
    generate(project, clips=3, annotators=3, seed=4)
    params = services.Params.from_query({}, project.work_scope)
    report = services.ensure_report(project, params, compute=services.Compute.IN_PROCESS).report.report
    entry = report_slice(report)
    client.force_login(lead)
    page = client.get(f"/projects/{project.slug}/agreement/").content.decode()
    summary = words(page[page.index('id="agreement-attention"') : page.index('id="section-fields"')])
    assert page.index('id="agreement-attention"') < page.index("agreement-table")  # the summary first, the tables below

    # Fields: every defined alpha below 0.8 named in its band, with its interval; none above.
    for m in report["measures"]:
        h = entry["measures"][m["key"]]["humans"]
        if h.get("defined") and h["alpha"] < 0.8:
            assert f"α {h['alpha']:.3f} (95% interval {h['ci95'][0]:.3f} to {h['ci95'][1]:.3f})" in summary
        elif h.get("defined"):
            assert f"α {h['alpha']:.3f} " not in summary

    # Coders: the lowest mean pair alpha, recomputed here from the pair figures.
    by_pair = {}
    for m in report["measures"]:
        for p in entry["measures"][m["key"]]["pairs"]:
            if report["llm_coder"] not in p["pair"] and p["defined"]:
                by_pair.setdefault(tuple(p["pair"]), []).append(p["alpha"])
    low_pair, low = min(((pair, mean(v)) for pair, v in by_pair.items()), key=lambda x: x[1])
    assert f"{low_pair[0]} and {low_pair[1]} agree least: mean α {low:.3f}" in summary

    # Confused pairs: every pair at or above the share, the rest counted, none dropped unsaid.
    labelled = [m for m in report["measures"] if m["key"] in MEASURE_FIELDS]  # the fields guidance is written for
    every = [(m["key"], p) for m in labelled for p in entry["measures"][m["key"]].get("confused_pairs") or []]
    shown = [p for _, p in every if p["share"] >= attn.PAIR_SHARE]
    left = sum((entry["measures"][m["key"]].get("confused_pairs_left_out") or {}).get("pairs", 0) for m in labelled)
    for p in shown:
        assert f"{p['values'][0]} ↔ {p['values'][1]}" in summary
    more = len(every) - len(shown) + left
    if more:
        assert f"{more} more pair" in summary
    assert "This is the first report of this scope." in summary

    # A coder's work is reopened: the next report says which alphas moved since this one.
    Assignment.objects.filter(
        clip=project.clips.order_by("sample_id").first(), annotator__username__endswith="annotator1"
    ).update(state=AssignmentState.REOPENED)
    again = services.ensure_report(project, params, compute=services.Compute.IN_PROCESS).report.report
    assert again["previous"]["alphas"]["all/all"] == {
        k: (v["humans"]["alpha"] if v["humans"].get("defined") else None) for k, v in entry["measures"].items()
    }
    page = client.get(f"/projects/{project.slug}/agreement/").content.decode()
    changes = attn.changes(again, report_slice(again))
    assert changes["moved"], "reopening a clip moves some alpha"
    first = changes["moved"][0]
    assert f"{first['before']:.3f} → {first['now']:.3f}" in words(page)


@pytest.mark.django_db(transaction=True)
def test_with_no_broker_the_first_view_answers_at_once_with_progress(client, lead, project, settings, eager_celery):
    settings.JOBS_EAGER_IN_THREAD = True
    generate(project, clips=3, annotators=3, seed=4)
    client.force_login(lead)
    response = client.get(f"/projects/{project.slug}/agreement/")
    page = response.content.decode()
    # Progress, not figures: the response was made before the computation ran (a request that waited for it would
    # show the report), which a count of what it shows proves on a loaded machine as well as an idle one.
    assert response.status_code == 200 and 'id="agreement-progress"' in page and 'id="agreement-attention"' not in page
    # The thread stores both reports (labels and free text); then the page shows them without a job.
    wait_for(lambda: AgreementReport.objects.filter(project=project).count() == 2, timeout=120)
    page = client.get(f"/projects/{project.slug}/agreement/").content.decode()
    assert 'id="agreement-attention"' in page and 'id="agreement-progress"' not in page
