"""Errors after the person acts, all at once (issue 25, point 2): an untouched row, from the draft or from empty,
is never shown in error; a refused save lists every problem of the row above it (and marks each field), and
focuses the first; leaving a changed field shows that field's problems; the banner follows the row's state."""

from __future__ import annotations

import json

import pytest

from annotation.models import AssignmentMode
from annotation.rescue_format.importer import import_rescue
from annotation.starting import start_assignment

from ..builders.documents import couple_clip
from .conftest import screenshot

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]

# The list of problems is in sight: below the editor's sticky actions and above the window's bottom edge (the banner
# says the problems are "listed above the row"; at 1280×800 the jump to the first field once scrolled it away).
LIST_IN_VIEW = """() => {
  const list = document.getElementById('issue-list').getBoundingClientRect();
  const bar = document.querySelector('.editor-actions').getBoundingClientRect();
  return list.top >= bar.bottom - 1 && list.top < window.innerHeight;
}"""


@pytest.fixture
def clips(project, annotator, other_annotator, tmp_path):
    out = {}
    for n, (sample_id, user, mode) in enumerate(
        (
            ("maya_and_tobias/001_opening", annotator, AssignmentMode.FROM_DRAFT),
            ("maya_and_tobias/002_later", annotator, AssignmentMode.FROM_EMPTY),
        )
    ):
        path = tmp_path / f"{n}.jsonl"
        path.write_text(json.dumps(couple_clip(sample_id=sample_id)) + "\n", encoding="utf-8")
        import_rescue(path, project, as_source="draft")
        clip = project.clips.get(sample_id=sample_id)
        start_assignment(clip, user, mode=mode)
        out[mode] = clip
    return out


@pytest.mark.parametrize("viewport", [(1440, 900), (1280, 800)])
def test_problems_appear_when_the_person_acts_all_at_once(login, live_server, clips, viewport):
    page = login("ann1", "ann-pass-123", viewport=viewport)
    # From empty (calibration): every row opens calm, although nothing is filled in yet.
    page.goto(f"{live_server.url}/work/clips/{clips[AssignmentMode.FROM_EMPTY].pk}/")
    page.wait_for_selector("#editor h2:has-text('Row 1 ')")
    for _ in range(2):
        page.wait_for_timeout(600)  # longer than any validation delay
        assert page.locator(".field-error, #issue-list, .banner.error").count() == 0, "an untouched row shown in error"
        page.click("#row-2")
        page.wait_for_selector("#editor h2:has-text('Row 2 ')")
    # Marking an empty row reviewed is acting on it: the row's problems show, all of them, and it stays unreviewed.
    page.click("#mark-reviewed")
    page.wait_for_selector("#issue-list")
    assert page.locator("#issue-list li").count() >= 1, page.inner_text("#issue-list")
    assert page.locator(".field-error").count() >= 1
    assert "was not marked reviewed" in page.inner_text(".banner.error")
    assert page.evaluate(LIST_IN_VIEW), "the list of problems is out of sight"
    assert page.inner_text("#mark-reviewed") == "Mark reviewed"

    # From the draft: a new emotion entry is not red while the person fills it in.
    page.goto(f"{live_server.url}/work/clips/{clips[AssignmentMode.FROM_DRAFT].pk}/")
    page.wait_for_selector("#editor h2:has-text('Row 1 ')")
    page.click('[data-path="internal_emotion"] button.add')
    entry = page.locator('.entry[data-path="internal_emotion[1]"]')
    entry.locator("select").click()
    page.wait_for_timeout(600)
    assert page.locator(".field-error, #issue-list").count() == 0, "a new entry is red at once"

    # Save: all three problems of the entry at once, in the list above the row and at each field; focus on the first.
    page.click("#save")
    page.wait_for_selector("#issue-list")
    items = page.locator("#issue-list li")
    assert items.count() == 3, page.inner_text("#issue-list")
    for path in ("person", "emotion_description", "intensity"):
        assert page.locator(f'.field[data-path="internal_emotion[1].{path}"] .field-error').count() == 1
    assert page.evaluate("() => document.activeElement.closest('[data-path]').dataset.path").startswith(
        "internal_emotion[1]."
    )
    assert "not saved" in page.inner_text(".banner.error")
    assert page.evaluate(LIST_IN_VIEW), "the list of problems is out of sight"
    screenshot(page, f"row-errors-all-at-once-{viewport[0]}")

    # Fixing fields removes their messages at once, and the banner says where the row stands now.
    entry.locator("select").select_option("Maya")
    entry.locator("input[type=text]").click()
    page.keyboard.type("hopeful")
    page.wait_for_function("() => document.querySelectorAll('#issue-list li').length === 1")
    assert "1 field to fix" in page.inner_text(".banner")
    entry.locator('label.seg:has-text("4")').click()
    page.wait_for_selector("#issue-list", state="detached")
    page.wait_for_selector(".banner:has-text('nothing is left to fix')")
    page.click("#save")
    page.wait_for_selector("#save-state:has-text('version 2')")
    assert page.locator(".banner.error").count() == 0
    assert page.errors == []
