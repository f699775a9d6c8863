"""What needs attention in an agreement report: the short summary the dashboard opens with.

Read from the stored report only (never computed here): the fields below
Krippendorff's thresholds with their intervals, the label pairs coders confuse
most (every pair above PAIR_SHARE of a field's disagreement, and how many more
there are), the pair of coders and the coder furthest from the others, and
what changed since the report before. The full tables below the summary carry
the same figures (one report, one source); tests check the summary against them.
"""

from __future__ import annotations

from datetime import datetime
from statistics import mean

TENTATIVE, RELIABLE = 0.667, 0.800  # Krippendorff's customary thresholds
PAIR_SHARE = 0.10  # a confused pair is named in the summary from this share of its field's disagreement
CHANGE_SHOWN = 0.02  # a change of alpha since the last report is named from this size


def fields_below(report: dict, entry: dict) -> dict:
    low, tentative = [], []
    for m in report["measures"]:
        h = entry["measures"][m["key"]]["humans"]
        if not h.get("defined"):
            continue
        item = {"measure": m, "alpha": h["alpha"], "ci95": h.get("ci95")}
        if h["alpha"] < TENTATIVE:
            low.append(item)
        elif h["alpha"] < RELIABLE:
            tentative.append(item)
    undefined = [m for m in report["measures"] if not entry["measures"][m["key"]]["humans"].get("defined")]
    return {
        "low": sorted(low, key=lambda x: x["alpha"]),
        "tentative": sorted(tentative, key=lambda x: x["alpha"]),
        "undefined": undefined,
    }


def confused_pairs(confused: list[dict], entry: dict) -> dict:
    """``confused``: the dashboard's per-field pairs with their guidance links."""
    shown, more = [], 0
    for c in confused:
        for p in c["pairs"]:
            if p["share"] >= PAIR_SHARE:
                shown.append({**p, "measure": c["measure"]})
            else:
                more += 1
        more += (entry["measures"][c["measure"]["key"]].get("confused_pairs_left_out") or {}).get("pairs", 0)
    shown.sort(key=lambda p: (-p["share"], p["measure"]["key"]))
    return {"shown": shown, "more": more}


def coders_apart(report: dict, entry: dict) -> dict:
    """The human pair with the lowest mean alpha over the fields, and (3 coders or more) the coder whose mean
    alpha with the others is lowest, beside the others' mean among themselves."""
    llm = report.get("llm_coder")
    by_pair: dict[tuple, list[float]] = {}
    for m in report["measures"]:
        for p in entry["measures"][m["key"]]["pairs"]:
            if llm in p["pair"] or not p.get("defined"):
                continue
            by_pair.setdefault(tuple(p["pair"]), []).append(p["alpha"])
    means = {pair: mean(v) for pair, v in by_pair.items() if v}
    if not means:
        return {}
    out = {"pairs": len(means)}
    lowest = min(means, key=lambda pair: (means[pair], pair))
    out["pair"] = {"pair": list(lowest), "alpha": means[lowest], "fields": len(by_pair[lowest])}
    coders = sorted({c for pair in means for c in pair})
    if len(coders) >= 3:
        with_others = {c: mean(a for pair, a in means.items() if c in pair) for c in coders}
        coder = min(coders, key=lambda c: (with_others[c], c))
        among = [a for pair, a in means.items() if coder not in pair]
        out["coder"] = {"coder": coder, "alpha": with_others[coder], "others": mean(among) if among else None}
    return out


def changes(report: dict, entry: dict) -> dict | None:
    """The fields whose alpha moved since the report before (None when there was none)."""
    previous = report.get("previous")
    if not previous:
        return None
    before = previous["alphas"].get(entry["key"], {})
    moved = []
    for m in report["measures"]:
        h = entry["measures"][m["key"]]["humans"]
        now, then = (h["alpha"] if h.get("defined") else None), before.get(m["key"])
        if now is None or then is None:
            if (now is None) != (then is None):
                moved.append({"measure": m, "before": then, "now": now, "delta": None})
        elif abs(now - then) >= CHANGE_SHOWN:
            moved.append({"measure": m, "before": then, "now": now, "delta": now - then})
    moved.sort(key=lambda x: -abs(x["delta"] or 1))
    return {"since": datetime.fromisoformat(previous["created_at"]), "moved": moved}


def attention(report: dict, entry: dict, confused: list[dict]) -> dict:
    return {
        "fields": fields_below(report, entry),
        "confused": confused_pairs(confused, entry),
        "coders": coders_apart(report, entry),
        "changes": changes(report, entry),
        "thresholds": {"tentative": TENTATIVE, "reliable": RELIABLE, "pair_share": PAIR_SHARE},
    }
