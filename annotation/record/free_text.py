"""A qualification round's free-text fields scored against the gold with the project's free-text measure.

The trainee and the gold are two coders of each text unit (a row, or a person / pair within a row, as the
agreement report pairs them: ``agreement.textfields``); the figure is Krippendorff's alpha with the semantic
distance delta = 1 - cos of sentence embeddings (``agreement.semantic``), with its bootstrap interval,
beside the plain count of units where the two texts are the same.

The embedding model is loaded by a Celery worker only (never in a web request): submitting a round scores
its labels at once and enqueues ``score_round_texts_task``, which stores these figures on the attempt under
``scores["text.<field>"]``; until then the feedback page says they are being computed.
"""

from __future__ import annotations

import numpy as np

from ..agreement.embedding_alpha import bootstrap, semantic_alpha, unit_vectors  # the free-text maths
from ..agreement.embeddings import embed_texts
from ..agreement.fields import THERAPIST_ROWS
from ..agreement.textfields import EMPTY, TEXT_FIELDS, coder_texts
from ..models import Job, JobState
from ..schema import THERAPIST
from .measures import RESAMPLES, _r

PREFIX = "text."  # the scores' keys of the free-text fields, beside the label measures' keys
JOB_KIND = "record_round_texts"


def text_units(units: list[dict]) -> dict[str, list[tuple[str, str]]]:
    """Per free-text field, one (trainee's text, gold's text) per text unit of the round's rows."""
    out: dict[str, list[tuple[str, str]]] = {}
    for field in TEXT_FIELDS:
        pairs = []
        for u in units:
            if field.rows == THERAPIST_ROWS and u["speaker"] != THERAPIST:
                continue
            for texts in coder_texts(field, {"coder": u["coder"], "gold": u["gold"]}, u["speaker"]).values():
                pairs.append((texts["coder"], texts["gold"]))
        out[field.key] = pairs
    return out


def field_figure(pairs: list[tuple[str, str]], vectors, *, seed: int = 0) -> dict:
    """{"alpha", "interval", "units", "reason", "matching"} of one field's (trainee, gold) text pairs."""
    domain = [EMPTY, *dict.fromkeys(t for pair in pairs for t in pair if t)]
    pos = {t: i for i, t in enumerate(domain)}
    codes = np.asarray([[pos[a] for a, _ in pairs], [pos[b] for _, b in pairs]], dtype=np.int64).reshape(2, -1)
    same = sum(a == b for a, b in pairs)
    matching = {"rows": len(pairs), "same": same, "share": _r(same / len(pairs)) if pairs else None}
    if not pairs:
        return {
            "alpha": None,
            "interval": None,
            "units": 0,
            "reason": "no text unit in the round's rows",
            "matching": matching,
        }
    f = unit_vectors(domain, {t: vectors[t] for t in domain[1:]})
    result = semantic_alpha(codes, f)
    out = {
        "alpha": _r(result.alpha),
        "interval": None,
        "units": result.cells.units,
        "reason": result.reason,
        "matching": matching,
    }
    if result.alpha is not None:
        dist = bootstrap(result, resamples=RESAMPLES, rng=np.random.default_rng(seed))
        out["interval"] = [_r(x) for x in dist.interval()]
    return out


def score_texts(units: list[dict], *, seed: int = 0, provider=None) -> dict:
    """Per ``text.<field>``: the field's figure, its label and ``level`` "semantic" (the worker's computation)."""
    by_field = text_units(units)
    texts = {t for pairs in by_field.values() for pair in pairs for t in pair if t}
    vectors = embed_texts(sorted(texts), provider).vectors if texts else {}
    return {
        f"{PREFIX}{field.key}": {
            **field_figure(by_field[field.key], vectors, seed=seed),
            "label": field.label,
            "level": "semantic",
            "measure": "embedding",
        }
        for field in TEXT_FIELDS
    }


def label_scores(scores: dict) -> dict:
    return {k: v for k, v in (scores or {}).items() if not k.startswith(PREFIX)}


def text_scores(scores: dict) -> dict:
    """The free-text figures in the fields' order (a jsonb column keeps no key order)."""
    scores = scores or {}
    return {f"{PREFIX}{f.key}": scores[f"{PREFIX}{f.key}"] for f in TEXT_FIELDS if f"{PREFIX}{f.key}" in scores}


def text_state(attempt) -> str:
    """ "ready" (stored on the attempt), "computing" (the worker's job is queued or running), "failed", or
    "none" (a round scored before free text was scored, or not scored yet)."""
    if text_scores(attempt.scores):
        return "ready"
    job = Job.objects.filter(kind=JOB_KIND, key=str(attempt.pk)).order_by("-created_at", "-id").first()
    if job is None:
        return "none"
    if job.state in (JobState.QUEUED, JobState.RUNNING):
        return "computing"
    return "failed" if job.state == JobState.FAILED else "ready"
