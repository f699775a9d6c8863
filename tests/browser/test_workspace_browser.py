"""A real annotator in a real browser: from login to a submitted clip, by mouse and by keyboard."""

import json
import re

import pytest
from playwright.sync_api import expect

from annotation.models import Assignment, ClipState, Revision, RevisionStatus
from annotation.rescue_format.importer import import_rescue
from annotation.starting import start_assignment
from annotation.workspace.services import save_revision, submit_assignment

from ..builders.documents import couple_clip, family_clip
from .conftest import screenshot

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]

XSS = '<script>window.__xss = 1</script><img src=x onerror="window.__xss = 2"> {{ 7*7 }}'
EDITABLE = (
    "#editor input:not([disabled]), #editor textarea:not([disabled]), #editor select:not([disabled]), #editor "
    "button.picker-button:not([disabled])"
)


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
    page.click('[data-path="internal_emotion[0].intensity"] label.seg:has-text("9")')
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


def test_every_click_lands_right_after_typing(login, live_server, clip, annotator):
    """Type, then one click: the save, the picker, adding and removing an entry all happen on the first click."""
    page = login("ann1", "ann-pass-123")
    open_clip(page, live_server, clip)
    save = page.query_selector("#save")
    picker = page.query_selector("#dim-verbal button.picker-button")
    tone = page.locator('[data-path="tone_of_voice"] input')

    tone.click()
    page.keyboard.type(" and tense")
    page.click("#save")  # no blur first, no second click
    page.wait_for_selector("#save-state:has-text('version 2')")
    assert revision(clip, annotator, 1).content["tone_of_voice"] == "quiet, tired and tense"

    tone.click()
    page.keyboard.type(", flat")
    page.click("#dim-verbal button.picker-button")
    expect(page.locator("#dim-verbal .picker-pop")).to_be_visible()
    page.keyboard.press("Escape")

    tone.click()
    page.keyboard.type(" voice")
    page.click('[data-path="facial_expressions"] button.add')
    entry = page.locator('.entry[data-path="facial_expressions[0]"]')
    expect(entry).to_be_visible()
    entry.locator("input").click()
    page.keyboard.type("a brief frown")
    entry.locator('button[title="remove"]').click()
    expect(page.locator('.entry[data-path^="facial_expressions"]')).to_have_count(0)

    page.click("#save")
    page.wait_for_selector("#save-state:has-text('version 3')")
    stored = revision(clip, annotator, 1).content
    assert stored["tone_of_voice"] == "quiet, tired and tense, flat voice" and stored["facial_expressions"] == []
    # The elements under the pointer were patched in place, never replaced.
    assert save.evaluate("el => el.isConnected") and picker.evaluate("el => el.isConnected")
    assert page.errors == []


def test_new_entries_start_empty_and_a_phantom_is_refused_at_the_field(login, live_server, clip, annotator):
    page = login("ann1", "ann-pass-123")
    open_clip(page, live_server, clip)
    page.click('[data-path="internal_emotion"] button.add')
    entry = page.locator('.entry[data-path="internal_emotion[1]"]')
    assert entry.locator("select").input_value() == "", "no person is chosen for the annotator"
    assert entry.locator("input[type=text]").input_value() == ""
    assert entry.locator("input[type=radio]:checked").count() == 0, "no default intensity"
    page.keyboard.press("Control+s")
    page.wait_for_selector(".banner.error")
    page.wait_for_selector('.field[data-path="internal_emotion[1].intensity"] .field-error')
    assert "choose an intensity" in page.inner_text('.field[data-path="internal_emotion[1].intensity"]')
    assert revision(clip, annotator, 1).version == 1, "nothing phantom reached the server"
    entry.locator("select").select_option("Maya")
    entry.locator("input[type=text]").fill("hopeful")
    page.keyboard.press("Control+s")
    page.wait_for_selector('.field[data-path="internal_emotion[1].intensity"] .field-error')
    entry.locator('label.seg:has-text("4")').click()
    # A pattern without a reason is refused too.
    page.keyboard.press("Escape")
    page.keyboard.press("6")
    page.keyboard.press("Escape")
    page.keyboard.press("l")
    page.keyboard.type("pursue")
    page.keyboard.press("Enter")
    page.keyboard.press("Control+s")
    page.wait_for_selector('.field[data-path="relation_pattern_reason"] .field-error')
    assert "needs a short reason" in page.inner_text('.field[data-path="relation_pattern_reason"] .field-error')
    page.fill('[data-path="relation_pattern_reason"] textarea', "she presses, he goes quiet")
    page.click("#save")
    page.wait_for_selector("#save-state:has-text('version 2')")
    stored = revision(clip, annotator, 1).content
    assert stored["internal_emotion"][1] == {"person": "Maya", "emotion_description": "hopeful", "intensity": 4}
    assert stored["relation_pattern"] == "pursue_withdraw"


