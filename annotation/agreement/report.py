"""The agreement report of a project: every measure, for every slice and coder set.

Only coded work counts (``scope``): by default the revisions of submitted
assignments, optionally also the rows marked reviewed in open assignments.
Every slice says how many revisions it left out and why, and a scope with
no coded work says "no coded work yet" instead of giving figures.

Slices: all assignments, anchored only (``from_draft``) and calibration only
(``from_empty``), each over all clips in scope and per scenario. Coder sets
within a slice: the annotators together, the annotators plus the LLM draft as
one more coder, and every pair of coders (the LLM included). For every figure:
alpha, its bootstrap interval and threshold probabilities (``bootstrap``),
units, coders, pairable values, observed agreement and the majority value's
share. Per measure and slice also: a label-by-label confusion (coincidence)
matrix for nominal measures, and how often annotators changed the draft.

The report is a plain JSON-ready dict and deterministic: the same database
state and parameters give an identical dict (no timestamps; every figure's
random stream is seeded from the seed, the measure and the coder names).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, replace
from importlib.metadata import version
from itertools import combinations

import numpy as np

from ..models import Modality
from ..taxonomy import THERAPIST
from . import draft_pull
from .alpha import Alpha, Pairable, compute_alpha, distance_matrix, pairable
from .bootstrap import METHOD as BOOTSTRAP_METHOD
from .bootstrap import bootstrap_alpha
from .extract import (
    ANCHORED,
    CALIBRATION,
    IMPORTED,
    LLM,
    LLM_CODER,
    NOT_CODED,
    Extraction,
    candidate_clips,
    extract,
    report_scope,
)
from .fields import CLIENT_ROWS, MEASURES, SOURCES, THERAPIST_ROWS, Measure, value_label
from .scope import DEFAULT_WORK_SCOPE, LEFT_OUT, WORK_SCOPES, check_work_scope, left_out_summary, reasons

# 2: only coded work counts (work scope), left-out revisions per slice, "coded_work" and "empty_reason".
# 3: the label pairs coders confuse most per nominal measure ("confused_pairs"), and the LLM-vs-human
#    figures per draft modality ("llm_by_modality").
# 4: relation-pattern presence ("relation_pattern_presence"), and the draft's pull ("draft_pull": the anchoring
#    effect with a relationship-group interval, and how coders confirmed the draft).
REPORT_VERSION = 5  # 5: confused pairs past the listed ones are counted (confused_pairs_left_out)
NO_CODED_WORK = "no coded work yet"
MIN_RESAMPLES, MAX_RESAMPLES = 1000, 100_000
CONFIDENCE = 0.95
THRESHOLDS = (0.800, 0.667)
# From this majority share on, the report warns that alpha reacts strongly to the rare values.
RARE_LABEL_SHARE = 0.80
CONFUSION_LABELS = 12  # larger value sets are cut to the most frequent, the rest pooled
CONFUSED_PAIRS = 12  # the pairs of values listed per nominal measure, most confused first (the rest are counted)
# Draft modalities in the order the report lists them ("" : not recorded).
MODALITY_ORDER = ("video", "audio", "transcript", "")
MODES = ("all", "anchored", "calibration")
# Imported finished work belongs to neither anchored nor calibration: its start is not recorded.
MODE_CODES = {"anchored": (ANCHORED,), "calibration": (CALIBRATION,), "all": (ANCHORED, CALIBRATION, IMPORTED)}

Progress = Callable[[int, int], None]
MODALITY_WORDS = {**dict(Modality.choices), "": "not recorded"}


def _r(x, digits: int = 6):
    return None if x is None else round(float(x), digits)


def _threshold_key(t: float) -> str:
    return f"p_alpha_below_{t:.3f}".replace(".", "_")


def check_resamples(resamples: int) -> int:
    if not isinstance(resamples, int) or isinstance(resamples, bool) or not MIN_RESAMPLES <= resamples <= MAX_RESAMPLES:
        raise ValueError(
            f"resamples must be a whole number from {MIN_RESAMPLES:,} to {MAX_RESAMPLES:,}, got {resamples!r}"
        )
    return resamples


def compute_project_report(
    project,
    *,
    scenario=None,
    clips=None,
    resamples: int = 1000,
    seed: int = 0,
    work_scope: str = DEFAULT_WORK_SCOPE,
    progress: Progress | None = None,
) -> dict:
    """The full agreement report of ``project`` (optionally one scenario and/or a list of clips).

    ``clips`` may be Clip objects, ids, sample ids or a queryset. ``work_scope``
    says which work counts (``scope``; by default submitted work, what a release
    reports). JSON-serialisable and deterministic: the same revisions, drafts,
    assignments and parameters give an identical dict. Raises
    ``extract.ScopeError`` / ``ValueError`` for a bad scope or resample count.
    ``progress(done, total)`` is called as the slices are computed.
    """
    check_resamples(resamples)
    check_work_scope(work_scope)
    extraction = extract(candidate_clips(project, scenario=scenario, clips=clips), work_scope)
    scope = report_scope(scenario, clips, work_scope)
    return report_from_extraction(
        extraction,
        project=project.slug,
        scope=scope,
        resamples=resamples,
        seed=seed,
        progress=progress,
        quick_seconds=project.quick_confirm_seconds,
    )


# --- slices and figures -----------------------------------------------------------------


@dataclass(frozen=True)
class Slice:
    mode: str
    scenario: str

    @property
    def key(self) -> str:
        return f"{self.mode}/{self.scenario}"


class _Computer:
    """Computes figures for one extraction, reusing results for identical data."""

    def __init__(self, ex: Extraction, resamples: int, seed: int):
        self.ex, self.resamples, self.seed = ex, resamples, seed
        therapist = np.asarray([s == THERAPIST for s in ex.unit_speaker], dtype=bool)
        self.unit_rows = {CLIENT_ROWS: ~therapist, THERAPIST_ROWS: therapist}
        self.memo: dict[bytes, tuple[dict, Alpha]] = {}
        self.distances: dict[tuple[str, str], np.ndarray] = {}

    def rows_of(self, measure: Measure) -> np.ndarray:
        return self.unit_rows.get(measure.unit, np.ones(self.ex.units, dtype=bool))

    def matrix(self, measure: Measure, available: np.ndarray, coders: list[int]) -> np.ndarray:
        """The measure's codes for ``coders`` on the slice's units, -1 where not available."""
        cols = np.flatnonzero(self.rows_of(measure) & available[coders].any(axis=0))
        codes = self.ex.values[measure.source].codes[np.ix_(coders, cols)]
        avail = available[np.ix_(coders, cols)]
        codes = np.where(avail, codes, -1)
        if measure.every_coder:
            # Only units on which every coder of the row has a value.
            codes = codes[:, ((codes >= 0) | ~avail).all(axis=0)]
        return codes

    def domain_delta(self, measure: Measure) -> np.ndarray:
        """Distances between every two values of the measure's whole domain (computed once per source and level)."""
        key = (measure.source, measure.level)
        if key not in self.distances:
            self.distances[key] = distance_matrix(measure.level, self.ex.values[measure.source].domain)
        return self.distances[key]

    def delta(self, measure: Measure, present: np.ndarray) -> np.ndarray:
        return self.domain_delta(measure)[np.ix_(present, present)]

    def figure(
        self, measure: Measure, available: np.ndarray, coders: list[int], *, coincidences: bool = False
    ) -> tuple[dict, Alpha]:
        """The figure of ``coders`` on the slice, and its alpha; the alpha keeps its coincidences (``data``) only
        when asked (``coincidences``, for the confusion tables): the figures of a 10x report would otherwise hold
        a million-cell matrix each, over a gigabyte in all."""
        names = [self.ex.coders[c] for c in coders]
        codes = self.matrix(measure, available, coders)
        # The same codes give the same figure: slices and modalities often select the same units.
        key = hashlib.blake2b(
            repr((measure.key, names, codes.shape)).encode() + codes.tobytes(), digest_size=16
        ).digest()
        n_values = len(self.ex.values[measure.source].domain)
        if key not in self.memo:
            fig, result = self._compute(measure, names, pairable(codes, n_values))
            self.memo[key] = fig, replace(result, data=None, delta=None)
            if coincidences:
                return fig, replace(result, delta=None)
        fig, result = self.memo[key]
        if coincidences:
            result = replace(result, data=pairable(codes, n_values))
        return fig, result

    def _compute(self, measure: Measure, names: list[str], data: Pairable) -> tuple[dict, Alpha]:
        domain = self.ex.values[measure.source].domain
        labels = [value_label(domain[i]) for i in data.present]
        result = compute_alpha(data, self.delta(measure, data.present), labels[0] if labels else "")
        fig = {
            "alpha": _r(result.alpha),
            "defined": result.alpha is not None,
            "undefined_reason": result.reason,
            "ci95": None,
            **{_threshold_key(t): None for t in THRESHOLDS},
            "units": data.units,
            "coders": data.coders,
            "pairable_values": data.values,
            "value_pairs": data.pairs,
            "observed_agreement": _r(result.observed_agreement),
            "majority_value": None,
            "majority_share": None,
            "rare_values_note": None,
        }
        if data.units:
            totals = data.o.sum(axis=0)
            top = int(np.argmax(totals))
            fig["majority_value"] = labels[top]
            fig["majority_share"] = _r(totals[top] / totals.sum())
        if result.alpha is not None:
            digest = hashlib.sha256(f"{measure.key}|{'|'.join(names)}".encode()).digest()
            rng = np.random.default_rng([self.seed, int.from_bytes(digest[:8], "big")])
            dist = bootstrap_alpha(
                data.o,
                result.delta,
                pairs=data.pairs,
                resamples=self.resamples,
                rng=rng,
                expected_d=result.expected_disagreement,
                cells=data.nonzero(),
            )
            fig["ci95"] = [_r(x) for x in dist.interval(CONFIDENCE)]
            for t in THRESHOLDS:
                fig[_threshold_key(t)] = _r(dist.p_below(t))
            if fig["majority_share"] >= RARE_LABEL_SHARE:
                fig["rare_values_note"] = (
                    f"{fig['majority_share']:.0%} of the values are {fig['majority_value']!r}: with values this "
                    f"unevenly spread, a few disagreements on the rarer values move alpha a lot, so read it next "
                    f"to the observed agreement ({fig['observed_agreement']:.0%})"
                )
        return fig, result


