"""Logging filters (settings.LOGGING)."""

from __future__ import annotations

import logging


class RefusalsInOneLine(logging.Filter):
    """A refused request (any 4xx: 403, 404, 409, 413...) is logged as its one line, without a traceback.

    Django attaches the exception to the record of a ``PermissionDenied`` or a
    ``SuspiciousOperation``, so every 403 wrote a full traceback although
    nothing went wrong. Server errors (5xx) keep theirs.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        status = getattr(record, "status_code", None)
        if isinstance(status, int) and 400 <= status < 500 and record.exc_info:
            record.exc_info = None
            record.exc_text = None
        return True
