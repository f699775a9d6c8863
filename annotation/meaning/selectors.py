"""Reads of the meaning capability: the pairs a judge may be shown, and each measure's validity per field.

The pool of pairs: for every free-text field, the two texts two human coders wrote about the same unit
(a row, or a row and the person or pair the text is about: ``agreement.textfields``), both written and
different. Each carries its authors and clip, so that a judge is never shown their own texts: a lead may
judge any pair; an annotator only pairs from clips they are not assigned to (they never read other coders'
work on a clip they code, and so never their own). The texts are shown without names, clip or dialogue.

Sampling is stratified over the embedding measure's distance: the pool is cut into ``STRATA`` bands of
equal width over [0, 1] (beyond 1 goes in the last), and the next pair comes from the band with the fewest
judged pairs so far, so the close-but-different pairs a lead must see are shown as often as the easy ones.
Distances come from the vectors the free-text report cached (``TextEmbedding``); the web process never
loads the model, and a pair whose texts were not embedded yet is shown last, without a distance.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np
from django.core.cache import cache
from django.db.models import Count

from ..agreement.extract import candidate_clips
from ..agreement.textfields import TEXT_FIELDS, TEXT_FIELDS_BY_KEY, extract_texts, extract_with_texts
from ..models import Assignment, Project
from ..roles import is_lead
from .models import JudgedPair, pair_sha256

STRATA = 5
POOL_CACHE_SECONDS = 600


@dataclass(frozen=True)
class Candidate:
    field: str
    text_a: str
    text_b: str
    authors: tuple[str, str]  # usernames
    clip_id: int
    sha: str


def pool(project: Project) -> list[Candidate]:
    """Every pair of two coders' different texts about one unit, per field (distinct pairs, first seen first)."""
    from ..models import Row

    clips = candidate_clips(project)
    ex = extract_with_texts(clips, project.work_scope)
    if not ex.units:
        return []
    texts = extract_texts(ex, clips)
    row_clip = dict(Row.objects.filter(pk__in=ex.unit_row_ids).values_list("pk", "clip_id"))
    seen: set[str] = set()
    out: list[Candidate] = []
    for field in TEXT_FIELDS:
        m = texts[field.key]
        for unit in range(len(m.unit_row)):
            clip_id = row_clip[ex.unit_row_ids[m.unit_row[unit]]]
            for i_pos, i in enumerate(ex.humans):
                for j in ex.humans[i_pos + 1 :]:
                    a, b = int(m.codes[i, unit]), int(m.codes[j, unit])
                    if a <= 0 or b <= 0 or a == b:
                        continue
                    text_a, text_b = m.domain[a], m.domain[b]
                    sha = pair_sha256(field.key, text_a, text_b)
                    if sha not in seen:
                        seen.add(sha)
                        out.append(Candidate(field.key, text_a, text_b, (ex.coders[i], ex.coders[j]), clip_id, sha))
    return out


def cached_pool(project: Project) -> list[Candidate]:
    """``pool`` for the project's data as it is now (keyed by the agreement reports' digest of that data)."""
    from ..agreement.services import Params, data_digest

    key = f"meaning-pool:{project.pk}:{data_digest(project, Params.from_query({}, project.work_scope))}"
    found = cache.get(key)
    if found is None:
        found = pool(project)
        cache.set(key, found, POOL_CACHE_SECONDS)
    return found


def embedding_distances(pairs: list[tuple[str, str]], provider_id: str | None = None) -> list[float | None]:
    """1 − cosine of each pair's cached vectors (None where a text has none cached under the model)."""
    from ..agreement.embeddings import cached_vectors, text_sha256

    if provider_id is None:
        from ..agreement.services import _semantic_provider

        provider_id = _semantic_provider().id
    texts = list(dict.fromkeys(t for pair in pairs for t in pair))
    hashes = {t: text_sha256(t) for t in texts}
    vectors = {
        digest: np.frombuffer(bytes(blob), dtype="<f4")
        for digest, _dims, blob in cached_vectors(provider_id, list(hashes.values()))
    }
    out = []
    for a, b in pairs:
        va, vb = vectors.get(hashes[a]), vectors.get(hashes[b])
        out.append(
            None if va is None or vb is None else float(1.0 - np.dot(va.astype(np.float64), vb.astype(np.float64)))
        )
    return out