def _confusion(result: Alpha, domain: list) -> dict | None:
    """Label-by-label coincidences (how often coders paired value c with value k within a unit)."""
    if not result.data.units:
        return None
    labels = [value_label(domain[i]) for i in result.data.present]
    o = result.data.o
    if len(labels) > CONFUSION_LABELS:
        order = np.argsort(-o.sum(axis=0), kind="stable")
        keep, rest = np.sort(order[: CONFUSION_LABELS - 1]), order[CONFUSION_LABELS - 1 :]
        merge = np.zeros((len(labels), CONFUSION_LABELS))
        merge[keep, np.arange(len(keep))] = 1
        merge[rest, -1] = 1
        o = merge.T @ o @ merge
        labels = [labels[i] for i in keep] + [f"(other {len(rest)} values)"]
    return {"labels": labels, "matrix": [[_r(x, 3) for x in row] for row in o]}


def _confused_pairs(result: Alpha, codes: np.ndarray, domain: list) -> tuple[list[dict], dict]:
    """The pairs of values coders gave to the same units most often, from the full coincidence matrix.

    ``coincidences`` is o[c,k] + o[k,c]: the pairable values that took part in that confusion
    (a unit whose m coders split contributes 1/(m-1) per ordered pair of its coders);
    ``share`` is its part of all off-diagonal coincidences (all the disagreement of the measure);
    ``rows`` counts the units on which at least one coder gave each of the two values.
    Past CONFUSED_PAIRS, the pairs left out are counted (``{"pairs": n, "share": s}``), never dropped unsaid.
    """
    none = {"pairs": 0, "share": 0.0}
    data = result.data
    if not data.units:
        return [], none
    off = data.o.copy()
    np.fill_diagonal(off, 0.0)
    total = float(off.sum())
    if total <= 0:
        return [], none
    both = off + off.T
    upper_i, upper_j = np.nonzero(np.triu(both, k=1) > 0)  # row by row, as the upper triangle is walked
    found = [(float(both[i, j]), int(i), int(j)) for i, j in zip(upper_i, upper_j)]
    labels = [value_label(domain[k]) for k in data.present]
    found.sort(key=lambda x: (-round(x[0], 9), labels[x[1]], labels[x[2]]))
    pairable_units = (codes >= 0).sum(axis=0) >= 2
    out = []
    for weight, i, j in found[:CONFUSED_PAIRS]:
        a, b = int(data.present[i]), int(data.present[j])
        rows = int(((codes == a).any(axis=0) & (codes == b).any(axis=0) & pairable_units).sum())
        out.append(
            {"values": [labels[i], labels[j]], "coincidences": _r(weight, 3), "share": _r(weight / total), "rows": rows}
        )
    rest = found[CONFUSED_PAIRS:]
    return out, {"pairs": len(rest), "share": _r(sum(w for w, _, _ in rest) / total)}


