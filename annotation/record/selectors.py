"""Reads of the record: who is qualified for which scenario, and an annotator's own record.

One rule, one place: the assign refusal (web, API, CLI), the record pages and the release's
``stats.json`` all read a coder's status from ``status``.
"""

from __future__ import annotations

from django.http import Http404

from ..models import Assignment, AssignmentPurpose, AssignmentState, Gold, Project, Revision
from ..roles import is_lead
from . import scoring
from .models import (
    AttemptState,
    DecisionKind,
    QualificationAttempt,
    QualificationDecision,
    QualificationRule,
    TrainingClip,
)
from .scoring import measure_label

PASSED, WAIVED, NOT_REQUIRED, NOT_PASSED = "passed", "waived", "not required", "not passed"


def rule_of(project: Project, scenario: str) -> QualificationRule | None:
    return QualificationRule.objects.filter(project=project, scenario=scenario).first()


def rule_dict(rule: QualificationRule) -> dict:
    return {
        "scenario": rule.scenario,
        "fields": list(rule.fields),
        "min_score": rule.min_score,
        "min_rows": rule.min_rows,
        "max_attempts": rule.max_attempts,
    }


def rule_text(rule: QualificationRule | dict) -> str:
    """The rule in words, as the refusal and the pages name it."""
    r = rule if isinstance(rule, dict) else rule_dict(rule)
    fields = " and ".join(measure_label(k) for k in r["fields"])
    return (
        f"alpha against the gold of at least {r['min_score']:.2f} on {fields}, each over at least {r['min_rows']} "
        "rows, "
        f"in at most {r['max_attempts']} round{'s' if r['max_attempts'] != 1 else ''}"
    )


def status(project: Project, scenario: str, annotator, *, rule: QualificationRule | None = None, events=None) -> dict:
    """{"status", "rounds", "attempts_left", "qualified", "rule"} of ``annotator`` for ``scenario``.

    In time order: a passed round qualifies, a waiver qualifies, a send-back undoes both and gives the
    attempts again. ``rounds`` counts every scored round.
    """
    rule = rule if rule is not None else rule_of(project, scenario)
    if events is None:
        events = _events(project, scenario, [annotator.pk]).get(annotator.pk, [])
    state, rounds, since, sent_back = NOT_PASSED, 0, 0, False
    for _at, kind, passed in events:
        if kind == "attempt":
            rounds += 1
            since += 1
            if passed:
                state, sent_back = PASSED, False
        elif kind == DecisionKind.WAIVED:
            state, sent_back = WAIVED, False
        elif kind == DecisionKind.SENT_BACK:
            state, since, sent_back = NOT_PASSED, 0, True
    if rule is None:  # nothing to pass: rounds are practice, and a send-back asks for one
        return {
            "status": state if state != NOT_PASSED else NOT_REQUIRED,
            "rounds": rounds,
            "attempts_left": None,
            "qualified": True,
            "rule": None,
            "sent_back": sent_back,
        }
    return {
        "status": state,
        "sent_back": sent_back,
        "rounds": rounds,
        "attempts_left": max(0, rule.max_attempts - since),
        "qualified": state in (PASSED, WAIVED),
        "rule": rule_text(rule),
    }


def _events(project: Project, scenario: str, annotator_ids) -> dict[int, list[tuple]]:
    out: dict[int, list[tuple]] = {}
    for a in QualificationAttempt.objects.filter(
        project=project, scenario=scenario, annotator_id__in=annotator_ids, state=AttemptState.SCORED
    ):
        out.setdefault(a.annotator_id, []).append((a.scored_at, "attempt", a.passed))
    for d in QualificationDecision.objects.filter(project=project, scenario=scenario, annotator_id__in=annotator_ids):
        out.setdefault(d.annotator_id, []).append((d.created_at, d.kind, None))
    for events in out.values():
        events.sort(key=lambda e: e[0])
    return out


