"""A lead judges pairs of coders' texts for meaning with the mouse and the keys, then reads the agreement page's
free-text section, whose heading and words follow each measure's validity (screenshots at 1440x900)."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import expect

from annotation.agreement import embeddings
from annotation.agreement import services as agreement
from annotation.meaning import selectors, services
from annotation.meaning.models import JudgedPair
from annotation.synthetic import generate

from ..builders import meaning_hard_pairs as hard
from .conftest import SCREENSHOTS, screenshot


@pytest.mark.django_db(transaction=True)
def test_a_lead_judges_pairs_with_the_mouse_and_the_keys_and_the_free_text_section_says_what_it_measures(
    login, live_server, lead, project, settings, eager_celery
):
    settings.SEMANTIC_EMBEDDINGS = "local"
    generate(project, clips=3, annotators=3, seed=4)
    provider = embeddings.LocalMiniLM()
    texts = [t for c in selectors.pool(project) for t in (c.text_a, c.text_b)]
    rows = hard.rows()
    embeddings.embed_texts(texts + [t for r in rows for t in (r["text_a"], r["text_b"])], provider)
    # The team's earlier judgements of internal emotion (as from a file), three readings of each hard pair.
    emotion = [r for r in rows if r["field"] == "internal_emotion"]
    emotion = (
        emotion
        + [dict(r, text_a=r["text_a"] + ".") for r in emotion]
        + [dict(r, text_a=r["text_a"] + "!") for r in emotion]
    )
    embeddings.embed_texts([r["text_a"] for r in emotion], provider)
    services.import_judgements(
        project,
        services.read_judgements("\n".join(json.dumps(r) for r in emotion), "team.jsonl"),
        source="file:team.jsonl",
    )
    agreement.compute_and_store(project, agreement.Params.from_query({}, project.work_scope), kind=agreement.TEXTS)

    page = login("lead1", "lead-pass-123")
    page.goto(f"{live_server.url}/projects/{project.slug}/meaning/judge/?field=viewpoint")
    expect(page.locator("#judge-text-a")).to_be_visible()
    screenshot(page, "meaning-judge")
    first = page.locator("#judge-text-a p").inner_text()
    # The mouse: "Same meaning".
    page.get_by_role("button", name="Same meaning").click()
    expect(page.locator("#judge-saved")).to_be_visible()
    # The keys: D, then C (each posts and brings the next pair).
    second = page.locator("#judge-text-a p").inner_text() + "|" + page.locator("#judge-text-b p").inner_text()
    page.keyboard.press("d")
    page.wait_for_load_state("load")
    expect(page.locator("#judge-saved")).to_be_visible()
    page.keyboard.press("c")
    page.wait_for_load_state("load")
    expect(page.locator("#judge-saved")).to_be_visible()
    judged = list(JudgedPair.objects.filter(judge=lead).order_by("pk"))
    assert [j.judgement for j in judged] == ["same", "different", "cant_tell"]
    assert judged[0].text_a == first and f"{judged[1].text_a}|{judged[1].text_b}" == second
    assert all(j.field == "viewpoint" for j in judged)
    # The lead's table: the weak internal-emotion measure says so.
    row = page.locator("#judge-validity-table tr[data-field=internal_emotion]")
    expect(row).to_contain_text("AUROC")
    screenshot(page, "meaning-judge-after")
    page.locator("#judge-validity").screenshot(path=str(SCREENSHOTS / "meaning-validity.png"))

    page.goto(f"{live_server.url}/projects/{project.slug}/agreement/")
    section = page.locator("#agreement-texts")
    section.locator("#section-texts > summary").click()  # the table is folded under the fields' alphas
    expect(section.locator("#agreement-texts-table")).to_be_visible()
    verdict = selectors.project_validity(project)["fields"]["internal_emotion"]["embedding"]
    title = section.locator("h2").first.inner_text()
    if verdict["verdict"] != "validated":
        assert "agreement on meaning" not in title.lower()
    expect(section.locator("tr[data-validity-for=internal_emotion] .validity")).to_contain_text(verdict["sentence"])
    section.scroll_into_view_if_needed()
    section.screenshot(path=str(SCREENSHOTS / "agreement-free-text-section.png"))
    page.evaluate("document.getElementById('agreement-texts').scrollIntoView()")
    screenshot(page, "agreement-free-text-viewport")
    assert not page.errors, page.errors
