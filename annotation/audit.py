"""Where a write came from, for the audit trail.

Every audited model keeps its history with django-simple-history; each
historical record also stores ``history_source`` (``web``, ``api``, ``cli``,
``worker``, ``system``), read from a context variable that the request
middleware, management commands and Celery tasks set.
"""
from __future__ import annotations

import contextvars
from contextlib import contextmanager

from django.db import models

_source: contextvars.ContextVar[str] = contextvars.ContextVar("audit_source", default="system")


def current_source() -> str:
    return _source.get()


@contextmanager
def audit_source(name: str):
    token = _source.set(name)
    try:
        yield
    finally:
        _source.reset(token)


class AuditSourceMiddleware:
    """Marks writes made while serving a request as ``api`` or ``web``."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        with audit_source("api" if request.path.startswith("/api/") else "web"):
            return self.get_response(request)


class HistorySource(models.Model):
    """Abstract base mixed into every historical model."""

    history_source = models.CharField(max_length=16, default=current_source, editable=False)

    class Meta:
        abstract = True
