"""People's words and the rest of the list (issue 25, points 6 and 7) at 1440×900 and 1280×800: the release page
spells each task out with its short code beside and links the zip, card and Croissant file on its first screen;
the pages a lead and an annotator use show no raw state name and no command flag; the nav's API link (clicked with
the mouse) answers with the API docs; the guide writes each guidance out once per label pair. One page load per
page, both sizes read on it."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from annotation.codebook.services import write_guidance
from tasks.rules import TITLES

from ..builders.pages import no_internal_names
from .conftest import screenshot

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]

SIZES = ((1440, 900), (1280, 800))
# Beyond RAW_NAMES: the assignment modes' internal names and any command-line flag (``--accept-incomplete``).
FLAGS_AND_MODES = re.compile(r"\b(?:from_empty|from_draft|in_review)\b|--[a-z][\w-]*")


@pytest.fixture
def team(frozen_team):
    return frozen_team(own_rows=12)


def in_words_at_both_sizes(page, name, field_names=True):
    """At each size: no raw state name, mode name or command flag in the page's visible text (nor, unless
    ``field_names`` is False, an internal field name)."""
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        if field_names:
            no_internal_names(page)
        found = FLAGS_AND_MODES.search(page.inner_text("main"))
        assert found is None, f"{name} at {width}×{height} shows {found.group()!r}"
    screenshot(page, f"words-{name}-1280")


def test_pages_speak_in_words_and_spell_tasks_out_at_both_sizes(login, live_server, project, team):
    page = login("lead1", "lead-pass-123")
    slug = project.slug

    # The release page: every task in words, its code beside ("Intervention timing prediction (itp)").
    page.goto(f"{live_server.url}/projects/{slug}/releases/1.0.0/")
    tasks = page.locator("h2:has-text('Task instances') + table tbody tr td:first-child")
    codes = []
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        assert tasks.count() >= 6
        codes = []
        for cell in tasks.all():
            text = " ".join(cell.inner_text().split())
            match = re.fullmatch(r"(.+) \(([a-z_]+)\)", text)
            assert match, f"task cell {text!r} at {width}: not 'Title (code)'"
            title, code = match.groups()
            assert title == TITLES[code], f"{code} is called {title!r}, not {TITLES[code]!r}"
            codes.append(code)
    assert {"itp", "rpp", "stp", "ssp", "er", "vp"} <= set(codes)
    # The zip, the card and the Croissant file are linked on the first screen at both sizes (test_pages_fit_browser
    # fetches the card and the Croissant file; the zip is fetched here).
    downloads = [
        page.get_by_role("link", name="Download zip"),
        page.locator("#card-file"),
        page.locator("#croissant-file"),
    ]
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        page.evaluate("() => window.scrollTo(0, 0)")
        for link in downloads:
            box = link.bounding_box()
            assert box and box["x"] + box["width"] <= width and box["y"] + box["height"] <= height, (width, box)
    answer = page.request.get(live_server.url + downloads[0].get_attribute("href"))
    assert answer.status == 200 and answer.body()[:2] == b"PK"
    # The release's notes name the released files' keys (relation_cycle_state, relation_pattern): those are the
    # format a user of the release reads, so only states, modes and flags are refused there.
    in_words_at_both_sizes(page, "release", field_names=False)

    for name, url in (
        ("agreement", f"/projects/{slug}/agreement/"),
        ("releases", f"/projects/{slug}/releases/"),
        ("adjudication-index", f"/projects/{slug}/adjudication/"),
        ("adjudication-clip", f"/adjudication/clips/{team['adjudicated'].pk}/"),
        ("assign", f"/projects/{slug}/assignments/"),
    ):
        page.goto(live_server.url + url)
        page.wait_for_selector("main")
        in_words_at_both_sizes(page, name)

    # The API docs are a click away on every lead's page: the nav's link, with the mouse, at both sizes.
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        page.goto(f"{live_server.url}/projects/{slug}/")
        link = page.locator("header nav a", has_text=re.compile(r"^API$"))
        box = link.bounding_box()
        assert box and box["x"] + box["width"] <= width and box["y"] + box["height"] <= height
        with page.expect_response(lambda r: r.url.endswith("/api/docs/")) as answer:
            link.click()
        assert answer.value.status == 200
        page.wait_for_url("**/api/docs/")
    assert page.errors == []

    # The annotator's side: the queue and an open clip, in words at both sizes.
    page = login("ann1", "ann-pass-123")
    in_words_at_both_sizes(page, "queue")
    page.goto(f"{live_server.url}/work/clips/{team['own'].pk}/")
    page.wait_for_selector("#editor h2")
    in_words_at_both_sizes(page, "clip")
    assert page.errors == []


def test_the_guide_writes_each_guidance_once_per_label_pair_at_both_sizes(login, live_server, project, lead):
    text = "Blame for what the other does is an accusation; a request asks in so many words."
    write_guidance(project, lead, field="utterance_type", labels=["accusation", "request"], text=text, why="test")
    write_guidance(project, lead, field="utterance_type", labels=["disclosure", "reflection"], text="Other.", why="t")
    page = login("lead1", "lead-pass-123")
    page.goto(f"{live_server.url}/projects/{project.slug}/guide/?scenario=couple")
    blocks = page.locator(".guide-field .guidance[data-guidance]")
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        texts = blocks.evaluate_all("els => els.map(e => e.closest('.guide-field').id + '|' + e.dataset.guidance)")
        assert len(texts) == len(set(texts)) == 2, f"at {width}: {texts}"
        expect(page.locator(".guide-field .guidance", has_text=text)).to_have_count(1)
        # The pair's other label points to the one written out, and the link takes the reader there (mouse).
        see = page.locator("#couple-utterance_type-request .guidance-see a")
        see.scroll_into_view_if_needed()
        see.click()
        card = page.locator("#couple-utterance_type-accusation")
        expect(card.locator(".guidance")).to_be_visible()
        assert 0 <= card.bounding_box()["y"] < height
        screenshot(page, f"guide-once-{width}")
    assert page.errors == []
