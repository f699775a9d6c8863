"""A lead adjudicates a clip in a real browser: filter to the disagreements, take
one coder's value, edit another field, accept the unanimous rows, mark the clip
adjudicated."""

import pytest

from annotation.adjudication import selectors
from annotation.models import ClipState, Gold
from annotation.services import create_user

from ..builders.adjudication import reviewed_clip
from .conftest import screenshot

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]


@pytest.fixture
def clip(project, annotator, other_annotator, tmp_path):
    # Row 1: ann1 says "request", ann2 keeps the draft's "disclosure".
    # Row 2 (therapist): ann1 hears the tone as "calm", ann2 as "warm".
    # Row 3: both keep the draft (unanimous).
    return reviewed_clip(project, tmp_path, [annotator, other_annotator])


def gold(clip, index):
    return Gold.objects.get(row__clip=clip, row__row_index=index)


def shown_rows(page):
    return page.eval_on_selector_all("#row-list tbody tr[id]", "trs => trs.map(t => t.id)")


def test_lead_adjudicates_a_clip_from_filter_to_adjudicated(login, live_server, clip, lead):
    page = login("lead1", "lead-pass-123")
    page.goto(f"{live_server.url}/projects/{clip.project.slug}/adjudication/")
    assert "Disagreements left: 2" in page.inner_text("#left-title")
    page.click(f"text={clip.sample_id}")
    page.wait_for_selector("#compare")

    # Only the rows the coders disagree on.
    page.check("#f-disagreements")
    page.wait_for_selector("#filter-count:has-text('2 of 3 rows')")
    assert shown_rows(page) == ["row-1", "row-2"]
    assert "disagreements=1" in page.url

    # Row 1: the gold is empty until decided; the suggestion is marked as one.
    page.click("#row-1")
    page.wait_for_selector("#editor h2:has-text('Row 1')")
    disputed = page.locator('#compare tr.disputed[data-field="utterance_type"]')
    assert disputed.locator("th .chip").inner_text() == "open"
    gold_cell = disputed.locator("td.gold")
    assert gold_cell.locator(".decision").count() == 0 and "the coders split" in gold_cell.inner_text(), (
        "two coders split: no suggestion"
    )
    # Type a note, then one click on take: the take lands and the note goes with it.
    disputed.locator("input.decision-note").click()
    page.keyboard.type("a direct ask, not a disclosure")
    disputed.locator('button.take[data-source="ann1"]').click()
    page.wait_for_selector('#compare tr[data-field="utterance_type"] .chip-decided')
    page.wait_for_selector("#row-1 .chip-decided")
    assert page.inner_text("#dim-verbal .picker-value") == "request", "the editor below shows the taken value"
    screenshot(page, "adjudication-clip")
    decided = gold(clip, 1)
    assert decided.content["utterance_type"] == "request"
    assert decided.decisions["utterance_type"] == {
        **decided.decisions["utterance_type"],
        "source": "ann1",
        "by": "lead1",
        "note": "a direct ask, not a disclosure",
    }

    # Row 2: neither tone fits; edit it in the gold editor and save with one click.
    page.keyboard.press("Escape")
    page.keyboard.press("j")
    page.wait_for_selector("#editor h2:has-text('Row 2')")
    assert page.is_visible('.field.disputed.open[data-path="tone_of_voice"]')
    page.fill('[data-path="tone_of_voice"] input', "calm, then warm")
    page.click("#save")
    page.wait_for_selector("#save-state:has-text('version 1')")
    page.wait_for_selector("#row-2 .chip-decided")
    edited = gold(clip, 2)
    assert (
        edited.content["tone_of_voice"] == "calm, then warm" and edited.decisions["tone_of_voice"]["source"] == "edit"
    )

    # The unanimous row in bulk, asked first (with what will happen), then close the clip, asked first too.
    page.click("#accept-unanimous")
    dialog = page.locator("#confirm-dialog")
    assert "Accept 1 unanimous row as gold?" in dialog.inner_text() and "Rows 3" in dialog.inner_text()
    page.click("#confirm-no")
    assert not Gold.objects.filter(row__clip=clip, row__row_index=3).exists(), "cancelled: nothing accepted"
    page.click("#accept-unanimous")
    page.click("#confirm-yes")
    page.wait_for_selector("ul.messages :text('1 unanimous row(s) accepted')")
    assert page.is_checked("#f-disagreements"), "the filters survive the form"
    assert gold(clip, 3).decisions["target"]["source"] == "unanimous"
    page.click("#mark-adjudicated")
    text = page.inner_text("#confirm-dialog")
    assert "Its 3 rows of gold become final" in text and "only a re-review request reopens the clip" in text
    page.click("#confirm-yes")
    page.wait_for_selector("ul.messages :text('is adjudicated')")
    clip.refresh_from_db()
    assert clip.state == ClipState.ADJUDICATED
    assert page.is_visible("text=its gold can be read here but not changed")
    assert page.locator("button.take").count() == 0
    assert page.errors == []


