"""Writes of the record: pass rules, training material, qualification rounds, waivers and send-backs,
and known-answer checks added to production assignments. Each write is in the audit trail (the
models' history, with the acting user)."""

from __future__ import annotations

import random
from collections import defaultdict
from decimal import ROUND_HALF_UP, Decimal

from django.conf import settings
from django.db import transaction
from django.db.models import Count, F
from django.utils import timezone

from .. import jobs
from ..models import (
    Assignment,
    AssignmentMode,
    AssignmentPurpose,
    AssignmentState,
    Clip,
    ClipState,
    Gold,
    Job,
    Project,
    Revision,
    RevisionStatus,
)
from ..services import ServiceError, closed_to
from ..starting import empty_content, start_assignment
from ..taxonomy import SCENARIOS
from ..workspace.services import submit_assignment
from . import free_text, scoring, selectors
from .models import (
    AttemptState,
    DecisionKind,
    QualificationAttempt,
    QualificationDecision,
    QualificationRule,
    TrainingClip,
)


def _audited(obj, actor):
    if actor is not None:
        obj._history_user = actor
    return obj


def set_rule(
    project: Project,
    scenario: str,
    *,
    fields,
    min_score: float,
    min_rows: int,
    max_attempts: int,
    actor=None,
    reason: str = "",
) -> QualificationRule:
    """Set (or replace) the pass rule of ``scenario``: from now on unqualified annotators get no production work
    there."""
    if scenario not in SCENARIOS:
        raise ServiceError(f"unknown scenario {scenario!r} (choose from {', '.join(SCENARIOS)})")
    fields = list(dict.fromkeys(fields))
    unknown = [f for f in fields if f not in {m.key for m in scoring.SCORED}]
    if not fields or unknown:
        raise ServiceError(
            f"name the fields to score from: {', '.join(m.key for m in scoring.SCORED)}"
            + (f" (unknown: {', '.join(unknown)})" if unknown else "")
        )
    if not 0 < min_score <= 1:
        raise ServiceError("the minimum score is an alpha between 0 and 1")
    if min_rows < 1 or max_attempts < 1:
        raise ServiceError("the rule needs at least one row and one attempt")
    rule = QualificationRule.objects.filter(project=project, scenario=scenario).first() or QualificationRule(
        project=project, scenario=scenario
    )
    rule.fields, rule.min_score, rule.min_rows, rule.max_attempts, rule.reason, rule.updated_by = (
        fields,
        float(min_score),
        int(min_rows),
        int(max_attempts),
        reason,
        actor,
    )
    _audited(rule, actor).save()
    return rule


def remove_rule(project: Project, scenario: str, *, actor=None) -> None:
    for rule in QualificationRule.objects.filter(project=project, scenario=scenario):
        _audited(rule, actor).delete()


def has_full_gold(clip: Clip) -> bool:
    rows = clip.rows.count()
    return rows > 0 and Gold.objects.filter(row__clip=clip).count() == rows


def mark_training(project: Project, clip: Clip, *, actor=None, note: str = "") -> TrainingClip:
    """Set a clip with gold aside as qualification material for its scenario."""
    if clip.project_id != project.pk:
        raise ServiceError(f"{clip.sample_id} is not in {project.slug}")
    if closed_to(clip.state, AssignmentPurpose.QUALIFICATION):
        raise ServiceError(
            f"{clip.sample_id} is {clip.state}: a discarded clip has left the benchmark, so it cannot train anyone"
        )
    if not has_full_gold(clip):
        raise ServiceError(
            f"{clip.sample_id} has no gold on every row: only adjudicated (or imported) gold can be training material"
        )
    existing = TrainingClip.objects.filter(clip=clip).first()
    if existing:
        return existing
    training = _audited(TrainingClip(project=project, clip=clip, note=note, marked_by=actor), actor)
    training.save()
    return training


def unmark_training(project: Project, clip: Clip, *, actor=None) -> None:
    for t in TrainingClip.objects.filter(project=project, clip=clip):
        _audited(t, actor).delete()


# --- rounds ---------------------------------------------------------------------------------------------