def test_choosing_a_label_moves_the_focus_to_the_next_field(login, live_server, clip):
    page = login("ann1", "ann-pass-123")
    open_clip(page, live_server, clip)
    page.click("#dim-verbal button.picker-button")
    page.click('#dim-verbal .picker-pop li:has-text("recollection")')
    expect(page.locator('[data-path="tone_of_voice"] input')).to_be_focused()


def test_boundary_rules_show_for_the_chosen_and_hovered_label(login, live_server, clip):
    page = login("ann1", "ann-pass-123")
    open_clip(page, live_server, clip, row=2)
    rules = page.inner_text('[data-path="support_strategy[0].strategy_type"] .picker > .rules')
    assert "track vs reframe" in rules and "track" in rules.lower()
    page.click('[data-path="support_strategy[0].strategy_type"] button.picker-button')
    page.hover('.picker-pop li:has-text("counterbalance")')
    assert "counterbalance vs safeguard" in page.inner_text(".picker-pop .rules")
    screenshot(page, "row-editor-picker")


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
    page.locator('.entry[data-path="support_strategy[1]"] button[title="move up"]').click()
    page.click("#save")
    page.wait_for_selector("#save-state:has-text('version 2')")
    strategies = revision(clip, annotator, 2).content["support_strategy"]
    assert [s["strategy_type"] for s in strategies] == ["evoke", "track"]
    page.click('[data-path="support_strategy"] >> text=revert to draft')
    page.click("#save")
    page.wait_for_selector("#save-state:has-text('version 3')")
    assert [s["strategy_type"] for s in revision(clip, annotator, 2).content["support_strategy"]] == ["track"]


def test_keyboard_shortcuts(login, live_server, clip, annotator):
    page = login("ann1", "ann-pass-123")
    open_clip(page, live_server, clip)
    page.keyboard.press("j")
    assert page.inner_text("#editor h2").startswith("Row 2")
    page.keyboard.press("k")
    assert page.inner_text("#editor h2").startswith("Row 1")
    page.keyboard.press("?")
    assert page.is_visible("#help") and "mark it reviewed and open the next row" in page.inner_text("#help")
    page.keyboard.press("Escape")
    assert page.is_hidden("#help")
    page.keyboard.press("6")  # opens the folded relation dimension and focuses its picker
    page.keyboard.press("Escape")  # leave the focused field
    page.keyboard.press("l")
    page.keyboard.type("withdraw_w")
    page.keyboard.press("Enter")
    expect(page.locator('[data-path="relation_pattern_reason"] textarea')).to_be_focused()
    page.keyboard.type("both go silent")
    page.keyboard.press("Control+s")
    page.wait_for_selector("#save-state:has-text('version 2')")
    assert revision(clip, annotator, 1).content["relation_pattern"] == "withdraw_withdraw"
    page.keyboard.press("Escape")
    page.keyboard.press("m")
    page.wait_for_selector("#row-1 .chip-reviewed")
    page.click('[data-path="tone_of_voice"] input')
    page.keyboard.type(" and flat")
    page.keyboard.press("Control+Enter")
    expect(page.locator("#editor h2")).to_have_text(re.compile(r"^Row 2 "))
    assert revision(clip, annotator, 1).content["tone_of_voice"].endswith("and flat")
    page.keyboard.press("Alt+ArrowDown")
    assert page.inner_text("#editor h2").startswith("Row 3")


def test_a_review_pass_is_one_key_or_one_click_per_row(login, live_server, clip, annotator):
    page = login("ann1", "ann-pass-123")
    open_clip(page, live_server, clip)
    page.keyboard.press("Enter")
    expect(page.locator("#editor h2")).to_have_text(re.compile(r"^Row 2 "))
    page.click("#review-next")
    expect(page.locator("#editor h2")).to_have_text(re.compile(r"^Row 3 "))
    page.keyboard.press("Enter")
    page.wait_for_selector("#row-3 .chip-reviewed")
    page.wait_for_selector("#row-1 .chip-reviewed")
    assert [revision(clip, annotator, i).status for i in (1, 2, 3)] == [RevisionStatus.REVIEWED] * 3
    assert page.errors == []


