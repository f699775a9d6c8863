"""Nothing moves under the pointer in the row list (issue 25, point 1): one mouse click on a row opens that row,
right after the clip opens, after j/k, after a save and at the end of the list, on clips of 12, 50 and 150 rows,
at 1440×900 and 1280×800. The clicks are real mouse presses at the coordinates the row had before the press (a row
list that moved on mouse-down would land the mouse-up on another row and open nothing). The whole turn of the row
under the pointer is read in the strip below the list, never in a box over the neighbouring rows (point 3)."""

from __future__ import annotations

import pytest

from annotation.starting import start_assignment

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]

ROWS = """() => [...document.querySelectorAll('#row-list tbody tr[id]')].map(tr => {
  const r = tr.getBoundingClientRect(); return [tr.id, Math.round(r.height * 10) / 10]; })"""

# Is the row wholly in the list's box, below its sticky header?
IN_VIEW = """(id) => {
  const tr = document.getElementById(id), box = tr.closest('.row-list-wrap');
  const head = box.querySelector('thead').getBoundingClientRect();
  const b = box.getBoundingClientRect(), r = tr.getBoundingClientRect();
  return r.top >= head.bottom - 0.5 && r.bottom <= b.top + box.clientHeight + 0.5;
}"""


@pytest.fixture
def clips(project, annotator):
    from bench.workspace_data import make_family_clip

    out = {}
    for n in (12, 50, 150):
        clip = make_family_clip(project, n, seed=n)
        start_assignment(clip, annotator)
        out[n] = clip
    return out


def heights(page):
    return {h for _, h in page.evaluate(ROWS)}


def click_row(page, index):
    """Scroll row ``index`` into the list's view (if needed), then press and release the mouse at its centre."""
    row = page.locator(f"#row-{index}")
    row.evaluate(
        "tr => { const box = tr.closest('.row-list-wrap'); const r = tr.getBoundingClientRect(), b = "
        "box.getBoundingClientRect();"
        " if (r.top < b.top + 40 || r.bottom > b.bottom) box.scrollTop += r.top - b.top - b.height / 2; }"
    )
    box = row.bounding_box()
    before = page.evaluate(ROWS)
    page.mouse.move(box["x"] + box["width"] * 0.6, box["y"] + box["height"] / 2)
    page.mouse.down()
    assert page.evaluate(ROWS) == before, "the rows moved on mouse-down"
    page.mouse.up()
    page.wait_for_selector(f"#editor h2:has-text('Row {index} ')")
    assert page.get_attribute(f"#row-{index}", "aria-current") == "true"


@pytest.mark.parametrize("viewport", [(1440, 900), (1280, 800)])
def test_one_click_opens_the_clicked_row_whatever_happened_before(login, live_server, clips, viewport):
    page = login("ann1", "ann-pass-123", viewport=viewport)
    for n, clip in clips.items():
        page.goto(f"{live_server.url}/work/clips/{clip.pk}/")
        page.wait_for_selector("#editor h2:has-text('Row 1 ')")
        one_height = heights(page)
        assert len(one_height) == 1, f"rows of different heights: {one_height}"

        click_row(page, 2)  # right after the clip opens
        # The pointer rests on row 2: its whole turn is in the strip below the list, no box covers row 3.
        assert page.locator("#row-list .words-full").count() == 0
        words = page.evaluate("() => document.querySelector('#row-2 .words').textContent")
        assert words in page.inner_text("#row-words")
        hidden = page.evaluate(
            "() => { const r = document.querySelector('#row-3').getBoundingClientRect();"
            " const el = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2); return "
            "!!el.closest('#row-3'); }"
        )
        assert hidden, "something covers row 3"

        page.keyboard.press("j")
        page.keyboard.press("j")
        page.wait_for_selector("#editor h2:has-text('Row 4 ')")
        click_row(page, 7)  # after j
        page.keyboard.press("k")
        page.wait_for_selector("#editor h2:has-text('Row 6 ')")
        click_row(page, 9)  # after k

        page.locator("#editor input[type=text]").first.fill("a changed line")
        page.click("#save")
        page.wait_for_selector("#save-state:has-text('version 2')")
        click_row(page, 10 if n > 10 else 3)  # after a save

        # The end of the list: step to the last row with the keyboard; it is wholly in view below the header.
        page.goto("about:blank")
        page.goto(f"{live_server.url}/work/clips/{clip.pk}/#row-{n - 3}")
        page.wait_for_selector(f"#editor h2:has-text('Row {n - 3} ')")
        page.click(f"#row-{n - 3}")
        for _ in range(3):
            page.keyboard.press("j")
        page.wait_for_selector(f"#editor h2:has-text('Row {n} ')")
        assert page.evaluate(IN_VIEW, f"row-{n}"), "the last row is cut by the list's edge"
        page.keyboard.press("k")
        assert page.evaluate(IN_VIEW, f"row-{n - 1}")
        click_row(page, n - 2)  # at the end of the list
        assert heights(page) == one_height, "a row changed height"

        # A transcript line opens its row (point 7), with the mouse.
        line = page.locator("#cue-list li").nth(4)
        line.scroll_into_view_if_needed()
        line.click()
        page.wait_for_selector("#editor h2:has-text('Row 5 ')")
        assert page.evaluate(IN_VIEW, "row-5"), "the row of the clicked line is brought into view"
    assert page.errors == []
