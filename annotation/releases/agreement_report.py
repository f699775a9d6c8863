"""``agreement.json``: the agreement report for the released clips, or why there is none.

The report comes from ``annotation.agreement.compute_project_report`` (the
agreement capability), restricted to the released clips, with a fixed
bootstrap seed so that the file is reproducible. If that function does not
exist in this installation, the file says so explicitly instead of being left
out. Keys that record when or how fast a report was computed are dropped:
they would make two freezes of the same state differ.

The report is the agreement capability's stored one when its fingerprint
matches the data (``_cached_report``).
"""
from __future__ import annotations

import json
from contextlib import contextmanager
from typing import Any

from django.db import connection, transaction

from .manifest import dumps_json

AGREEMENT_SEED = 0
AGREEMENT_RESAMPLES = 1000
# Keys that describe the computation run rather than the data.
VOLATILE_KEYS = frozenset({"created_at", "computed_at", "generated_at", "timestamp", "seconds", "elapsed", "elapsed_seconds", "duration_seconds", "cached", "cache_hit", "job_id", "report_id"})


def _scrub(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _scrub(v) for k, v in value.items() if k not in VOLATILE_KEYS}
    if isinstance(value, (list, tuple)):
        return [_scrub(v) for v in value]
    return value


def _compute_function():
    """The agreement capability's entry point, or (None, why it is unavailable)."""
    try:
        from annotation.agreement import compute_project_report
    except (ImportError, AttributeError) as exc:
        return None, f"{type(exc).__name__}: {exc}"
    return compute_project_report, ""


def _cached_report(project, sample_ids: list[str]) -> dict | None:
    """The agreement capability's stored report for exactly this scope and data, computing
    and storing it when missing; None when that cache is not there to use, or when the
    data changed while the report was computed (the caller then computes it afresh).

    Reports are deterministic for a state of the data, so a stored one is the
    same report ``compute_project_report`` would return; using it keeps a
    re-freeze fast, and the lead's dashboard can show the same figures.

    The data's fingerprint (the cache key, which reads every revision and draft
    in scope) is computed once, and the report inside the same database snapshot
    where the database offers one: the key then describes exactly the data the
    report was computed from. Elsewhere the fingerprint is taken again afterwards,
    and a report whose data changed meanwhile is not stored.
    """
    try:
        from annotation.agreement.services import Params, cached_report, fingerprint, store_report
    except (ImportError, AttributeError):
        return None
    params = Params(clips=tuple(sample_ids), resamples=AGREEMENT_RESAMPLES, seed=AGREEMENT_SEED)
    with _snapshot() as consistent:
        key = fingerprint(project, params)
        stored = cached_report(project, key)
        if stored is not None:
            return stored.report
        report = params.build(project)
    if not consistent and fingerprint(project, params) != key:
        return None
    store_report(project, params, key, report)
    return report


@contextmanager
def _snapshot():
    """A block whose reads all see one state of the database; yields whether it could be had.

    On PostgreSQL, outside any transaction: a REPEATABLE READ transaction (the
    block only reads, and holds no writer back). Inside a caller's transaction
    the isolation level is the caller's, and SQLite's read transactions would
    hold writers back for the whole computation, so there the answer is False.
    """
    if connection.vendor != "postgresql" or connection.in_atomic_block:
        yield False
        return
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        yield True


def agreement_document(project, sample_ids: list[str]) -> dict:
    """What ``agreement.json`` holds (keys sorted when written)."""
    compute, why = _compute_function()
    if compute is None:
        return {
            "available": False,
            "reason": (
                "Inter-annotator agreement is not available in this release: the platform that froze it "
                "has no agreement module yet (annotation.agreement.compute_project_report could not be "
                f"imported: {why}). A later release will include it; until then, do not read the labels "
                "as validated by agreement figures."
            ),
        }
    sample_ids = sorted(sample_ids)
    report = _cached_report(project, sample_ids)
    if report is None:
        report = compute(project, clips=sample_ids, resamples=AGREEMENT_RESAMPLES, seed=AGREEMENT_SEED)
    # Through JSON text and back: the computed and the stored report then compare equal.
    report = json.loads(json.dumps(_scrub(report), sort_keys=True))
    return {
        "available": True,
        "scope": {"clips": len(sample_ids), "resamples": AGREEMENT_RESAMPLES, "seed": AGREEMENT_SEED},
        "report": report,
        "semantic": _semantic_document(project, sample_ids),
    }


def _semantic_document(project, sample_ids: list[str]) -> dict:
    """The free-text fields' semantic agreement (the agreement capability's), or why it is not there."""
    try:
        from annotation.agreement import compute_semantic_report

        report = compute_semantic_report(project, clips=sample_ids, resamples=AGREEMENT_RESAMPLES, seed=AGREEMENT_SEED)
    except (RuntimeError, ImportError, OSError) as exc:  # EmbeddingError is a RuntimeError; the card says why
        return {"available": False, "reason": f"the semantic agreement could not be computed ({type(exc).__name__}: {exc})"}
    return {"available": True, "report": json.loads(json.dumps(_scrub(report), sort_keys=True))}


def agreement_file(project, sample_ids: list[str]) -> bytes:
    """``agreement.json``: the document in the release's JSON spelling, keys sorted."""
    return dumps_json(agreement_document(project, sample_ids), sort_keys=True)


def _number(value) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _interval(entry: dict) -> tuple[float | None, float | None]:
    for key in ("ci", "ci95", "interval", "confidence_interval"):
        value = entry.get(key)
        if isinstance(value, (list, tuple)) and len(value) == 2:
            return _number(value[0]), _number(value[1])
        if isinstance(value, dict):
            return _number(value.get("low", value.get("lower"))), _number(value.get("high", value.get("upper")))
    return _number(entry.get("ci_low", entry.get("lower"))), _number(entry.get("ci_high", entry.get("upper")))


def summary_rows(document: dict, limit: int = 60) -> list[dict]:
    """Figures found in the report, for the card: every object with an ``alpha``.

    The report's exact shape belongs to the agreement capability; this reads
    any nesting and names each figure by its path.
    """
    rows: list[dict] = []

    def walk(value, path):
        if len(rows) >= limit:
            return
        if isinstance(value, dict):
            if "alpha" in value and (value["alpha"] is None or _number(value["alpha"]) is not None):
                low, high = _interval(value)
                rows.append(
                    {
                        "figure": " / ".join(path) or "overall",
                        "alpha": _number(value.get("alpha")),
                        "ci_low": low,
                        "ci_high": high,
                        "units": value.get("units", value.get("n_units")),
                        "coders": value.get("coders", value.get("n_coders")),
                        "note": value.get("reason") or value.get("undefined_reason") or "",
                    }
                )
                return
            for k, v in value.items():
                walk(v, [*path, str(k)])
        elif isinstance(value, list):
            for i, v in enumerate(value):
                label = v.get("field") or v.get("name") if isinstance(v, dict) else None
                walk(v, [*path, str(label or i)])

    walk(document.get("report"), [])
    return rows