def test_the_conversation_is_in_view(login, live_server, clip, annotator):
    page = login("ann1", "ann-pass-123")
    open_clip(page, live_server, clip, row=2)
    assert page.inner_text("#row-1 .words") == "I keep waiting for him to notice."
    assert page.locator("#row-3 .marker.pattern").count() == 1, "row 3 carries a relation pattern"
    assert page.locator("#row-1 .marker.pattern").count() == 0
    assert "I keep waiting for him to notice." in page.inner_text("#editor .context.prev")
    assert XSS in page.inner_text("#editor .context.next")
    assert page.is_visible("#cue-list"), "the transcript is beside the list, open"
    list_box, cues_box = page.locator("#row-list").bounding_box(), page.locator(".ws-cues").bounding_box()
    assert cues_box["x"] >= list_box["x"] + list_box["width"] - 1, "beside, not under"
    # Row 3's evidence: its cited rows are marked in the list, and picked there by clicking.
    page.click("#row-3")
    assert {el.get_attribute("id") for el in page.query_selector_all("#row-list tr.cited")} == {
        "row-1",
        "row-2",
        "row-3",
    }
    page.click("#pick-evidence")
    page.click("#row-1")
    expect(page.locator('[data-path="relation_pattern_evidence_rows"] input')).to_have_value("2, 3")
    assert page.inner_text("#editor h2").startswith("Row 3"), "a click while picking cites the row, it does not open it"
    page.click("#pick-evidence")
    page.click("#save")
    page.wait_for_selector("#save-state:has-text('version 2')")
    assert revision(clip, annotator, 3).content["relation_pattern_evidence_rows"] == [2, 3]


def saved_in_another_tab(login, live_server, clip, tone):
    """Two tabs on row 1; the first saves `tone` while the second still shows version 1."""
    first = login("ann1", "ann-pass-123")
    second = login("ann1", "ann-pass-123")
    open_clip(first, live_server, clip)
    open_clip(second, live_server, clip)
    first.fill('[data-path="tone_of_voice"] input', tone)
    first.click("#save")
    first.wait_for_selector("#save-state:has-text('version 2')")
    return first, second


def test_two_tabs_saving_the_same_row_get_a_merge_view_not_a_lost_edit(login, live_server, clip, annotator):
    _, second = saved_in_another_tab(login, live_server, clip, "tab one tone")
    choose_label(second, "verbal", "recoll")
    second.click("#save")
    second.wait_for_selector("#merge-box")
    merge = second.inner_text("#merge-box")
    assert "changed elsewhere" in merge and "Utterance type" in merge and "utterance_type" not in merge, (
        "fields named as the editor names them"
    )
    screenshot(second, "merge-view")
    second.click("#merge-save")
    second.wait_for_selector("#save-state:has-text('version 3')")
    merged = revision(clip, annotator, 1).content
    assert merged["tone_of_voice"] == "tab one tone", "the first tab's edit survived"
    assert merged["utterance_type"] == "recollection", "the second tab's edit survived"


def test_a_stale_mark_reviewed_without_edits_shows_the_saved_row_not_a_merge(login, live_server, clip, annotator):
    _, second = saved_in_another_tab(login, live_server, clip, "changed in tab one")
    second.click("#mark-reviewed")
    second.wait_for_selector("#banner.warn")
    assert second.locator("#merge-box").count() == 0
    assert "changed in another tab" in second.inner_text("#banner")
    expect(second.locator('[data-path="tone_of_voice"] input')).to_have_value("changed in tab one")
    second.click("#mark-reviewed")
    second.wait_for_selector("#row-1 .chip-reviewed")
    assert revision(clip, annotator, 1).status == RevisionStatus.REVIEWED


def test_unsaved_edits_are_restored_after_a_reload(login, live_server, clip, annotator):
    page = login("ann1", "ann-pass-123")
    open_clip(page, live_server, clip)
    page.fill('[data-path="tone_of_voice"] input', "typed but never saved")
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
    assert XSS in page.inner_text("#cue-list") and XSS in page.inner_text("#row-3 .words")
    assert page.evaluate("window.__xss") is None
    assert page.errors == []


def test_invalid_edit_shows_a_message_at_the_field_before_saving(login, live_server, clip, annotator):
    page = login("ann1", "ann-pass-123")
    open_clip(page, live_server, clip)
    page.uncheck("#dim-timing label.check:has-text('Therapist') input")
    assert page.locator(".field-error").count() == 0, "no message while the person is still in the field"
    page.click('[data-path="tone_of_voice"] input')  # leaving the changed field
    page.wait_for_selector('.field[data-path="target"] .field-error')
    assert "empty" in page.inner_text('.field[data-path="target"] .field-error')
    page.click("#save")
    page.wait_for_selector(".banner.error")
    assert revision(clip, annotator, 1).version == 1