def test_take_keeps_unsaved_edits_of_other_fields(login, live_server, clip, lead):
    page = login("lead1", "lead-pass-123")
    page.goto(f"{live_server.url}/adjudication/clips/{clip.pk}/#row-1")
    page.wait_for_selector("#editor h2:has-text('Row 1')")
    page.click('[data-path="tone_of_voice"] input')
    page.keyboard.press("Control+a")
    page.keyboard.type("flat")
    page.locator('#compare button.take[data-field="utterance_type"][data-source="ann2"]').click()  # right after typing
    page.wait_for_selector('#compare tr[data-field="utterance_type"] .chip-decided')
    assert page.input_value('[data-path="tone_of_voice"] input') == "flat", "the unsaved edit survived the take"
    assert page.is_visible("#save-state:has-text('unsaved changes')")
    page.click("#save")
    page.wait_for_selector("#save-state:has-text('version 2')")
    stored = gold(clip, 1)
    assert stored.content["tone_of_voice"] == "flat" and stored.content["utterance_type"] == "disclosure"
    assert (
        stored.decisions["utterance_type"]["source"] == "ann2" and stored.decisions["tone_of_voice"]["source"] == "edit"
    )
    assert page.errors == []


def test_a_suggestion_is_accepted_with_one_key_or_one_click(
    login, live_server, project, tmp_path, annotator, other_annotator, lead
):
    third = create_user("ann3", "annotator", password="ann-pass-789")[0]
    # Row 1: ann1 and ann3 say "request", ann2 keeps "disclosure": the majority's value is the suggestion.
    edits = {"ann1": {1: {"utterance_type": "request"}}, "ann3": {1: {"utterance_type": "request"}}}
    clip = reviewed_clip(project, tmp_path, [annotator, other_annotator, third], edits)
    page = login("lead1", "lead-pass-123")
    page.goto(f"{live_server.url}/adjudication/clips/{clip.pk}/#row-1")
    page.wait_for_selector("#editor h2:has-text('Row 1')")
    cell = page.locator('#compare tr[data-field="utterance_type"] td.gold')
    assert "majority" in cell.inner_text().lower() and "request" in cell.inner_text()
    assert not Gold.objects.filter(row__clip=clip).exists(), "nothing is gold before a decision"
    page.keyboard.press("a")
    page.wait_for_selector("#editor h2:has-text('Row 2')")
    first = gold(clip, 1)
    assert first.content["utterance_type"] == "request" and first.decisions["utterance_type"]["source"] == "ann1"
    assert first.decisions["utterance_type"]["same_as"] == ["ann1", "ann3"]
    page.locator("#compare").wait_for()
    page.click("#accept-next")  # one click: row 2 (everyone agrees) becomes gold too
    page.wait_for_selector("#editor h2:has-text('Row 3')")
    assert gold(clip, 2).decisions["target"]["source"] == "unanimous"
    assert page.errors == []


