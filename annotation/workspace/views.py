"""Workspace pages: the queue and the clip view with its row editor.

The clip page is rendered on the server with its data embedded as JSON
(``json_script``, inert); the page's module (static/workspace/workspace.js,
Preact) draws the rows and the editor and saves through the workspace API.
"""
from __future__ import annotations

import mimetypes
import re

from django.contrib.auth.decorators import login_required
from django.http import FileResponse, Http404, HttpResponse
from django.shortcuts import render

from . import selectors

_RANGE = re.compile(r"bytes=(\d*)-(\d*)$")


@login_required
def queue(request):
    assignments = list(selectors.my_assignments(request.user))
    resume, resume_row = selectors.resume_target(assignments)
    return render(
        request,
        "workspace/queue.html",
        {"assignments": assignments, "totals": selectors.queue_counters(assignments), "resume": resume, "resume_row": resume_row},
    )


@login_required
def clip_view(request, clip_id: int):
    clip = selectors.workspace_clip(request.user, clip_id)
    payload = selectors.workspace_payload(request.user, clip)
    return render(request, "workspace/clip.html", {"clip": clip, "payload": payload})


@login_required
def clip_media(request, clip_id: int):
    """The clip's media file, with HTTP range requests so that the player can seek."""
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
    fh.seek(start)
    data = fh.read(end - start + 1)
    fh.close()
    response = HttpResponse(data, status=206, content_type=content_type)
    response["Content-Range"] = f"bytes {start}-{end}/{size}"
    response["Accept-Ranges"] = "bytes"
    response["Content-Length"] = str(len(data))
    return response
