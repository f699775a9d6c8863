"""How well a free-text measure separates same meaning from different meaning, from judged pairs.

A *measure* gives each pair of texts a distance (the embedding measure: 1 − cosine; the judge: 0 for
"same", 0.5 for "partly", 1 for "different"). A *judgement* says whether a person read the two texts as
the same meaning or a different one ("can't tell" pairs are counted and left out of every figure).

- AUROC: the probability that a different-meaning pair is placed farther apart than a same-meaning pair
  (ties count half): the Mann–Whitney statistic, computed from average ranks.
- Its 95% interval: a percentile bootstrap over the judged pairs, resampling the same-meaning and the
  different-meaning pairs separately (so every resample keeps both kinds); seeded, so the figure is
  reproducible. (The project's Krippendorff bootstrap resamples coincidences of coders' values, which
  these pairs are not; only its ``Distribution`` is reused for the percentiles.)
- ``closer_share``: the share of different-meaning pairs the measure places closer than the median
  same-meaning pair: how often a contradiction looks like agreement.
- The verdict (``VALIDATED``, ``WEAK``, ``NOT_VALIDATED``) from the thresholds below.

Cohen's kappa (the judge's verdicts against the people's) is here too, with the same bootstrap.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..agreement.bootstrap import Distribution

SAME, DIFFERENT, CANT_TELL = "same", "different", "cant_tell"
JUDGEMENTS = (SAME, DIFFERENT, CANT_TELL)
JUDGEMENT_NAMES = {SAME: "same meaning", DIFFERENT: "different meaning", CANT_TELL: "can't tell"}

VALIDATED, WEAK, NOT_VALIDATED = "validated", "weak", "not_validated"
# The thresholds (docs/free-text-agreement.md says why these):
# - a verdict needs at least MIN_EACH same-meaning and MIN_EACH different-meaning pairs;
# - validated: the interval's lower end reaches VALIDATED_LOWER (the measure separates meaning well, and
#   the judged pairs are enough to say so);
# - weak: the AUROC itself is below WEAK_BELOW (it separates meaning poorly, whatever the interval);
# - otherwise not validated yet (the interval is too wide to tell: judge more pairs).
MIN_EACH = 10
VALIDATED_LOWER = 0.80
WEAK_BELOW = 0.75
RESAMPLES = 1000
CONFIDENCE = 0.95

# What a figure is called, by verdict: only a validated measure's alpha is agreement on meaning.
MEANING_WORDING = "agreement on meaning"
TOPIC_WORDING = "similarity of wording and topic"


def auroc(same: np.ndarray, different: np.ndarray) -> float | None:
    """P(distance of a different-meaning pair > distance of a same-meaning pair), ties half; None without both."""
    same, different = np.asarray(same, dtype=float), np.asarray(different, dtype=float)
    if not len(same) or not len(different):
        return None
    values = np.concatenate([same, different])
    _, inverse, counts = np.unique(values, return_inverse=True, return_counts=True)
    # Average rank of each distinct value (1-based): ties share the mean of the ranks they occupy.
    ends = np.cumsum(counts)
    average = ends - (counts - 1) / 2.0
    ranks = average[inverse.reshape(-1)]
    rank_sum = ranks[len(same) :].sum()
    n_d, n_s = len(different), len(same)
    return float((rank_sum - n_d * (n_d + 1) / 2.0) / (n_s * n_d))


def closer_share(same: np.ndarray, different: np.ndarray) -> float | None:
    """Share of different-meaning pairs strictly closer than the median same-meaning pair."""
    if not len(same) or not len(different):
        return None
    return float(np.mean(np.asarray(different, dtype=float) < np.median(np.asarray(same, dtype=float))))


def _rng(seed: int, name: str) -> np.random.Generator:
    import hashlib

    digest = hashlib.sha256(name.encode()).digest()
    return np.random.default_rng([seed, int.from_bytes(digest[:8], "big")])


def auroc_interval(same, different, *, resamples: int = RESAMPLES, seed: int = 0, name: str = "") -> list[float] | None:
    same, different = np.asarray(same, dtype=float), np.asarray(different, dtype=float)
    if not len(same) or not len(different):
        return None
    rng = _rng(seed, f"auroc|{name}")
    values = np.empty(resamples)
    for i in range(resamples):
        values[i] = auroc(rng.choice(same, len(same)), rng.choice(different, len(different)))
    return [round(x, 4) for x in Distribution(values).interval(CONFIDENCE)]


def verdict_of(auroc_value: float | None, interval, n_same: int, n_different: int) -> str:
    if auroc_value is None or n_same < MIN_EACH or n_different < MIN_EACH:
        return NOT_VALIDATED
    if interval is not None and interval[0] >= VALIDATED_LOWER:
        return VALIDATED
    if auroc_value < WEAK_BELOW:
        return WEAK
    return NOT_VALIDATED


def wording_of(verdict: str) -> str:
    return MEANING_WORDING if verdict == VALIDATED else TOPIC_WORDING


def sentence_of(v: dict) -> str:
    """The validity in people's words, e.g. "validated: AUROC 0.93 [0.88, 0.97] on 120 judged pairs"."""
    judged = f"{v['pairs']} judged pair{'s' if v['pairs'] != 1 else ''}"
    if v["auroc"] is None:
        if not v["pairs"] and v.get("unmeasured"):
            return (
                f"not validated yet: {v['unmeasured']} judged pair{'s' if v['unmeasured'] != 1 else ''} not yet "
                "measured by it (compute the free-text report, or run the judge)"
            )
        if v["pairs"]:
            return f"not validated yet: {judged}, not yet {MIN_EACH} of each kind (same and different meaning)"
        return "not validated yet: no pair of its texts has been judged"
    interval = f" [{v['interval'][0]:.2f}, {v['interval'][1]:.2f}]" if v.get("interval") else ""
    if v["verdict"] == VALIDATED:
        return f"validated: AUROC {v['auroc']:.2f}{interval} on {judged}"
    if v["verdict"] == WEAK:
        return (
            f"weak: separates meaning poorly (AUROC {v['auroc']:.2f}{interval} on {judged}), reads as topic similarity"
        )
    if v["same"] < MIN_EACH or v["different"] < MIN_EACH:
        return f"not validated yet: AUROC {v['auroc']:.2f}{interval} on {judged}, fewer than {MIN_EACH} of each kind"
    return (
        f"not validated yet: AUROC {v['auroc']:.2f}{interval} on {judged}; the interval reaches below "
        f"{VALIDATED_LOWER:.2f}, judge more pairs"
    )


