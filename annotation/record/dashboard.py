"""The lead's per-annotator dashboard of a scenario: computed by a worker, stored, served from the store.

Per coder and per field (the agreement report's measures and levels):
- agreement with the others: alpha of all coders, and of all coders without this one (leave-one-out),
  and alpha for every pair; each with Krippendorff's bootstrap interval;
- agreement with the adjudicated gold, a confusion table against it for the nominal fields, and the
  pairs of labels the coder confuses most with the gold's (each linked to the project's guidance);
- the coder's label distribution beside the team's;
- pace: the share of draft rows kept unchanged and the median seconds per row (``draft_pull.confirming``,
  the agreement page's own rule), rows per hour of work;
- the same per week of the study (drift), drawn as one plot per coder;
- a competence estimate per nominal field from Dawid–Skene (crowd-kit), as a cross-check only.

Only production work is read (``agreement.extract``: qualification rounds and known-answer checks are
never there). The LLM draft is never a coder here.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from datetime import timedelta

import numpy as np
from django.db.models import Count, Max, Min, Q, Sum
from django.utils import timezone

from .. import jobs
from ..agreement.draft_pull import confirming
from ..agreement.extract import Extraction, Pace, extract, scope_clips
from ..agreement.fields import MEASURES_BY_KEY, Measure, value_label
from ..agreement.scope import coded_revisions
from ..codebook.selectors import MEASURE_FIELDS, confused_pair_links
from ..models import Assignment, Draft, Gold, Job, JobState, Project, Revision, Row
from ..taxonomy import SCENARIOS
from .measures import _r, alpha_figure, matching
from .models import AnnotatorRecordReport, QualificationAttempt, QualificationDecision

JOB_KIND = "record_dashboard"
FIELDS = (
    "utterance_type",
    "relation_pattern",
    "strategy_type",
    "support_target_masi",
    "target_masi",
    "emotion_intensity",
)
WEEK = timedelta(days=7)
COMPETENCE_CAVEAT = (
    "Dawid–Skene estimates each coder's confusion matrix from the coders' agreement alone, without the gold. "
    "With three coders (or fewer) it rests on very few votes per row: read it as a cross-check of the figures "
    "against the gold and of the leave-one-out alpha, never as a verdict on a coder."
)


def default_scenario(project: Project) -> str:
    found = project.clips.values_list("scenario", flat=True).order_by("scenario").first()
    return found if found in SCENARIOS else SCENARIOS[0]


# --- computing ------------------------------------------------------------------------------------------


def _rows_mask(ex: Extraction, measure: Measure) -> np.ndarray:
    return np.fromiter((measure.applies_to(s) for s in ex.unit_speaker), dtype=bool, count=ex.units)


def _matrix(ex: Extraction, measure: Measure, coders: list[int], units: np.ndarray | None = None) -> np.ndarray:
    """The measure's codes of ``coders`` on its rows (of ``units``), -1 where the coder did not code the row."""
    cols = _rows_mask(ex, measure) if units is None else (_rows_mask(ex, measure) & units)
    codes = ex.values[measure.source].codes[np.ix_(coders, np.flatnonzero(cols))]
    coded = ex.coding[np.ix_(coders, np.flatnonzero(cols))] > 0
    codes = np.where(coded, codes, -1)
    if measure.every_coder and codes.size:
        codes = codes[:, ((codes >= 0) | ~coded).all(axis=0)]
    return codes


def gold_codes(ex: Extraction, measure: Measure, golds: dict[int, dict]) -> tuple[np.ndarray, list]:
    """Per unit: the gold's code in the measure's domain (extended by values only the gold has), -1 without gold."""
    domain = list(ex.values[measure.source].domain)
    pos = {v: i for i, v in enumerate(domain)}
    out = np.full(ex.units, -1, dtype=np.int64)
    for j, (row_id, speaker) in enumerate(zip(ex.unit_row_ids, ex.unit_speaker)):
        content = golds.get(row_id)
        if content is None:
            continue
        v = measure.value(content, speaker)
        if v is None:
            continue
        if v not in pos:
            pos[v] = len(domain)
            domain.append(v)
        out[j] = pos[v]
    return out, domain