def stratum_of(distance: float | None) -> int | None:
    if distance is None:
        return None
    return min(STRATA - 1, max(0, int(distance * STRATA)))


def may_judge(user, candidate: Candidate, assigned_clips: set[int]) -> bool:
    """Never their own texts: a lead judges any pair; an annotator pairs of clips they are not assigned to."""
    if user.username in candidate.authors:
        return False
    return is_lead(user) or candidate.clip_id not in assigned_clips


def judgeable_fields(project: Project) -> list[dict]:
    """The free-text fields with how many pairs were judged (by anyone) so far."""
    counts = dict(JudgedPair.objects.filter(project=project).values_list("field").annotate(n=Count("pk")))
    return [{"key": f.key, "label": f.label, "judged": counts.get(f.key, 0)} for f in TEXT_FIELDS]


@dataclass
class Shown:
    candidate: Candidate
    distance: float | None
    stratum: int | None
    remaining: int  # pairs of the field this judge may still judge


def next_pair(user, project: Project, field: str, *, seed: int | None = None) -> Shown | None:
    """The next pair ``user`` may judge in ``field`` (None when there is none left)."""
    if field not in TEXT_FIELDS_BY_KEY:
        raise KeyError(field)
    assigned = set(Assignment.objects.filter(annotator=user, clip__project=project).values_list("clip_id", flat=True))
    judged_by_user = set(
        JudgedPair.objects.filter(project=project, field=field, judge=user).values_list("pair_sha256", flat=True)
    )
    judged_by_anyone = set(
        JudgedPair.objects.filter(project=project, field=field).values_list("pair_sha256", flat=True)
    )
    open_ = [
        c
        for c in cached_pool(project)
        if c.field == field and c.sha not in judged_by_user and may_judge(user, c, assigned)
    ]
    if not open_:
        return None
    # Pairs nobody judged yet come first; among them, the band with the fewest judgements so far.
    fresh = [c for c in open_ if c.sha not in judged_by_anyone] or open_
    distances = embedding_distances([(c.text_a, c.text_b) for c in fresh])
    bands: dict[int | None, list[int]] = {}
    for index, d in enumerate(distances):
        bands.setdefault(stratum_of(d), []).append(index)
    done = dict(
        JudgedPair.objects.filter(project=project, field=field, stratum__isnull=False)
        .values_list("stratum")
        .annotate(n=Count("pk"))
    )
    measured = [b for b in bands if b is not None]
    band = min(measured, key=lambda b: (done.get(b, 0), b)) if measured else None
    rng = random.Random(seed if seed is not None else f"{user.pk}|{field}|{len(judged_by_user)}")
    index = rng.choice(bands[band])
    return Shown(fresh[index], distances[index], stratum_of(distances[index]), len(open_))


def find_candidate(user, project: Project, sha: str) -> Candidate | None:
    """The pool's pair ``sha`` if ``user`` may judge it (what a submitted judgement is checked against)."""
    assigned = set(Assignment.objects.filter(annotator=user, clip__project=project).values_list("clip_id", flat=True))
    for c in cached_pool(project):
        if c.sha == sha:
            return c if may_judge(user, c, assigned) else None
    return None


# --- validity ------------------------------------------------------------------------------------------------

JUDGE_JOB = "meaning-judge"
MEASURES = ("embedding", "judge")
VALIDITY_CACHE_SECONDS = 3600


