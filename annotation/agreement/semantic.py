"""The free-text agreement report: every text field's embedding alpha, per slice, coder set and pair of coders.

What a figure is and how it is computed (the distance, alpha, similarity, the
permutation baseline, the bootstrap) is ``embedding_alpha``. This module decides
what is compared and what the report says: the units of a field (``textfields``)
within each slice of the label report (``report``: the same modes, scenarios,
coder sets and head), the texts to embed, and the JSON-ready, deterministic
report a release ships and the agreement page shows.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

import numpy as np

from .bootstrap import METHOD as BOOTSTRAP_METHOD
from .embedding_alpha import (
    BOOTSTRAP_RESOLUTION,
    FieldVectors,
    PairDistances,
    bootstrap,
    paired_similarity,
    semantic_alpha,
    unit_table,
    value_sums,
)
from .extract import Extraction, candidate_clips, report_scope
from .fields import THERAPIST_ROWS
from .report import (
    CONFIDENCE,
    MODES,
    THRESHOLDS,
    Slice,
    _availability,
    _coder_sets,
    _r,
    _threshold_key,
    check_resamples,
    report_head,
    slice_entry,
)
from .scope import DEFAULT_WORK_SCOPE, check_work_scope
from .textfields import TEXT_FIELDS, TextField, TextMatrix, extract_texts, extract_with_texts

# 1: alpha with delta = 1 - cos per text field, paired-coder and permutation-baseline similarity.
SEMANTIC_VERSION = 1

Progress = Callable[[int, int], None]


class ReportFigures:
    """The figures of one report, computed on demand and each only once.

    Slices often hold the same coders on the same units (a scenario with one mode of work, say): a figure is
    keyed by its field, coders and codes, and computed the first time it is asked for. A field's vectors and its
    distance cache are made when its first figure needs them, so a report of no coded work embeds nothing.
    """

    def __init__(self, ex: Extraction, texts: dict[str, TextMatrix], vectors: dict, resamples: int, seed: int):
        self.ex, self.texts, self.resamples, self.seed = ex, texts, resamples, seed
        self.table = vectors if getattr(vectors, "unit", False) else unit_table(vectors)
        self._f: dict[str, FieldVectors] = {}
        self._dist: dict[str, PairDistances] = {}
        # Scenarios as small integers numbered in the names' sorted order: the baseline groups units by scenario
        # (``value_sums``), and sorting integers is what sorting the names was, without comparing strings.
        scenario_code = np.zeros(0, dtype=np.int64)
        if ex.units:
            scenario_code = np.unique(ex.unit_scenario, return_inverse=True)[1].reshape(-1)
        self.scenario = {key: scenario_code[m.unit_row] for key, m in texts.items()}
        therapist = np.asarray([s == "Therapist" for s in ex.unit_speaker], dtype=bool)
        self.therapist = {key: therapist[m.unit_row] for key, m in texts.items()}
        self.memo: dict[bytes, dict] = {}

    def f(self, key: str) -> FieldVectors:
        """The field's unit vectors (made when a figure first needs them: with no coded work, nothing is embedded)."""
        if key not in self._f:
            self._f[key] = FieldVectors(self.texts[key].domain, self.table)
            self._dist[key] = PairDistances(self._f[key])
        return self._f[key]

    def matrix(self, field: TextField, available: np.ndarray, coders: list[int]) -> tuple[np.ndarray, np.ndarray]:
        """The field's codes for ``coders`` on the slice's units with a text, and those units' scenarios."""
        m = self.texts[field.key]
        avail = available[np.ix_(coders, m.unit_row)]
        codes = np.where(avail, m.codes[coders], -1)
        if field.rows == THERAPIST_ROWS:
            codes[:, ~self.therapist[field.key]] = -1
        # A unit counts where two or more of these coders have a value and one of them wrote a text.
        wrote = (codes > 0).any(axis=0) & ((codes >= 0).sum(axis=0) >= 2)
        return codes[:, wrote], self.scenario[field.key][wrote]

    def figure(self, field: TextField, available: np.ndarray, coders: list[int]) -> dict:
        codes, groups = self.matrix(field, available, coders)
        names = [self.ex.coders[c] for c in coders]
        key = hashlib.blake2b(repr((field.key, names, codes.shape)).encode() + codes.tobytes(), digest_size=16).digest()
        if key not in self.memo:
            self.memo[key] = self._compute(field, names, codes, groups)
        return self.memo[key]

    def _compute(self, field: TextField, names: list[str], codes: np.ndarray, groups: np.ndarray) -> dict:
        f = self.f(field.key)
        dist = self._dist[field.key]
        sums = value_sums(codes, f, groups)
        result = semantic_alpha(codes, f, dist, expected=sums.expected)
        similarity, one_empty, pair_count = paired_similarity(codes, f, dist)
        baseline = sums.baseline if pair_count else None
        fig = {
            "alpha": _r(result.alpha),
            "defined": result.alpha is not None,
            "undefined_reason": result.reason,
            "ci95": None,
            **{_threshold_key(t): None for t in THRESHOLDS},
            "units": result.cells.units,
            "coders": result.cells.coders,
            "pairable_values": result.cells.values,
            "value_pairs": result.cells.pairs,
            "distinct_texts": int(len(np.unique(codes[codes > 0]))),
            "observed_disagreement": _r(result.observed),
            "expected_disagreement": _r(result.expected),
            "mean_similarity": _r(similarity),
            "baseline_similarity": _r(baseline),
            "above_baseline": _r(similarity - baseline) if similarity is not None and baseline is not None else None,
            "presence_disagreement": _r(one_empty),
        }
        if result.alpha is not None:
            digest = hashlib.sha256(f"semantic|{field.key}|{'|'.join(names)}".encode()).digest()
            rng = np.random.default_rng([self.seed, int.from_bytes(digest[:8], "big")])
            dist = bootstrap(result, resamples=self.resamples, rng=rng)
            fig["ci95"] = [_r(x) for x in dist.interval(CONFIDENCE)]
            for t in THRESHOLDS:
                fig[_threshold_key(t)] = _r(dist.p_below(t))
        return fig


