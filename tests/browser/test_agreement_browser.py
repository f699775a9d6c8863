"""A lead reads agreement in a real browser while a real Celery worker computes it: the page
answers at once with a progress bar, reloads itself with the report, and switching the
scope of coded work with the mouse does the same for the other scope."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from annotation.models import Assignment, AssignmentState, Revision, RevisionStatus
from annotation.synthetic import generate
from annotation.taxonomy import THERAPIST

from ..builders.agreement import reopen_untouched
from .conftest import SCREENSHOTS, screenshot

REPORT_WAIT_MS = 90_000  # the worker is shared with the rest of the suite on a busy machine


def utterance_units(page) -> int:
    row = page.locator(".agreement-table tbody tr", has_text="Utterance type")
    # text_content, not inner_text: the full tables are folded by section, and a folded cell renders no text.
    return int(row.locator("td.counts span[title=units]").first.text_content())


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_lead_sees_progress_then_the_report_and_switches_the_scope_with_the_mouse(
    celery_worker_process, login, live_server, lead, project
):
    generate(project, clips=3, annotators=3, seed=4)
    clips = list(project.clips.order_by("sample_id"))
    for clip in clips[1:]:
        reopen_untouched(clip)
    # In the second clip, still open, two coders have marked their first five client rows reviewed.
    rows = [r for r in clips[1].rows.order_by("row_index") if r.primary_speaker != THERAPIST][:5]
    coders = [a.annotator for a in Assignment.objects.filter(clip=clips[1]).order_by("annotator__username")][:2]
    Revision.objects.filter(row__in=rows, annotator__in=coders).update(status=RevisionStatus.REVIEWED)
    Assignment.objects.filter(clip=clips[1], annotator__in=coders).update(state=AssignmentState.IN_PROGRESS)

    page = login("lead1", "lead-pass-123")
    page.goto(f"{live_server.url}/projects/{project.slug}/agreement/")
    # No report yet: the page answers with the worker's progress, then reloads itself with the report.
    expect(page.locator("#agreement-progress progress")).to_be_visible()
    expect(page.locator("#agreement-scope-line")).to_contain_text("Scope: submitted work.")
    screenshot(page, "agreement-progress")
    expect(page.locator("#agreement-freshness .fresh")).to_have_text("up to date", timeout=REPORT_WAIT_MS)
    expect(page.locator("#agreement-progress")).to_have_count(0)
    submitted_units = utterance_units(page)
    expect(page.locator("#agreement-left-out")).to_contain_text("not submitted")
    screenshot(page, "agreement-submitted")
    # The plots are images of their own, drawn when the browser asks: the lead opens their fold with the mouse.
    page.click("#section-plots > summary")
    plot = page.locator(".agreement-plot img").first
    plot.scroll_into_view_if_needed()
    expect(plot).to_have_js_property("complete", True, timeout=30_000)
    assert plot.evaluate("img => img.naturalWidth") > 0
    page.screenshot(path=str(SCREENSHOTS / "agreement-submitted-full.png"), full_page=True)

    # Switch to the reviewed scope with the mouse: progress again, then that scope's report.
    page.mouse.wheel(0, -100_000)
    page.click("#agreement-scope")
    page.select_option("#agreement-scope", "reviewed")
    page.click("form.agreement-params button[type=submit]")
    expect(page.locator("#agreement-scope-line")).to_contain_text("Scope: submitted work and rows marked reviewed.")
    expect(page.locator("#agreement-progress progress")).to_be_visible()
    expect(page.locator("#agreement-freshness .fresh")).to_have_text("up to date", timeout=REPORT_WAIT_MS)
    assert utterance_units(page) == submitted_units + len(rows)
    expect(page.locator("#agreement-left-out")).to_contain_text("not reviewed")
    # The free-text report of the scope is computed on its own queue; when it is stored the page reloads itself,
    # which must happen before the keyboard is used below (on a loaded machine it comes later than the labels').
    expect(page.locator("#agreement-texts-progress")).to_have_count(0, timeout=REPORT_WAIT_MS)
    screenshot(page, "agreement-reviewed")

    # And back with the keyboard: the stored report of the default scope is there at once.
    page.focus("#agreement-scope")
    page.keyboard.press("ArrowUp")
    expect(page.locator("#agreement-scope")).to_have_value("submitted")
    for _ in range(4):  # scenario, resamples, seed, then the Show button
        page.keyboard.press("Tab")
    expect(page.locator("form.agreement-params button[type=submit]")).to_be_focused()
    page.keyboard.press("Enter")
    page.wait_for_url("**scope=submitted**")
    expect(page.locator("#agreement-freshness .fresh")).to_have_text("up to date")
    expect(page.locator("#agreement-progress")).to_have_count(0)
    assert utterance_units(page) == submitted_units

    # A slice link with the mouse: that slice's own table and counts, in words that agree with its numbers.
    name = f"All assignments · {clips[0].scenario} clips"  # the scenario of the one submitted clip
    page.get_by_role("link", name=name).click()
    expect(page.get_by_role("heading", name=name)).to_be_visible()
    expect(page.locator("p.muted", has_text="annotators:")).to_contain_text(f"1 clip, {clips[0].rows.count()} rows, ")
    screenshot(page, "agreement-scenario-slice")

    # A project where nothing is submitted yet: "no coded work yet", never a figure.
    from annotation.services import create_project

    untouched = create_project("untouched", name="Nothing submitted")
    generate(untouched, clips=2, annotators=3, seed=9)
    for clip in untouched.clips.all():
        reopen_untouched(clip)
    page.goto(f"{live_server.url}/projects/{untouched.slug}/agreement/")
    empty = page.locator("#agreement-empty")
    expect(empty).to_contain_text("No coded work yet: no submitted work in this scope", timeout=REPORT_WAIT_MS)
    expect(page.locator(".agreement-table")).to_have_count(0)
    screenshot(page, "agreement-no-coded-work")
    assert page.errors == []