def latest_judge_run(project: Project):
    """The latest finished run of the configured LLM judge (model and prompt version) over the project (a ``Job``
    whose result is ``judge_report``). A run of another model or prompt is not this judge's: its alpha is never
    shown beside this judge's verdicts, however recent it is."""
    from ..models import Job, JobState
    from . import judge

    return (
        Job.objects.filter(
            project=project,
            kind=JUDGE_JOB,
            state=JobState.SUCCEEDED,
            result__judge__model=judge.judge_model(),
            result__judge__prompt_version=judge.PROMPT_VERSION,
        )
        .order_by("-finished_at", "-pk")
        .first()
    )


def judge_run_read(project: Project, judgements: dict | None = None):
    """The judge run a validity shows: the one a release recorded (None when it recorded none, or when that run is
    gone), else (nothing recorded, or a release frozen before the judge's inputs were) the latest."""
    from ..models import Job

    recorded = (judgements or {}).get("judge")
    if recorded is None:
        return latest_judge_run(project)
    if recorded["run"] is None:
        return None
    return Job.objects.filter(pk=recorded["run"], project=project, kind=JUDGE_JOB).first()


def judge_read(judgements: dict | None = None) -> tuple[str, str, int | None]:
    """(model, prompt version, newest verdict id) of the judge's verdicts a validity reads: those a release recorded,
    else the configured judge's, every verdict (None)."""
    from . import judge

    recorded = (judgements or {}).get("judge")
    if recorded is None:
        return judge.judge_model(), judge.PROMPT_VERSION, None
    return recorded["model"], recorded["prompt_version"], recorded["newest_verdict_id"]


def _judge_distance_and_labels(rows, model: str, prompt_version: str, newest_verdict_id: int | None = None):
    from . import judge

    verdicts = judge.cached([r.pair_sha256 for r in rows], model, prompt_version, newest_verdict_id)
    return {sha: v.verdict for sha, v in verdicts.items()}


def judgements_read(project: Project, newest_id: int | None = None):
    """The project's judgements a validity reads: every one, or (``newest_id``) those made up to that one."""
    rows = JudgedPair.objects.filter(project=project)
    return rows if newest_id is None else rows.filter(pk__lte=newest_id)


def judgement_set(project: Project) -> dict:
    """What a validity would read now, as a release records it: the judgements (how many, the time of the newest and
    its id) and the judge's (model, prompt version, how many verdicts, the newest verdict's id, the id of the run
    whose alpha it shows or None). ``project_validity`` and ``with_validity`` given this record read the same again,
    whatever was judged or run since."""
    from django.db.models import Max

    from . import judge

    found = JudgedPair.objects.filter(project=project).aggregate(
        count=Count("pk"), newest_id=Max("pk"), as_of=Max("created_at")
    )
    model = judge.judge_model()
    verdicts = judge.verdicts_read(model).aggregate(count=Count("pk"), newest_id=Max("pk"))
    run = latest_judge_run(project)
    return recorded_judgement_set(
        {
            "count": found["count"],
            "as_of": found["as_of"].isoformat() if found["as_of"] else None,
            "newest_id": found["newest_id"] or 0,
            "judge": {
                "model": model,
                "prompt_version": judge.PROMPT_VERSION,
                "verdicts": verdicts["count"],
                "newest_verdict_id": verdicts["newest_id"] or 0,
                "run": run.pk if run else None,
            },
        }
    )


JUDGE_RECORD_KEYS = ("model", "prompt_version", "verdicts", "newest_verdict_id", "run")


def recorded_judgement_set(record: dict) -> dict:
    """``record`` in the key order a release writes it (jsonb gives its keys back in its own order). Releases frozen
    before the judge's inputs were recorded have no ``judge``, and keep none."""
    out = {"count": record["count"], "as_of": record["as_of"], "newest_id": record["newest_id"]}
    if "judge" in record:
        out["judge"] = {key: record["judge"][key] for key in JUDGE_RECORD_KEYS}
    return out