def texts_in_scope(texts: dict[str, TextMatrix]) -> list[str]:
    """Every distinct written text the figures may compare (what must be embedded)."""
    return list(dict.fromkeys(t for m in texts.values() for t in m.domain[1:]))


def build_semantic_report(
    project,
    *,
    scenario=None,
    clips=None,
    resamples: int = 1000,
    seed: int = 0,
    work_scope: str = DEFAULT_WORK_SCOPE,
    provider=None,
    progress: Progress | None = None,
) -> tuple[dict, dict]:
    """The semantic agreement report of ``project`` and what embedding it took (``embeddings.Embedded.as_dict``).

    Deterministic for a state of the data, a model and parameters (the run's
    embedding counts and times are returned apart, never in the report).
    """
    check_resamples(resamples)
    check_work_scope(work_scope)
    candidates = candidate_clips(project, scenario=scenario, clips=clips)
    scope = report_scope(scenario, clips, work_scope)
    return semantic_report_for_extraction(
        extract_with_texts(candidates, work_scope),
        candidates,
        project=project.slug,
        scope=scope,
        resamples=resamples,
        seed=seed,
        provider=provider,
        progress=progress,
    )


def semantic_report_for_extraction(
    ex: Extraction,
    candidates,
    *,
    project: str,
    scope: dict,
    resamples: int = 1000,
    seed: int = 0,
    provider=None,
    progress: Progress | None = None,
) -> tuple[dict, dict]:
    """``build_semantic_report`` from the coders, rows and units already extracted (``extract``) from the clips
    ``candidates``: the label report of the same scope reads the same extraction (a release computes both)."""
    from .embeddings import current_provider, embed_texts

    check_resamples(resamples)
    provider = provider or current_provider()
    texts = extract_texts(ex, candidates)
    needed = texts_in_scope(texts) if ex.humans else []
    # Progress: the texts to embed (the long part of a cold run), then the slices.
    slices = len(MODES) * (1 + len(set(ex.unit_scenario.tolist())))
    embedded = embed_texts(
        needed,
        provider,
        progress=(lambda done, total: progress(done, total + slices)) if progress else None,
        extra_rows=1,
        extra_columns=1,
    )
    report = semantic_report_from(
        ex,
        texts,
        unit_table(embedded.vectors, in_place=True),
        project=project,
        scope=scope,
        model=provider.describe(),
        resamples=resamples,
        seed=seed,
        progress=(lambda done, total: progress(embedded.embedded + done, embedded.embedded + total))
        if progress
        else None,
    )
    return report, embedded.as_dict()