def test_a_synthetic_three_coder_clip_reads_well(login, live_server, project, lead):
    """Realistic data (synthetic: 3 coders with seeded disagreement, family clip when drawn): no script error, every row
    listed."""
    from annotation.models import Clip
    from annotation.synthetic import generate

    generate(project, clips=3, annotators=3, seed=4)
    Gold.objects.filter(row__clip__project=project).delete()  # as before adjudication
    Clip.objects.filter(project=project).update(state=ClipState.REVIEWED)
    clip = max(project.clips.all(), key=lambda c: (len(c.participants), c.rows.count()))
    page = login("lead1", "lead-pass-123")
    page.goto(f"{live_server.url}/adjudication/clips/{clip.pk}/?disagreements=1")
    page.wait_for_selector("#compare")
    disputed = sum(1 for s in selectors.row_states(clip) if s.disputes)
    assert len(shown_rows(page)) == disputed > 0
    page.click("#row-list tbody tr[id] >> nth=2")
    assert page.locator("#row-list tbody tr[id] .words").count() == disputed, "every row shows its words"
    screenshot(page, "adjudication-synthetic")
    page.check("#show-all-fields")
    assert (
        page.locator("#compare tbody tr:not(.similarity-row)").count() == 12
    )  # one per field (texts compared below some)
    screenshot(page, "adjudication-synthetic-all-fields")
    page.uncheck("#show-all-fields")
    assert page.errors == []


def test_lead_assigns_clips_in_bulk_from_the_page(
    login, live_server, project, lead, annotator, other_annotator, tmp_path
):
    import json

    from annotation.models import Assignment, AssignmentMode
    from annotation.rescue_format.importer import import_rescue

    from ..builders.documents import couple_clip

    for n in range(3):
        path = tmp_path / f"{n}.jsonl"
        path.write_text(json.dumps(couple_clip(sample_id=f"maya_and_tobias/{n:03d}_clip")) + "\n", encoding="utf-8")
        import_rescue(path, project, as_source="draft")
    page = login("lead1", "lead-pass-123")
    page.goto(f"{live_server.url}/assignments/")  # the nav link lands on the only project
    page.fill("#id_per_clip", "2")
    page.click("#select-all-shown")
    page.click("input[name=calibration_clips][value='maya_and_tobias/001_clip']")
    page.click("#assign-form button[type=submit]")
    page.wait_for_selector("ul.messages :text('6 assignments created')")
    assert Assignment.objects.filter(mode=AssignmentMode.FROM_EMPTY).count() == 2
    assert "0 / 9" in page.inner_text("#annotator-progress")
    page.goto(f"{live_server.url}/projects/{project.slug}/adjudication/")
    screenshot(page, "adjudication-progress")
    page.goto(f"{live_server.url}/projects/{project.slug}/assignments/")
    page.locator(".assignee details summary").first.click()
    screenshot(page, "assignments")
    assert page.errors == []


