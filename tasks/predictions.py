"""Predictions in the formats of the public evaluation code, checked one by one.

A prediction file is JSON Lines, one object per instance with its ``id`` and
the task's field (``rules.PREDICTION_FIELDS``), e.g.
``{"id": "itp:alan_and_evelyn/001:3", "should_speak": "yes"}``; a single JSON
object keyed by instance id (``{"itp:...:3": {"should_speak": "yes"}}``) is
read too. Nothing is dropped quietly: every line that cannot be used is
reported with its reason, and an instance without a usable prediction is
scored as wrong (see ``metrics``).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .rules import NO, PREDICTION_FIELDS, YES


class PredictionFileError(Exception):
    """The file as a whole cannot be read (not JSON Lines, not UTF-8...)."""


def _top3(value) -> tuple[list[str] | None, str]:
    if not isinstance(value, list) or not value:
        return None, "must be a non-empty list of labels"
    if not all(isinstance(v, str) and v.strip() for v in value):
        return None, "every entry must be a non-empty string"
    ranked: list[str] = []
    for v in value:
        if v not in ranked:
            ranked.append(v)
    return ranked[:3], ""


def _should_speak(value) -> tuple[str | None, str]:
    if isinstance(value, bool):
        return (YES if value else NO), ""
    if isinstance(value, str) and value.strip().lower() in (YES, NO):
        return value.strip().lower(), ""
    return None, 'must be "yes" or "no" (or true/false)'


def _intensity(value) -> tuple[float | None, str]:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None, "must be a number from 0 to 10"
    if not 0 <= value <= 10:
        return None, f"{value} is outside 0–10"
    return value, ""


def _viewpoints(value) -> tuple[list[dict] | None, str]:
    if not isinstance(value, list):
        return None, "must be a list of {source, target, viewpoint} objects"
    out = []
    for i, v in enumerate(value):
        if not isinstance(v, dict) or not isinstance(v.get("source"), str) or not isinstance(v.get("target"), str):
            return None, f"entry {i} needs a text source and a text target"
        out.append(
            {
                "source": v["source"],
                "target": v["target"],
                "viewpoint": v.get("viewpoint") if isinstance(v.get("viewpoint"), str) else "",
            }
        )
    return out, ""


_PARSERS = {
    "should_speak": _should_speak,
    "relation_top3": _top3,
    "target_top3": _top3,
    "strategy_top3": _top3,
    "predicted_intensity_score": _intensity,
    "predicted_viewpoints": _viewpoints,
}


def parse_value(task: str, record: Any) -> tuple[Any, str]:
    """The normalised prediction of one record, or (None, why it cannot be used)."""
    name = PREDICTION_FIELDS[task]
    if not isinstance(record, dict):
        return None, "a prediction must be a JSON object"
    if name not in record:
        return None, f"the field {name!r} is missing"
    return _PARSERS[name](record[name])


@dataclass
class PredictionSet:
    """The usable predictions by instance id, and an account of everything else."""

    task: str
    by_id: dict[str, Any] = field(default_factory=dict)
    malformed: dict[str, str] = field(default_factory=dict)  # instance id -> reason
    unreadable: list[str] = field(default_factory=list)  # lines without a usable id
    duplicates: list[str] = field(default_factory=list)  # ids seen more than once (the first one counts)

    def resolve(self, instance_ids: list[str]) -> tuple[list[Any], dict]:
        """Predictions aligned to ``instance_ids`` (None where unusable) and the counts."""
        wanted = set(instance_ids)
        aligned = [self.by_id.get(i) for i in instance_ids]
        missing = [i for i in instance_ids if i not in self.by_id and i not in self.malformed]
        malformed = {i: r for i, r in self.malformed.items() if i in wanted}
        unknown = sorted((set(self.by_id) | set(self.malformed)) - wanted)
        account = {
            "instances": len(instance_ids),
            "scored": sum(p is not None for p in aligned),
            "missing": len(missing),
            "malformed": len(malformed),
            "unknown_ids": len(unknown),
            "duplicate_ids": len(self.duplicates),
            "unreadable_lines": len(self.unreadable),
            "examples": {
                "missing": missing[:5],
                "malformed": [{"id": i, "reason": r} for i, r in list(malformed.items())[:5]],
                "unknown_ids": unknown[:5],
                "duplicate_ids": self.duplicates[:5],
                "unreadable_lines": self.unreadable[:5],
            },
        }
        return aligned, account


def _records(text: str) -> list[tuple[str, Any]]:
    """(where, record) pairs: JSON Lines, or one JSON object keyed by id."""
    stripped = text.strip()
    if not stripped:
        return []
    try:
        whole = json.loads(stripped)
    except (json.JSONDecodeError, RecursionError):  # nested past Python's recursion limit: read line by line below
        whole = None
    if isinstance(whole, dict) and "id" not in whole:
        # Keyed by instance id; a value that is not an object is kept so that it is reported as malformed.
        return [
            (f"key {k!r}", {**v, "id": k} if isinstance(v, dict) else {"id": k, "_value": v}) for k, v in whole.items()
        ]
    out = []
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            out.append((f"line {n}", json.loads(line)))
        except (json.JSONDecodeError, RecursionError) as exc:  # a line nested too deep is malformed, not a crash
            out.append((f"line {n}", exc))
    return out


def read_predictions(path: str | Path, task: str) -> PredictionSet:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PredictionFileError(f"cannot read {path}: {exc}") from None
    return parse_predictions(text, task)


def parse_predictions(text: str, task: str) -> PredictionSet:
    result = PredictionSet(task)
    for where, record in _records(text):
        if isinstance(record, Exception):
            result.unreadable.append(f"{where}: not valid JSON ({record.msg})")
            continue
        ident = record.get("id") if isinstance(record, dict) else None
        if not isinstance(ident, str) or not ident:
            result.unreadable.append(f"{where}: no text 'id'")
            continue
        if ident in result.by_id or ident in result.malformed:
            result.duplicates.append(ident)
            continue
        value, why = parse_value(task, record)
        if value is None:
            result.malformed[ident] = why
        else:
            result.by_id[ident] = value
    return result
