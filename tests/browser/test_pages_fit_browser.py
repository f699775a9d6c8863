"""The four pages a team lives in (an annotator's clip, a lead's adjudication, agreement and release pages)
fit the two laptop screens they are used on, 1440×900 and 1280×800: no table wider than its column, no
cell whose words are cut, no page wider than the window. Screenshots of each page at both sizes."""

from __future__ import annotations

import pytest
from playwright.sync_api import Error as PlaywrightError

from .conftest import screenshot

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]

SIZES = ((1440, 900), (1280, 800))

# Everything in <main> that sticks out of the page or of its scroll box, and every table cell whose
# text is cut (text wider than the cell and hidden). Returns human-readable descriptions.
OVERFLOW = """() => {
  // The folded tables must fit too.
  for (const d of document.querySelectorAll('main details')) if (d.querySelector('table')) d.open = true;
  const out = [], width = document.documentElement.clientWidth;
  const page = document.documentElement.scrollWidth;
  if (page > width + 1) out.push('page ' + page + ' > ' + width);
  const classes = (el) =>
    el.className && typeof el.className === 'string' ? '.' + el.className.split(' ').join('.') : '';
  const name = (el) => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + classes(el);
  // A control (button, field, link styled as one) past the window's right edge cannot be clicked.
  for (const c of document.querySelectorAll('main button, main input, main select, main a.button')) {
    if (!c.offsetParent) continue;
    if (c.getBoundingClientRect().right > width + 1) out.push(name(c) + ' beyond the window');
  }
  for (const t of document.querySelectorAll('main table')) {
    if (!t.offsetParent) continue;
    // A table wider than the box it sits in: cut, or scrolled sideways.
    const box = t.parentElement, r = t.getBoundingClientRect(), b = box.getBoundingClientRect();
    if (r.right > b.right + 1 || box.scrollWidth > box.clientWidth + 1)
      out.push(name(t) + ' wider than ' + name(box) + ': ' + Math.round(r.width) + ' > ' + Math.round(b.width));
    if (r.right > width + 1) out.push(name(t) + ' beyond the window');
    for (const c of t.querySelectorAll('td, th')) {
      if (!c.offsetParent) continue;
      // Content wider than its cell: it spills over the next column or is cut.
      if (c.scrollWidth > c.clientWidth + 1)
        out.push('cell of ' + name(t) + ' ' + JSON.stringify(c.innerText.slice(0, 40)) + ' '
                 + c.scrollWidth + ' > ' + c.clientWidth);
    }
  }
  return out;
}"""


@pytest.fixture
def team(frozen_team):
    return frozen_team(own_rows=50)


# The open row is wholly in view: below the sticky header cells (which stay put while the table scrolls under them)
# and above the bottom edge of the list box.
OPEN_ROW_IN_VIEW = """() => {
  const box = document.querySelector('.row-list-wrap'), row = box.querySelector('tr.current');
  const head = box.querySelector('th').getBoundingClientRect(), r = row.getBoundingClientRect();
  return r.top >= head.bottom - 0.5 && r.bottom <= box.getBoundingClientRect().top + box.clientHeight + 0.5;
}"""


def check(page, name):
    for size in SIZES:
        page.set_viewport_size({"width": size[0], "height": size[1]})
        page.wait_for_timeout(50)
        screenshot(page, f"fit-{name}-{size[0]}")
        problems = page.evaluate(OVERFLOW)
        assert problems == [], f"{name} at {size[0]}×{size[1]}: {problems}"


def test_the_four_pages_fit_both_laptop_screens(login, live_server, project, team):
    page = login("ann1", "ann-pass-123")
    page.goto(f"{live_server.url}/work/clips/{team['own'].pk}/")
    page.wait_for_selector("#editor h2")
    check(page, "clip")
    assert page.evaluate(OPEN_ROW_IN_VIEW), "row 1 sits under the list's sticky header when the clip opens"
    page.goto("about:blank")
    page.goto(f"{live_server.url}/work/clips/{team['own'].pk}/#row-50")  # the last row: fully in view, nothing cut
    page.wait_for_selector("#editor h2:has-text('Row 50')")
    check(page, "clip-end")
    assert page.evaluate(OPEN_ROW_IN_VIEW), "the last row is cut when the clip opens at it"
    assert page.errors == []

    page = login("lead1", "lead-pass-123")
    page.goto(f"{live_server.url}/adjudication/clips/{team['adjudicated'].pk}/")
    page.wait_for_selector("#compare")
    page.click("#row-list tbody tr[id] >> nth=1")
    check(page, "adjudication")
    page.goto(f"{live_server.url}/projects/{project.slug}/agreement/")
    page.wait_for_selector("#agreement-freshness")
    # No full-page shot here: the page may be reloading itself for a fresh report (the clip opened above
    # changed the work), and a full-page capture across a reload can wait out its timeout on a loaded
    # machine. test_agreement_browser takes the full-page shot of a settled page.
    check(page, "agreement")
    # The agreement page polls its job and may reload itself just as we leave it; a navigation it aborts is retried.
    for attempt in range(3):
        try:
            page.goto(f"{live_server.url}/projects/{project.slug}/releases/1.0.0/")
            break
        except PlaywrightError as exc:
            if "ERR_ABORTED" not in str(exc) or attempt == 2:
                raise
    # The release page opens with its card rendered (point 7), links to the card and Croissant files, the checksums
    # folded.
    # The card's sections are folded under their headings, so the page opens on the card's title, its opening lines
    # and the list of its sections; a click on a heading opens that section.
    card = page.locator("#release-card")
    sections = card.locator("details.card-section")
    for size in SIZES:
        page.set_viewport_size({"width": size[0], "height": size[1]})
        assert card.locator("h1").first.is_visible() and card.bounding_box()["y"] < 400
        assert sections.count() >= 10 and page.locator("#release-card details.card-section[open]").count() == 0
        assert card.locator("summary h2").first.is_visible()
        assert page.locator("#release-card script").count() == 0
        assert page.evaluate("() => !document.querySelector('#release-files').open")
    for link, kind in (("#card-file", "text/markdown"), ("#croissant-file", "application/json")):
        answer = page.request.get(live_server.url + page.get_attribute(link, "href"))
        assert answer.status == 200 and answer.headers["content-type"].startswith(kind)
    human = sections.filter(has_text="How much of the gold is human")
    human.locator("summary").click()
    assert human.get_attribute("open") is not None and human.locator("table").first.is_visible()
    check(page, "release")
    assert page.errors == []