@dataclass
class Judged:
    """One judged pair as the validation reads it: the measure's distance and the people's judgement."""

    distance: float | None
    judgement: str


def validity(items: list[Judged], *, seed: int = 0, name: str = "", resamples: int = RESAMPLES) -> dict:
    """The validity of one measure on one field (the C2 shape: verdict, auroc, interval, pairs, wording, ...).

    ``pairs`` counts the judged pairs the measure has a distance for and a person read as same or different;
    ``cant_tell`` and ``unmeasured`` say what was left out.
    """
    measured = [i for i in items if i.distance is not None]
    same = np.array([i.distance for i in measured if i.judgement == SAME], dtype=float)
    different = np.array([i.distance for i in measured if i.judgement == DIFFERENT], dtype=float)
    value = auroc(same, different)
    interval = auroc_interval(same, different, seed=seed, name=name, resamples=resamples) if value is not None else None
    verdict = verdict_of(value, interval, len(same), len(different))
    out = {
        "verdict": verdict,
        "auroc": round(value, 4) if value is not None else None,
        "interval": interval,
        "pairs": int(len(same) + len(different)),
        "same": len(same),
        "different": len(different),
        "cant_tell": sum(1 for i in measured if i.judgement == CANT_TELL),
        "unmeasured": len(items) - len(measured),
        "closer_than_median_same": round(closer_share(same, different), 4) if value is not None else None,
        "wording": wording_of(verdict),
    }
    out["sentence"] = sentence_of(out)
    return out


def cohen_kappa(a: list[str], b: list[str]) -> float | None:
    """Cohen's kappa of two raters over the same items (None with no item or no variation at all)."""
    if not a:
        return None
    labels = sorted(set(a) | set(b))
    index = {label: i for i, label in enumerate(labels)}
    table = np.zeros((len(labels), len(labels)))
    for x, y in zip(a, b):
        table[index[x], index[y]] += 1
    n = table.sum()
    observed = np.trace(table) / n
    expected = (table.sum(axis=1) @ table.sum(axis=0)) / (n * n)
    if expected >= 1.0:
        return None
    return float((observed - expected) / (1.0 - expected))


def kappa_interval(a: list[str], b: list[str], *, resamples: int = RESAMPLES, seed: int = 0, name: str = ""):
    if not a:
        return None
    rng = _rng(seed, f"kappa|{name}")
    a_, b_ = np.asarray(a), np.asarray(b)
    values = []
    for _ in range(resamples):
        pick = rng.integers(0, len(a_), len(a_))
        k = cohen_kappa(list(a_[pick]), list(b_[pick]))
        values.append(0.0 if k is None else k)
    return [round(x, 4) for x in Distribution(np.asarray(values)).interval(CONFIDENCE)]
