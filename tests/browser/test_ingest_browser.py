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
def test_lead_ingests_a_folder_in_the_browser_and_accepts_the_suggested_speakers(page, live_server, project, tmp_path, eager_celery):
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
        "maya_and_tobias/001_clean", "maya_and_tobias/008_voices", "maya_and_tobias/012_diarised"
    ]
    assert Clip.objects.get(sample_id="maya_and_tobias/001_clean").source_file == "incoming/maya_and_tobias/001_clean.srt"

    page.click("text=Accept the suggested speakers of 2 clips")
    page.wait_for_selector("text=Speakers of 2 clip(s) confirmed as suggested.")
    page.click(".ingest-waiting-list a")  # the diarised clip is left for a hand mapping
    page.fill("input[name=participants]", "Maya, Tobias")
    for field, entity in (("speaker_0", "Therapist"), ("speaker_1", "Maya"), ("speaker_3", "Tobias")):
        page.fill(f"input[name={field}]", entity)
    page.screenshot(path=str(REPO / "var" / "screenshots" / "ingest-speakers.png"), full_page=True)
    page.click("text=Confirm speakers")
    page.wait_for_selector("text=confirmed")
    assert Clip.objects.filter(speaker_map_confirmed=True).count() == 3

    # ... and on to pre-annotated clips, still without the command line (offline provider: no key here).
    page.goto(f"{live_server.url}/projects/{project.slug}/preannotation/")
    page.check("input[name=provider][value=offline]")
    page.click("#start-form button[type=submit].primary")
    page.wait_for_load_state()
    clips = Clip.objects.filter(project=project)
    assert sorted(clips.values_list("state", flat=True)) == ["preannotated"] * 3
    assert all(c.rows.count() == c.cues.count() and c.rows.filter(draft__source="offline").count() == c.rows.count() for c in clips)
    page.goto(f"{live_server.url}/projects/{project.slug}/preannotation/")
    assert "Offline skeleton" in page.inner_text("body")
    assert page.errors == []
