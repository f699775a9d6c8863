"""How much the coders of a row disagree: one score to order the adjudication by, and the texts side by side.

**The score** of a row is the mean, over the fields its coders compared, of
each field's disagreement:

- a label field (relation pattern, first strategy's type, utterance type,
  row target set, first strategy's target set; the agreement report's nominal
  measures) counts its normalised label entropy across the coders who gave a
  value: H = -sum p log2 p over the share p of each distinct value, divided by
  log2 of the number of those coders; 0 when they all agree, 1 when every coder
  gave a different value;
- a free-text field (``agreement.textfields``) counts the mean distance
  1 - cos (between 0 and 1) over every pair of coders, for each row or
  person/pair the texts are about, averaged; a text against none counts 1.

So 0 is a row on which every coder gave the same labels and the same words,
and 1 a row on which every field differs completely. The LLM draft is not a
coder here.

Texts are compared through the embedding cache only: the page never loads a
model. Texts not embedded yet are embedded by a worker job (``similarity``),
and until it is done the score counts the labels only and says so.

**Near agreement** (bulk accept): a row whose coders gave identical values on
every field except the free texts, and whose texts are pairwise at least as
similar as a threshold the lead chooses. Accepting it takes, for each field,
the coders' shared value, or, where only the texts differ, the value of the
coder whose texts are most similar to the others' (the medoid).
"""

from __future__ import annotations

import copy
import math
from collections import Counter
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np
from django.conf import settings

from .. import jobs
from ..agreement.embeddings import cached_vectors, current_provider, text_sha256
from ..agreement.fields import MEASURES_BY_KEY
from ..agreement.scope import LEFT_OUT_FIELD, with_left_out
from ..agreement.textfields import EMPTY, TEXT_FIELDS, coder_texts
from ..models import Clip, Draft, Job, JobState, Revision, Row
from ..schema import REQUIRED_ENTRY_TEXT
from .fields import FIELDS, RELATION_FIELD, field_value, same_value

LABEL_MEASURES = tuple(
    MEASURES_BY_KEY[k] for k in ("relation_pattern", "strategy_type", "utterance_type", "target", "support_target")
)
# The text parts of each adjudication field: masked when deciding whether coders agree apart from their words.
TEXT_KEYS = {
    **{
        name: keys for name, keys in REQUIRED_ENTRY_TEXT.items() if name != "background_dialogue"
    },  # speech, not a reading
    "tone_of_voice": None,  # the whole value is a text
    RELATION_FIELD: ("relation_pattern_reason", "relation_cycle_reason"),
}
TEXT_FIELDS_OF = {name: [f for f in TEXT_FIELDS if f.adjudication_field == name] for name in FIELDS}
JOB_KIND = "embed-texts"
DEFAULT_THRESHOLD = 0.80


def label_entropy(values: list) -> float | None:
    """Normalised entropy of the values (None when fewer than two coders gave one)."""
    values = [v for v in values if v is not None]
    if len(values) < 2:
        return None
    counts = Counter(values).values()
    h = -sum(c / len(values) * math.log2(c / len(values)) for c in counts)
    return h / math.log2(len(values))


class Vectors:
    """Cached embeddings of texts, read once per page; ``missing`` lists texts not embedded yet."""

    def __init__(self, texts, provider=None):
        self.provider = provider or current_provider()
        wanted = {t: text_sha256(t) for t in dict.fromkeys(texts) if t}
        by_hash = {h: t for t, h in wanted.items()}
        self.found: dict[str, np.ndarray] = {}
        for digest, dims, blob in cached_vectors(self.provider.id, list(by_hash)):
            if dims == self.provider.dimensions:  # as embed_texts: a vector of another length is not this model's
                self.found[by_hash[digest]] = np.frombuffer(bytes(blob), dtype="<f4", count=dims).astype(np.float64)
        self.missing = [t for t in wanted if t not in self.found]

    def similarity(self, a: str, b: str) -> float | None:
        """cos between two texts clipped to [0, 1]: 1 for the same text, 0 for a text against none; None if unknown."""
        if a == b:
            return 1.0
        if not a or not b:
            return 0.0
        va, vb = self.found.get(a), self.found.get(b)
        if va is None or vb is None:
            return None
        return float(min(1.0, max(0.0, va @ vb / (np.linalg.norm(va) * np.linalg.norm(vb)))))