def _with_gold(
    ex, measure, c: int, gold: np.ndarray, domain: list, units: np.ndarray | None = None, *, interval: bool = True
) -> dict:
    cols = _rows_mask(ex, measure) if units is None else (_rows_mask(ex, measure) & units)
    idx = np.flatnonzero(cols)
    mine = np.where(ex.coding[c, idx] > 0, ex.values[measure.source].codes[c, idx], -1)
    codes = np.vstack([mine, gold[idx]])
    codes = codes[:, (codes >= 0).all(axis=0)] if measure.every_coder else codes
    return {**alpha_figure(codes, domain, measure.level, interval=interval), "matching": matching(codes)}


def _confusion(ex, measure, c: int, gold: np.ndarray, domain: list) -> dict:
    idx = np.flatnonzero(_rows_mask(ex, measure))
    mine = np.where(ex.coding[c, idx] > 0, ex.values[measure.source].codes[c, idx], -1)
    g = gold[idx]
    both = (mine >= 0) & (g >= 0)
    values = sorted(set(mine[both].tolist()) | set(g[both].tolist()))
    at = {v: i for i, v in enumerate(values)}
    counts = np.zeros((len(values), len(values)), dtype=int)
    for a, b in zip(mine[both].tolist(), g[both].tolist()):
        counts[at[a], at[b]] += 1
    pairs = []
    for i, a in enumerate(values):
        for k, b in enumerate(values):
            if i != k and counts[i, k]:
                pairs.append({"values": [value_label(domain[a]), value_label(domain[b])], "rows": int(counts[i, k])})
    pairs.sort(key=lambda p: (-p["rows"], p["values"]))
    return {"labels": [value_label(domain[v]) for v in values], "counts": counts.tolist(), "pairs": pairs[:3]}


def _distribution(ex, measure, humans: list[int]) -> dict:
    codes = _matrix(ex, measure, humans)
    domain = ex.values[measure.source].domain
    present = sorted(set(codes[codes >= 0].tolist()))

    def shares(row):
        row = row[row >= 0]
        return [_r((row == v).sum() / len(row)) if len(row) else None for v in present]

    return {
        "labels": [value_label(domain[v]) for v in present],
        "team": shares(codes.reshape(-1)),
        "coders": {ex.coders[c]: shares(codes[i]) for i, c in enumerate(humans)},
    }


def competence(ex: Extraction, measure: Measure, humans: list[int]) -> dict | None:
    """Dawid–Skene (crowd-kit) on the coders' values of a nominal field: each coder's expected accuracy
    under the model, sum over true labels of prior x P(coder says it | it is true)."""
    codes = _matrix(ex, measure, humans)
    rows = [
        (j, ex.coders[c], int(codes[i, j]))
        for i, c in enumerate(humans)
        for j in range(codes.shape[1])
        if codes[i, j] >= 0
    ]
    if len({r[2] for r in rows}) < 2 or codes.shape[1] < 2:
        return None
    frame = competence_frame(rows)
    errors, priors = dawid_skene(frame)
    out = {}
    for name in sorted(frame["worker"].unique()):
        out[name] = _r(
            sum(float(priors[k]) * float(errors.loc[(name, k), k]) for k in priors.index if (name, k) in errors.index)
        )
    return out


def competence_frame(rows):
    import pandas as pd

    return pd.DataFrame(rows, columns=["task", "worker", "label"])


def dawid_skene(frame, n_iter: int = 100):
    """crowd-kit's Dawid–Skene on ``frame`` (task, worker, label): the coders' error matrices and the priors."""
    import warnings

    from crowdkit.aggregation import DawidSkene

    with warnings.catch_warnings():  # crowd-kit 1.4 calls pandas APIs pandas 3 deprecates; the results are the same
        warnings.simplefilter("ignore")
        model = DawidSkene(n_iter=n_iter, tol=1e-6).fit(frame)
    return model.errors_, model.priors_


