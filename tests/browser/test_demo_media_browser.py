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
SIZES = ((1280, 800), (1440, 900))

# The player and its settings: each shown and wholly inside the window (none needs a scroll of the page to reach).
CONTROLS = """() => ['player', 'replay-speed', 'preroll'].map(id => {
  const el = document.getElementById(id), r = el.getBoundingClientRect();
  const inside = r.width > 0 && r.height > 0 && r.left >= 0 && r.top >= 0
    && r.right <= innerWidth + 0.5 && r.bottom <= innerHeight + 0.5;
  return inside ? null : id + ' ' + JSON.stringify([r.left, r.top, r.right, r.bottom]) + ' in ' + innerWidth + 'x'
    + innerHeight;
}).filter(Boolean)"""


def player_in_the_window(page):
    """At each size: the player and its speed and pre-roll settings shown within the window."""
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        page.wait_for_timeout(50)
        assert page.evaluate(CONTROLS) == [], f"at {width}×{height}"


def test_the_demo_clip_plays_replays_a_row_and_keeps_the_speed_at_both_sizes(login, live_server):
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
    player_in_the_window(page)
    page.set_viewport_size({"width": 1280, "height": 800})
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

    # At 1440×900 too: the replay key replays the row at the speed and from the pre-roll set, the controls in view.
    page.set_viewport_size({"width": 1440, "height": 900})
    assert page.evaluate(CONTROLS) == [], "at 1440×900 after the replay"
    page.evaluate("() => { window.__from = null; }")
    page.keyboard.press("r")
    page.wait_for_function("() => !document.getElementById('player').paused && window.__from !== null")
    start, rate = page.evaluate("[window.__from, document.getElementById('player').playbackRate]")
    assert rate == 1.25 and abs(start - (row.start_time - 0.5)) < 0.01
    page.wait_for_function("() => document.getElementById('player').paused", timeout=20_000)
    assert page.errors == []
