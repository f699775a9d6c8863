"""How much of a release's gold is human: the facts the release page and the dataset card both state.

Read from the release's own files (``stats.json``: the gold's sources and the
drafting model's scores; ``agreement.json``: the anchoring effect), so the
page and the card say the same thing, in the same numbers, for the same
release.
"""

from __future__ import annotations

from ..adjudication.fields import FIELD_TITLES
from ..adjudication.gold_sources import DRAFT_COUNTS, SOURCES, WORDS
from ..agreement.draft_pull import anchoring_facts
from .stats import ALL

# A drafting-model score this far above the strongest trivial rule (on the headline metric's range) is "far above".
FAR_ABOVE = 0.2


def gold_sources_facts(stats: dict) -> dict | None:
    """Overall and per field: each source's count and share, in the partition's order; None when not recorded."""
    recorded = (stats.get("provenance") or {}).get("gold_sources")
    if not recorded:
        return None

    def rows(entry: dict) -> list[dict]:
        return [
            {"key": key, "words": WORDS[key], "count": entry["counts"][key], "share": entry["shares"][key]}
            for key in (*SOURCES, *DRAFT_COUNTS)
        ]

    overall = recorded["overall"]
    return {
        "values": overall["values"],
        "values_with_draft": overall.get("values_with_draft"),
        "work_scope": recorded["work_scope"],
        "rule": recorded["rule"],
        "overall": rows(overall),
        "by_key": {r["key"]: r for r in rows(overall)},
        "fields": [
            {"field": name, "title": FIELD_TITLES[name], "values": entry["values"], "rows": rows(entry)}
            for name, entry in recorded["fields"].items()
        ],
    }


def _range_share(metric: str, value: float) -> float:
    return (value - 1) / 4 if metric == "intensity_match" else value


def drafting_model_facts(stats: dict) -> dict | None:
    """Per task, the drafting model's headline score on the test split (all scenarios) beside the strongest
    trivial rule's, and whether it is far above it; None when the release has no drafts."""
    drafting = stats.get("drafting_model")
    if not drafting:
        return None
    tasks = []
    for task, entry in drafting["tasks"].items():
        if not entry["applicable"]:
            tasks.append({"task": task, "applicable": False, "reason": entry["reason"]})
            continue
        metric = entry["headline_metric"]
        cell = entry["splits"]["test"][ALL]
        rule_cell = stats["baselines"][task]["splits"]["test"][ALL]
        if not cell["instances"]:
            tasks.append({"task": task, "applicable": True, "metric": metric, "instances": 0})
            continue
        score = cell["scores"][metric]
        best = rule_cell["scores"][rule_cell["best_rule"]][metric]
        tasks.append(
            {
                "task": task,
                "applicable": True,
                "metric": metric,
                "instances": cell["instances"],
                "answered": cell["answered"],
                "score": score,
                "interval": cell["interval"],
                "best_rule": rule_cell["best_rule"],
                "best_rule_score": best,
                "against_best_rule": cell["against_best_rule"],
                "far_above": _range_share(metric, score) - _range_share(metric, best) >= FAR_ABOVE,
            }
        )
    return {
        "system": drafting["system"],
        "method": drafting["method"],
        "tasks": tasks,
        "any_far_above": any(t.get("far_above") for t in tasks),
    }


def release_human_work(stats: dict, agreement: dict) -> dict:
    """Everything the release page and the card say about how much of the gold is human."""
    return {
        "gold": gold_sources_facts(stats),
        "anchoring": anchoring_facts(agreement),
        "drafting": drafting_model_facts(stats),
    }