def row_texts(contents: dict[str, dict], speaker: str) -> list[str]:
    return [t for f in TEXT_FIELDS for texts in coder_texts(f, contents, speaker).values() for t in texts.values() if t]


@dataclass
class RowDisagreement:
    score: float
    parts: dict[str, float] = field(default_factory=dict)  # field key -> disagreement
    texts_missing: bool = False  # some texts were not embedded yet: the score counts what could be compared
    # adjudication field -> [{"about": key, "texts": {coder: text}, "pairs": [{"a", "b", "similarity"}]}]
    texts: dict[str, list[dict]] = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {
            "score": round(self.score, 4),
            "parts": {k: round(v, 4) for k, v in self.parts.items()},
            "texts_missing": self.texts_missing,
            "texts": self.texts,
        }


def row_disagreement(contents: dict[str, dict], speaker: str, vectors: Vectors) -> RowDisagreement:
    """The row's score from its coders' documents (``{username: content}``)."""
    out = RowDisagreement(0.0)
    if len(contents) < 2:
        return out
    for measure in LABEL_MEASURES:
        if not measure.applies_to(speaker):
            continue
        h = label_entropy([measure.value(c, speaker) for c in contents.values()])
        if h is not None:
            out.parts[measure.key] = h
    for f in TEXT_FIELDS:
        units = []
        for about, texts in coder_texts(f, contents, speaker).items():
            pairs = []
            for a, b in combinations(sorted(texts), 2):
                sim = vectors.similarity(texts[a], texts[b])
                pairs.append({"a": a, "b": b, "similarity": None if sim is None else round(sim, 3)})
            known = [p["similarity"] for p in pairs if p["similarity"] is not None]
            if len(known) < len(pairs):
                out.texts_missing = True
            if known:
                units.append(1.0 - sum(known) / len(known))
            out.texts.setdefault(f.adjudication_field, []).append(
                {"field": f.key, "label": f.label, "about": about, "texts": texts, "pairs": pairs}
            )
        if units:
            out.parts[f.key] = sum(units) / len(units)
    out.score = sum(out.parts.values()) / len(out.parts) if out.parts else 0.0
    return out


# --- near agreement --------------------------------------------------------------------------


def _masked(name: str, value):
    """The field's value with its free texts blanked (what must be identical for coders to agree apart from words)."""
    keys = TEXT_KEYS.get(name, ())
    if keys is None:
        return EMPTY
    if not keys:
        return value
    value = copy.deepcopy(value)
    items = value if isinstance(value, list) else [value]
    for item in items:
        if isinstance(item, dict):
            for k in keys:
                if k in item:
                    item[k] = EMPTY
    return value


def near_agreement(contents: dict[str, dict], speaker: str, vectors: Vectors, threshold: float) -> dict | None:
    """None unless every field agrees apart from texts whose pairwise similarity is >= ``threshold``.

    Otherwise ``{"min_similarity": ..., "fields": {field: coder whose value the gold takes}, "near": [fields whose
    texts differ]}``; texts not embedded yet never count as agreeing.
    """
    if len(contents) < 2:
        return None
    coders = sorted(contents)
    take, near, lowest = {}, [], 1.0
    for name in FIELDS:
        values = {c: field_value(contents[c], name) for c in coders}
        masked = [_masked(name, v) for v in values.values()]
        if any(not same_value(name, m, masked[0]) for m in masked[1:]):
            return None
        if all(same_value(name, v, values[coders[0]]) for v in values.values()):
            take[name] = coders[0]
            continue
        closeness = dict.fromkeys(coders, 0.0)
        for f in TEXT_FIELDS_OF.get(name, []):
            for texts in coder_texts(f, contents, speaker).values():
                for a, b in combinations(coders, 2):
                    sim = vectors.similarity(texts[a], texts[b])
                    if sim is None or sim < threshold:
                        return None
                    lowest = min(lowest, sim)
                    closeness[a] += sim
                    closeness[b] += sim
        # Not a text that differs (whitespace, key order): the first coder's value.
        take[name] = max(coders, key=lambda c: (closeness[c], -coders.index(c)))
        near.append(name)
    return {"min_similarity": round(lowest, 4), "fields": take, "near": near}


# --- embedding the texts of a clip on a worker --------------------------------------------------


