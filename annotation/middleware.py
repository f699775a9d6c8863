"""Middleware: clear answers for a database outage, oversized or non-UTF-8 bodies, expected refusals and errors."""

from __future__ import annotations

import logging

from django.conf import settings
from django.db import InterfaceError, OperationalError
from django.http import HttpResponse, HttpResponseNotFound, JsonResponse
from django.template.loader import render_to_string
from django.views.debug import ExceptionReporter

from .api.parsers import charset_refusal

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
            response = JsonResponse(
                {"detail": "The database is unavailable right now; nothing was saved. Try again in a moment."},
                status=503,
            )
        else:
            # Rendered without the request: the context processors read the session and the
            # user, i.e. the database that is down, and would turn this 503 into a 500.
            response = HttpResponse(render_to_string("503.html"), status=503)
        response["Retry-After"] = "10"
        return response


# --- request size and charset -----------------------------------------------------------------


def accepts_uploads(*, allowed):
    """Mark a view (function or class) as an ingest upload: its body may reach
    ``MAX_INGEST_REQUEST_BYTES`` instead of ``MAX_REQUEST_BYTES`` when the caller
    is signed in and ``allowed(user)`` is true (leads, for ingest)."""

    def mark(view):
        view.upload_allowed = staticmethod(allowed) if isinstance(view, type) else allowed
        return view

    return mark


def _upload_rule(view_func):
    """Who may send an upload's body to this view (a predicate on the user), or None for an ordinary view."""
    rule = getattr(view_func, "upload_allowed", None)
    if rule is None:
        rule = getattr(getattr(view_func, "view_class", None), "upload_allowed", None)
    return rule


def _caller(request):
    """The signed-in user of the request, from its session or (on the API) its token, without reading the body."""
    user = getattr(request, "user", None)
    if user is not None and user.is_authenticated:
        return user
    if request.path.startswith("/api/"):
        from .tokens import caller_from_token

        return caller_from_token(request)
    return None


def _refusal(request, status: int, message: str, **extra):
    """A refusal in the form the caller reads: JSON under /api/, a page elsewhere."""
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": message, **extra}, status=status)
    return HttpResponse(
        render_to_string("refused.html", {"status": status, "message": message}, request=request), status=status
    )


class RequestSizeLimitMiddleware:
    """Refuse a body, before anything reads it, that is over its limit (413) or not UTF-8 (415).

    The limit is read from the Content-Length (a body without one is read as
    empty by Django, so the header is the whole story). Ingest uploads (views
    marked with ``accepts_uploads``) may send up to ``MAX_INGEST_REQUEST_BYTES``
    (their files are then held to their own limits while they stream in:
    annotation/ingest/uploads.py), but only when the caller is signed in (session,
    or token on the API) with a role allowed to upload there: this is decided
    here, before the CSRF check or DRF's session authentication parse the body
    (both read it). Everyone else, and every other request, gets
    ``MAX_REQUEST_BYTES``.

    A body that declares a charset other than UTF-8 is refused whatever its
    size: Django would decode its form fields, and DRF its JSON, with that
    charset, a second way to read a body beside the one the checks measure
    (annotation/api/parsers.py).
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
        if length <= 0:
            return None
        problem = charset_refusal(request.META.get("CONTENT_TYPE"))
        if problem:
            log.warning("request body refused on %s: %s", request.path, problem)
            return _refusal(request, 415, problem[0].upper() + problem[1:])
        if length <= settings.MAX_REQUEST_BYTES:
            return None
        rule = _upload_rule(view_func)
        if rule is None:
            return self._too_large(request, length, settings.MAX_REQUEST_BYTES, "MAX_REQUEST_BYTES")
        caller = _caller(request)
        if caller is not None and rule(caller):
            if length <= settings.MAX_INGEST_REQUEST_BYTES:
                return None
            return self._too_large(request, length, settings.MAX_INGEST_REQUEST_BYTES, "MAX_INGEST_REQUEST_BYTES")
        who = "a caller who is not signed in" if caller is None else f"{caller.get_username()}, who may not upload here"
        return self._too_large(
            request,
            length,
            settings.MAX_REQUEST_BYTES,
            "MAX_REQUEST_BYTES",
            f" for {who} (larger uploads are for leads, up to MAX_INGEST_REQUEST_BYTES)",
        )

    @staticmethod
    def _too_large(request, length: int, limit: int, setting: str, why: str = ""):
        log.warning("request body of %s bytes refused on %s (limit %s)", length, request.path, limit)
        return _refusal(
            request,
            413,
            f"The request is {length:,} bytes, over the limit of {limit:,} bytes ({setting}){why}; nothing was read.",
        )


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


class StaffOnlyDebugReporter(ExceptionReporter):
    """With DEBUG on (the demo), Django's debug 500 page (settings, code, local variables) for staff only.

    Everyone else gets the ordinary 500 page (or, asking for no HTML, one line
    of text); the traceback is logged as always. Set as
    ``DEFAULT_EXCEPTION_REPORTER``; reports by email keep the whole traceback.
    """

    def _for_staff(self) -> bool:
        user = getattr(self.request, "user", None)
        return self.is_email or bool(user is not None and getattr(user, "is_staff", False))

    def get_traceback_html(self):
        if self._for_staff():
            return super().get_traceback_html()
        # Rendered without the request: its context processors may read what just failed.
        return render_to_string("500.html")

    def get_traceback_text(self):
        if self._for_staff():
            return super().get_traceback_text()
        return "Server error: it was logged. Please try again.\n"
