"""Uploaded files, streamed to disk and held to their size limits while they arrive.

Django keeps a small upload in memory and a large one in a temporary file, and
reads every byte of both whatever its size. Ingest uploads go through
``SizeLimitedUploadHandler`` (settings.FILE_UPLOAD_HANDLERS) instead: every
file streams to a temporary file, never into memory, and stops being written
the moment it passes its own limit, ``MAX_MEDIA_BYTES`` for a video or audio
file, ``MAX_UPLOAD_BYTES`` for anything else. Such a file still arrives, empty,
with ``over_limit`` set and ``size`` counting the bytes that were sent, so
that ingest refuses it by name while the other files of the upload go on.
The request as a whole is held to ``MAX_INGEST_REQUEST_BYTES`` before any of
it is read (annotation.middleware.RequestSizeLimitMiddleware).
"""

from __future__ import annotations

from pathlib import PurePosixPath

from django.conf import settings
from django.core.files.uploadhandler import TemporaryFileUploadHandler

# Video and audio files that go with a transcript of the same name.
MEDIA_SUFFIXES = (
    ".mp4",
    ".m4v",
    ".mov",
    ".webm",
    ".mkv",
    ".ogv",
    ".mp3",
    ".m4a",
    ".wav",
    ".ogg",
    ".oga",
    ".flac",
    ".aac",
)


def is_media(name: str) -> bool:
    return PurePosixPath(name).suffix.lower() in MEDIA_SUFFIXES


def size_limit(name: str) -> tuple[int, str]:
    """The largest size a file called ``name`` may have, and the setting that says so."""
    if is_media(name):
        return settings.MAX_MEDIA_BYTES, "MAX_MEDIA_BYTES"
    return settings.MAX_UPLOAD_BYTES, "MAX_UPLOAD_BYTES"


class SizeLimitedUploadHandler(TemporaryFileUploadHandler):
    """Every uploaded file to a temporary file, up to its size limit, then no further."""

    def new_file(self, *args, **kwargs):
        super().new_file(*args, **kwargs)
        self.limit = size_limit(self.file_name or "")[0]
        self.received = 0
        self.file.over_limit = False

    def receive_data_chunk(self, raw_data, start):
        self.received += len(raw_data)
        if self.received <= self.limit:
            self.file.write(raw_data)
        elif not self.file.over_limit:
            # Past the limit: what was written is freed, and nothing more is kept.
            self.file.over_limit = True
            self.file.seek(0)
            self.file.truncate()
        return None  # (file_complete sets ``size`` to the bytes sent, written or not)
