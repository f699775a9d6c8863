"""Workspace pages: the queue and the clip view with its row editor.

The clip page is rendered on the server with its data embedded as JSON
(``json_script``, inert); the page's module (static/workspace/workspace.js,
Preact) draws the rows and the editor and saves through the workspace API.
"""

from __future__ import annotations

import mimetypes
import re

from django.contrib.auth.decorators import login_required
from django.http import FileResponse, Http404, HttpResponse, StreamingHttpResponse
from django.shortcuts import render

from . import selectors

_RANGE = re.compile(r"bytes=(\d*)-(\d*)$")
# What one ranged media response holds in memory at a time.
MEDIA_CHUNK_BYTES = 64 * 1024


@login_required
def queue(request):
    assignments = list(selectors.my_assignments(request.user))
    resume, resume_row = selectors.resume_target(assignments)
    return render(
        request,
        "workspace/queue.html",
        {
            "assignments": assignments,
            "totals": selectors.queue_counters(assignments),
            "resume": resume,
            "resume_row": resume_row,
        },
    )


@login_required
def clip_view(request, clip_id: int):
    clip = selectors.workspace_clip(request.user, clip_id)
    payload = selectors.workspace_payload(request.user, clip)
    return render(request, "workspace/clip.html", {"clip": clip, "payload": payload})


@login_required
def clip_media(request, clip_id: int):
    """The clip's media file, with HTTP range requests so that the player can seek.

    Served in bounded memory whatever the range: a browser opens a video with
    ``Range: bytes=0-`` (the whole file), so a range is streamed a chunk at a
    time, never read into memory at once.
    """
    clip = selectors.workspace_clip(request.user, clip_id)
    if not clip.media:
        raise Http404("this clip has no media file")
    fh = clip.media.open("rb")
    size = clip.media.size
    content_type = mimetypes.guess_type(clip.media.name)[0] or "application/octet-stream"
    match = _RANGE.match(request.headers.get("Range", "").strip())
    if not match or (not match.group(1) and not match.group(2)):
        response = FileResponse(fh, content_type=content_type)
        response["Accept-Ranges"] = "bytes"
        return response
    first, last = match.groups()
    if first:
        start, end = int(first), min(int(last) if last else size - 1, size - 1)
    else:  # a suffix range: the last N bytes
        start, end = max(size - int(last), 0), size - 1
    if start >= size or start > end:
        fh.close()
        response = HttpResponse(status=416)
        response["Content-Range"] = f"bytes */{size}"
        return response
    response = StreamingHttpResponse(_file_range(fh, start, end - start + 1), status=206, content_type=content_type)
    response["Content-Range"] = f"bytes {start}-{end}/{size}"
    response["Accept-Ranges"] = "bytes"
    response["Content-Length"] = str(end - start + 1)
    return response


def _file_range(fh, start: int, length: int):
    """``length`` bytes of ``fh`` from ``start``, in chunks of MEDIA_CHUNK_BYTES; closes the file when done or
    abandoned."""
    try:
        fh.seek(start)
        while length > 0:
            chunk = fh.read(min(MEDIA_CHUNK_BYTES, length))
            if not chunk:
                return
            length -= len(chunk)
            yield chunk
    finally:
        fh.close()
