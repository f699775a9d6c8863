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


# --- the trail is append-only --------------------------------------------------------------


class AuditTrailImmutable(Exception):
    """A historical record was about to be changed or deleted: the audit trail only grows."""


def historical_models() -> list[type[models.Model]]:
    """Every django-simple-history model of the project: the tables of the audit trail."""
    from django.apps import apps
    from simple_history.models import HistoricalChanges

    return [model for model in apps.get_models() if issubclass(model, HistoricalChanges)]


def _refuse_change(sender, instance, using=None, **kwargs) -> None:
    """pre_save: a new record is the trail growing; anything else would rewrite what happened."""
    if instance._state.adding and (
        instance.pk is None or not sender._base_manager.using(using).filter(pk=instance.pk).exists()
    ):
        return
    raise AuditTrailImmutable(f"{sender._meta.label} {instance.pk} is part of the audit trail and cannot be changed")


def _refuse_delete(sender, instance, **kwargs) -> None:
    """pre_delete: also sent for each row of a queryset delete, since a receiver is connected."""
    raise AuditTrailImmutable(f"{sender._meta.label} {instance.pk} is part of the audit trail and cannot be deleted")


def protect_history() -> None:
    """Refuse, through the ORM, to update or delete any historical record (called from AppConfig.ready).

    Model and queryset saves and deletes are refused here; on PostgreSQL a
    trigger (migration 0005) also refuses raw SQL and ``QuerySet.update()``,
    which sends no signal. Inserting (simple-history's own saves and
    ``bulk_create_with_history``) is untouched.
    """
    from django.db.models.signals import pre_delete, pre_save

    for model in historical_models():
        pre_save.connect(_refuse_change, sender=model, dispatch_uid=f"audit-append-only-save:{model._meta.label}")
        pre_delete.connect(_refuse_delete, sender=model, dispatch_uid=f"audit-append-only-delete:{model._meta.label}")


# --- change reasons fit their column ------------------------------------------------------------


def _fit_change_reason(sender, history_instance, **kwargs) -> None:
    """Cut a change reason to its column (simple-history's, 100 characters) instead of failing the write.

    Reasons quote what people typed or uploaded ("ingested from <file name>",
    a discard reason); a long one made PostgreSQL refuse the whole write (a
    ``DataError``, answered 500). The full text stays where it belongs (the
    clip's ``source_file``, its ``discard_reason``): the reason is a label.
    """
    reason = history_instance.history_change_reason
    limit = type(history_instance)._meta.get_field("history_change_reason").max_length
    if reason and limit and len(reason) > limit:
        history_instance.history_change_reason = reason[: limit - 1] + "…"


def fit_change_reasons() -> None:
    """Connect ``_fit_change_reason`` for every historical model (called from AppConfig.ready)."""
    from simple_history.signals import pre_create_historical_record

    pre_create_historical_record.connect(_fit_change_reason, dispatch_uid="audit-fit-change-reason")
