"""The coders' record a release carries in ``stats.json`` (contract C3, ``coders``): how many coders,
their qualification status and rounds, and the per-coder agreement figures, anonymised as coder 1,
2, 3 (numbered by the order of their first production assignment among the released clips; no name,
no username, no id), so that a reader can see whether one coder carried the agreement.

Production work only, under the project's work scope: qualification rounds and known-answer checks
never enter (``agreement.extract``). Deterministic: the same data give the same figures (no
resampling here), so a re-run freeze stays byte-identical.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model

from ..agreement.extract import extract
from ..agreement.fields import MEASURES_BY_KEY
from ..models import Assignment, Clip, Gold, Project
from ..taxonomy import SCENARIOS
from . import selectors
from .dashboard import FIELDS, _matrix, _with_gold, gold_codes
from .measures import alpha_figure

HEADLINE = "utterance_type"
ORDER = (
    "coders are numbered by the order of their first production assignment among the released clips; "
    "no name, username or id is published"
)


def _combined_status(project: Project, scenarios: list[str], user) -> tuple[str, int]:
    statuses = [selectors.status(project, s, user) for s in scenarios]
    ruled = [s for s in statuses if s["rule"]]
    rounds = sum(s["rounds"] for s in statuses)
    if not ruled:
        return selectors.NOT_REQUIRED, rounds
    for status in (selectors.NOT_PASSED, selectors.WAIVED, selectors.PASSED):
        if any(s["status"] == status for s in ruled):
            return status, rounds
    return selectors.NOT_PASSED, rounds


def qualification_facts(project: Project, clip_pks: list[int]) -> dict:
    """What the database alone tells of the released coders' qualification at freeze time (each coder's
    status and rounds, the rules, whether known-answer checks were on), anonymised like the figures.

    Recorded with the release's provenance: a rule set, a round taken or a waiver given after the freeze
    must not change a rebuilt release (``releases.freeze.reproduce`` compares it byte for byte)."""
    record = coders_record(project, clip_pks)
    return {k: record[k] for k in ("known_answer_checks", "qualification_rules", "qualification")}


def coders_record(project: Project, clip_pks: list[int], facts: dict | None = None) -> dict:
    """``facts``: the qualification facts recorded at freeze time (``qualification_facts``); None reads them now."""
    clips = Clip.objects.filter(pk__in=clip_pks)
    ex = extract(clips, project.work_scope)
    humans = ex.humans
    first = {}
    for annotator, username in (
        Assignment.objects.filter(clip__in=clips)
        .order_by("created_at", "pk")
        .values_list("annotator_id", "annotator__username")
    ):
        first.setdefault(username, (len(first), annotator))
    ordered = sorted(humans, key=lambda c: first.get(ex.coders[c], (len(first), 0))[0])
    number = {c: i + 1 for i, c in enumerate(ordered)}
    golds = {
        g["row_id"]: g["content"] for g in Gold.objects.filter(row_id__in=ex.unit_row_ids).values("row_id", "content")
    }
    users = {u.username: u for u in get_user_model().objects.filter(username__in=[ex.coders[c] for c in humans])}
    scenarios = [s for s in SCENARIOS if s in set(ex.unit_scenario.tolist())]

    by_field: dict[int, dict] = {c: {} for c in humans}
    alpha_all = {}
    for key in FIELDS:
        measure = MEASURES_BY_KEY[key]
        domain = ex.values[measure.source].domain
        alpha_all[key] = alpha_figure(_matrix(ex, measure, humans), domain, measure.level, interval=False)["alpha"]
        gold, gdomain = gold_codes(ex, measure, golds)
        for c in humans:
            others = [h for h in humans if h != c]
            without = (
                alpha_figure(_matrix(ex, measure, others), domain, measure.level, interval=False)["alpha"]
                if len(others) >= 2
                else None
            )
            with_gold = _with_gold(ex, measure, c, gold, gdomain, interval=False)["alpha"]
            by_field[c][key] = {"alpha_all": alpha_all[key], "alpha_without": without, "agreement_with_gold": with_gold}
    rows = ex.coding[humans] > 0 if humans else None
    qualification, per_coder = [], []
    for c in ordered:
        name = f"coder {number[c]}"
        status, rounds = (
            _combined_status(project, scenarios, users[ex.coders[c]])
            if ex.coders[c] in users
            else (selectors.NOT_REQUIRED, 0)
        )
        qualification.append({"coder": name, "status": status, "rounds": rounds})
        head = by_field[c][HEADLINE]
        per_coder.append(
            {
                "coder": name,
                "rows": int(rows[humans.index(c)].sum()),
                "alpha_all": head["alpha_all"],
                "alpha_without": head["alpha_without"],
                "agreement_with_gold": head["agreement_with_gold"],
                "by_field": by_field[c],
            }
        )
    record = {
        "count": len(humans),
        "anonymised": ORDER,
        "headline_field": HEADLINE,
        "fields": [{"key": k, "label": MEASURES_BY_KEY[k].label, "level": MEASURES_BY_KEY[k].level} for k in FIELDS],
        "work_scope": project.work_scope,
        "known_answer_checks": float(project.known_answer_share) > 0,
        "qualification_rules": {
            s: selectors.rule_text(r) for s in scenarios if (r := selectors.rule_of(project, s)) is not None
        },
        "qualification": qualification,
        "per_coder": per_coder,
    }
    return {**record, **facts} if facts is not None else record