def clip_texts(clip: Clip) -> list[str]:
    """Every text the clip's coders (and its draft) wrote in the measured fields."""
    speakers = dict(Row.objects.filter(clip=clip).values_list("id", "primary_speaker"))
    texts: list[str] = []
    for model in (Revision, Draft):
        for row_id, content in model.objects.filter(row__clip=clip).values_list("row_id", "content"):
            texts += row_texts({"_": content}, speakers[row_id])
    return list(dict.fromkeys(texts))


def similarity_status(clip: Clip, vectors: Vectors, *, start: bool = True) -> dict:
    """Whether the page's similarities are complete; starts the worker job that embeds the missing texts."""
    if not vectors.missing:
        return {"status": "ready", "missing": 0, "job": None, "model": vectors.provider.id}
    key = f"{JOB_KIND}:{vectors.provider.id}:{clip.pk}:{text_sha256(chr(30).join(sorted(vectors.missing)))}"[:200]
    job = Job.objects.filter(kind=JOB_KIND, key=key).order_by("-created_at", "-id").first()
    if job is None and start:
        job = Job.objects.create(kind=JOB_KIND, project=clip.project, clip=clip, key=key, params={"clip": clip.pk})
        from .celery_tasks import embed_clip_texts_task

        job = jobs.enqueue(job, embed_clip_texts_task, queue=settings.EMBEDDINGS_QUEUE)
        job.refresh_from_db()
    status = "computing"
    if job is not None and job.state == JobState.FAILED:
        status = "failed"
    elif job is not None and job.state == JobState.SUCCEEDED:
        status = "ready"
    return {
        "status": status,
        "missing": len(vectors.missing),
        "job": None if job is None else {"id": job.pk, "state": job.state, "error": job.error},
        "model": vectors.provider.id,
    }


def accepted_note(threshold: float, near: list[str]) -> str:
    return f"bulk accept: coders agree, texts of {', '.join(near)} within similarity {threshold:.2f}" if near else ""


def check_threshold(value) -> float:
    """A similarity threshold from a form or a request: a number from 0.5 to 1 (ValueError with a message)."""
    try:
        threshold = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"the similarity threshold must be a number from 0.5 to 1, got {value!r}") from None
    if not 0.5 <= threshold <= 1.0:
        raise ValueError(f"the similarity threshold must be from 0.5 to 1, got {threshold:g}")
    return threshold


def agreeing_rows(states, vectors: Vectors, threshold: float) -> list[dict]:
    """The rows without gold whose coders agree within ``threshold`` (``near_agreement``), in row order."""
    out = []
    for state in states:
        if state.gold is not None or len(state.revisions) < 2:
            continue
        found = near_agreement(state.coder_contents, state.row.primary_speaker, vectors, threshold)
        if found is not None:
            out.append({"row_id": state.row.pk, "row_index": state.row.row_index, **found})
    return out


def clip_scores(project) -> dict[int, dict]:
    """Per clip id: the mean score of its rows with two or more coders whose work counts, and how many rows that is.

    Only coded work is compared (the project's work scope, as on the clip page). Texts are compared through the
    embedding cache only; ``texts_missing`` says when some could not be.
    """
    from itertools import groupby

    speakers = dict(Row.objects.filter(clip__project=project).values_list("id", "primary_speaker"))
    clip_of = dict(Row.objects.filter(clip__project=project).values_list("id", "clip_id"))
    revisions = (
        with_left_out(Revision.objects.filter(row__clip__project=project), project.work_scope)
        .filter(**{f"{LEFT_OUT_FIELD}__isnull": True})
        .order_by("row_id", "annotator__username")
        .values_list("row_id", "annotator__username", "content")
    )
    rows = []
    for row_id, group in groupby(revisions.iterator(chunk_size=2000), key=lambda r: r[0]):
        contents = {name: content for _, name, content in group}
        if len(contents) >= 2:
            rows.append((row_id, contents))
    vectors = Vectors(t for row_id, contents in rows for t in row_texts(contents, speakers[row_id]))
    out: dict[int, dict] = {}
    for row_id, contents in rows:
        d = row_disagreement(contents, speakers[row_id], vectors)
        entry = out.setdefault(clip_of[row_id], {"total": 0.0, "rows": 0, "texts_missing": False})
        entry["total"] += d.score
        entry["rows"] += 1
        entry["texts_missing"] |= d.texts_missing
    return {
        clip: {"score": round(e["total"] / e["rows"], 4), "rows": e["rows"], "texts_missing": e["texts_missing"]}
        for clip, e in out.items()
    }
