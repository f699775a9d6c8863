"""The draft's pull on the coders, measured by design: the anchoring effect and how coders confirm the draft.

**Anchoring effect.** A share of clips is coded from empty (the study design,
``annotation.study``): their coders never saw the draft. Per measure, the
report compares two agreements in anchored (from-draft) work and in
from-empty work:

- *human–human*: Krippendorff's alpha among the coders (the report's
  ``anchored/all`` and ``calibration/all`` figures);
- *human–draft*: alpha between each coder's value and the draft's value on
  the same row, every (coder, row) a unit of two values. From empty it says
  how far independent coders agree with the model; anchored, how far the
  coders stayed with it.

The anchoring effect is anchored minus from-empty, for each of the two, with
a 95% percentile interval from a bootstrap over relationship groups (whole
couples or families resampled with replacement, the same draws for both
conditions: the unit of independence is the group, as in the task
intervals, ``tasks.bootstrap``). A resample is a weighted sum of per-group
coincidence totals and observed disagreements, so every resample's alpha is
exact, not approximated. With no from-empty work, or fewer than
``tasks.bootstrap.MIN_GROUPS`` groups, the effect is not given: the report
says why.

**Confirming the draft.** Per coder, over their coded rows of anchored
assignments: the share confirmed unchanged (the document equals the draft),
the median seconds spent on a row (from the audit trail's saves,
``extract.Pace``) and the share of unchanged rows confirmed faster than the
project's quick-confirmation time, beside the same figures for the team.
"""

from __future__ import annotations

import numpy as np

from tasks.bootstrap import MIN_GROUPS, interval, resample_weights, unreliable

from .extract import ANCHORED, CALIBRATION, Extraction
from .fields import MEASURES, MEASURES_BY_KEY, Measure

CONDITIONS = (("anchored", ANCHORED), ("from_empty", CALIBRATION))
RESAMPLES = 1000

METHOD = (
    "Anchoring effect: per measure, agreement in anchored (from-draft) work minus agreement in from-empty work, "
    "for human-human alpha (among the coders) and human-draft alpha (each coder's value against the draft's on the "
    "same row, every coder-row a unit of two values); 95% percentile interval from a bootstrap over relationship "
    f"groups ({RESAMPLES} resamples, the same group draws for both conditions; each resample's alpha computed exactly "
    "from the resampled groups' coincidences); not given with no from-empty work or fewer than "
    f"{MIN_GROUPS} groups. Confirming the draft: per coder, over coded rows of anchored assignments, the share whose "
    "document equals the draft, the median seconds per row (the sum of the gaps before the coder's own saves of the "
    "row, each from their previous save in the same clip; gaps over 10 minutes are breaks and count nothing), and "
    "the share of unchanged rows confirmed in under the project's quick-confirmation time."
)


def _r(x, digits: int = 6):
    return None if x is None or (isinstance(x, float) and np.isnan(x)) else round(float(x), digits)


class _Groups:
    """Per relationship group: the coincidence totals (present values) and observed disagreement of one matrix."""

    def __init__(self, codes: np.ndarray, unit_group: np.ndarray, n_groups: int, delta: np.ndarray):
        valid = codes >= 0
        m = valid.sum(axis=0)
        keep = m >= 2
        self.units = int(keep.sum())
        p = len(delta)
        self.totals = np.zeros((n_groups, p))
        self.observed = np.zeros(n_groups)
        if not self.units:
            return
        codes, valid, m, group = codes[:, keep], valid[:, keep], m[keep], unit_group[keep]
        weight = 1.0 / (m - 1)
        # A pairable unit's totals are its values' counts; its observed disagreement sums delta over ordered pairs.
        for i in range(len(codes)):
            v = valid[i]
            np.add.at(self.totals, (group[v], codes[i][v]), 1.0)
            for j in range(i + 1, len(codes)):
                both = v & valid[j]
                if both.any():
                    d = delta[codes[i][both], codes[j][both]] * 2 * weight[both]
                    self.observed += np.bincount(group[both], weights=d, minlength=n_groups)