def _llm_by_modality(
    ex: Extraction, computer: _Computer, available: np.ndarray, everyone: list[int]
) -> list[dict] | None:
    """The LLM-vs-human figures of a slice again, on the rows of each draft modality alone.

    Per modality (what the draft was made from: video, audio, transcript, "" not recorded):
    the rows, and per measure the alpha with the LLM as one more coder, the LLM's alpha with
    each annotator, and how often annotators changed the draft. None when the slice has no LLM coder.
    """
    llm = ex.llm
    if llm is None or llm not in everyone or ex.unit_modality is None:
        return None
    drafted = available[llm]
    present = set(ex.unit_modality[drafted].tolist())
    out = []
    for modality in [m for m in MODALITY_ORDER if m in present]:
        keep = drafted & (ex.unit_modality == modality)
        avail = available & keep[None, :]
        humans, with_llm, pairs = _coder_sets(ex, avail)
        measures = {}
        for measure in MEASURES:
            measures[measure.key] = {
                "with_llm": computer.figure(measure, avail, with_llm)[0] if humans else None,
                "llm_pairs": [
                    {"pair": [ex.coders[a], ex.coders[b]], **computer.figure(measure, avail, [a, b])[0]}
                    for a, b in pairs
                    if llm in (a, b)
                ],
                "changed_from_draft": _changed_from_draft(ex, measure, avail, computer.rows_of(measure)),
            }
        out.append(
            {"modality": modality, "label": MODALITY_WORDS[modality], "rows": int(keep.sum()), "measures": measures}
        )
    return out


