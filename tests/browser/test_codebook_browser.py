"""The living codebook in a real browser, driven by the mouse where it matters: a lead writes guidance
from the agreement page's confused-pair link; an annotator sees it in the label picker marked as the
project's, next to the draft's modality, and reaches the searchable guide with one key (and a link)."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from playwright.sync_api import expect

from annotation.codebook.services import write_guidance
from annotation.models import Draft, GuidanceVersion, Revision
from annotation.starting import start_assignment
from annotation.taxonomy import load_taxonomy

from ..builders.codebook import build
from .conftest import screenshot

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]

GUIDANCE = "Blame for what the other does is an accusation, even with a feeling in it; a request asks in so many words."


def test_lead_writes_guidance_from_the_confused_pair_link_with_the_mouse(login, live_server, lead, project):
    build(project)  # three coders, two clips, drafts made from the transcript and from the video
    call_command(
        "agreement", "--project", project.slug, stdout=io.StringIO()
    )  # the stored report the page shows at once
    page = login("lead1", "lead-pass-123")
    page.goto(f"{live_server.url}/projects/{project.slug}/agreement/#section-confused")  # the address opens its fold
    page.click("#section-modality > summary")  # a fold opened with the mouse
    confused = page.locator('#confused-pairs .confused-field[data-measure="utterance_type"]')
    expect(confused.locator("tbody tr").first).to_contain_text("accusation ↔ request")
    expect(page.locator("#llm-by-modality")).to_contain_text("transcript only: 6 rows")
    confused.scroll_into_view_if_needed()
    screenshot(page, "codebook-agreement-confused-pairs")
    page.locator("#llm-by-modality").scroll_into_view_if_needed()
    screenshot(page, "codebook-agreement-by-modality")

    confused.locator("tbody tr").first.get_by_role("link", name="write guidance").click()
    page.wait_for_url("**/guidance/?**")
    expect(page.locator("#guidance-field")).to_have_value("utterance_type")
    checked = page.locator('fieldset[data-field="utterance_type"] input:checked')
    expect(checked).to_have_count(2)
    assert sorted(checked.evaluate_all("els => els.map(e => e.value)")) == ["accusation", "request"]
    expect(page.locator("#guidance-why")).to_have_value(
        "coders confused these labels in the agreement report (All assignments · all scenarios)"
    )
    page.click("#guidance-text")
    page.keyboard.type(GUIDANCE)
    screenshot(page, "codebook-guidance-form")
    page.click("#guidance-save")
    expect(page.locator(".message-success")).to_have_text(
        "Guidance version 1: wrote accusation vs request (utterance type, every scenario)."
    )
    expect(page.locator("#guidance-entries")).to_contain_text(GUIDANCE)
    expect(page.locator("#guidance-history tbody tr")).to_have_count(1)
    screenshot(page, "codebook-guidance-saved")
    version = GuidanceVersion.objects.get()
    assert (version.entries[0]["labels"], version.entries[0]["text"], version.created_by) == (
        ["accusation", "request"],
        GUIDANCE,
        lead,
    )
    assert version.source == "web"

    # Back on the agreement page the pair now links to its guidance.
    page.go_back()
    page.go_back()
    page.reload()
    row = page.locator('#confused-pairs .confused-field[data-measure="utterance_type"] tbody tr').first
    expect(row).to_contain_text("edit the guidance")
    expect(row).to_contain_text("(version 1)")
    assert not page.errors, page.errors


def test_annotator_sees_guidance_in_the_picker_the_modality_note_and_the_guide_one_key_away(
    login, live_server, lead, annotator, project, draft_clip
):
    write_guidance(
        project, lead, field="utterance_type", labels=["accusation", "disclosure"], text=GUIDANCE, why="coders split"
    )
    start_assignment(draft_clip, annotator)
    Draft.objects.filter(row__clip=draft_clip).update(modality="transcript")
    page = login("ann1", "ann-pass-123")
    page.goto(f"{live_server.url}/work/clips/{draft_clip.pk}/")
    page.wait_for_selector("#editor h2")
    expect(page.locator("#draft-modality")).to_have_text("LLM draft: drafted from the transcript only")

    # The chosen label (disclosure) shows the project's guidance inline, marked as the project's.
    inline = page.locator("#dim-verbal .picker > .rules")
    expect(inline.locator(".rule.guidance")).to_contain_text("Project guidance accusation vs disclosure")
    # Open the picker with the mouse: the labels with guidance say so; hovering one shows its guidance.
    page.click("#dim-verbal button.picker-button")
    pop = page.locator("#dim-verbal .picker-pop")
    expect(pop.locator('li:has-text("accusation") i.guided')).to_have_text("project guidance")
    expect(pop.locator('li:has-text("request") i.guided')).to_have_count(0)
    pop.locator('li:has-text("accusation")').hover()
    expect(pop.locator(".rules .rule.guidance")).to_contain_text(GUIDANCE)
    expect(pop.locator(".rules .rule.guidance .guidance-by")).to_contain_text("lead1")
    expect(pop.locator(".rules .rule.guidance .guidance-by")).to_contain_text("guidance version 1")
    screenshot(page, "codebook-picker-guidance")
    pop.locator('li:has-text("accusation")').click()
    expect(page.locator("#dim-verbal .picker-value")).to_have_text("accusation")
    page.click("#save")
    page.wait_for_selector("#save-state:has-text('version 2')")
    assert (
        Revision.objects.get(row__clip=draft_clip, row__row_index=1, annotator=annotator).guidance_version.number == 1
    )
    expect(page.locator("#guidance-changed")).to_have_count(0)
    # A lead changes the guidance while the page is open: the next save records the new version and says so.
    write_guidance(
        project, lead, field="utterance_type", labels=["request"], text="A direct ask for a change.", why="later"
    )
    page.click("#mark-reviewed")
    expect(page.locator("#guidance-changed")).to_contain_text("now version 2")
    assert (
        Revision.objects.get(row__clip=draft_clip, row__row_index=1, annotator=annotator).guidance_version.number == 2
    )

    # One key from the editor: g opens the guide in its own tab, at the label of the focused picker.
    page.focus("#dim-verbal button.picker-button")
    with page.context.expect_page() as opened:
        page.keyboard.press("g")
    guide = opened.value
    guide.wait_for_load_state()
    assert guide.url.endswith(f"/projects/{project.slug}/guide/?scenario=couple#couple-utterance_type-accusation")
    screenshot(guide, "codebook-guide")
    card = guide.locator("#couple-utterance_type-accusation")
    expect(card).to_have_class("guide-item guide-label has-guidance target")
    expect(card.locator(".guidance")).to_contain_text(GUIDANCE)
    expect(card.locator(".guidance-mark")).to_have_text("Project guidance")
    # Each guidance is written out once per field (point 7): its other label links to it.
    assert guide.locator("#couple-utterance_type-disclosure .guidance").count() == 0
    assert (
        guide.get_attribute("#couple-utterance_type-disclosure .guidance-see a", "href")
        == "#couple-utterance_type-accusation"
    )
    texts = guide.eval_on_selector_all(
        ".guide-field .guidance[data-guidance]",
        "els => els.map(e => e.closest('.guide-field').id + '|' + e.dataset.guidance)",
    )
    assert len(texts) == len(set(texts)), "a guidance written out twice in one field"
    # The guide is searchable: "/" goes to the search box; words typed narrow the items.
    guide.keyboard.press("/")
    expect(guide.locator("#guide-q")).to_be_focused()
    guide.keyboard.type("so many words")
    # Every couple label (and the empty choices that rules name) and every couple rule is one item.
    couple = load_taxonomy("couple")
    items = (
        len(couple.utterance_types)
        + len(couple.support_strategies)
        + 1
        + len(couple.relation_patterns)
        + 1
        + len(couple.rules)
    )
    expect(guide.locator("#guide-count")).to_have_text(f"2 of {items} match")  # the two labels the guidance names
    expect(guide.locator("[data-guide-item]:visible")).to_have_count(2)
    screenshot(guide, "codebook-guide-search")
    guide.keyboard.press("Escape")
    expect(guide.locator("#guide-count")).to_have_text("")
    guide.click("#guide-q")
    guide.keyboard.type("nothing-like-this")
    expect(guide.locator("#guide-nothing")).to_be_visible()
    guide.close()

    # And a link: the header's Guide opens the same guide with the mouse.
    with page.context.expect_page() as opened:
        page.click("#open-guide")
    expect(opened.value.locator("h1")).to_contain_text("Annotation guide")
    page.bring_to_front()
    screenshot(page, "codebook-clip-page")
    assert not page.errors, page.errors


def test_lead_sees_guidance_in_the_adjudication_editor_and_the_release_card(
    login, live_server, lead, annotator, other_annotator, project, tmp_path, settings
):
    from annotation.adjudication.services import accept_unanimous, decide, mark_adjudicated
    from annotation.releases.freeze import freeze
    from annotation.releases.services import release_dir

    from ..builders.adjudication import reviewed_clip

    settings.RELEASES_ROOT = tmp_path / "releases"
    write_guidance(
        project,
        lead,
        field="utterance_type",
        labels=["disclosure", "request"],
        text="A wish said as a feeling is a disclosure.",
        why="row 1 split",
    )
    clip = reviewed_clip(
        project, tmp_path, [annotator, other_annotator], edits={"ann1": {1: {"utterance_type": "request"}}}
    )
    page = login("lead1", "lead-pass-123")
    page.goto(f"{live_server.url}/adjudication/clips/{clip.pk}/")
    page.wait_for_selector("#editor h2")
    page.click("#dim-verbal button.picker-button")
    pop = page.locator("#dim-verbal .picker-pop")
    pop.locator('li:has-text("request")').hover()
    expect(pop.locator(".rules .rule.guidance")).to_contain_text("Project guidance disclosure vs request")
    screenshot(page, "codebook-adjudication-picker")
    page.keyboard.press("Escape")

    decide(clip.rows.get(row_index=1).pk, lead, "utterance_type", "ann1", 0)
    accept_unanimous(clip, lead)
    mark_adjudicated(clip, lead)
    freeze(project, version="1.0.0", seed=1, out_dir=release_dir(project, "1.0.0"), accept_incomplete=["couple"])
    page.goto(f"{live_server.url}/projects/{project.slug}/releases/1.0.0/")
    page.click("details.card-text summary")
    card = page.locator("details.card-text pre")
    expect(card).to_contain_text("### Project guidance")
    expect(card).to_contain_text("- *disclosure vs request* (utterance type, every scenario; written by lead1 on")
    # Bring the card's project guidance (text inside one scrolling <pre>) into view.
    card.evaluate(
        """pre => { const node = pre.firstChild, at = node.textContent.indexOf("### Project guidance");
                   const range = document.createRange(); range.setStart(node, at); range.setEnd(node, at + 1);
                   pre.scrollIntoView();
                   pre.scrollTop += range.getBoundingClientRect().top - pre.getBoundingClientRect().top - 8; }"""
    )
    screenshot(page, "codebook-release-card")
    assert not page.errors, page.errors


@pytest.mark.parametrize("viewport", [(1440, 900), (1280, 800)])
def test_guidance_that_names_a_coder_is_refused_on_the_page_with_the_text_kept(
    login, live_server, lead, annotator, project, draft_clip, viewport
):
    start_assignment(draft_clip, annotator)
    page = login("lead1", "lead-pass-123", viewport=viewport)
    page.goto(f"{live_server.url}/projects/{project.slug}/guidance/")
    page.select_option("#guidance-field", "utterance_type")
    for label in ("accusation", "request"):
        page.locator(f'fieldset[data-field="utterance_type"] input[value="{label}"]').click()
    page.click("#guidance-text")
    page.keyboard.type("@ANN1 chose request on row 2; a request asks for a change in so many words.")
    page.click("#guidance-why")
    page.keyboard.type("coders split")
    page.click("#guidance-save")
    error = page.locator("#guidance-error")
    expect(error).to_contain_text("names a coder (ann1)")
    expect(error).to_contain_text("write the rule without coders' names")
    error.scroll_into_view_if_needed()
    screenshot(page, f"codebook-guidance-names-a-coder-{viewport[0]}")
    expect(page.locator("#guidance-text")).to_have_value(
        "@ANN1 chose request on row 2; a request asks for a change in so many words."
    )
    assert GuidanceVersion.objects.count() == 0
    assert not page.errors, page.errors
