"""The pages around the editor, in a real browser and with the mouse: an annotator's queue in their own
locale and time zone, a lead ticking clips to assign, numbered pre-annotation batches, and every page
showing states and fields in words."""

from __future__ import annotations

import datetime as dt
import json
import re

import pytest

from annotation.models import Assignment, AssignmentMode, Job, Revision
from annotation.rescue_format.importer import import_rescue
from annotation.starting import start_assignment

from ..builders.documents import couple_clip
from ..builders.pages import no_internal_names
from ..fakes.clips import make_clip
from .conftest import screenshot

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]


def import_clips(project, tmp_path, *sample_ids):
    for n, sample_id in enumerate(sample_ids):
        path = tmp_path / f"{n}.jsonl"
        path.write_text(json.dumps(couple_clip(sample_id=sample_id)) + "\n", encoding="utf-8")
        import_rescue(path, project, as_source="draft")
    return list(project.clips.order_by("sample_id"))


def test_an_annotator_lands_on_a_queue_that_fits_and_shows_dates_in_their_locale(
    browser, live_server, project, annotator, tmp_path
):
    long_id = "alan_and_evelyn_in_the_long_run/001_s01e01_ct25_segment04_after_the_second_session"
    clips = import_clips(project, tmp_path, long_id, "maya_and_tobias/000_clip")
    for clip in clips:
        start_assignment(clip, annotator)
    # Last worked on at 14:05 UTC on 1 March 2026: 15:05 in Berlin (CET).
    Revision.objects.filter(row__clip=clips[0]).update(updated_at=dt.datetime(2026, 3, 1, 14, 5, tzinfo=dt.UTC))

    context = browser.new_context(viewport={"width": 1440, "height": 900}, locale="de-DE", timezone_id="Europe/Berlin")
    try:
        page = context.new_page()
        page.goto(f"{live_server.url}/accounts/login/")
        page.fill("#id_username", "ann1")
        page.fill("#id_password", "ann-pass-123")
        page.click("button[type=submit]")
        page.wait_for_url(f"{live_server.url}/")
        assert page.inner_text("h1") == "My queue"  # not the project list
        assert page.locator("nav >> text=Projects").count() == 0
        row = page.locator("#queue tbody tr", has_text="alan_and_evelyn")
        assert row.locator("time").inner_text() == "01.03.2026, 15:05"
        assert row.locator("time").get_attribute("title") == "2026-03-01 14:05:00 UTC"
        assert row.locator(".state").inner_text() == "assigned"
        # The table keeps to the page at 1440 px: nothing sticks out to the right, no horizontal scrolling.
        widths = page.evaluate("""() => {
            const main = document.querySelector('main'), style = getComputedStyle(main);
            return {page: document.documentElement.scrollWidth,
                    table: document.querySelector('#queue').getBoundingClientRect().right,
                    main: main.getBoundingClientRect().right - parseFloat(style.paddingRight)};
        }""")
        assert widths["page"] <= 1440 and widths["table"] <= widths["main"] + 0.5, widths
        no_internal_names(page)
        screenshot(page, "queue")
        page.click(f"#queue a:has-text('{long_id[-20:]}')")
        page.wait_for_url(re.compile(r"/work/clips/\d+/"))
    finally:
        context.close()
        from django.db import connections

        connections.close_all()


def test_a_lead_ticks_clips_by_filter_assigns_them_and_reads_states_in_words(
    login, live_server, project, lead, annotator, other_annotator, tmp_path, eager_celery
):
    import_clips(project, tmp_path, "maya_and_tobias/000_clip", "maya_and_tobias/001_clip", "priya_and_jonah/000_clip")
    make_clip(project, "okafor_family/001_dinner", scenario="family", participants=("Ada", "Ben"))
    page = login("lead1", "lead-pass-123")
    assert page.inner_text("h1") == "Projects"
    screenshot(page, "projects")

    page.click("nav >> text=Assign")  # the only project: straight to its page
    page.wait_for_selector("#assignment-clips")
    page.click("#filter-text")
    page.keyboard.type("maya")
    page.wait_for_selector("#filter-count:has-text('2 of 4 clips shown')")
    page.click("#select-all-shown")
    assert page.inner_text("#ticked-count") == "2"
    page.click("input[name=calibration_clips][value='maya_and_tobias/001_clip']")
    assert page.inner_text("#calibration-count") == "1"
    page.click("#id_per_clip", click_count=3)
    page.keyboard.type("2")
    screenshot(page, "assign-ticked")
    page.click("#assign-form button[type=submit]")
    message = page.wait_for_selector(".message-success")
    assert message.inner_text() == (
        "4 assignments created, 0 clips skipped; 2 of them start empty (coded from empty, to measure the draft's pull)."
    )
    colour = page.eval_on_selector(".message-success", "el => getComputedStyle(el).backgroundColor")
    assert colour == "rgb(232, 245, 236)"  # the success colour of app.css, not an unstyled line
    assert sorted(Assignment.objects.values_list("clip__sample_id", "mode")) == [
        ("maya_and_tobias/000_clip", AssignmentMode.FROM_DRAFT),
        ("maya_and_tobias/000_clip", AssignmentMode.FROM_DRAFT),
        ("maya_and_tobias/001_clip", AssignmentMode.FROM_EMPTY),
        ("maya_and_tobias/001_clip", AssignmentMode.FROM_EMPTY),
    ]
    assert page.locator("tr[data-sample-id='maya_and_tobias/000_clip'] .state").inner_text() == "in review"
    no_internal_names(page)
    screenshot(page, "assign-done")

    # Nothing ticked: the page says what to do, nothing is assigned.
    page.click("#assign-form button[type=submit]")
    page.wait_for_selector("#assign-errors:has-text('Tick the clips to assign')")
    assert Assignment.objects.count() == 4

    # Two pre-annotation batches: numbered 1 and 2 although their job ids are not.
    page.goto(f"{live_server.url}/projects/{project.slug}/preannotation/")
    for expected in (1, 2):
        page.click("tr:has-text('okafor_family/001_dinner') input[name=clips]")
        page.click("input[name=provider][value=offline]")
        page.click("input[name=force]")
        page.click("#start-form button[type=submit].primary")
        page.wait_for_selector(f".message-success:has-text('Batch {expected}: 1 clips queued')")
        page.wait_for_selector(f"#batch h2:has-text('Batch {expected}')")
    assert list(Job.objects.filter(kind="preannotate_batch").order_by("pk").values_list("pk", flat=True)) != [1, 2]
    assert (
        page.locator("tr:has-text('okafor_family/001_dinner') [data-field=clip_state]").inner_text() == "pre-annotated"
    )
    no_internal_names(page)
    screenshot(page, "preannotation")

    for name, url in (
        ("project", f"/projects/{project.slug}/"),
        ("adjudication-index", f"/projects/{project.slug}/adjudication/"),
        ("audit-trail", f"/projects/{project.slug}/history/"),
        ("releases", f"/projects/{project.slug}/releases/"),
        ("agreement", f"/projects/{project.slug}/agreement/"),
    ):
        page.goto(live_server.url + url)
        no_internal_names(page)
        screenshot(page, f"page-{name}")
    page.goto(f"{live_server.url}/projects/{project.slug}/history/")
    first_time = page.locator("table.history time").first
    assert not first_time.inner_text().endswith("UTC") and first_time.get_attribute("title").endswith("UTC")
    assert (
        page.locator("table.history li", has_text=re.compile(r"^State: pre-annotated → in review$")).count() == 2
    )  # the two assigned clips
    assert page.errors == []