def _changed_from_draft(ex: Extraction, measure: Measure, available: np.ndarray, rows: np.ndarray) -> dict | None:
    """How often annotators' values differ from the draft's on the same unit."""
    llm = ex.llm
    if llm is None:
        return None
    codes = ex.values[measure.source].codes
    by_annotator, changed_total, compared_total = {}, 0, 0
    for c in ex.humans:
        both = available[c] & available[llm] & rows
        if measure.every_coder:
            both &= (codes[c] >= 0) & (codes[llm] >= 0)
        compared = int(both.sum())
        if not compared:
            continue
        changed = int((codes[c][both] != codes[llm][both]).sum())
        by_annotator[ex.coders[c]] = _r(changed / compared)
        changed_total += changed
        compared_total += compared
    if not compared_total:
        return None
    return {"share": _r(changed_total / compared_total), "compared": compared_total, "by_annotator": by_annotator}


def _edit_rates(ex: Extraction, available: np.ndarray, computer: _Computer) -> dict:
    """Per annotator: share of their rows where any measured value differs from the draft, and per measure."""
    llm = ex.llm
    if llm is None:
        return {}
    out = {}
    for c in ex.humans:
        both = available[c] & available[llm]
        n = int(both.sum())
        if not n:
            continue
        any_change = np.zeros(ex.units, dtype=bool)
        for source, measure in SOURCES.items():
            codes = ex.values[source].codes
            diff = both & computer.rows_of(measure) & (codes[c] != codes[llm])
            if measure.every_coder:
                diff &= (codes[c] >= 0) & (codes[llm] >= 0)
            any_change |= diff
        out[ex.coders[c]] = {"rows": n, "any_field": _r(any_change.sum() / n)}
    return out


