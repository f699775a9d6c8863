"""Turn a database outage into a clear, retryable answer instead of a stack trace."""
from __future__ import annotations

import logging

from django.db import InterfaceError, OperationalError
from django.http import HttpResponse, JsonResponse
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
