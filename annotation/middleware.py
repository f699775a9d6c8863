"""Middleware: clear answers for a database outage, oversized bodies and expected refusals."""
from __future__ import annotations

import logging

from django.conf import settings
from django.db import InterfaceError, OperationalError
from django.http import HttpResponse, HttpResponseNotFound, JsonResponse
from django.template.loader import render_to_string

log = logging.getLogger(__name__)


class DatabaseUnavailableMiddleware:
    """A request that hits a lost database connection gets 503 with Retry-After.

    Writes happen in transactions, so a request cut off by the outage leaves
    nothing half-written; Django opens a fresh connection (CONN_HEALTH_CHECKS)
    on the next request once the database is back, without a restart.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if not isinstance(exception, (OperationalError, InterfaceError)):
            return None
        log.error("database unavailable while serving %s: %s", request.path, exception)
        if request.path.startswith("/api/"):
            response = JsonResponse({"detail": "The database is unavailable right now; nothing was saved. Try again in a moment."}, status=503)
        else:
            # Rendered without the request: the context processors read the session and the
            # user, i.e. the database that is down, and would turn this 503 into a 500.
            response = HttpResponse(render_to_string("503.html"), status=503)
        response["Retry-After"] = "10"
        return response


# --- request size -----------------------------------------------------------------------------


def accepts_uploads(view):
    """Mark a view (function or class) as an ingest upload: its body may reach
    ``MAX_INGEST_REQUEST_BYTES`` instead of ``MAX_REQUEST_BYTES``."""
    view.accepts_uploads = True
    return view


def _is_upload_view(view_func) -> bool:
    return getattr(view_func, "accepts_uploads", False) or getattr(getattr(view_func, "view_class", None), "accepts_uploads", False)


def _refusal(request, status: int, message: str, **extra):
    """A refusal in the form the caller reads: JSON under /api/, a page elsewhere."""
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": message, **extra}, status=status)
    return HttpResponse(render_to_string("refused.html", {"status": status, "message": message}, request=request), status=status)


class RequestSizeLimitMiddleware:
    """Refuse a body larger than its limit (413) from its Content-Length, before anything reads it.

    Ingest uploads (views marked with ``accepts_uploads``) may send up to
    ``MAX_INGEST_REQUEST_BYTES`` (their files are then held to their own limits
    while they stream in: annotation/ingest/uploads.py); every other request up
    to ``MAX_REQUEST_BYTES``. A body without a Content-Length is read as empty
    by Django, so the header is the whole story.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_view(self, request, view_func, view_args, view_kwargs):
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            return None  # Django reads such a body as empty
        upload = _is_upload_view(view_func)
        limit = settings.MAX_INGEST_REQUEST_BYTES if upload else settings.MAX_REQUEST_BYTES
        if length <= limit:
            return None
        setting = "MAX_INGEST_REQUEST_BYTES" if upload else "MAX_REQUEST_BYTES"
        log.warning("request body of %s bytes refused on %s (limit %s)", length, request.path, limit)
        return _refusal(request, 413, f"The request is {length:,} bytes, over the limit of {limit:,} bytes ({setting}); nothing was read.")


# --- refusals ---------------------------------------------------------------------------------


class RefusalMiddleware:
    """Expected refusals as plain answers.

    - A write to a discarded or released clip that a view did not answer
      itself (``ClipClosed``) becomes a 409 with the service's message.
    - With DEBUG on (the demo), Django's technical 404 page lists every URL
      pattern; anyone but a superuser gets the ordinary 404 page instead.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if (
            settings.DEBUG
            and response.status_code == 404
            and response.get("Content-Type", "").startswith("text/html")
            and not getattr(getattr(request, "user", None), "is_superuser", False)
        ):
            response = HttpResponseNotFound(render_to_string("404.html", request=request))
        return response

    def process_exception(self, request, exception):
        from .services import ClipClosed

        if isinstance(exception, ClipClosed):
            return _refusal(request, 409, str(exception), clip_state=exception.state)
        return None
