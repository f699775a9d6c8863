"""A lead pre-annotates an audio clip from the batch page and reads the draft-quality report (headless Chromium)."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from annotation.models import Draft

from ..fakes import gemini_server as g
from ..fakes.clips import make_clip
from .conftest import screenshot


@pytest.mark.django_db(transaction=True)
def test_lead_drafts_an_audio_clip_and_sees_what_each_draft_was_made_from_and_how_good_drafts_are(
    drafted_sample,
    fake,
    login,
    lead,
    live_server,
    project,
    eager_celery,  # noqa: F811
):
    fake.responder = g.one_row_per_cue  # the sample's faulty model knows only the sample's cues
    clip = make_clip(project, "maya_and_tobias/009_voice_memo", media=SimpleUploadedFile("memo.m4a", b"\0" * 512))
    page = login("lead1", "lead-pass-123")
    page.goto(f"{live_server.url}/projects/{project.slug}/preannotation/")
    # The keyboard ticks the new clip, the mouse starts the batch.
    box = page.locator(f'tr[data-clip="{clip.pk}"] input[type=checkbox]')
    box.focus()
    page.keyboard.press("Space")
    assert box.is_checked()
    page.click("input[name=provider][value=gemini]")
    page.click("#start-form button[type=submit].primary")
    page.wait_for_selector(f'tr[data-clip="{clip.pk}"] [data-field="draft_made_from"]')
    made_from = page.inner_text(f'tr[data-clip="{clip.pk}"] [data-field="draft_made_from"]')
    assert made_from == "couple-v2 · audio only"
    assert {d.modality for d in Draft.objects.filter(row__clip=clip)} == {"audio"}
    section = page.locator("#draft-quality")
    headings = [h.split(" ")[0] for h in section.locator("h3").all_inner_texts()]
    assert headings == ["Video", "Audio", "Transcript", "All"]  # the new audio clip has no human reference yet
    invented = section.locator(
        'table[data-modality="transcript"] tr[data-field="facial_expressions"] [data-figure="deleted"]'
    )
    assert not invented.inner_text().startswith("0 ")
    screenshot(page, "preannotation-page")
    section.scroll_into_view_if_needed()
    screenshot(page, "preannotation-draft-quality")
    assert page.errors == []
