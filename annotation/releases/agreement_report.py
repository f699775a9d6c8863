"""``agreement.json``: the agreement reports for the released clips, or why there are none.

The reports come from ``annotation.agreement.services.compute_release_reports`` (the
agreement capability): the label figures and the free-text (semantic) figures,
restricted to the released clips, with a fixed bootstrap seed so that the file
is reproducible. They are the capability's stored reports when current for the
data, else computed from one reading of the data and stored (so a re-freeze is
fast and the lead's dashboard shows the same figures). If that function does
not exist in this installation, the file says so explicitly instead of being
left out. Keys that record when or how fast a report was computed are dropped:
they would make two freezes of the same state differ.
"""

from __future__ import annotations

import json
from typing import Any

from .manifest import dumps_json

AGREEMENT_SEED = 0
AGREEMENT_RESAMPLES = 1000
# Keys that describe the computation run rather than the data.
VOLATILE_KEYS = frozenset(
    {
        "created_at",
        "computed_at",
        "generated_at",
        "timestamp",
        "seconds",
        "elapsed",
        "elapsed_seconds",
        "duration_seconds",
        "cached",
        "cache_hit",
        "job_id",
        "report_id",
    }
)


def _scrub(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _scrub(v) for k, v in value.items() if k not in VOLATILE_KEYS}
    if isinstance(value, (list, tuple)):
        return [_scrub(v) for v in value]
    return value


def _plain(report: dict) -> dict:
    # Through JSON text and back: a computed and a stored report then compare equal.
    return json.loads(json.dumps(_scrub(report), sort_keys=True))


def agreement_document(project, sample_ids: list[str], *, judgements: dict | None = None) -> dict:
    """What ``agreement.json`` holds (keys sorted when written). ``judgements``: the release's recorded set
    (``meaning.selectors.judgement_set``): the free-text validity reads those judgements of meaning and judge's
    verdicts, and shows that judge run; everything as it is now when None."""
    try:
        from annotation.agreement.services import compute_release_reports
    except (ImportError, AttributeError) as exc:
        return {
            "available": False,
            "reason": (
                "Inter-annotator agreement is not available in this release: the platform that froze it "
                "has no agreement module yet (annotation.agreement.services.compute_release_reports could not be "
                f"imported: {type(exc).__name__}: {exc}). A later release will include it; until then, do not read "
                "the labels as validated by agreement figures."
            ),
        }
    sample_ids = sorted(sample_ids)
    labels, texts = compute_release_reports(
        project, clips=sample_ids, resamples=AGREEMENT_RESAMPLES, seed=AGREEMENT_SEED
    )
    if isinstance(texts, Exception):  # e.g. no embedding model here: the card says why
        semantic = {
            "available": False,
            "reason": f"the semantic agreement could not be computed ({type(texts).__name__}: {texts})",
        }
    else:
        # Each field's figure with its measure's validity, the judgements' counts, the judge model and prompt
        # version and the judge's alpha beside the embedding one (``meaning.selectors.with_validity``; C2).
        from annotation.meaning.selectors import with_validity

        semantic = {
            "available": True,
            "report": _plain(with_validity(texts, project, judgements=judgements)),
        }
    return {
        "available": True,
        "scope": {"clips": len(sample_ids), "resamples": AGREEMENT_RESAMPLES, "seed": AGREEMENT_SEED},
        # The stored report's "previous" (the dashboard's alphas before this report) depends on what was computed
        # when, not on the release's data: a release holds the figures of its data only.
        "report": _plain({k: v for k, v in labels.items() if k != "previous"}),
        "semantic": semantic,
    }


def agreement_file(project, sample_ids: list[str], *, judgements: dict | None = None) -> bytes:
    """``agreement.json``: the document in the release's JSON spelling, keys sorted."""
    return dumps_json(agreement_document(project, sample_ids, judgements=judgements), sort_keys=True)


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