def _availability(ex: Extraction, sl: Slice) -> np.ndarray:
    """available[coder, unit]: the coder's value on that unit belongs to the slice."""
    in_scenario = np.ones(ex.units, dtype=bool) if sl.scenario == "all" else ex.unit_scenario == sl.scenario
    available = np.isin(ex.coding, MODE_CODES[sl.mode])
    if ex.llm is not None:
        available[ex.llm] = ex.coding[ex.llm] == LLM
    available &= in_scenario[None, :]
    # The draft only counts on units some annotator of the slice coded.
    if ex.llm is not None:
        humans_there = available[ex.humans].any(axis=0) if ex.humans else np.zeros(ex.units, dtype=bool)
        available[ex.llm] &= humans_there
    return available


def _coder_sets(ex: Extraction, available: np.ndarray) -> tuple[list[int], list[int], list[tuple[int, int]]]:
    present = [c for c in ex.humans if available[c].any()]
    everyone = present + ([ex.llm] if ex.llm is not None and available[ex.llm].any() else [])
    return present, everyone, list(combinations(everyone, 2))


def prepared_matrices(ex: Extraction) -> list[tuple[Measure, np.ndarray]]:
    """Every distinct coder-by-unit matrix the report computes alpha on, with its measure.

    For benchmarks and tests that compare our alpha with the krippendorff package on the same input.
    """
    computer = _Computer(ex, MIN_RESAMPLES, 0)
    seen, out = set(), []
    for mode in MODES:
        for scenario in ["all", *sorted(set(ex.unit_scenario.tolist()))]:
            available = _availability(ex, Slice(mode, scenario))
            humans, everyone, pairs = _coder_sets(ex, available)
            if not humans:
                continue
            for measure in MEASURES:
                for coders in [humans, everyone, *map(list, pairs)]:
                    codes = computer.matrix(measure, available, coders)
                    key = (measure.key, tuple(coders), codes.shape, codes.tobytes())
                    if key not in seen:
                        seen.add(key)
                        out.append((measure, codes))
    return out


def report_from_extraction(
    ex: Extraction,
    *,
    project: str,
    scope: dict,
    resamples: int = 1000,
    seed: int = 0,
    progress: Progress | None = None,
    quick_seconds: int = 3,
) -> dict:
    """The report dict from extracted matrices (no database access); ``quick_seconds``: the project's
    quick-confirmation time (``draft_pull.confirming``)."""
    check_resamples(resamples)
    computer = _Computer(ex, resamples, seed)
    scenarios = sorted(set(ex.unit_scenario.tolist()))
    slices = [Slice(mode, scenario) for mode in MODES for scenario in ["all", *scenarios]]
    plans = []
    for sl in slices:
        available = _availability(ex, sl)
        humans, everyone, pairs = _coder_sets(ex, available)
        plans.append((sl, available, humans, everyone, pairs))
    figures = sum(len(MEASURES) * (2 + len(p[4])) for p in plans if p[2])
    # Reading the data took about as long as computing the figures (bench_agreement): it counts as half.
    done = max(figures, 1)
    total = done + figures
    if progress:
        progress(done, total)

    out_slices = []
    # Slices that select the same values (e.g. 'all' and 'anchored' when no clip
    # has a calibration assignment) have the same figures: computed once.
    same_values: dict[bytes, tuple[dict, dict]] = {}
    same_by_modality: dict[bytes, list | None] = {}
    for sl, available, humans, everyone, pairs in plans:
        entry = slice_entry(ex, sl, available, humans, everyone)
        if entry["empty"]:
            out_slices.append(entry)
            continue
        selection = available.tobytes()
        if selection in same_values:
            entry["measures"], entry["edit_rates"] = same_values[selection]
            entry["llm_by_modality"] = same_by_modality[selection]
            out_slices.append(entry)
            done += len(MEASURES) * (2 + len(pairs))
            if progress:
                progress(done, total)
            continue
        measures = {}
        for measure in MEASURES:
            fig_humans, res_humans = computer.figure(measure, available, humans, coincidences=measure.nominal)
            item = {"humans": fig_humans, "with_llm": None, "pairs": []}
            if len(everyone) > len(humans):
                item["with_llm"] = computer.figure(measure, available, everyone)[0]
            for a, b in pairs:
                fig = computer.figure(measure, available, [a, b])[0]
                item["pairs"].append({"pair": [ex.coders[a], ex.coders[b]], **fig})
            if measure.nominal:
                item["confusion"] = _confusion(res_humans, ex.values[measure.source].domain)
                item["confused_pairs"], item["confused_pairs_left_out"] = _confused_pairs(
                    res_humans, computer.matrix(measure, available, humans), ex.values[measure.source].domain
                )
            item["changed_from_draft"] = _changed_from_draft(ex, measure, available, computer.rows_of(measure))
            measures[measure.key] = item
            done += 2 + len(pairs)
            if progress:
                progress(done, total)
        entry["measures"] = measures
        entry["edit_rates"] = _edit_rates(ex, available, computer)
        entry["llm_by_modality"] = same_by_modality[selection] = _llm_by_modality(ex, computer, available, everyone)
        same_values[selection] = (entry["measures"], entry["edit_rates"])
        out_slices.append(entry)

    by_condition = {
        "anchored": _availability(ex, Slice("anchored", "all")),
        "from_empty": _availability(ex, Slice("calibration", "all")),
    }
    pull = {
        "method": draft_pull.METHOD,
        "anchoring": draft_pull.anchoring_effect(ex, by_condition, computer.rows_of, computer.domain_delta, seed=seed),
        "confirming": draft_pull.confirming(ex, quick_seconds),
    }
    return {
        "report_version": REPORT_VERSION,
        **report_head(ex, project, scope, out_slices[0]),
        "draft_pull": pull,
        "parameters": {"resamples": resamples, "seed": seed, "confidence": CONFIDENCE, "thresholds": list(THRESHOLDS)},
        "method": METHOD_NOTES | {"krippendorff_package": version("krippendorff")},
        "measures": [
            {"key": m.key, "label": m.label, "unit": m.unit, "level": m.level, "missing": m.missing} for m in MEASURES
        ],
        "coders": list(ex.coders),
        "llm_coder": LLM_CODER if ex.llm is not None else None,
        "counts": ex.stats,
        "summary": _summary(out_slices[0]),
        "slices": out_slices,
    }