def _alphas(groups: _Groups, delta: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Alpha for each row of group ``weights`` (resamples x groups); NaN where undefined (no variation)."""
    totals = weights @ groups.totals
    n = totals.sum(axis=1)
    expected = np.einsum("bp,bp->b", totals @ delta, totals) - totals @ np.diagonal(delta)
    observed = weights @ groups.observed
    with np.errstate(divide="ignore", invalid="ignore"):
        alpha = 1.0 - (n - 1) * observed / expected
    alpha[~(expected > 0) | (n < 2)] = np.nan
    return alpha


def _human_draft(
    codes: np.ndarray, humans: list[int], llm: int, available: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Every (coder, row) with a value from both as a unit of two values: (2 x units codes, the units' row)."""
    pairs_h, pairs_u = [], []
    for c in humans:
        both = available[c] & available[llm] & (codes[c] >= 0) & (codes[llm] >= 0)
        units = np.flatnonzero(both)
        pairs_h.append(np.full(len(units), c))
        pairs_u.append(units)
    h = np.concatenate(pairs_h) if pairs_h else np.zeros(0, dtype=int)
    u = np.concatenate(pairs_u) if pairs_u else np.zeros(0, dtype=int)
    return np.vstack([codes[h, u], codes[llm, u]]), u


def anchoring_effect(ex: Extraction, available: dict[str, np.ndarray], rows_of, delta_of, *, seed: int = 0) -> dict:
    """The anchoring effect per measure (see the module's docstring).

    ``available``: per condition ("anchored", "from_empty"), the report's availability matrix of that slice
    over all scenarios; ``rows_of(measure)`` the units a measure applies to; ``delta_of(measure)`` the distances
    over the measure's whole domain.
    """
    group_of_unit = ex.clip_group[ex.unit_clip] if ex.clip_group is not None else np.zeros(ex.units, dtype=np.int64)
    n_groups = max(len(ex.group_names), 1)
    humans = ex.humans
    used = {
        name: np.unique(group_of_unit[available[name][humans].any(axis=0)]) if humans else np.zeros(0, dtype=int)
        for name, _ in CONDITIONS
    }
    both_groups = np.union1d(used["anchored"], used["from_empty"])
    coded_in = {name: int(available[name][humans].any(axis=0).sum()) if humans else 0 for name, _ in CONDITIONS}
    why = ""
    if not coded_in["from_empty"]:
        why = (
            "no from-empty work counts in this scope: the draft's pull cannot be measured without coders who never "
            "saw it"
        )
    elif not coded_in["anchored"]:
        why = "no anchored (from-draft) work counts in this scope: there is nothing to compare the from-empty work with"
    elif ex.llm is None:
        why = "no row in this scope has a draft"
    else:
        why = unreliable(len(both_groups))
    weights = None
    if not why:
        # Resampled over the groups with work in either condition; the other groups weigh nothing.
        draws = resample_weights(len(both_groups), RESAMPLES, seed)
        weights = np.zeros((RESAMPLES, n_groups))
        weights[:, both_groups] = draws
    ones = np.ones((1, n_groups))
    out = {
        "measurable": not why,
        "reason": why or None,
        "groups": int(len(both_groups)),
        "resamples": RESAMPLES if not why else 0,
        "measures": {},
    }
    if not coded_in["anchored"] and not coded_in["from_empty"]:
        return out  # no coded work: no figure at all, as in the rest of the report
    for measure in MEASURES:
        out["measures"][measure.key] = _measure_effect(
            ex, measure, available, rows_of(measure), delta_of(measure), group_of_unit, n_groups, ones, weights
        )
    return out


def _measure_effect(
    ex: Extraction, measure: Measure, available, rows, delta, group_of_unit, n_groups, ones, weights
) -> dict:
    codes = ex.values[measure.source].codes
    humans, llm = ex.humans, ex.llm
    matrices: dict[tuple[str, str], tuple[np.ndarray, np.ndarray]] = {}
    for name, _code in CONDITIONS:
        avail = available[name] & rows[None, :]
        cols = np.flatnonzero(avail[humans].any(axis=0)) if humans else np.zeros(0, dtype=int)
        hh = (
            np.where(avail[np.ix_(humans, cols)], codes[np.ix_(humans, cols)], -1)
            if humans
            else np.zeros((0, 0), dtype=int)
        )
        if measure.every_coder and hh.size:
            keep = ((hh >= 0) | ~avail[np.ix_(humans, cols)]).all(axis=0)
            hh, cols = hh[:, keep], cols[keep]
        matrices[(name, "human_human")] = hh, cols
        empty = (np.zeros((2, 0), dtype=int), np.zeros(0, dtype=int))
        matrices[(name, "human_draft")] = _human_draft(codes, humans, llm, avail) if llm is not None else empty
    # Distances among the values that occur only: a domain of a thousand target sets would make every resample
    # a million-cell product.
    present = np.unique(np.concatenate([m[m >= 0] for m, _ in matrices.values()] or [np.zeros(0, dtype=int)]))
    position = np.full(len(delta), -1, dtype=np.int64)
    position[present] = np.arange(len(present))
    small = delta[np.ix_(present, present)]
    entry: dict = {name: {} for name, _ in CONDITIONS}
    resampled: dict[str, dict[str, np.ndarray]] = {"human_human": {}, "human_draft": {}}
    for (name, kind), (matrix, units) in matrices.items():
        compact = (
            np.where(matrix >= 0, position[np.maximum(matrix, 0)], -1) if len(position) else np.full(matrix.shape, -1)
        )
        groups = _Groups(compact, group_of_unit[units], n_groups, small)
        point = _alphas(groups, small, ones)[0] if groups.units else np.nan
        entry[name][kind] = {"alpha": _r(point), "units": groups.units}
        if weights is not None and groups.units:
            resampled[kind][name] = _alphas(groups, small, weights)
    for kind in ("human_human", "human_draft"):
        a, e = entry["anchored"][kind]["alpha"], entry["from_empty"][kind]["alpha"]
        effect = {
            "difference": _r(a - e) if a is not None and e is not None else None,
            "ci95": None,
            "resamples_defined": 0,
        }
        if effect["difference"] is not None and len(resampled[kind]) == 2:
            diffs = resampled[kind]["anchored"] - resampled[kind]["from_empty"]
            diffs = diffs[~np.isnan(diffs)]
            effect["resamples_defined"] = int(len(diffs))
            if len(diffs):
                effect["ci95"] = [_r(x) for x in interval(diffs)]
        entry[kind] = effect
    return entry


def confirming(ex: Extraction, quick_seconds: int) -> dict:
    """Per coder and for the team: how often and how fast coders kept the draft as it was (anchored rows)."""
    pace = ex.pace
    out = {"quick_seconds": quick_seconds, "coders": {}, "team": None}
    if pace is None or not len(pace.coder):
        return out
    anchored = ex.coding[pace.coder, pace.unit] == ANCHORED
    for name, select in [
        *((ex.coders[c], pace.coder == c) for c in ex.humans),
        ("team", np.ones(len(pace.coder), dtype=bool)),
    ]:
        rows = select & anchored
        n = int(rows.sum())
        if not n:
            continue
        unchanged = rows & pace.unchanged
        timed = rows & ~np.isnan(pace.seconds)
        timed_unchanged = unchanged & ~np.isnan(pace.seconds)
        quick = timed_unchanged & (pace.seconds < quick_seconds)
        figures = {
            "rows": n,
            "unchanged_rows": int(unchanged.sum()),
            "unchanged_share": _r(unchanged.sum() / n),
            "timed_rows": int(timed.sum()),
            "median_seconds": _r(np.median(pace.seconds[timed]), 3) if timed.any() else None,
            "timed_unchanged_rows": int(timed_unchanged.sum()),
            "quick_rows": int(quick.sum()),
            "quick_share": _r(quick.sum() / timed_unchanged.sum()) if timed_unchanged.any() else None,
        }
        if name == "team":
            out["team"] = figures
        else:
            out["coders"][name] = figures
    return out


# The anchoring-effect measures a reader is shown first (every measure is in agreement.json).
HEADLINE_MEASURES = (
    "utterance_type",
    "relation_pattern",
    "relation_pattern_presence",
    "strategy_type",
    "target",
    "emotion_intensity",
)


def anchoring_facts(agreement: dict) -> dict | None:
    """The anchoring effect as the report gives it, for the headline measures first; None without a report."""
    report = (agreement or {}).get("report") or {}
    pull = report.get("draft_pull")
    if not pull:
        return None
    anchoring = pull["anchoring"]
    order = [k for k in HEADLINE_MEASURES if k in anchoring["measures"]] + [
        k for k in anchoring["measures"] if k not in HEADLINE_MEASURES
    ]
    measures = []
    for key in order:
        entry = anchoring["measures"][key]
        measures.append(
            {
                "key": key,
                "label": MEASURES_BY_KEY[key].label if key in MEASURES_BY_KEY else key,
                "headline": key in HEADLINE_MEASURES,
                "anchored": entry["anchored"],
                "from_empty": entry["from_empty"],
                "human_human": entry["human_human"],
                "human_draft": entry["human_draft"],
            }
        )
    return {
        "measurable": anchoring["measurable"],
        "reason": anchoring["reason"],
        "groups": anchoring["groups"],
        "resamples": anchoring["resamples"],
        "measures": measures,
        "confirming": pull.get("confirming"),
        "method": pull.get("method"),
    }
