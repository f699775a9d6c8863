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
    expect(page.get_by_role("heading", name=name, exact=True)).to_be_visible()
    expect(page.locator("#attention-title")).to_contain_text(name)  # the summary says which slice it sums up
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


SIZES = ((1440, 900), (1280, 800))


def confused_pair_counts(project) -> tuple[int, int]:
    """From the stored report (not the page): the confused pairs above the summary's share, and all the pairs the
    report has (listed or counted), over the label fields the page lists, in the whole-project slice."""
    from annotation.agreement import services as agreement
    from annotation.agreement.attention import PAIR_SHARE
    from annotation.codebook.selectors import MEASURE_FIELDS

    report = agreement.latest_report(project, agreement.Params.from_query({}, project.work_scope)).report
    entry = next(s for s in report["slices"] if s["key"] == "all/all")
    above = total = 0
    for m in report["measures"]:
        measure = entry["measures"][m["key"]]
        if m["key"] not in MEASURE_FIELDS or measure.get("confused_pairs") is None:
            continue
        above += sum(1 for p in measure["confused_pairs"] if p["share"] >= PAIR_SHARE)
        total += len(measure["confused_pairs"]) + (measure.get("confused_pairs_left_out") or {}).get("pairs", 0)
    return above, total


@pytest.mark.django_db(transaction=True)
def test_the_agreement_page_opens_on_what_needs_attention_with_every_confused_pair_counted_at_both_sizes(
    login, live_server, lead, project
):
    """Point 5: the summary is on the first screen, above the folded tables; every confused pair above the share is
    named and the rest counted ("n more", whose click opens the per-field table), as many as the stored report has;
    "write guidance" leads to the guidance form; each folded table (free text too) opens with a click on its summary.
    At 1440×900 and 1280×800, on one page load."""
    from annotation.agreement import services as agreement

    generate(project, clips=3, annotators=3, seed=4)
    params = agreement.Params.from_query({}, project.work_scope)
    for kind in (agreement.LABELS, agreement.TEXTS):
        agreement.ensure_report(project, params, user=lead, kind=kind, compute=agreement.Compute.IN_PROCESS)
    above, total = confused_pair_counts(project)
    assert above > 0 and total > above, "the synthetic work has pairs above the share and below it"

    page = login("lead1", "lead-pass-123")
    url = f"{live_server.url}/projects/{project.slug}/agreement/"
    page.goto(url)
    expect(page.locator("#agreement-freshness .fresh")).to_have_text("up to date")
    summary = page.locator("#agreement-attention")
    sections = page.locator("main details.agreement-section")
    assert page.locator("#section-texts").count() == 1, "the free-text table is folded with the others"
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        page.evaluate("() => window.scrollTo(0, 0)")  # the top, as on arrival
        # On the first screen, above every full table; the tables folded.
        # Its heading and its first lines are on the first screen (below the scope form, counts and slice links).
        top = summary.bounding_box()["y"]
        assert 0 <= top and top + 150 <= height, f"the summary starts at {top} px at {width}×{height}"
        for part in ("#attention-fields", "#attention-confused", "#attention-coders", "#attention-changes"):
            expect(page.locator(part)).to_be_visible()
        assert page.evaluate(
            "() => { const s = document.getElementById('agreement-attention').getBoundingClientRect();"
            " return [...document.querySelectorAll('main details.agreement-section')]"
            ".every(d => d.getBoundingClientRect().top >= s.bottom); }"
        ), "a full table comes before the summary"
        assert sections.count() >= 6
        assert page.locator("main details.agreement-section[open]").count() == 0, "a full table is open on arrival"

        # Every pair above the share named, the rest counted: as many as the report has.
        shown = page.locator("#attention-confused li")
        more = page.locator("#attention-confused a.open-section")
        assert shown.count() == above
        expect(more).to_have_text(f"{total - above} more pair{'s' if total - above != 1 else ''}")
        assert shown.count() + int(more.inner_text().split()[0]) == total

        # "write guidance", with the mouse: the guidance form for that pair.
        link = page.locator("#attention-confused a.write-guidance").first
        link.scroll_into_view_if_needed()
        assert link.bounding_box()["x"] + link.bounding_box()["width"] <= width
        link.click()
        page.wait_for_url("**/guidance/?**")
        expect(page.locator("#guidance-field")).to_be_visible()
        assert page.locator("fieldset input:checked").count() == 2, "the pair's two labels ticked"
        page.go_back()
        page.wait_for_url(url)

        # Each fold opens with a click on its summary (and closes again with another).
        for section in ("#section-fields", "#section-confused", "#section-pairs", "#section-texts"):
            fold = page.locator(section)
            fold.locator("> summary").click()
            expect(fold).to_have_attribute("open", "")
            assert fold.locator("table").first.is_visible(), f"{section} opened but shows no table at {width}"
            fold.locator("> summary").click()
            expect(fold).not_to_have_attribute("open", "")
        # The free-text fields' alphas at a glance above their folded table.
        expect(page.locator("#agreement-texts-glance")).to_be_visible()

        # "n more", with the mouse: the per-field table of confused pairs opens and comes into view.
        page.evaluate("() => window.scrollTo(0, 0)")  # the top, as on arrival
        more.click()
        confused = page.locator("#section-confused")
        expect(confused).to_have_attribute("open", "")
        assert -1 <= confused.bounding_box()["y"] < height  # scrolled to its top (sub-pixel)
        confused.locator("> summary").click()
        page.evaluate("() => history.replaceState(null, '', location.pathname)")  # the next size starts afresh
    screenshot(page, "agreement-attention-1280")
    assert page.errors == []