def report_head(ex: Extraction, project: str, scope: dict, overall: dict) -> dict:
    """What a report is about: the project, the scope and its work rule, and whether any coded work counts."""
    label, rule = WORK_SCOPES[ex.work_scope]
    return {
        "project": project,
        "scope": scope,
        "work_scope": {"key": ex.work_scope, "label": label, "rule": rule},
        # False when no annotator's work counts in this scope: then there are no figures, only empty_reason.
        "coded_work": not overall["empty"],
        "empty_reason": overall["reason"] if overall["empty"] else None,
        "left_out_reasons": {reason: LEFT_OUT[reason][1] for reason in reasons(ex.work_scope)},
    }


def slice_entry(ex: Extraction, sl: Slice, available: np.ndarray, humans: list[int], everyone: list[int]) -> dict:
    """A slice's head: what it covers (clips, rows, annotators, revisions, what was left out), or why it is empty."""
    entry = {"key": sl.key, "mode": sl.mode, "scenario": sl.scenario}
    left_out = _left_out(ex, sl)
    if not humans:
        entry.update(empty=True, reason=_no_coded_work(ex, sl, left_out), revisions=0, left_out=left_out)
        return entry
    units = available[humans].any(axis=0)
    entry.update(
        empty=False,
        reason=None,
        clips=len(np.unique(ex.unit_clip[units])),
        rows=int(units.sum()),
        annotators=[ex.coders[c] for c in humans],
        with_llm=ex.llm is not None and ex.llm in everyone,
        revisions=int(available[humans].sum()),
        left_out=left_out,
    )
    return entry


def _left_out(ex: Extraction, sl: Slice) -> dict[str, int]:
    """Revisions of the slice's assignments and clips left out, by reason (``scope.LEFT_OUT``).

    A revision whose coder is no longer assigned has no assignment mode: it is
    counted in the slices of all assignments only.
    """
    modes = MODE_CODES[sl.mode] + ((NOT_CODED,) if sl.mode == "all" else ())
    counts = dict.fromkeys(reasons(ex.work_scope), 0)
    for (mode, scenario, reason), n in ex.left_out.items():
        if mode in modes and sl.scenario in ("all", scenario):
            counts[reason] = counts.get(reason, 0) + n
    return counts