def semantic_report_from(
    ex: Extraction,
    texts: dict[str, TextMatrix],
    vectors: dict[str, np.ndarray],
    *,
    project: str,
    scope: dict,
    model: dict,
    resamples: int = 1000,
    seed: int = 0,
    progress: Progress | None = None,
) -> dict:
    figures = ReportFigures(ex, texts, vectors, resamples, seed)
    scenarios = sorted(set(ex.unit_scenario.tolist()))
    slices = [Slice(mode, s) for mode in MODES for s in ["all", *scenarios]]
    out_slices, same_values = [], {}
    for index, sl in enumerate(slices):
        available = _availability(ex, sl)
        humans, everyone, pairs = _coder_sets(ex, available)
        entry = slice_entry(ex, sl, available, humans, everyone)
        out_slices.append(entry)
        if not entry["empty"]:
            selection = available.tobytes()
            if selection not in same_values:
                fields = {}
                for field in TEXT_FIELDS:
                    item = {"humans": figures.figure(field, available, humans), "with_llm": None, "pairs": []}
                    if len(everyone) > len(humans):
                        item["with_llm"] = figures.figure(field, available, everyone)
                    for a, b in pairs:
                        item["pairs"].append(
                            {"pair": [ex.coders[a], ex.coders[b]], **figures.figure(field, available, [a, b])}
                        )
                    fields[field.key] = item
                same_values[selection] = fields
            entry["fields"] = same_values[selection]
        if progress:  # empty slices too: the last slice ends the progress whatever it holds
            progress(index + 1, len(slices))
    overall = out_slices[0]
    return {
        "semantic_version": SEMANTIC_VERSION,
        **report_head(ex, project, scope, overall),
        "model": model,
        "parameters": {
            "resamples": resamples,
            "seed": seed,
            "confidence": CONFIDENCE,
            "thresholds": list(THRESHOLDS),
            "bootstrap_resolution": BOOTSTRAP_RESOLUTION,
        },
        "method": METHOD_NOTES,
        "fields": [{"key": f.key, "label": f.label, "rows": f.rows, "matched_by": f.matched_by} for f in TEXT_FIELDS],
        "coders": list(ex.coders),
        "llm_coder": ex.coders[ex.llm] if ex.llm is not None else None,
        "counts": {
            "texts": int(sum(int((m.codes > 0).sum()) for m in texts.values())) if not overall["empty"] else 0,
            "distinct_texts": len(texts_in_scope(texts)) if not overall["empty"] else 0,
        },
        "summary": _summary(overall),
        "slices": out_slices,
    }


def _summary(overall: dict) -> list[dict]:
    if overall.get("empty"):
        return []
    out = []
    for field in TEXT_FIELDS:
        item = overall["fields"][field.key]
        out.append(
            {
                "field": field.key,
                "label": field.label,
                **item["humans"],
                "with_llm_alpha": item["with_llm"]["alpha"] if item["with_llm"] else None,
                "with_llm_mean_similarity": item["with_llm"]["mean_similarity"] if item["with_llm"] else None,
            }
        )
    return out


METHOD_NOTES = {
    "distance": (
        "delta(a, b) = 1 - cos(e(a), e(b)) between sentence embeddings of the two texts (white space collapsed): 0 for "
        "the same text, about 1 for unrelated texts. A coder who coded the row and wrote nothing for the unit gives "
        "the empty text, at distance 1 from every written text (as far as unrelated texts) and 0 from another empty "
        "text."
    ),
    "units": (
        "A unit is a row (tone of voice, the relation pattern's reason) or a row and the person, initiator -> targets, "
        "source -> target or provider the text is about, for the descriptions inside lists. A unit counts where two or "
        "more coders coded the row and at least one of them wrote a text for it."
    ),
    "alpha": (
        "Krippendorff's alpha = 1 - Do/De over the texts' coincidences with this distance; the test suite requires it "
        "to equal the krippendorff package's alpha with the same distance callable (to 1e-9)."
    ),
    "similarity": (
        "mean_similarity: the mean of 1 - delta over every pair of coders within a unit. baseline_similarity: the "
        "same when the field's texts are shuffled across the units of their scenario (its exact expectation), i.e. "
        "what coders writing about different moments would reach; above_baseline is the difference."
    ),
    "presence_disagreement": "Share of coder pairs within units where one wrote a text and the other wrote none.",
    "interval": BOOTSTRAP_METHOD
    + f" Distances of the drawn pairs are grouped into classes {BOOTSTRAP_RESOLUTION} wide (each with the mean "
    "distance of its pairs).",
    "llm": "The LLM draft is one more coder in the 'with_llm' figures and in the pairs that name it, only on rows an "
    "annotator coded.",
}