def refusals(project: Project, scenarios, users) -> dict[str, dict[int, str]]:
    """Per scenario with a rule: the users not qualified for it, each with the message naming the rule."""
    out: dict[str, dict[int, str]] = {}
    users = list(users)
    for rule in QualificationRule.objects.filter(project=project, scenario__in=set(scenarios)):
        events = _events(project, rule.scenario, [u.pk for u in users])
        for user in users:
            s = status(project, rule.scenario, user, rule=rule, events=events.get(user.pk, []))
            if not s["qualified"]:
                out.setdefault(rule.scenario, {})[user.pk] = (
                    f"{user.username} has not passed the qualification for {rule.scenario} clips "
                    f"(the project's rule: {s['rule']}); they get no production {rule.scenario} assignments until they "
                    "pass "
                    "or a lead waives the rule with a reason"
                )
    return out


def training_clips(project: Project, scenario: str | None = None):
    qs = TrainingClip.objects.filter(project=project).select_related("clip")
    return qs.filter(clip__scenario=scenario) if scenario else qs


def training_for(project: Project, scenario: str, annotator):
    """The training clips ``annotator`` can take: not clips they code (or coded) in production."""
    production = Assignment.objects.filter(annotator=annotator).values("clip_id")
    return training_clips(project, scenario).exclude(clip_id__in=production).order_by("clip__sample_id")


def open_attempt(project: Project, scenario: str, annotator) -> QualificationAttempt | None:
    return QualificationAttempt.objects.filter(
        project=project, scenario=scenario, annotator=annotator, state=AttemptState.OPEN
    ).first()


def attempt_for(user, attempt_id: int) -> QualificationAttempt:
    """An attempt its annotator or a lead may read; 404 for anyone else (never "forbidden")."""
    qs = QualificationAttempt.objects.select_related("project", "annotator")
    if not is_lead(user):
        qs = qs.filter(annotator=user)
    try:
        return qs.get(pk=attempt_id)
    except QualificationAttempt.DoesNotExist:
        raise Http404("no such qualification round") from None


def known_answer_assignments(project: Project, annotator=None):
    qs = Assignment.every.filter(clip__project=project, purpose=AssignmentPurpose.KNOWN_ANSWER).select_related(
        "clip", "annotator"
    )
    return qs.filter(annotator=annotator) if annotator is not None else qs


def units_of(clips, annotator) -> list[dict]:
    """The rows of ``clips`` with their gold and the annotator's document, in (sample id, row index) order."""
    golds = {g.row_id: g for g in Gold.objects.filter(row__clip__in=clips)}
    revisions = {r.row_id: r.content for r in Revision.objects.filter(row__clip__in=clips, annotator=annotator)}
    units = []
    for clip in sorted(clips, key=lambda c: c.sample_id):
        for row in clip.rows.order_by("row_index"):
            gold = golds.get(row.pk)
            if gold is None or row.pk not in revisions:
                continue
            units.append(
                {
                    "sample_id": clip.sample_id,
                    "row_index": row.row_index,
                    "speaker": row.primary_speaker,
                    "dialogue": row.dialogue_cleaned,
                    "gold": gold.content,
                    "coder": revisions[row.pk],
                    "note": gold.note,
                }
            )
    return units


def coder_record(project: Project, person) -> dict:
    """What a coder's record page shows: per scenario their qualification status and rounds, the lead's
    decisions about them, and their known-answer checks scored against the gold (theirs alone)."""
    scenarios = set(QualificationRule.objects.filter(project=project).values_list("scenario", flat=True))
    scenarios |= set(
        QualificationAttempt.objects.filter(project=project, annotator=person).values_list("scenario", flat=True)
    )
    from ..taxonomy import SCENARIOS

    qualification = []
    for scenario in [s for s in SCENARIOS if s in scenarios]:
        qualification.append(
            {
                "scenario": scenario,
                "status": status(project, scenario, person),
                "attempts": list(
                    QualificationAttempt.objects.filter(project=project, scenario=scenario, annotator=person).order_by(
                        "number"
                    )
                ),
            }
        )
    checks = list(known_answer_assignments(project, person).order_by("clip__sample_id"))
    done = [a.clip for a in checks if a.state == AssignmentState.SUBMITTED]
    units = units_of(done, person) if done else []
    return {
        "qualification": qualification,
        "decisions": list(
            QualificationDecision.objects.filter(project=project, annotator=person)
            .select_related("decided_by")
            .order_by("-created_at")
        ),
        "known_answer": {
            "assigned": len(checks),
            "submitted": len(done),
            "rows": len(units),
            "scores": [{"key": k, **v} for k, v in scoring.score(units).items()] if units else [],
        },
    }