def _pace_of(ex: Extraction, keep: np.ndarray) -> Extraction:
    p = ex.pace
    return replace(
        ex, pace=Pace(coder=p.coder[keep], unit=p.unit[keep], unchanged=p.unchanged[keep], seconds=p.seconds[keep])
    )


def _rows_per_hour(ex: Extraction, keep: np.ndarray) -> dict:
    # Over all the coder's work, anchored and from empty; ``confirming``'s "timed_rows" (the anchored rows its
    # median is taken over) sits beside it in the same dict, so this count has a name of its own.
    seconds = ex.pace.seconds[keep]
    timed = ~np.isnan(seconds)
    total = float(seconds[timed].sum())
    return {
        "timed_rows_all_work": int(timed.sum()),
        "hours": _r(total / 3600, 3),
        "rows_per_hour": _r(timed.sum() / (total / 3600), 1) if total > 0 else None,
    }


def _weeks(project: Project, ex: Extraction, clips) -> tuple[np.ndarray, int]:
    """Per counted revision (``ex.pace`` order): its week of the study (1 = the week of the first assignment)."""
    start = Assignment.objects.filter(clip__project=project).aggregate(t=Min("created_at"))["t"] or timezone.now()
    unit_of = {row_id: j for j, row_id in enumerate(ex.unit_row_ids)}
    coder_of = {name: i for i, name in enumerate(ex.coders)}
    when = {}
    for row_id, username, at in coded_revisions(clips, project.work_scope).values_list(
        "row_id", "annotator__username", "updated_at"
    ):
        if row_id in unit_of and username in coder_of:
            when[(coder_of[username], unit_of[row_id])] = at
    week = np.fromiter(
        (
            int((when[(c, u)] - start) / WEEK) + 1 if (c, u) in when else 0
            for c, u in zip(ex.pace.coder.tolist(), ex.pace.unit.tolist())
        ),
        dtype=np.int64,
        count=len(ex.pace.coder),
    )
    return week, int(week.max()) if len(week) else 0


def build(project: Project, scenario: str) -> dict:
    clips = scope_clips(project, scenario=scenario)
    ex = extract(clips, project.work_scope)
    humans = ex.humans
    names = [ex.coders[c] for c in humans]
    golds = {
        g["row_id"]: g["content"] for g in Gold.objects.filter(row_id__in=ex.unit_row_ids).values("row_id", "content")
    }
    quick = project.quick_confirm_seconds
    report: dict = {
        "project": project.slug,
        "scenario": scenario,
        "computed_at": timezone.now().isoformat(),
        "coders": names,
        "rows": ex.units,
        "gold_rows": len(golds),
        "work_scope": project.work_scope,
        "fields": [],
        "pace": {},
        "weeks": [],
        "competence": {
            "method": "Dawid–Skene (crowd-kit), expected accuracy per coder",
            "caveat": COMPETENCE_CAVEAT,
            "fields": {},
        },
    }
    gold_of = {}
    for key in FIELDS:
        measure = MEASURES_BY_KEY[key]
        gold, gdomain = gold_codes(ex, measure, golds)
        gold_of[key] = (gold, gdomain)
        domain = ex.values[measure.source].domain
        entry = {"key": key, "label": measure.label, "level": measure.level, "nominal": measure.nominal}
        entry["alpha_all"] = alpha_figure(_matrix(ex, measure, humans), domain, measure.level)
        entry["coders"] = []
        for c in humans:
            others = [h for h in humans if h != c]
            row = {
                "coder": ex.coders[c],
                "alpha_without": alpha_figure(_matrix(ex, measure, others), domain, measure.level)
                if len(others) >= 2
                else None,
                "with_gold": _with_gold(ex, measure, c, gold, gdomain),
            }
            if measure.nominal:
                row["confusion"] = _confusion(ex, measure, c, gold, gdomain)
                if key in MEASURE_FIELDS and row["confusion"]["pairs"]:
                    row["confusion"]["pairs"] = confused_pair_links(
                        project,
                        key,
                        row["confusion"]["pairs"],
                        scenario,
                        f"{ex.coders[c]} confuses these with the gold",
                    )
            entry["coders"].append(row)
        entry["pairwise"] = [
            {
                "pair": [ex.coders[a], ex.coders[b]],
                **alpha_figure(_matrix(ex, measure, [a, b]), domain, measure.level, interval=False),
            }
            for i, a in enumerate(humans)
            for b in humans[i + 1 :]
        ]
        if measure.nominal:
            entry["distribution"] = _distribution(ex, measure, humans)
            try:
                found = competence(ex, measure, humans)
            except Exception as exc:  # the cross-check must never take the dashboard down
                found = {"error": f"{type(exc).__name__}: {exc}"}
            if found is not None:
                report["competence"]["fields"][key] = found
        report["fields"].append(entry)
    pull = confirming(ex, quick) if ex.pace is not None else {"coders": {}, "team": None}
    everyone = np.ones(len(ex.pace.coder), dtype=bool) if ex.pace is not None else np.zeros(0, dtype=bool)
    for c in humans:
        mine = ex.pace.coder == c
        report["pace"][ex.coders[c]] = {**(pull["coders"].get(ex.coders[c]) or {}), **_rows_per_hour(ex, mine)}
    report["pace"]["team"] = {**(pull["team"] or {}), **_rows_per_hour(ex, everyone)} if len(everyone) else {}
    report["weeks"] = _drift(project, ex, clips, humans, gold_of)
    from .plots import drift_chart

    report["plots"] = {name: drift_chart(name, report["weeks"], report["fields"]) for name in names}
    return report