def test_uncoded_work_is_greyed_no_split_field_is_suggested_and_the_draft_needs_a_reason(
    login, live_server, project, tmp_path, annotator, other_annotator, lead
):
    """Two coders submitted and split on row 1; a third never opened the clip. The lead sees the third as "not
    coded yet", no suggestion on the split field, and takes the draft's value only with a reason."""
    from annotation.models import Revision
    from annotation.releases.freeze import freeze
    from annotation.starting import start_assignment
    from annotation.study.services import update_design

    from .conftest import SCREENSHOTS

    third = create_user("ann3", "annotator", password="ann-pass-789")[0]
    edits = {
        "ann1": {1: {"utterance_type": "request"}, 2: {"tone_of_voice": "calm"}},
        "ann2": {2: {"tone_of_voice": "warm"}},
    }
    clip = reviewed_clip(project, tmp_path, [annotator, other_annotator], edits)
    start_assignment(clip, third)  # assigned after the others submitted; never opened
    update_design(project, lead, adjudication_min_coders=2)
    page = login("lead1", "lead-pass-123")
    page.goto(f"{live_server.url}/projects/{project.slug}/adjudication/")
    assert "2 of 3" in page.inner_text("#adjudication-clips td.submitted")
    page.click(f"text={clip.sample_id}")
    page.wait_for_selector("#compare")
    assert "ann3" in page.inner_text(".uncoded-coder") and "not coded yet" in page.inner_text(".uncoded-coder")
    assert "4 coded revisions" not in page.inner_text(
        "#coded-count"
    ) and "6 coded revisions, 3 not coded yet" in page.inner_text("#coded-count")

    page.locator("#row-2").click()  # with the mouse
    page.wait_for_selector("#editor h2:has-text('Row 2')")
    tone = page.locator('#compare tr[data-field="tone_of_voice"]')
    assert "not coded yet" in page.inner_text("#compare thead th.uncoded")
    assert tone.locator("td.uncoded").inner_text() == "not coded yet"
    gold_cell = tone.locator("td.gold")
    assert "suggested" not in gold_cell.inner_text().lower() and "the coders split" in gold_cell.inner_text()
    assert gold_cell.locator("button.accept").count() == 0
    assert "the model's, not a coder" in page.inner_text("#compare thead th.draft")
    for size in ((1440, 900), (1280, 800)):
        page.set_viewport_size({"width": size[0], "height": size[1]})
        screenshot(page, f"adjudication-uncoded-{size[0]}")
    page.set_viewport_size({"width": 1440, "height": 900})

    # The draft's value: only with a reason, typed in the dialog.
    tone.locator('button.take[data-source="draft"]').click()
    dialog = page.locator("#confirm-dialog")
    assert "not a coder's" in dialog.inner_text()
    assert page.is_disabled("#confirm-yes"), "no reason, no take"
    page.locator("#confirm-reason").click()
    page.keyboard.type("both coders heard a tone the recording does not carry")
    page.click("#confirm-yes")
    page.wait_for_selector('#compare tr[data-field="tone_of_voice"] .chip-decided')
    decided = gold(clip, 2)
    assert decided.content["tone_of_voice"] == "quiet, tired"
    assert decided.decisions["tone_of_voice"]["source"] == "draft" and decided.decisions["tone_of_voice"][
        "note"
    ].startswith("both coders heard")
    assert "taken from the draft" in tone.locator("td.gold .decision").inner_text()
    assert page.errors == []

    # The lead finishes, freezes, and reads on the release page how much of the gold is human.
    from annotation.adjudication import services as gold_services

    gold_services.accept_unanimous(clip, lead)
    gold_services.decide(clip.rows.get(row_index=1).pk, lead, "utterance_type", "ann1", 0)
    gold_services.mark_adjudicated(clip, lead)
    freeze(project, version="1.0.0", seed=0, out_dir=tmp_path / "release", user=lead, accept_incomplete=["couple"])
    page.goto(f"{live_server.url}/projects/{project.slug}/releases/1.0.0/")
    section = page.locator("#human-work")
    assert "How much of the gold is human" in section.inner_text()
    assert section.locator('#gold-sources tr[data-source="equal_draft_no_coder"] td.num').first.inner_text() == "1"
    assert section.locator('#drafting-model tr[data-task="itp"]').inner_text().count("not applicable") == 1
    for size in ((1440, 900), (1280, 800)):
        page.set_viewport_size({"width": size[0], "height": size[1]})
        section.scroll_into_view_if_needed()
        screenshot(page, f"release-human-work-{size[0]}")
    assert Revision.objects.filter(row__clip=clip, annotator=third, status="untouched").count() == clip.rows.count()
    assert SCREENSHOTS.exists() and page.errors == []