def judgement_set_changes(project: Project, judged: dict | None) -> list[str]:
    """How the judgements, verdicts and judge run a release recorded (``judgement_set``) differ from what is left of
    them. Later ones are never read; only a deleted one changes what the release's validity read."""
    from .judge import verdicts_read

    if judged is None:
        return []
    changes = []
    if (left := judgements_read(project, judged["newest_id"]).count()) != judged["count"]:
        changes.append(
            f"the release's free-text validity read {judged['count']} judgements of meaning; {left} of them are left"
        )
    recorded = judged.get("judge")  # releases frozen before the judge's inputs were recorded read them as they are
    if recorded is None:
        return changes
    model, prompt_version, newest_verdict_id = judge_read(judged)
    if (left := verdicts_read(model, prompt_version, newest_verdict_id).count()) != recorded["verdicts"]:
        changes.append(
            f"the release's free-text validity read {recorded['verdicts']} verdicts of the judge {model} "
            f"({prompt_version}); {left} of them are left"
        )
    if recorded["run"] is not None and judge_run_read(project, judged) is None:
        changes.append(f"the judge run {recorded['run']} whose alpha the release shows is gone")
    return changes


def project_validity(project: Project, *, judgements: dict | None = None) -> dict:
    """Per field and measure, how well it separates people's same-meaning from different-meaning pairs.

    ``judgements``: a release's recorded set (``judgement_set``): read only the judgements made up to its newest, and
    the recorded judge's verdicts up to its newest (a release frozen before the judge was recorded: the configured
    judge's, every verdict). Cached until a judgement read, a verdict read or the embedding model changes. The shape
    (C2) is documented in docs/free-text-agreement.md.
    """
    from django.db.models import Max, Min

    from ..agreement.services import _semantic_provider
    from . import judge
    from .validation import DIFFERENT, SAME, Judged, cohen_kappa, kappa_interval, validity

    newest_id = judgements["newest_id"] if judgements else None
    rows = list(judgements_read(project, newest_id).order_by("pk"))
    model_id = _semantic_provider().id
    judge_model, prompt_version, newest_verdict_id = judge_read(judgements)
    verdicts_now = judge.verdicts_read(judge_model, prompt_version, newest_verdict_id).aggregate(
        count=Count("pk"), newest_id=Max("pk")
    )
    state = (
        len(rows),
        rows[-1].pk if rows else 0,
        verdicts_now["count"],
        verdicts_now["newest_id"] or 0,
        newest_verdict_id,
        model_id,
        judge_model,
        prompt_version,
    )
    key = "meaning-validity:" + str(project.pk) + ":" + "|".join(map(str, state))
    found = cache.get(key)
    if found is not None:
        return found
    # Embedding distances: the one recorded when the pair was shown (same model), else from the cached vectors.
    missing = [r for r in rows if r.embedding_distance is None or r.embedding_model != model_id]
    computed = dict(
        zip((r.pk for r in missing), embedding_distances([(r.text_a, r.text_b) for r in missing], model_id))
    )
    verdicts = _judge_distance_and_labels(rows, judge_model, prompt_version, newest_verdict_id)
    fields = {}
    for field in TEXT_FIELDS:
        mine = [r for r in rows if r.field == field.key]
        emb = [Judged(computed.get(r.pk, r.embedding_distance), r.judgement) for r in mine]
        jd = [
            Judged(judge.DISTANCE[verdicts[r.pair_sha256]] if r.pair_sha256 in verdicts else None, r.judgement)
            for r in mine
        ]
        judge_validity = validity(jd, name=f"{field.key}|judge")
        # Cohen's kappa: people's same/different against the judge's, "partly" read as different (not the same meaning).
        both = [
            (r.judgement, "same" if verdicts[r.pair_sha256] == "same" else DIFFERENT)
            for r in mine
            if r.pair_sha256 in verdicts and r.judgement in (SAME, DIFFERENT)
        ]
        people, llm = [p for p, _ in both], [q for _, q in both]
        kappa = cohen_kappa(people, llm)
        judge_validity.update(
            kappa=round(kappa, 4) if kappa is not None else None,
            kappa_interval=kappa_interval(people, llm, name=field.key) if kappa is not None else None,
        )
        fields[field.key] = {"embedding": validity(emb, name=f"{field.key}|embedding"), "judge": judge_validity}
    agg = judgements_read(project, newest_id).aggregate(first=Min("created_at"), last=Max("created_at"))
    out = {
        "judgements": {
            "count": len(rows),
            "by_judgement": {j: sum(1 for r in rows if r.judgement == j) for j in ("same", "different", "cant_tell")},
            "judges": len({r.judge_id for r in rows if r.judge_id}),
            "from_files": sum(1 for r in rows if r.judge_id is None),
            "first": agg["first"].isoformat() if agg["first"] else None,
            "last": agg["last"].isoformat() if agg["last"] else None,
        },
        "embedding_model": model_id,
        "judge": judge.describe(judge_model, prompt_version),
        "thresholds": _thresholds(),
        "fields": fields,
    }
    cache.set(key, out, VALIDITY_CACHE_SECONDS)
    return out