def _no_coded_work(ex: Extraction, sl: Slice, left_out: dict[str, int]) -> str:
    what = {
        "all": "",
        "anchored": " in anchored (from-draft) assignments",
        "calibration": " in calibration (from-empty) assignments",
    }[sl.mode]
    where = "" if sl.scenario == "all" else f" of {sl.scenario} clips"
    text = f"{NO_CODED_WORK}: no {WORK_SCOPES[ex.work_scope][0]}{what}{where} in this scope"
    left = left_out_summary(left_out)
    return f"{text}; {left}" if left else text


def _summary(overall: dict) -> list[dict]:
    """One line per measure for all assignments and clips: the annotators' figure, then the LLM's."""
    if overall.get("empty"):
        return []
    out = []
    for measure in MEASURES:
        item = overall["measures"][measure.key]
        fig = item["humans"]
        changed = item["changed_from_draft"]
        out.append(
            {
                "field": measure.key,
                "label": measure.label,
                "level": measure.level,
                **fig,
                "with_llm_alpha": item["with_llm"]["alpha"] if item["with_llm"] else None,
                "changed_from_draft": changed["share"] if changed else None,
            }
        )
    return out


METHOD_NOTES = {
    "alpha": (
        "Krippendorff's alpha = 1 - Do/De from the coincidence matrix of each figure (nominal, interval, or MASI "
        "distance for target sets); the test suite requires it to equal the krippendorff package's alpha on the "
        "same matrices (the package version is named below)."
    ),
    "interval": BOOTSTRAP_METHOD,
    "coders": (
        "Each annotator assigned to a clip is one coder, read from their own revision of each row, and only where "
        "that revision is coded work in the report's work scope (work_scope: by default revisions of submitted "
        "assignments; a revision nobody opened never counts). Revisions of open assignments, of annotators no "
        "longer assigned to the clip and of discarded clips are left out and counted per slice (left_out). The LLM "
        "draft is one more coder in the 'with_llm' figures and in pairs that name it, only on rows an annotator coded."
    ),
    "slices": (
        "'anchored' uses only revisions of assignments that started from the LLM draft (from_draft), "
        "'calibration' only those that started empty (from_empty); 'all' uses both. Each is reported over all "
        "clips in scope and per scenario."
    ),
    "observed_agreement": (
        "Share of pairs of values within a unit that match exactly: trace(o) / n.. of the coincidence matrix."
    ),
    "majority_share": (
        "Share of all pairable values taken by the most frequent value. When it is high, alpha can be low even "
        "with high observed agreement: the few values that differ carry all the information."
    ),
    "masi": "MASI distance (Passonneau 2006): 1 - Jaccard(A, B) * m, m = 1 equal, 2/3 subset, 1/3 overlap, 0 disjoint.",
    "undefined": (
        "A figure with no pairable unit, or with one value everywhere (alpha = 0/0), is reported as undefined "
        "with the reason."
    ),
    "changed_from_draft": (
        "Share of annotators' values that differ from the LLM draft's value on the same unit, over the rows each "
        "annotator coded in the work scope (null <-> value counts as a change)."
    ),
    "confused_pairs": (
        "Per nominal measure and slice, the pairs of values the annotators gave to the same rows most often, from "
        "the full coincidence matrix: coincidences = o[c,k] + o[k,c] (a row on which m coders split adds 1/(m-1) "
        "per ordered pair of coders), share = its part of all off-diagonal coincidences, rows = rows on which "
        "each of the two values was given by some annotator. The twelve most confused pairs are listed; the "
        "others are counted with their share (confused_pairs_left_out)."
    ),
    "llm_by_modality": (
        "The LLM-vs-human figures (alpha with the LLM as one more coder, the LLM with each annotator, changed from "
        "draft) again on the rows of each draft modality alone: what the model could perceive when it drafted "
        "the row (video with audio, audio only, transcript only, or not recorded for imported and synthetic drafts)."
    ),
}