@transaction.atomic
def start_round(project: Project, scenario: str, annotator, *, actor=None) -> QualificationAttempt:
    """A new round: every training clip of the scenario the annotator does not code in production, from empty."""
    rule = selectors.rule_of(project, scenario)
    current = selectors.open_attempt(project, scenario, annotator)
    if current is not None:
        return current
    state = selectors.status(project, scenario, annotator, rule=rule)
    if rule is not None and state["qualified"]:
        raise ServiceError(f"{annotator.username} is already qualified for {scenario} clips ({state['status']})")
    if rule is not None and state["attempts_left"] == 0:
        raise ServiceError(
            f"{annotator.username} has used the {rule.max_attempts} rounds the rule allows; a lead can send them back "
            "to qualification (which gives the rounds again) or waive the rule"
        )
    clips = list(selectors.training_for(project, scenario, annotator))
    if not clips:
        raise ServiceError(
            f"no training clips for {scenario} in {project.slug} yet: a lead marks clips with gold as training "
            "material first"
        )
    number = (
        QualificationAttempt.objects.filter(project=project, scenario=scenario, annotator=annotator)
        .order_by("-number")
        .values_list("number", flat=True)
        .first()
        or 0
    ) + 1
    attempt = _audited(
        QualificationAttempt(
            project=project,
            scenario=scenario,
            annotator=annotator,
            number=number,
            sample_ids=[t.clip.sample_id for t in clips],
        ),
        actor or annotator,
    )
    attempt.save()
    for t in clips:
        existing = Assignment.every.filter(clip=t.clip, annotator=annotator).first()
        if existing is None:
            start_assignment(
                t.clip,
                annotator,
                mode=AssignmentMode.FROM_EMPTY,
                actor=actor or annotator,
                purpose=AssignmentPurpose.QUALIFICATION,
            )
        else:
            _reset_to_empty(existing, actor or annotator)
    return attempt


def _reset_to_empty(assignment: Assignment, actor) -> None:
    """A new round codes the clip from empty again (the previous round's documents are in its attempt)."""
    for revision in Revision.objects.filter(row__clip=assignment.clip, annotator=assignment.annotator).select_related(
        "row", "row__draft"
    ):
        draft = getattr(revision.row, "draft", None)
        revision.content = empty_content(draft.content if draft else None, revision.row.primary_speaker)
        revision.status = RevisionStatus.UNTOUCHED
        revision.version += 1
        _audited(revision, actor).save()
    assignment.state, assignment.submitted_at = AssignmentState.ASSIGNED, None
    _audited(assignment, actor).save()


def round_assignments(attempt: QualificationAttempt):
    return Assignment.every.filter(
        clip__project=attempt.project,
        clip__sample_id__in=attempt.sample_ids,
        annotator=attempt.annotator,
        purpose=AssignmentPurpose.QUALIFICATION,
    ).select_related("clip")


@transaction.atomic
def submit_round(attempt: QualificationAttempt, user) -> QualificationAttempt:
    """Hand in every clip of the round (each must be fully reviewed, as in production), then score it."""
    attempt = QualificationAttempt.objects.select_for_update().get(pk=attempt.pk, annotator=user)
    if attempt.state == AttemptState.SCORED:
        return attempt
    assignments = list(round_assignments(attempt))
    for a in assignments:
        submit_assignment(a, user)
    clips = [a.clip for a in assignments]
    units = selectors.units_of(clips, user)
    rule = selectors.rule_of(attempt.project, attempt.scenario)
    attempt.scores = scoring.score(units, seed=attempt.number)
    attempt.feedback = scoring.feedback(attempt.project, attempt.scenario, units)
    attempt.answers = {f"{u['sample_id']}#{u['row_index']}": u["coder"] for u in units}
    attempt.rows = len(units)
    if rule is not None:
        attempt.rule = selectors.rule_dict(rule)
        attempt.passed, why = scoring.passes(attempt.scores, attempt.rule)
        attempt.rule["why_not"] = why
    else:
        attempt.passed = None
    attempt.state, attempt.scored_at = AttemptState.SCORED, timezone.now()
    _audited(attempt, user).save()
    enqueue_text_scores(attempt, user)
    return attempt


def enqueue_text_scores(attempt: QualificationAttempt, user=None) -> Job:
    """Hand the round's free-text scoring to a worker (the embedding model never loads in a web request)."""
    from .celery_tasks import score_round_texts_task

    job = Job.objects.create(
        kind=free_text.JOB_KIND,
        project=attempt.project,
        key=str(attempt.pk),
        params={"attempt": attempt.pk},
        created_by=user,
    )
    # With no broker (the demo) the embedding model loads in a thread after the response, never in the request.
    return jobs.enqueue(job, score_round_texts_task, queue=settings.EMBEDDINGS_QUEUE, in_thread_when_eager=True)