def _thresholds() -> dict:
    from . import validation as v

    return {
        "min_each": v.MIN_EACH,
        "validated_lower": v.VALIDATED_LOWER,
        "weak_below": v.WEAK_BELOW,
        "confidence": v.CONFIDENCE,
        "resamples": v.RESAMPLES,
    }


def judged_by(project: Project) -> list[dict]:
    """Who judged how many pairs, and when last (for leads)."""
    from django.db.models import Max

    rows = (
        JudgedPair.objects.filter(project=project)
        .values("judge__username", "source")
        .annotate(n=Count("pk"), last=Max("created_at"))
        .order_by("-n")
    )
    return [{"judge": r["judge__username"] or r["source"], "count": r["n"], "last": r["last"]} for r in rows]


def with_validity(report: dict, project: Project, *, judgements: dict | None = None) -> dict:
    """The free-text report with every field's figure saying what it is (C2), and the judge's alpha beside it.

    Each ``summary`` entry gets ``measure`` ("embedding"), ``validity`` (the embedding measure's, for that
    field) and ``measures`` (both measures: alpha, interval, validity); the report gets ``meaning`` (the
    judgements' counts, the judge model and prompt version, the thresholds, the judge run). A copy: the
    stored report is never changed. ``judgements``: a release's recorded set (``judgement_set``): the validity reads
    those judgements and verdicts only, and the judge run shown is the recorded one.
    """
    validity = project_validity(project, judgements=judgements)
    run = judge_run_read(project, judgements)
    judge_fields = (run.result or {}).get("fields", {}) if run else {}
    out = {**report}
    summary = []
    for entry in report.get("summary") or []:
        v = validity["fields"].get(entry["field"])
        if v is None:
            summary.append(entry)
            continue
        jf = judge_fields.get(entry["field"])
        summary.append(
            {
                **entry,
                "measure": "embedding",
                "validity": v["embedding"],
                "measures": {
                    "embedding": {"alpha": entry.get("alpha"), "ci95": entry.get("ci95"), "validity": v["embedding"]},
                    "judge": {
                        "alpha": jf.get("alpha") if jf else None,
                        "ci95": jf.get("ci95") if jf else None,
                        "units": jf.get("units") if jf else None,
                        "computed": jf is not None,
                        "validity": v["judge"],
                    },
                },
            }
        )
    out["summary"] = summary
    out["meaning"] = {
        "judgements": validity["judgements"],
        "embedding_model": validity["embedding_model"],
        "judge": validity["judge"],
        "thresholds": validity["thresholds"],
        "judge_run": (
            {
                "finished_at": run.finished_at.isoformat() if run.finished_at else None,
                "model": run.result.get("judge"),
                "usage": run.result.get("usage"),
                "method": run.result.get("method"),
            }
            if run
            else None
        ),
        "fields": validity["fields"],
    }
    return out
