"""A real annotator in a real browser: from login to a submitted clip."""
import json
import re

import pytest
from playwright.sync_api import expect

from annotation.assignment import start_assignment
from annotation.models import Revision, RevisionStatus
from annotation.rescue_format.importer import import_rescue

from ..factories import couple_clip, family_clip
from .conftest import screenshot

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]

XSS = '<script>window.__xss = 1</script><img src=x onerror="window.__xss = 2"> {{ 7*7 }}'


@pytest.fixture
def clip(project, annotator, tmp_path):
    doc = couple_clip()
    doc["rows"][2]["dialogue_cleaned"] = XSS
    path = tmp_path / "c.jsonl"
    path.write_text(json.dumps(doc) + "\n", encoding="utf-8")
    import_rescue(path, project, as_source="draft")
    clip = project.clips.get()
    start_assignment(clip, annotator)
    return clip


def open_clip(page, live_server, clip, row=None):
    page.goto(f"{live_server.url}/work/clips/{clip.pk}/" + (f"#row-{row}" if row else ""))
    page.wait_for_selector("#editor h2")


def revision(clip, user, index):
    return Revision.objects.get(row__clip=clip, row__row_index=index, annotator=user)


def choose_label(page, section, typed):
    page.click(f"#dim-{section} button.picker-button")
    page.keyboard.type(typed)
    page.keyboard.press("Enter")


def test_edit_save_reload_and_mark_reviewed(login, live_server, clip, annotator):
    page = login("ann1", "ann-pass-123")
    page.click("text=My queue")
    page.click(f"text={clip.sample_id}")
    page.wait_for_selector("#editor h2")
    assert page.inner_text("#editor h2").startswith("Row 1")
    choose_label(page, "verbal", "req")  # the label picker filters as you type
    page.check("#dim-timing label.check:has-text('Tobias') input")
    intensity = page.locator('[data-path="internal_emotion[0].intensity"] input[type=range]')
    intensity.focus()
    for _ in range(3):
        page.keyboard.press("ArrowRight")
    page.wait_for_selector("text=intensity 9")
    page.click("#save")
    page.wait_for_selector("#save-state:has-text('version 2')")
    screenshot(page, "clip-view")
    stored = revision(clip, annotator, 1)
    assert stored.content["utterance_type"] == "request"
    assert stored.content["target"] == ["Tobias", "Therapist"]
    assert stored.content["internal_emotion"][0]["intensity"] == 9

    page.reload()
    page.wait_for_selector("#editor h2")
    assert page.inner_text("#dim-verbal .picker-value") == "request"
    assert page.is_checked("#dim-timing label.check:has-text('Tobias') input")
    assert page.is_visible("text=intensity 9")
    assert page.is_visible("#dim-verbal .field.changed"), "the field is marked as changed from the draft"
    page.click("#mark-reviewed")
    page.wait_for_selector("#row-1 .chip-reviewed")
    assert revision(clip, annotator, 1).status == RevisionStatus.REVIEWED
    assert page.errors == []


def test_a_field_can_be_reverted_to_the_draft_and_lists_edited(login, live_server, clip, annotator):
    page = login("ann1", "ann-pass-123")
    open_clip(page, live_server, clip, row=2)
    page.click('[data-path="support_strategy"] button.add')
    entry = page.locator('.entry[data-path="support_strategy[1]"]')
    entry.locator("button.picker-button").click()
    page.keyboard.type("evoke")
    page.keyboard.press("Enter")
    entry.locator("label.check:has-text('Maya') input").check()
    entry.locator("textarea").fill("deepens Maya's fear")
    entry.locator("textarea").press("Tab")
    page.locator('.entry[data-path="support_strategy[1]"] button[title="move up"]').click()
    page.click("#save")
    page.wait_for_selector("#save-state:has-text('version 2')")
    strategies = revision(clip, annotator, 2).content["support_strategy"]
    assert [s["strategy_type"] for s in strategies] == ["evoke", "track"]
    page.click('[data-path="support_strategy"] >> text=revert to draft')
    page.click("#save")
    page.wait_for_selector("#save-state:has-text('version 3')")
    assert [s["strategy_type"] for s in revision(clip, annotator, 2).content["support_strategy"]] == ["track"]


def test_boundary_rules_show_for_the_chosen_and_hovered_label(login, live_server, clip):
    page = login("ann1", "ann-pass-123")
    open_clip(page, live_server, clip, row=2)
    rules = page.inner_text('[data-path="support_strategy[0].strategy_type"] .picker > .rules')
    assert "track vs reframe" in rules and "track" in rules.lower()
    page.click('[data-path="support_strategy[0].strategy_type"] button.picker-button')
    page.hover('.picker-pop li:has-text("counterbalance")')
    assert "counterbalance vs safeguard" in page.inner_text(".picker-pop .rules")
    screenshot(page, "row-editor-picker")


