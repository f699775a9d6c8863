"""The annotator's record in a real browser, with the mouse: an annotator takes a qualification round and
reads the feedback; a lead reads the per-annotator dashboard and sends a coder back to qualification."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone
from playwright.sync_api import expect

from annotation.models import Assignment, Revision
from annotation.record import dashboard, free_text, services
from annotation.record.models import QualificationAttempt, QualificationDecision
from annotation.services import create_user
from annotation.synthetic import generate

from ..builders.record import code_like_gold, import_gold_clip
from .conftest import screenshot

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]


def test_an_annotator_takes_a_round_and_reads_the_feedback(login, live_server, project, lead, tmp_path):
    trainee = create_user("newbie", "annotator", password="newbie-pass-123")[0]
    clip = import_gold_clip(
        project, tmp_path, "train_group/001_training", note="Blame for what he does is an accusation."
    )
    services.mark_training(project, clip, actor=lead)
    services.set_rule(
        project,
        "couple",
        fields=["utterance_type", "relation_pattern"],
        min_score=0.8,
        min_rows=10,
        max_attempts=3,
        actor=lead,
    )
    services.start_round(project, "couple", trainee, actor=lead)  # the lead sent the new annotator to qualification
    code_like_gold(clip, trainee)  # most rows coded like the gold; row 1 the annotator codes with the mouse below

    page = login("newbie", "newbie-pass-123")
    page.goto(f"{live_server.url}/projects/{project.slug}/")
    page.click("#project-qualification")
    expect(page.locator("#round-couple")).to_contain_text("Round 1 is open")
    page.click(f"#round-couple a.round-clip:has-text('{clip.sample_id}')")
    page.wait_for_selector("#editor h2")
    page.click("#dim-verbal button.picker-button")
    page.click('#dim-verbal .picker-pop li:has-text("accusation")')
    page.click("#save")
    page.wait_for_selector("#save-state:has-text('version 3')")
    assert (
        Revision.objects.get(row__clip=clip, row__row_index=1, annotator=trainee).content["utterance_type"]
        == "accusation"
    )

    page.goto(f"{live_server.url}/projects/{project.slug}/qualification/")
    page.click("#submit-round-couple")
    page.wait_for_url("**/qualification/rounds/**")
    expect(page.locator("#verdict")).to_contain_text("rows compared with the gold")
    first = page.locator(".feedback-row").first
    expect(first).to_contain_text("row 1")
    expect(first.locator("td.mine")).to_have_text("accusation")
    expect(first.locator("td.gold")).to_have_text("defense")
    expect(first).to_contain_text("Blame for what he does is an accusation.")
    expect(page.locator("#scores")).to_contain_text("Utterance type")
    screenshot(page, "record-feedback")
    first.scroll_into_view_if_needed()
    screenshot(page, "record-feedback-row")
    attempt = QualificationAttempt.objects.get(annotator=trainee)
    assert (
        attempt.state == "scored"
        and attempt.scores["utterance_type"]["matching"]["same"]
        == attempt.scores["utterance_type"]["matching"]["rows"] - 1
    )
    page.locator("#scores").scroll_into_view_if_needed()
    # The free-text scores: being computed until the worker has stored them (with a broker and no worker here,
    # the job waits; without a broker it ran eagerly), then shown beside the label scores.
    if not free_text.text_scores(QualificationAttempt.objects.get(pk=attempt.pk).scores):
        expect(page.locator("#free-text-state")).to_contain_text("being computed")
        services.store_text_scores(attempt.pk)  # what the embeddings worker does
    page.reload()
    expect(page.locator("#text-scores")).to_contain_text("Tone of voice")
    page.locator("#text-scores").scroll_into_view_if_needed()
    screenshot(page, "record-feedback-free-text")
    assert page.errors == []


def test_a_lead_reads_the_dashboard_and_sends_a_coder_back(login, live_server, project, lead, tmp_path):
    names = generate(project, clips=10, annotators=3, seed=5)["annotators"]
    training = import_gold_clip(project, tmp_path, "train_group/001_training")
    services.mark_training(project, training, actor=lead)
    # Four weeks of a study: the coders' work spread over them, so that the drift plots have weeks.
    now = timezone.now()
    Assignment.objects.filter(clip__project=project).update(created_at=now - timedelta(days=28))
    for week, clips in enumerate(
        [list(project.clips.filter(scenario="couple").order_by("sample_id")[i::4]) for i in range(4)]
    ):
        Revision.objects.filter(row__clip__in=clips).update(updated_at=now - timedelta(days=27 - 7 * week))
    services.set_rule(
        project,
        "couple",
        fields=["utterance_type", "relation_pattern"],
        min_score=0.8,
        min_rows=40,
        max_attempts=3,
        actor=lead,
    )
    for name in names:  # the pilot coders were let in by the lead
        services.decide(
            project,
            "couple",
            get_user_model().objects.get(username=name),
            "waived",
            "coded the pilot with the lead",
            actor=lead,
        )
    dashboard.compute_and_store(project, "couple")  # the worker has stored it

    page = login("lead1", "lead-pass-123")
    page.goto(f"{live_server.url}/projects/{project.slug}/")
    page.click("text=Annotators' record")
    expect(page.locator("h1")).to_contain_text("Annotators' record")
    expect(page.locator("#summary")).to_contain_text("Utterance type")
    card = page.locator(f"#coder-{names[1]}")
    expect(card).to_contain_text("Draft rows kept unchanged")
    expect(card.locator("h3 .state")).to_have_text("waived")
    expect(card.locator("figure.drift img")).to_be_visible()
    screenshot(page, "record-dashboard")
    card.evaluate("e => e.scrollIntoView({block: 'start'})")
    screenshot(page, "record-dashboard-coder")

    card.locator("textarea[name=reason]").first.click()
    page.keyboard.type("reads the attack/pursue boundary differently since week 2")
    card.locator("button.send-back-button").click()
    expect(page.locator(".message-success")).to_contain_text(
        f"{names[1]} is sent back to qualification for couple clips"
    )
    decision = QualificationDecision.objects.get(kind="sent_back")
    assert (decision.annotator.username, decision.kind, decision.decided_by) == (names[1], "sent_back", lead)
    assert QualificationAttempt.objects.get(annotator__username=names[1]).state == "open"
    screenshot(page, "record-dashboard-sent-back")
    card = page.locator(f"#coder-{names[1]}")
    expect(card.locator("h3 .state")).to_have_text("not passed")
    expect(card.locator("h3 .sent-back")).to_be_visible()
    card.evaluate("e => e.scrollIntoView({block: 'start'})")
    screenshot(page, "record-dashboard-sent-back-card")

    # Reassign: the assign page opens on the clips of that coder, the rest filtered out.
    card.locator("a.reassign-link").click()
    expect(page.locator("h1")).to_have_text("Assignments")
    expect(page.locator("#filter-coder")).to_have_value(names[1])
    shown = page.locator("#assignment-clips tbody tr[data-sample-id]:visible")
    theirs = Assignment.objects.filter(clip__project=project, annotator__username=names[1]).count()
    expect(shown).to_have_count(theirs)
    assert all(names[1] in row.split() for row in shown.evaluate_all("rows => rows.map(r => r.dataset.coders)"))
    screenshot(page, "record-reassign-filtered")
    assert page.errors == []
