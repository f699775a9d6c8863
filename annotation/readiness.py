"""Readiness checks for operators and load balancers.

Each check answers ok / not ok with a short public reason; internals (hosts,
exception texts) go to the log, not to the response.
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.migrations.executor import MigrationExecutor

log = logging.getLogger(__name__)


def _database() -> dict:
    try:
        connection = connections[DEFAULT_DB_ALIAS]
        connection.ensure_connection()
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        executor = MigrationExecutor(connection)
        pending = executor.migration_plan(executor.loader.graph.leaf_nodes())
    except Exception:
        log.exception("readiness: database check failed")
        return {"ok": False, "detail": "database unreachable"}
    if pending:
        return {"ok": False, "detail": f"{len(pending)} migrations not applied"}
    return {"ok": True, "detail": "reachable, migrations applied"}


def _broker() -> dict:
    if not settings.CELERY_BROKER_URL:
        return {"ok": True, "detail": "not configured: tasks run in-process"}
    from rescue_annot.celery import app

    try:
        with app.connection_for_write(settings.CELERY_BROKER_URL) as conn:
            conn.ensure_connection(max_retries=1, timeout=2)
    except Exception:
        log.exception("readiness: broker check failed")
        return {"ok": False, "detail": "broker unreachable"}
    return {"ok": True, "detail": "reachable"}


def run_checks() -> dict:
    return {"database": _database(), "broker": _broker()}
