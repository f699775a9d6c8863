"""``agreement.json``: the agreement report for the released clips, or why there is none.

The report comes from ``annotation.agreement.compute_project_report`` (the
agreement capability), restricted to the released clips, with a fixed
bootstrap seed so that the file is reproducible. If that function does not
exist in this installation, the file says so explicitly instead of being left
out. Keys that record when or how fast a report was computed are dropped:
they would make two freezes of the same state differ.
"""
from __future__ import annotations

import json
from typing import Any

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
    and storing it when missing; None when that cache is not there to use.

    Reports are deterministic for a state of the data, so a stored one is the
    same report ``compute_project_report`` would return; using it keeps a
    re-freeze fast, and the lead's dashboard can show the same figures.
    """
    try:
        from annotation.agreement.services import Params, report_state
    except (ImportError, AttributeError):
        return None
    state = report_state(project, Params(clips=tuple(sample_ids), resamples=AGREEMENT_RESAMPLES, seed=AGREEMENT_SEED), start=True, sync=True)
    return state.report.report if state.status == "ready" and state.report is not None else None


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
    }


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
