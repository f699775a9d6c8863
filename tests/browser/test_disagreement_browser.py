"""A lead works through a clip by disagreement in a real browser: the most disputed clip first on the project's
adjudication page, rows ordered by disagreement (mouse), `d` for the most disputed open row (keys), the coders'
texts side by side with their similarity, and a bulk accept of the rows whose coders agree within a similarity
threshold, with a preview stating the counts. Then the agreement page's free-text section.

The clips' texts are embedded before the pages open (the real model, in this process): the page never embeds."""

import pytest
from playwright.sync_api import expect

from annotation.adjudication.disagreement import clip_texts
from annotation.agreement import services
from annotation.agreement.embeddings import embed_texts
from annotation.models import Gold
from annotation.synthetic import generate

from ..builders.adjudication import reviewed_clip
from ..builders.documents import couple_clip
from .conftest import screenshot

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]

# Clip A: row 1 the coders give different utterance types (a label dispute) and different tones; row 2 the same
# labels and tones that say the same thing in other words; row 3 unanimous.
DISPUTED = {
    "ann1": {
        1: {"utterance_type": "request", "tone_of_voice": "sharp and accusing"},
        2: {"tone_of_voice": "calm and reassuring"},
    },
    "ann2": {1: {"tone_of_voice": "quiet, hopeful"}, 2: {"tone_of_voice": "reassuring, calm"}},
}
# Clip B: only a tone worded differently.
MILD = {"ann1": {2: {"tone_of_voice": "gentle and warm"}}, "ann2": {2: {"tone_of_voice": "warm, gentle"}}}


@pytest.fixture
def clips(project, annotator, other_annotator, tmp_path):
    first = couple_clip()
    second = {**couple_clip(), "sample_id": first["sample_id"].replace("/", "/b_", 1)}
    mild = reviewed_clip(project, tmp_path, [annotator, other_annotator], MILD, doc=second)
    disputed = reviewed_clip(project, tmp_path, [annotator, other_annotator], DISPUTED, doc=first)
    for clip in (mild, disputed):
        embed_texts(clip_texts(clip))
    return disputed, mild


def test_lead_orders_by_disagreement_and_accepts_the_rows_that_agree_within_a_threshold(
    login, live_server, clips, lead
):
    disputed, mild = clips
    page = login("lead1", "lead-pass-123")
    page.goto(f"{live_server.url}/projects/{disputed.project.slug}/adjudication/")
    first_clip = page.locator("#adjudication-clips tbody tr").first
    assert disputed.sample_id in first_clip.inner_text(), "the most disputed clip comes first"
    scores = page.eval_on_selector_all(
        "#adjudication-clips tbody tr td:nth-child(2)", "tds => tds.map(t => parseFloat(t.innerText))"
    )
    assert scores == sorted(scores, reverse=True) and scores[0] > scores[1] >= 0
    screenshot(page, "adjudication-index-by-disagreement")

    page.click(f"text={disputed.sample_id}")
    page.wait_for_selector("#compare")
    # Mouse: most disputed first. Row 1 (a label and a tone) outranks row 2 (a tone said in other words).
    page.select_option("#f-order", "disputed")
    assert page.eval_on_selector_all("#row-list tbody tr[id]", "trs => trs.map(t => t.id)") == [
        "row-1",
        "row-2",
        "row-3",
    ]
    assert "order=disputed" in page.url
    # Keys: from row 3, `d` opens the most disputed open row.
    page.click("#row-3")
    page.wait_for_selector("#editor h2:has-text('Row 3')")
    page.keyboard.press("d")
    page.wait_for_selector("#editor h2:has-text('Row 1')")
    # Row 2's tones side by side, with their similarity.
    page.click("#row-2")
    page.wait_for_selector("#editor h2:has-text('Row 2')")
    similar = page.locator('#compare tr.similarity-row[data-field="tone_of_voice"]')
    text = similar.inner_text()
    assert "“calm and reassuring”" in text and "“reassuring, calm”" in text and "ann1–ann2" in text
    similarity = float(similar.locator(".pair b").first.inner_text())
    assert 0.8 <= similarity < 1
    screenshot(page, "adjudication-clip-by-disagreement")

    # Bulk accept within 0.80: rows 2 (texts within the threshold) and 3 (unanimous); never row 1.
    page.fill("#agree-threshold", "0.8")
    page.click("#accept-agreeing")
    dialog = page.locator("#confirm-dialog")
    dialog.wait_for()
    words = dialog.inner_text()
    assert "Accept 2 rows whose coders agree within similarity 0.80?" in words
    assert "1 row where every coder gave the same annotation, and 1 where they differ only in texts" in words
    assert "rows 2" in words.lower()
    screenshot(page, "adjudication-accept-agreeing-preview")
    page.click("#confirm-yes")
    page.wait_for_selector(".messages :text('2 row(s) accepted as gold at similarity 0.80')")
    assert not Gold.objects.filter(row__clip=disputed, row__row_index=1).exists()
    near = Gold.objects.get(row__clip=disputed, row__row_index=2)
    decision = near.decisions["tone_of_voice"]
    assert decision["source"] in ("ann1", "ann2") and "within similarity 0.80" in decision["note"]
    assert near.content["tone_of_voice"] in ("calm and reassuring", "reassuring, calm")
    assert Gold.objects.get(row__clip=disputed, row__row_index=3).decisions["tone_of_voice"]["source"] == "unanimous"


def test_the_agreement_page_shows_the_free_text_figures(login, live_server, project, lead):
    generate(project, clips=2, annotators=3, seed=8)
    params = services.Params()
    services.compute_and_store(project, params)
    services.compute_and_store(project, params, kind=services.TEXTS)
    page = login("lead1", "lead-pass-123")
    page.goto(f"{live_server.url}/projects/{project.slug}/agreement/")
    section = page.locator("#agreement-texts")
    section.scroll_into_view_if_needed()
    assert "sentence-transformers/all-MiniLM-L6-v2" in page.inner_text("#agreement-texts-model")
    # Every field's alpha at a glance; the table folded below it, opened with the mouse.
    assert page.locator("#agreement-texts-glance .glance").count() == 10
    expect(page.locator("#agreement-texts-table")).to_be_hidden()
    page.click("#section-texts > summary")
    expect(page.locator("#agreement-texts-table")).to_be_visible()
    rows = page.locator("#agreement-texts-table tbody tr[data-field]")
    assert rows.count() == 10
    assert "Tone of voice" in rows.first.inner_text()
    # Under each field, what its figure measures (no one has judged pairs here: not validated yet).
    assert page.locator("#agreement-texts-table tbody tr.validity-row").count() == 10
    screenshot(page, "agreement-free-text")
