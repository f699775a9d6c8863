"""The player serves the ear: a replay stops at the row's end within one frame,
a click on a row seeks while the media plays, and the replay speed and pre-roll
follow the annotator from browser to browser. Measured in Chromium on a small
WebM clip written for the test with PyAV (VP8, 25 frames per second)."""

import io
import json
import re

import av
import numpy as np
import pytest
from django.core.files.base import ContentFile
from playwright.sync_api import expect

from annotation.models import AnnotatorSettings
from annotation.rescue_format.importer import import_rescue
from annotation.starting import start_assignment

from ..builders.documents import client_row, couple_clip, therapist_row
from .conftest import screenshot

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]

FPS = 25
FRAME = 1 / FPS
# (start, end) of the clip's three rows, in seconds; the video lasts 5 s.
SPANS = [(0.4, 1.6), (1.6, 2.9), (2.9, 4.2)]


def webm(seconds: float = 5.0, fps: int = FPS) -> bytes:
    """A silent VP8 clip whose frames change colour with time (64×48)."""
    out = io.BytesIO()
    with av.open(out, mode="w", format="webm") as container:
        stream = container.add_stream("libvpx", rate=fps)
        stream.width, stream.height, stream.pix_fmt = 64, 48, "yuv420p"
        for i in range(int(seconds * fps)):
            pixels = np.full((48, 64, 3), (i * 5 % 256, 90, 255 - i * 5 % 256), dtype=np.uint8)
            for packet in stream.encode(av.VideoFrame.from_ndarray(pixels, format="rgb24")):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    return out.getvalue()


@pytest.fixture
def clip(project, annotator, tmp_path):
    rows = [
        client_row(1, start=SPANS[0][0], end_time=SPANS[0][1]),
        therapist_row(2, start=SPANS[1][0], end_time=SPANS[1][1]),
        client_row(3, speaker="Tobias", target=("Maya",), start=SPANS[2][0], end_time=SPANS[2][1]),
    ]
    path = tmp_path / "c.jsonl"
    path.write_text(json.dumps(couple_clip(rows=rows)) + "\n", encoding="utf-8")
    import_rescue(path, project, as_source="draft")
    clip = project.clips.get()
    clip.media.save("session.webm", ContentFile(webm()), save=True)
    start_assignment(clip, annotator)
    return clip


def open_with_media(page, live_server, clip, row):
    page.goto(f"{live_server.url}/work/clips/{clip.pk}/#row-{row}")
    page.wait_for_selector("#editor h2")
    page.wait_for_function("() => document.getElementById('player').readyState >= 3")


def replay_and_wait(page):
    """Press r and wait for the replay to stop; the media time where it stopped."""
    page.keyboard.press("r")
    page.wait_for_function("() => !document.getElementById('player').paused")
    page.wait_for_function("() => document.getElementById('player').paused", timeout=15_000)
    return page.evaluate("document.getElementById('player').currentTime")


def test_a_replay_stops_at_the_rows_end_within_one_frame(login, live_server, clip):
    page = login("ann1", "ann-pass-123")
    open_with_media(page, live_server, clip, row=2)
    stops = [replay_and_wait(page) for _ in range(2)]
    end = SPANS[1][1]
    print(f"replay of row 2 (ends at {end} s) stopped at {', '.join(f'{t:.3f}' for t in stops)} s")
    assert all(abs(t - end) <= FRAME for t in stops), stops
    expect(page.locator("#row-2")).to_have_class(re.compile(r"\bplaying\b"))  # the highlight stays on the replayed row
    screenshot(page, "clip-with-video")
    assert page.errors == []


def test_a_click_on_a_row_seeks_while_the_media_plays(login, live_server, clip):
    page = login("ann1", "ann-pass-123")
    open_with_media(page, live_server, clip, row=1)
    page.keyboard.press("p")
    page.wait_for_function("() => document.getElementById('player').currentTime > 0.2")
    page.click("#row-3")
    position = page.evaluate(
        "[document.getElementById('player').currentTime, document.getElementById('player').paused]"
    )
    assert SPANS[2][0] <= position[0] < SPANS[2][0] + 0.5 and position[1] is False, position
    page.keyboard.press("p")
    page.click("#row-1")  # and while paused
    assert abs(page.evaluate("document.getElementById('player').currentTime") - SPANS[0][0]) < 0.01


def test_replay_speed_and_pre_roll_follow_the_annotator_to_another_browser(login, live_server, clip, annotator):
    page = login("ann1", "ann-pass-123")
    open_with_media(page, live_server, clip, row=1)
    page.select_option("#replay-speed", "1.25")
    page.select_option("#preroll", "0.5")
    expect(page.locator("#replay-speed")).to_have_value("1.25")
    saved = lambda: AnnotatorSettings.objects.filter(user=annotator, replay_speed="1.25", preroll=0.5).exists()  # noqa: E731
    page.wait_for_timeout(300)
    assert saved(), "kept on the server"

    elsewhere = login("ann1", "ann-pass-123")  # a fresh browser context: nothing in its storage
    open_with_media(elsewhere, live_server, clip, row=3)
    expect(elsewhere.locator("#replay-speed")).to_have_value("1.25")
    expect(elsewhere.locator("#preroll")).to_have_value("0.5")
    elsewhere.evaluate("""() => { const m = document.getElementById('player'); window.__from = null;
        m.addEventListener('seeking', () => { if (window.__from === null) window.__from = m.currentTime; }); }""")
    stop = replay_and_wait(elsewhere)
    start, rate = elsewhere.evaluate("[window.__from, document.getElementById('player').playbackRate]")
    print(f"replay of row 3 at {rate}x from {start:.3f} s stopped at {stop:.3f} s (row {SPANS[2][0]}–{SPANS[2][1]} s)")
    assert rate == 1.25 and abs(start - (SPANS[2][0] - 0.5)) < 0.001
    assert abs(stop - SPANS[2][1]) <= FRAME