def _drift(project, ex: Extraction, clips, humans: list[int], gold_of: dict) -> list[dict]:
    """Per week of the study: per coder the week's rows, agreement with the others on them, with the gold, pace."""
    if ex.pace is None or not len(ex.pace.coder):
        return []
    week, last = _weeks(project, ex, clips)
    out = []
    for w in range(1, last + 1):
        per = {}
        for c in humans:
            keep = (ex.pace.coder == c) & (week == w)
            if not keep.any():
                continue
            units = np.zeros(ex.units, dtype=bool)
            units[ex.pace.unit[keep]] = True
            fields = {}
            for key in FIELDS[:3]:
                measure = MEASURES_BY_KEY[key]
                gold, gdomain = gold_of[key]
                fields[key] = {
                    "with_others": alpha_figure(
                        _matrix(ex, measure, humans, units), ex.values[measure.source].domain, measure.level
                    ),
                    "with_gold": _with_gold(ex, measure, c, gold, gdomain, units),
                }
            pace = confirming(_pace_of(ex, keep), project.quick_confirm_seconds)["coders"].get(ex.coders[c]) or {}
            per[ex.coders[c]] = {
                "rows": int(keep.sum()),
                "fields": fields,
                "unchanged_share": pace.get("unchanged_share"),
                "median_seconds": pace.get("median_seconds"),
                **_rows_per_hour(ex, keep),
            }
        out.append({"week": w, "coders": per})
    return out


# --- storing and serving ---------------------------------------------------------------------------------


def fingerprint(project: Project, scenario: str) -> str:
    """Digest of what the dashboard reads, from a few aggregates (the page takes it on every visit).

    Per table the dashboard reads, for the scenario's clips: how many rows, their latest change and the sum of
    their versions where they have one. Every save of a revision or of the gold bumps its version and time, a
    submission sets a time, an added or removed row changes a count: any of them makes the stored dashboard
    stale. (The agreement page digests every row, in about 100 ms at full scale; here that would be most of
    the page's time.)
    """
    clips = project.clips.filter(scenario=scenario)
    parts = [
        # str(): a project made in this process holds the enum member, one read from the database its value.
        str(project.work_scope),
        project.quick_confirm_seconds,
        project.taxonomy_version,
        list(clips.order_by("id").values_list("id", "state")),
        Revision.objects.filter(row__clip__in=clips).aggregate(n=Count("id"), t=Max("updated_at"), v=Sum("version")),
        Assignment.every.filter(clip__in=clips).aggregate(
            n=Count("id"),
            s=Count("submitted_at"),
            t=Max("submitted_at"),
            i=Sum("id"),
            st=Count("id", filter=Q(state="submitted")),
        ),
        Gold.objects.filter(row__clip__in=clips).aggregate(n=Count("id"), t=Max("updated_at"), v=Sum("version")),
        Draft.objects.filter(row__clip__in=clips).aggregate(n=Count("id"), t=Max("updated_at")),
        Row.objects.filter(clip__in=clips).aggregate(n=Count("id"), i=Sum("id")),
        QualificationAttempt.objects.filter(project=project, scenario=scenario).aggregate(
            n=Count("id"), t=Max("scored_at")
        ),
        QualificationDecision.objects.filter(project=project, scenario=scenario).aggregate(
            n=Count("id"), t=Max("created_at")
        ),
    ]
    return hashlib.sha256(repr(parts).encode()).hexdigest()