def test_keyboard_shortcuts(login, live_server, clip, annotator):
    page = login("ann1", "ann-pass-123")
    open_clip(page, live_server, clip)
    page.keyboard.press("j")
    assert page.inner_text("#editor h2").startswith("Row 2")
    page.keyboard.press("k")
    assert page.inner_text("#editor h2").startswith("Row 1")
    page.keyboard.press("?")
    assert page.is_visible("#help")
    page.keyboard.press("Escape")
    assert page.is_hidden("#help")
    page.keyboard.press("6")
    page.keyboard.press("Escape")  # leave the focused field
    page.keyboard.press("6")
    page.keyboard.press("l")
    page.keyboard.type("withdraw_w")
    page.keyboard.press("Enter")
    page.keyboard.press("Control+s")
    page.wait_for_selector("#save-state:has-text('version 2')")
    assert revision(clip, annotator, 1).content["relation_pattern"] == "withdraw_withdraw"
    page.keyboard.press("m")
    page.wait_for_selector("#row-1 .chip-reviewed")
    page.click('[data-path="tone_of_voice"] input')
    page.keyboard.type(" and flat")
    page.keyboard.press("Control+Enter")
    expect(page.locator("#editor h2")).to_have_text(re.compile(r"^Row 2 "))
    assert revision(clip, annotator, 1).content["tone_of_voice"].endswith("and flat")
    page.keyboard.press("Alt+ArrowDown")
    assert page.inner_text("#editor h2").startswith("Row 3")


def test_two_tabs_saving_the_same_row_get_a_merge_view_not_a_lost_edit(login, live_server, clip, annotator):
    first = login("ann1", "ann-pass-123")
    second = login("ann1", "ann-pass-123")
    open_clip(first, live_server, clip)
    open_clip(second, live_server, clip)
    first.fill('[data-path="tone_of_voice"] input', "tab one tone")
    first.press('[data-path="tone_of_voice"] input', "Tab")
    first.click("#save")
    first.wait_for_selector("#save-state:has-text('version 2')")
    choose_label(second, "verbal", "recoll")
    second.click("#save")
    second.wait_for_selector("#merge-box")
    assert "changed elsewhere" in second.inner_text("#merge-box")
    screenshot(second, "merge-view")
    second.click("#merge-save")
    second.wait_for_selector("#save-state:has-text('version 3')")
    merged = revision(clip, annotator, 1).content
    assert merged["tone_of_voice"] == "tab one tone", "the first tab's edit survived"
    assert merged["utterance_type"] == "recollection", "the second tab's edit survived"


def test_unsaved_edits_are_restored_after_a_reload(login, live_server, clip, annotator):
    page = login("ann1", "ann-pass-123")
    open_clip(page, live_server, clip)
    page.fill('[data-path="tone_of_voice"] input', "typed but never saved")
    page.press('[data-path="tone_of_voice"] input', "Tab")
    page.reload()
    page.wait_for_selector("#editor h2")
    assert "Restored unsaved edits" in page.inner_text("#banner")
    assert page.input_value('[data-path="tone_of_voice"] input') == "typed but never saved"
    assert page.is_visible("#row-1 .chip-unsaved")
    assert revision(clip, annotator, 1).version == 1, "nothing reached the server yet"
    page.click("#save")
    page.wait_for_selector("#save-state:has-text('version 2')")
    assert revision(clip, annotator, 1).content["tone_of_voice"] == "typed but never saved"


def test_transcript_markup_is_shown_as_text(login, live_server, clip):
    page = login("ann1", "ann-pass-123")
    open_clip(page, live_server, clip, row=3)
    assert page.inner_text("#editor blockquote.dialogue") == XSS
    page.click("details.cues summary")
    assert XSS in page.inner_text("#cue-list")
    assert page.evaluate("window.__xss") is None
    assert page.errors == []


def test_invalid_edit_shows_a_message_at_the_field_before_saving(login, live_server, clip, annotator):
    page = login("ann1", "ann-pass-123")
    open_clip(page, live_server, clip)
    page.uncheck("#dim-timing label.check:has-text('Therapist') input")
    page.wait_for_selector('.field[data-path="target"] .field-error')
    assert "empty" in page.inner_text('.field[data-path="target"] .field-error')
    page.click("#save")
    page.wait_for_selector(".banner.error")
    assert revision(clip, annotator, 1).version == 1


def test_annotator_cannot_reach_other_work_by_url(login, live_server, clip, annotator, other_annotator, project, tmp_path):
    start_assignment(clip, other_annotator)
    theirs = revision(clip, other_annotator, 1)
    path = tmp_path / "f.jsonl"
    path.write_text(json.dumps(family_clip()) + "\n", encoding="utf-8")
    import_rescue(path, project, as_source="draft")
    unassigned = project.clips.get(sample_id="okafor_family/001_dinner")
    page = login("ann1", "ann-pass-123")
    assert page.goto(f"{live_server.url}/api/v1/revisions/{theirs.pk}/").status == 404
    assert page.goto(f"{live_server.url}/work/clips/{unassigned.pk}/").status == 404


def test_from_login_to_submitted_clip(login, live_server, clip, annotator):
    page = login("ann1", "ann-pass-123")
    page.goto(f"{live_server.url}/work/")
    page.click("#resume")
    page.wait_for_selector("#editor h2")
    for index in (1, 2, 3):
        expect(page.locator("#editor h2")).to_have_text(re.compile(rf"^Row {index} "))
        page.click("#mark-reviewed")
        page.wait_for_selector(f"#row-{index} .chip-reviewed")
        page.keyboard.press("j")
    page.click("#submit-clip")
    page.wait_for_selector(".banner.success")
    clip.refresh_from_db()
    assert clip.assignments.get().state == "submitted" and clip.state == "reviewed"
    page.goto(f"{live_server.url}/work/")
    assert "3/3" in page.inner_text("table.list")
