"""The free-text alpha of the LLM judge's verdicts, per field, beside the embedding one.

Units, coders and what counts are the embedding alpha's (``agreement.semantic``): the human coders' texts
of a unit (a row, or a row and the person or pair), units where two or more coders coded the row and one
of them wrote a text. The distance of two values: 0 for the same text (and for two empty ones), 1 for a
text against none, else the judge's verdict on the pair (same 0, partly 0.5, different 1).

Do is exact: every pair of values within a unit is judged. De would need a verdict on every pair of values
of the field (tens of millions at full scale), so it is estimated from ``DE_SAMPLE`` pairs of the field's
pairable values drawn at random (seeded) over different units. The interval is a percentile bootstrap
over units (Do recomputed, De held at its estimate): the uncertainty of the De estimate is not in it, and
the docs say so. Fields with more than ``MAX_WITHIN_PAIRS`` distinct text pairs within units are computed
on a seeded random subset of their units (said in the figure).
"""

from __future__ import annotations

import numpy as np

from ..agreement.bootstrap import Distribution
from ..agreement.extract import candidate_clips
from ..agreement.fields import THERAPIST_ROWS
from ..agreement.textfields import TEXT_FIELDS, extract_texts, extract_with_texts
from . import judge
from .models import pair_sha256

DE_SAMPLE = 300
MAX_WITHIN_PAIRS = 1500
RESAMPLES = 1000
METHOD = (
    "Alpha = 1 − Do/De with the LLM judge's verdicts as the distance (same 0, partly 0.5, different 1; the same "
    "text 0, a text against none 1), over the embedding alpha's units and coders. Do is exact (every pair of "
    "texts within a unit is judged); De is estimated from a seeded random sample of pairs of the field's "
    f"pairable values ({DE_SAMPLE} pairs). The 95% interval is a percentile bootstrap over units with De held "
    "at its estimate."
)


def _field_units(ex, m, field):
    """Per unit, the human coders' value codes that count (-1 dropped), for units that count."""
    humans = ex.humans
    codes = m.codes[humans]
    if field.rows == THERAPIST_ROWS:
        therapist = np.asarray([ex.unit_speaker[r] == "Therapist" for r in m.unit_row], dtype=bool)
        codes = np.where(therapist[None, :], codes, -1)
    out = []
    for u in range(codes.shape[1]):
        values = codes[:, u][codes[:, u] >= 0]
        if len(values) >= 2 and (values > 0).any():
            out.append([int(v) for v in values])
    return out


def _pairs_needed(domain, units, rng):
    within = {
        (min(a, b), max(a, b))
        for vals in units
        for i, a in enumerate(vals)
        for b in vals[i + 1 :]
        if a > 0 and b > 0 and a != b
    }
    pooled = [v for vals in units for v in vals]
    owner = [u for u, vals in enumerate(units) for _ in vals]
    sample = []
    if len(pooled) >= 2 and len(units) >= 2:
        tries = 0
        while len(sample) < DE_SAMPLE and tries < DE_SAMPLE * 20:
            tries += 1
            p, q = rng.integers(0, len(pooled), 2)
            if owner[p] != owner[q]:
                sample.append((pooled[p], pooled[q]))
    between = {(min(a, b), max(a, b)) for a, b in sample if a > 0 and b > 0 and a != b}
    return within, sample, between


