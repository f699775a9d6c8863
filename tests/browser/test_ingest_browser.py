"""A lead goes from a folder of transcripts to clips with confirmed speakers in
a real browser (headless Chromium): the folder picker sends each file's path."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from annotation.models import Clip

from ..conftest import REPO

CORPUS = Path(__file__).resolve().parents[1] / "ingest_corpus"


@pytest.fixture
def page(login, lead):
    return login("lead1", "lead-pass-123", viewport=(1440, 1000))


@pytest.mark.django_db(transaction=True)
def test_lead_ingests_a_folder_in_the_browser_and_accepts_the_suggested_speakers(
    page, live_server, project, tmp_path, eager_celery
):
    folder = tmp_path / "incoming"
    (folder / "maya_and_tobias").mkdir(parents=True)
    for name in ("001_clean.srt", "008_voices.vtt", "012_diarised.json"):
        shutil.copy(CORPUS / "maya_and_tobias" / name, folder / "maya_and_tobias" / name)

    page.goto(f"{live_server.url}/projects/{project.slug}/ingest/")
    page.check("[data-pick-folder]")
    page.set_input_files("input[name=files]", str(folder))
    assert page.locator("[data-picked] li").count() == 3
    page.click("button[type=submit].primary")
    page.wait_for_selector(".ingest-results")
    (REPO / "var" / "screenshots").mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(REPO / "var" / "screenshots" / "ingest-results.png"), full_page=True)
    assert page.locator(".ingest-results .ingest-status-created").count() == 3
    assert sorted(Clip.objects.values_list("sample_id", flat=True)) == [
        "maya_and_tobias/001_clean",
        "maya_and_tobias/008_voices",
        "maya_and_tobias/012_diarised",
    ]
    assert (
        Clip.objects.get(sample_id="maya_and_tobias/001_clean").source_file == "incoming/maya_and_tobias/001_clean.srt"
    )

    page.click("text=Accept the suggested speakers of 2 clips")
    page.wait_for_selector("text=Speakers of 2 clip(s) confirmed as suggested.")
    page.click(".ingest-waiting-list a")  # the diarised clip is left for a hand mapping
    # The click only starts the navigation: read the choices once the speaker page is there, not the list's page.
    page.wait_for_selector("form[data-speaker-map] select[name=speaker_1]")
    # "Maps to" offers the clip's people, and follows the participants as they are typed.
    choice = page.locator("select[name=speaker_1]")
    assert choice.locator("option").all_inner_texts() == [
        "— nobody can tell yet",
        "SPEAKER_00",
        "SPEAKER_01",
        "SPEAKER_02",
        "Therapist",
        "Couple",
    ]
    page.click("input[name=participants]", click_count=3)
    page.keyboard.type("Maya, Tobias")
    assert choice.locator("option").all_inner_texts() == [
        "— nobody can tell yet",
        "Maya",
        "Tobias",
        "Therapist",
        "Couple",
    ]
    for field, entity in (("speaker_0", "Therapist"), ("speaker_1", "Maya"), ("speaker_3", "Tobias")):
        page.select_option(f"select[name={field}]", entity)
    page.screenshot(path=str(REPO / "var" / "screenshots" / "ingest-speakers.png"), full_page=True)
    page.click("text=Confirm speakers")
    page.wait_for_selector(".message-success:has-text('confirmed')")
    assert Clip.objects.filter(speaker_map_confirmed=True).count() == 3
    diarised = Clip.objects.get(sample_id="maya_and_tobias/012_diarised")
    assert diarised.participants == ["Maya", "Tobias"] and diarised.speaker_map["SPEAKER_01"] == "Maya"

    # ... and on to pre-annotated clips, still without the command line (offline provider: no key here).
    page.goto(f"{live_server.url}/projects/{project.slug}/preannotation/")
    page.check("input[name=provider][value=offline]")
    page.click("#start-form button[type=submit].primary")
    page.wait_for_load_state()
    clips = Clip.objects.filter(project=project)
    assert sorted(clips.values_list("state", flat=True)) == ["preannotated"] * 3
    assert all(
        c.rows.count() == c.cues.count() and c.rows.filter(draft__source="offline").count() == c.rows.count()
        for c in clips
    )
    page.goto(f"{live_server.url}/projects/{project.slug}/preannotation/")
    assert "Offline skeleton" in page.inner_text("body")
    assert page.errors == []


@pytest.mark.django_db(transaction=True)
def test_rolling_auto_captions_arrive_as_their_lines_and_the_page_says_so(page, live_server, project):
    page.goto(f"{live_server.url}/projects/{project.slug}/ingest/")
    page.set_input_files("input[name=files]", str(CORPUS / "rolling" / "001_auto_captions.vtt"))
    page.click("#id_participants")
    page.keyboard.type("Maya, Tobias")
    page.click("#id_group")
    page.keyboard.type("rolling")
    page.click("button[type=submit].primary")
    page.wait_for_selector(".ingest-results")
    row = page.locator(".ingest-results tbody tr")
    assert row.locator(".ingest-status").inner_text() == "created" and row.locator("td.num").inner_text() == "3"
    assert (
        "rolling auto-captions: 5 cues, each repeating the line before it, collapsed into 3 lines"
        in row.locator(".ingest-note").inner_text()
    )
    page.screenshot(path=str(REPO / "var" / "screenshots" / "ingest-rolling-result.png"), full_page=True)
    page.click(".ingest-results a:has-text('confirm speakers')")
    page.wait_for_selector("#word-timings")
    assert page.locator(".ingest-words tbody tr").count() == 3
    assert page.locator(".ingest-words tbody tr").nth(1).locator(".ingest-word").all_inner_texts()[:2] == [
        "the2.879",
        "money3.04",
    ]
    page.screenshot(path=str(REPO / "var" / "screenshots" / "ingest-rolling-speakers.png"), full_page=True)
    clip = Clip.objects.get()
    assert list(clip.cues.values_list("text", flat=True)) == [
        "so what would you like to start with today",
        "the money thing I guess it keeps coming back",
        "every time one of us ends up leaving the room",
    ]
    assert page.errors == []