def store_text_scores(attempt_id: int, *, provider=None) -> int:
    """Score the free-text fields of a scored round on the documents it was scored on (its ``answers``) and
    store them beside the label scores; returns the number of fields stored. Informative only: pass rules
    name label measures."""
    attempt = QualificationAttempt.objects.select_related("project").get(pk=attempt_id)
    clips = list(Clip.objects.filter(project=attempt.project, sample_id__in=attempt.sample_ids))
    units = [
        {**u, "coder": attempt.answers.get(f"{u['sample_id']}#{u['row_index']}", u["coder"])}
        for u in selectors.units_of(clips, attempt.annotator)
    ]
    texts = free_text.score_texts(units, seed=attempt.number, provider=provider)
    with transaction.atomic():
        attempt = QualificationAttempt.objects.select_for_update().get(pk=attempt_id)
        attempt.scores = {**free_text.label_scores(attempt.scores), **texts}
        attempt.save(update_fields=["scores"])
    return len(texts)


def decide(project: Project, scenario: str, annotator, kind: str, reason: str, *, actor) -> QualificationDecision:
    """A waiver of the rule, or a send-back to qualification; always with the lead's reason."""
    if kind not in DecisionKind.values:
        raise ServiceError(f"unknown decision {kind!r}")
    reason = (reason or "").strip()
    if not reason:
        raise ServiceError("say why (a reason is recorded with the decision)")
    if scenario not in SCENARIOS:
        raise ServiceError(f"unknown scenario {scenario!r}")
    decision = _audited(
        QualificationDecision(
            project=project, scenario=scenario, annotator=annotator, kind=kind, reason=reason[:5000], decided_by=actor
        ),
        actor,
    )
    decision.save()
    return decision


# --- known-answer checks --------------------------------------------------------------------------------


def _round(x: Decimal) -> int:
    return int(x.quantize(Decimal(1), rounding=ROUND_HALF_UP))


def known_answer_pool(project: Project):
    """Clips whose every row has gold, open to a known-answer check (released ones too: ``services.closed_to``),
    and not training material."""
    return (
        project.clips.exclude(state=ClipState.DISCARDED)
        .exclude(pk__in=TrainingClip.objects.values("clip_id"))
        .annotate(n_rows=Count("rows", distinct=True), n_gold=Count("rows__gold", distinct=True))
        .filter(n_rows__gt=0, n_gold=F("n_rows"))
    )


def add_known_answer_checks(
    project: Project, created: list[Assignment], *, seed: int = 0, actor=None
) -> list[Assignment]:
    """Add the project's known-answer share of each annotator's new assignments as gold clips of the same
    scenarios, drawn by ``seed``; off (nothing added) while the share is 0."""
    share = Decimal(project.known_answer_share or 0)
    if share <= 0 or not created:
        return []
    per_user: dict[int, list[Assignment]] = defaultdict(list)
    for a in created:
        per_user[a.annotator_id].append(a)
    pool = list(known_answer_pool(project).order_by("sample_id"))
    added = []
    for _user_pk, theirs in sorted(per_user.items()):
        user = theirs[0].annotator
        k = _round(share * len(theirs))
        scenarios = {a.clip.scenario for a in theirs}
        taken = set(Assignment.every.filter(annotator=user).values_list("clip_id", flat=True))
        candidates = [c.sample_id for c in pool if c.scenario in scenarios and c.pk not in taken]
        chosen = set(random.Random(f"{seed}:known-answer:{user.username}").sample(candidates, min(k, len(candidates))))
        for clip in pool:
            if clip.sample_id in chosen:
                added.append(
                    start_assignment(
                        clip, user, mode=AssignmentMode.FROM_DRAFT, actor=actor, purpose=AssignmentPurpose.KNOWN_ANSWER
                    )
                )
    return added


def set_known_answer_share(project: Project, share: float, *, actor=None) -> Project:
    if not 0 <= share <= 0.5:
        raise ServiceError("the known-answer share is between 0 (off) and 0.5")
    project.known_answer_share = Decimal(str(round(share, 2)))
    _audited(project, actor).save(update_fields=["known_answer_share"])
    return project