def field_inputs(project, *, seed: int = 0):
    """Per field: its units, the De sample and the distinct text pairs the judge must read (as field, a, b)."""
    clips = candidate_clips(project)
    ex = extract_with_texts(clips, project.work_scope)
    if not ex.units:
        return {}
    texts = extract_texts(ex, clips)
    out = {}
    for field in TEXT_FIELDS:
        m = texts[field.key]
        rng = np.random.default_rng([seed, TEXT_FIELDS.index(field)])
        units = _field_units(ex, m, field)
        subset = False
        within, sample, between = _pairs_needed(m.domain, units, rng)
        if len(within) > MAX_WITHIN_PAIRS:
            keep = rng.permutation(len(units))[: max(2, int(len(units) * MAX_WITHIN_PAIRS / len(within)))]
            units = [units[i] for i in sorted(keep)]
            subset = True
            within, sample, between = _pairs_needed(m.domain, units, rng)
        needed = [(field.key, m.domain[a], m.domain[b]) for a, b in sorted(within | between)]
        out[field.key] = {"domain": m.domain, "units": units, "sample": sample, "needed": needed, "subset": subset}
    return out


def _distance(domain, verdicts, field, a, b) -> float:
    if a == b:
        return 0.0
    if a == 0 or b == 0:
        return 1.0
    return judge.DISTANCE[verdicts[pair_sha256(field, domain[a], domain[b])].verdict]


def alpha_of(field: str, inputs: dict, verdicts: dict, *, seed: int = 0) -> dict:
    domain, units, sample = inputs["domain"], inputs["units"], inputs["sample"]
    if not units:
        return {
            "alpha": None,
            "defined": False,
            "ci95": None,
            "units": 0,
            "undefined_reason": "no unit has texts from two or more coders",
        }
    per_unit = []  # (sum over ordered pairs of delta / (m - 1), m)
    for vals in units:
        m = len(vals)
        total = sum(
            _distance(domain, verdicts, field, a, b) for i, a in enumerate(vals) for j, b in enumerate(vals) if i != j
        )
        per_unit.append((total / (m - 1), m))
    contributions = np.array([c for c, _ in per_unit])
    sizes = np.array([m for _, m in per_unit], dtype=float)
    observed = float(contributions.sum() / sizes.sum())
    expected = float(np.mean([_distance(domain, verdicts, field, a, b) for a, b in sample])) if sample else None
    base = {
        "units": len(units),
        "pairable_values": int(sizes.sum()),
        "observed_disagreement": round(observed, 4),
        "expected_disagreement": round(expected, 4) if expected is not None else None,
        "expected_from_sample": len(sample),
        "subset_of_units": inputs["subset"],
    }
    if not expected:
        return {
            **base,
            "alpha": None,
            "defined": False,
            "ci95": None,
            "undefined_reason": "no variation between the sampled pairs of values: alpha is 0/0",
        }
    alpha = 1.0 - observed / expected
    rng = np.random.default_rng([seed, 7919])
    draws = rng.integers(0, len(units), size=(RESAMPLES, len(units)))
    resampled = 1.0 - (contributions[draws].sum(axis=1) / sizes[draws].sum(axis=1)) / expected
    interval = Distribution(np.maximum(resampled, -1.0)).interval(0.95)
    return {
        **base,
        "alpha": round(alpha, 4),
        "defined": True,
        "ci95": [round(x, 4) for x in interval],
        "undefined_reason": None,
    }


def judge_report(project, *, seed: int = 0, extra_pairs=(), progress=None) -> dict:
    """The judge's alpha per field, asking the judge for the pairs it has not read yet (and ``extra_pairs``,
    e.g. the pairs people judged, so that the judge can be validated against them)."""
    inputs = field_inputs(project, seed=seed)
    needed = [p for f in inputs.values() for p in f["needed"]] + list(extra_pairs)
    verdicts, asked = judge.judge_pairs(needed, progress=progress)
    fields = {key: alpha_of(key, inp, verdicts, seed=seed) for key, inp in inputs.items()}
    return {
        "judge": judge.describe(),
        "method": METHOD,
        "fields": fields,
        "usage": {
            "pairs": len({pair_sha256(*p) for p in needed}),
            "asked": asked.asked,
            "from_cache": asked.from_cache,
            "tokens_in": asked.tokens_in,
            "tokens_out": asked.tokens_out,
            "cost_usd": asked.cost_usd,
        },
    }
