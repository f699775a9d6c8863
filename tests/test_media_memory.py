"""Serving media does not exhaust memory.

For a Range request the media view read the whole range into memory, and a
browser opens a video with ``Range: bytes=0-``: three such requests for a
300 MB video took a server from 221 MB to 1,079 MB. Ranges are now streamed a
chunk at a time. Measured for real: a gunicorn process serving a large sparse
file to several clients at once, its RSS sampled with psutil.
"""

from __future__ import annotations

import http.client
import os
import threading
import time
from pathlib import Path

import psutil
import pytest
from django.core.files.base import ContentFile
from django.test import Client

from annotation.starting import start_assignment
from annotation.workspace.views import MEDIA_CHUNK_BYTES

from .conftest import _test_database_url, require
from .services import Gunicorn, app_env

MEDIA_BYTES = 128 * 1024 * 1024
CONCURRENT = 3  # full-range requests at once, as the probe sent
ALLOWED_GROWTH = 16 * 1024 * 1024  # "within a few MB of its idle size"


@pytest.fixture
def assigned_clip(draft_clip, annotator):
    start_assignment(draft_clip, annotator)
    return draft_clip


@pytest.mark.django_db
def test_ranges_are_answered_exactly_and_streamed_in_chunks(client, assigned_clip, annotator):
    data = bytes(range(256)) * 4096  # 1 MiB
    assigned_clip.media.save("clip.mp4", ContentFile(data))
    client.force_login(annotator)
    url = f"/work/clips/{assigned_clip.pk}/media"

    def get(range_header=None):
        response = client.get(url, **({"HTTP_RANGE": range_header} if range_header else {}))
        return response, b"".join(response.streaming_content) if response.streaming else response.content

    for header, start, end in (
        ("bytes=2-5", 2, 5),
        ("bytes=1000000-", 1000000, len(data) - 1),
        ("bytes=-3", len(data) - 3, len(data) - 1),
        ("bytes=0-", 0, len(data) - 1),
    ):
        response, body = get(header)
        assert response.status_code == 206 and body == data[start : end + 1], header
        assert response["Content-Range"] == f"bytes {start}-{end}/{len(data)}" and response["Content-Length"] == str(
            end - start + 1
        )
    response, body = get()
    assert response.status_code == 200 and body == data and response["Accept-Ranges"] == "bytes"
    assert get("bytes=2000000-")[0].status_code == 416
    response = client.get(url, HTTP_RANGE="bytes=0-")
    assert response.streaming, "a range is streamed, not built in memory"
    assert max(len(chunk) for chunk in response.streaming_content) <= MEDIA_CHUNK_BYTES


def _full_range(port: int, path: str, cookie: str, results: list, range_header: str | None):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        headers = {"Cookie": f"sessionid={cookie}", **({"Range": range_header} if range_header else {})}
        conn.request("GET", path, headers=headers)
        response = conn.getresponse()
        received = 0
        while chunk := response.read(1024 * 1024):
            received += len(chunk)
        results.append((response.status, received))
    finally:
        conn.close()


@pytest.mark.django_db(transaction=True)
def test_concurrent_full_range_requests_keep_the_server_within_a_few_mb(assigned_clip, annotator, tmp_path, settings):
    require(
        os.environ.get("DATABASE_URL", "").startswith("postgres"),
        "the server process shares the PostgreSQL test database (DATABASE_URL)",
    )
    media = Path(settings.MEDIA_ROOT) / "media" / "big.mp4"
    media.parent.mkdir(parents=True, exist_ok=True)
    with open(media, "wb") as fh:
        fh.truncate(MEDIA_BYTES)  # sparse: no disk used, reads return zeros
    assigned_clip.media.name = "media/big.mp4"
    assigned_clip.save(update_fields=["media"])
    login = Client()
    login.force_login(annotator)
    cookie = login.cookies["sessionid"].value
    path = f"/work/clips/{assigned_clip.pk}/media"

    server = Gunicorn(
        app_env(DATABASE_URL=_test_database_url(), MEDIA_ROOT=str(settings.MEDIA_ROOT)),
        tmp_path,
        threads=CONCURRENT + 1,
    )
    try:
        server.wait_ready()
        (worker,) = server.worker_pids()
        process = psutil.Process(worker)
        for _ in range(3):  # warm: imports, connections and first-request allocations done
            _full_range(server.port, path, cookie, [], "bytes=0-65535")
        idle = process.memory_info().rss
        peak, done = [idle], threading.Event()

        def sample():
            while not done.is_set():
                peak[0] = max(peak[0], process.memory_info().rss)
                time.sleep(0.005)

        sampler = threading.Thread(target=sample)
        sampler.start()
        results: list = []
        clients = [
            threading.Thread(target=_full_range, args=(server.port, path, cookie, results, "bytes=0-"))
            for _ in range(CONCURRENT)
        ]
        clients.append(
            threading.Thread(target=_full_range, args=(server.port, path, cookie, results, None))
        )  # and a plain GET
        started = time.monotonic()
        for thread in clients:
            thread.start()
        for thread in clients:
            thread.join(timeout=300)
        seconds = time.monotonic() - started
        done.set()
        sampler.join()
    finally:
        server.stop()
    assert sorted(results) == [(200, MEDIA_BYTES)] + [(206, MEDIA_BYTES)] * CONCURRENT
    growth = peak[0] - idle
    print(
        f"media memory: worker idle {idle / 2**20:.1f} MiB, peak {peak[0] / 2**20:.1f} MiB (+{growth / 2**20:.1f} MiB) "
        f"while serving {CONCURRENT} full-range requests and one plain GET of a {MEDIA_BYTES / 2**20:.0f} MiB file at "
        "once "
        f"({len(clients) * MEDIA_BYTES / 2**20 / seconds:.0f} MiB/s)"
    )
    assert growth < ALLOWED_GROWTH, f"the worker grew by {growth / 2**20:.1f} MiB"
