"""The demo shows every feature (issue 25, point 8): after ``load_demo`` one clip has a media file the project
made itself (a test pattern with its lines spoken, annotation/demo/media, committed), so a new team can try the
player, the replay keys, the speed and the pre-roll. Uses the committed file: neither espeak-ng nor ffmpeg."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from annotation.demo import demo_media_file
from annotation.models import Clip

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]
CLIP = "demo_maya_and_tobias/001_session_opening"


def test_the_demo_clip_plays_replays_a_row_and_keeps_the_speed(login, live_server):
    path = demo_media_file(CLIP)
    assert path.is_file() and path.stat().st_size < 1_000_000, "the committed demo media, well under 1 MB"
    call_command("load_demo", stdout=io.StringIO())
    clip = Clip.objects.get(project__slug="demo", sample_id=CLIP)
    assert clip.media, "load_demo attaches the media"
    call_command("load_demo", stdout=io.StringIO())  # idempotent: attached once
    assert Clip.objects.get(pk=clip.pk).media.name == clip.media.name

    page = login("annotator1", "rescue-demo-coder-1", viewport=(1280, 800))
    page.goto(f"{live_server.url}/work/clips/{clip.pk}/#row-3")
    page.wait_for_selector("#editor h2:has-text('Row 3 ')")
    page.wait_for_function("() => document.getElementById('player').readyState >= 3")
    assert abs(page.evaluate("document.getElementById('player').duration") - 96.4) < 1.0
    row = clip.rows.get(row_index=3)
    page.select_option("#replay-speed", "1.25")
    page.select_option("#preroll", "0.5")
    page.locator("#row-words").click()  # the focus off the selects: the single-letter keys are the page's again
    page.evaluate("""() => { const m = document.getElementById('player'); window.__from = null;
        m.addEventListener('seeking', () => { if (window.__from === null) window.__from = m.currentTime; }); }""")
    page.keyboard.press("r")  # replay the row, from half a second before it
    # Playing starts at once; the seek's event is a task of its own that may come after: wait for both.
    page.wait_for_function("() => !document.getElementById('player').paused && window.__from !== null")
    start, rate = page.evaluate("[window.__from, document.getElementById('player').playbackRate]")
    assert rate == 1.25 and abs(start - (row.start_time - 0.5)) < 0.01
    page.wait_for_function("() => document.getElementById('player').paused", timeout=20_000)
    assert abs(page.evaluate("document.getElementById('player').currentTime") - row.end_time) < 0.2
    assert page.locator("text=No media for this clip").count() == 0
    assert page.errors == []