def test_annotator_cannot_reach_other_work_by_url(
    login, live_server, clip, annotator, other_annotator, project, tmp_path
):
    start_assignment(clip, other_annotator)
    theirs = revision(clip, other_annotator, 1)
    path = tmp_path / "f.jsonl"
    path.write_text(json.dumps(family_clip()) + "\n", encoding="utf-8")
    import_rescue(path, project, as_source="draft")
    unassigned = project.clips.get(sample_id="okafor_family/001_dinner")
    page = login("ann1", "ann-pass-123")
    assert page.goto(f"{live_server.url}/api/v1/revisions/{theirs.pk}/").status == 404
    assert page.goto(f"{live_server.url}/work/clips/{unassigned.pk}/").status == 404


def test_from_login_to_submitted_clip_that_then_reads_only(login, live_server, clip, annotator):
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
    dialog = page.locator("#confirm-dialog")
    expect(dialog).to_be_visible()
    assert "All 3 rows are reviewed" in dialog.inner_text() and "Only a lead can reopen it" in dialog.inner_text()
    page.click("#confirm-no")
    assert clip.assignments.get().state != "submitted", "cancelling changes nothing"
    page.click("#submit-clip")
    page.click("#confirm-yes")
    page.wait_for_selector(".banner.success")
    clip.refresh_from_db()
    assert clip.assignments.get().state == "submitted" and clip.state == "reviewed"
    # One state wording (issue 25, point 6): the annotator's header says what the lead's pages say, at once.
    from annotation.labels import state_label

    assert page.inner_text(".ws-head .state") == state_label(clip.state) == "reviewed"
    assert page.locator(EDITABLE).count() == 0 and page.locator("#submit-clip").count() == 0
    page.goto(f"{live_server.url}/work/")
    assert "3/3" in page.inner_text("table.list")


def test_a_submitted_or_discarded_clip_opens_read_only_with_who_can_reopen_it(login, live_server, clip, annotator):
    for rev in Revision.objects.filter(row__clip=clip, annotator=annotator):
        save_revision(rev.pk, annotator, rev.content, rev.version, reviewed=True)
    submit_assignment(Assignment.objects.get(clip=clip, annotator=annotator), annotator)
    page = login("ann1", "ann-pass-123")
    open_clip(page, live_server, clip)
    banner = page.inner_text("#state-banner")
    assert "You submitted this clip" in banner and "A lead can reopen it" in banner
    assert page.locator(EDITABLE).count() == 0, "nothing can be typed"
    expect(page.locator('[data-path="tone_of_voice"] input')).to_be_disabled()
    assert page.locator("#save, #review-next, #submit-clip, button.add").count() == 0
    page.keyboard.press("Enter")  # the one-key confirm does nothing here
    screenshot(page, "clip-submitted")

    clip.state = ClipState.DISCARDED
    clip.discard_reason = "subtitles drift by 3 s"
    clip.save()
    page.reload()
    page.wait_for_selector("#editor h2")
    banner = page.inner_text("#state-banner")
    assert "A lead discarded this clip" in banner and "subtitles drift" not in banner, (
        "the discard reason is not shown to coders"
    )
    assert page.locator(EDITABLE).count() == 0
    assert page.errors == []


def test_saving_keeps_the_focus_in_the_list_entry_being_typed(login, live_server, clip, annotator):
    """After a save, the entry being typed in is the same element: the next keys go on into it, not to shortcuts."""
    page = login("ann1", "ann-pass-123")
    open_clip(page, live_server, clip)
    description = page.locator('.entry[data-path="body_posture[0]"] input[type=text]')
    description.click()
    page.keyboard.press("End")
    page.keyboard.type(", arms crossed")
    page.keyboard.press("Control+s")
    page.wait_for_selector("#save-state:has-text('version 2')")
    expect(description).to_be_focused()
    page.keyboard.type(" tightly")  # " t" and "j"-like letters would be shortcuts on the page
    assert description.input_value().endswith(", arms crossed tightly")
    assert page.inner_text("#editor h2").startswith("Row 1"), "no key reached the page's shortcuts"


def test_emptying_a_field_does_not_fold_its_dimension_under_the_cursor(login, live_server, clip, annotator):
    """Row 2's individual cues hold only a tone: clearing it must not fold the dimension away while typing."""
    page = login("ann1", "ann-pass-123")
    open_clip(page, live_server, clip, row=2)
    tone = page.locator('[data-path="tone_of_voice"] input')
    tone.click()
    page.keyboard.press("Control+a")
    page.keyboard.press("Backspace")
    page.keyboard.type("quiet")
    expect(tone).to_have_value("quiet")
    expect(tone).to_be_focused()
    assert page.inner_text("#editor h2").startswith("Row 2")