@dataclass
class DashboardState:
    # "ready", "queued", "running", "failed", "missing" (nothing started), or "stale" (a job has just stored a
    # dashboard, and the data moved on meanwhile)
    status: str
    fingerprint: str
    stored: AnnotatorRecordReport | None = None
    job: Job | None = None

    @property
    def report(self) -> dict | None:
        return self.stored.report if self.stored is not None else None

    @property
    def stale(self) -> bool:
        return self.stored is not None and self.stored.fingerprint != self.fingerprint

    @property
    def job_id(self) -> int | None:
        return self.job.pk if self.job else None


def latest(project: Project, scenario: str) -> AnnotatorRecordReport | None:
    return (
        AnnotatorRecordReport.objects.filter(project=project, scenario=scenario).order_by("-created_at", "-id").first()
    )


def compute_and_store(project: Project, scenario: str, fp: str | None = None) -> AnnotatorRecordReport | None:
    fp = fp or fingerprint(project, scenario)
    report = build(project, scenario)
    if fingerprint(project, scenario) != fp:
        return None  # the data changed while computing: the result would be mislabelled
    AnnotatorRecordReport.objects.filter(project=project, scenario=scenario).delete()
    return AnnotatorRecordReport.objects.create(project=project, scenario=scenario, fingerprint=fp, report=report)


def report_state(project: Project, scenario: str) -> DashboardState:
    """Where the stored dashboard stands (current, or the last one while a worker computes the new one); never
    starts anything (``ensure_report`` does)."""
    fp = fingerprint(project, scenario)
    stored = latest(project, scenario)
    if stored is not None and stored.fingerprint == fp:
        return DashboardState("ready", fp, stored)
    job = _latest_job(fp)
    if job is not None and job.state in (JobState.QUEUED, JobState.RUNNING):
        return DashboardState(job.state, fp, stored, job)
    if job is not None and job.state == JobState.FAILED:
        return DashboardState("failed", fp, stored, job)
    return DashboardState("missing", fp, stored, job)


def ensure_report(project: Project, scenario: str, *, user=None, page: bool = False) -> DashboardState:
    """Have a worker compute the dashboard unless it is current, being computed or failed (``report_state``);
    where it stands then. ``page``: asked by a page, which answers at once; with no broker (the demo) the job then
    runs in a thread after the response instead of inside the request."""
    state = report_state(project, scenario)
    if state.status != "missing":
        return state
    from .celery_tasks import compute_dashboard_task

    fp, stored = state.fingerprint, state.stored
    key = _job_key(fp)
    job = jobs.enqueue(
        Job.objects.create(kind=JOB_KIND, project=project, key=key, params={"scenario": scenario}, created_by=user),
        compute_dashboard_task,
        in_thread_when_eager=page,
    )
    job.refresh_from_db()  # with eager tasks (no broker) it has run by now, unless a page started it
    if job.state == JobState.SUCCEEDED:
        fresh = latest(project, scenario)
        if fresh is not None:
            return DashboardState("ready" if fresh.fingerprint == fp else "stale", fp, fresh, job)
    return DashboardState("failed" if job.state == JobState.FAILED else job.state, fp, stored, job)


def _job_key(fp: str) -> str:
    return f"{JOB_KIND}:{fp}"


def _latest_job(fp: str) -> Job | None:
    return Job.objects.filter(kind=JOB_KIND, key=_job_key(fp)).order_by("-created_at", "-id").first()
