"""Assigning clips to annotators, and the revisions an assignment starts with.

An assignment gives one annotator their own revision of every row of a clip:
a copy of the LLM draft (``from_draft``, the published workflow) or an empty
document (``from_empty``, the calibration subset that measures agreement
without the draft's anchoring). A clip never gets the same annotator twice.
Once a clip is assigned its row skeleton is locked: every coder annotates the
same units.

Which clips start empty is part of the study design: unless the lead names
them, the project's ``from_empty_share`` reserves that share of the clips of
each scenario, counted over every clip assigned so far (so that assigning in
batches keeps the share), chosen by the seed. All coders of a reserved clip
code it from empty: the anchoring effect compares coders' agreement among
themselves with and without the draft, which needs two or more coders on the
same rows in each condition. Each assignment records how its mode was chosen
(``Assignment.design``).
"""
from __future__ import annotations

import random
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Count, Q
from simple_history.utils import bulk_create_with_history

from .labels import state_label
from .models import Assignment, AssignmentMode, AssignmentPurpose, AssignmentState, Clip, ClipState, Draft, Project, Revision, RevisionStatus
from .roles import ANNOTATOR
from .schema import CONVENTION_ROW_KEYS, SKELETON_KEYS, THERAPIST, RowAnnotation
from .services import ServiceError, transition

CONVENTION_ANNOTATION_KEYS = tuple(k for k in CONVENTION_ROW_KEYS if k not in SKELETON_KEYS)

ASSIGNABLE_STATES = {ClipState.PREANNOTATED, ClipState.IN_REVIEW, ClipState.IMPORTED}


def empty_content(draft_content: dict | None = None, speaker: str = "") -> dict:
    """A blank annotation document with the draft's keys (calibration mode).

    Lists are empty, texts are "", and the relation pattern is null (not
    annotated) — except the mirrored cycle keys, which are "" off therapist rows.
    """
    keys = list(draft_content) if draft_content else list(CONVENTION_ANNOTATION_KEYS)
    blank = {}
    for key in keys:
        field = RowAnnotation.model_fields.get(key)
        if field is None:
            continue
        if getattr(field.annotation, "__origin__", None) is list:
            blank[key] = []
        elif key in ("relation_pattern", "relation_pattern_reason"):
            blank[key] = None
        elif key in ("relation_cycle_state", "relation_cycle_reason") and speaker == THERAPIST:
            blank[key] = None  # mirrors the (unset) relation pattern on therapist rows
        else:
            blank[key] = ""
    return blank


def annotators(project: Project | None = None):
    return get_user_model().objects.filter(groups__name=ANNOTATOR, is_active=True).order_by("username")


@dataclass
class AssignmentPlan:
    created: list[Assignment] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # sample ids with a reason
    refused: list[str] = field(default_factory=list)  # annotators left out by a qualification rule, with the rule
    known_answer: list[Assignment] = field(default_factory=list)  # known-answer checks added (``record``)

    @property
    def from_empty(self) -> int:
        return sum(1 for a in self.created if a.mode == AssignmentMode.FROM_EMPTY)

    @property
    def summary(self) -> str:
        text = f"{len(self.created)} assignments created, {len(self.skipped)} clips skipped"
        if self.created:
            text += f"; {self.from_empty} of them start empty (coded from empty, to measure the draft's pull)"
        if self.known_answer:
            text += f"; {len(self.known_answer)} known-answer checks added"
        return text


def _load(project: Project, users, *, mode: str | None = None) -> Counter:
    counts = Counter({u.pk: 0 for u in users})
    assignments = Assignment.objects.filter(clip__project=project, annotator__in=users)
    if mode is not None:
        assignments = assignments.filter(mode=mode)
    for row in assignments.values("annotator").annotate(n=Count("id")):
        counts[row["annotator"]] = row["n"]
    return counts


@transaction.atomic
def assign_clips(
    project: Project,
    *,
    clips=None,
    users=None,
    per_clip: int | None = None,
    calibration: int | list[str] | None = None,
    seed: int = 0,
    actor=None,
) -> AssignmentPlan:
    """Give every clip ``per_clip`` distinct annotators, spreading the load evenly.

    ``calibration`` is the lead's own choice of the clips that start empty: a
    number of clips (chosen reproducibly from ``seed``) or a list of sample ids.
    Without it, the project's from-empty share reserves clips (``_design``).
    A clip that already has coders gives new ones the mode its coders have.
    """
    from .record.selectors import refusals  # the record reads assignments too: imported here, not at the top

    per_clip = per_clip or project.annotators_per_clip
    named = users is not None
    users = list(users if users is not None else annotators(project))
    clips = list((clips if clips is not None else project.clips.all()).filter(project=project).order_by("sample_id"))
    # Qualification (``annotation.record``): an annotator named by the lead who has not passed the rule of a
    # scenario is refused outright; from the whole team, they are left out of that scenario's clips.
    barred = refusals(project, {c.scenario for c in clips if c.state in ASSIGNABLE_STATES}, users)
    if named and barred:
        raise ServiceError("; ".join(sorted({m for by_user in barred.values() for m in by_user.values()})))
    if len(users) < per_clip:
        raise ServiceError(f"{per_clip} annotators per clip requested but only {len(users)} annotators are available")
    existing: dict[int, list[Assignment]] = defaultdict(list)
    for a in Assignment.objects.filter(clip__in=clips):
        existing[a.clip_id].append(a)
    open_clips = [c for c in clips if c.state in ASSIGNABLE_STATES and c.pk not in existing]
    modes = _design(project, open_clips, calibration, seed, selection=clips)
    load = _load(project, users)
    empty_load = _load(project, users, mode=AssignmentMode.FROM_EMPTY)
    by_pk = {u.pk: u for u in users}
    plan = AssignmentPlan(refused=sorted({m for by_user in barred.values() for m in by_user.values()}))
    for clip in clips:
        if clip.state not in ASSIGNABLE_STATES:
            plan.skipped.append(f"{clip.sample_id}: it is {state_label(clip.state)}, not open for assignment")
            continue
        if not clip.rows.exists():
            plan.skipped.append(f"{clip.sample_id}: no rows yet (pre-annotate it first)")
            continue
        have = {a.annotator_id for a in existing.get(clip.pk, [])}
        needed = per_clip - len(have)
        if needed <= 0:
            continue
        if clip.pk in existing:  # new coders of a clip code it as its other coders do
            first = min(existing[clip.pk], key=lambda a: a.pk)
            mode, design = first.mode, dict(first.design or {})
        else:
            mode, design = modes[clip.sample_id]
        # Least-loaded first; on a clip coded from empty, those with fewer such clips first; username breaks ties.
        empty_first = (lambda pk: empty_load[pk]) if mode == AssignmentMode.FROM_EMPTY else (lambda pk: 0)
        unqualified = barred.get(clip.scenario, {})
        candidates = sorted((pk for pk in load if pk not in have and pk not in unqualified), key=lambda pk: (load[pk], empty_first(pk), by_pk[pk].username))[:needed]
        for pk in candidates:
            plan.created.append(start_assignment(clip, by_pk[pk], mode=mode, actor=actor, design=design))
            load[pk] += 1
            empty_load[pk] += mode == AssignmentMode.FROM_EMPTY
    from .record.services import add_known_answer_checks

    plan.known_answer = add_known_answer_checks(project, plan.created, seed=seed, actor=actor)
    return plan


def _calibration_ids(clips, calibration, seed) -> set[str]:
    if isinstance(calibration, int):
        ids = sorted(c.sample_id for c in clips)
        return set(random.Random(seed).sample(ids, min(calibration, len(ids))))
    known = {c.sample_id for c in clips}
    unknown = sorted(set(calibration) - known)
    if unknown:
        raise ServiceError(f"calibration clips not in this selection: {', '.join(unknown)}")
    return set(calibration)


def _round(x: Decimal) -> int:
    return int(x.quantize(Decimal(1), rounding=ROUND_HALF_UP))


def _design(project: Project, clips: list[Clip], calibration, seed: int, selection: list[Clip] | None = None) -> dict[str, tuple[str, dict]]:
    """Per sample id of ``clips`` (clips nobody is assigned to yet): the mode their assignments start in, and why.

    The lead's ``calibration`` (a number or a list of sample ids) decides when given. Otherwise, per scenario,
    the project's from-empty share of every clip assigned so far plus these, less the clips already coded from
    empty, are drawn from these by ``seed``: the share holds however the clips are assigned in batches.
    """
    if calibration is not None:
        if not isinstance(calibration, int):  # named clips must be in the selection, assigned already or not
            _calibration_ids(selection if selection is not None else clips, calibration, seed)
            calibration = [c for c in calibration if c in {clip.sample_id for clip in clips}]
        chosen = _calibration_ids(clips, calibration, seed)
        lead = {"by": "lead"}
        return {c.sample_id: (AssignmentMode.FROM_EMPTY if c.sample_id in chosen else AssignmentMode.FROM_DRAFT, lead) for c in clips}
    share = Decimal(project.from_empty_share)
    record = {"by": "design", "share": float(share), "seed": seed}
    assigned, reserved = Counter(), Counter()
    for clip_id, scenario in Assignment.objects.filter(clip__project=project).values_list("clip_id", "clip__scenario").distinct():
        assigned[scenario] += 1
    for clip_id, scenario in (
        Assignment.objects.filter(clip__project=project, mode=AssignmentMode.FROM_EMPTY).values_list("clip_id", "clip__scenario").distinct()
    ):
        reserved[scenario] += 1
    out = {}
    by_scenario: dict[str, list[str]] = defaultdict(list)
    for clip in clips:
        by_scenario[clip.scenario].append(clip.sample_id)
    for scenario, ids in sorted(by_scenario.items()):
        ids.sort()
        target = _round(share * (assigned[scenario] + len(ids)))
        k = max(0, min(len(ids), target - reserved[scenario]))
        chosen = set(random.Random(f"{seed}:{scenario}").sample(ids, k))
        for sample_id in ids:
            out[sample_id] = (AssignmentMode.FROM_EMPTY if sample_id in chosen else AssignmentMode.FROM_DRAFT, record)
    return out


def start_assignment(
    clip: Clip, user, *, mode: str = AssignmentMode.FROM_DRAFT, actor=None, design: dict | None = None, purpose: str = AssignmentPurpose.PRODUCTION
) -> Assignment:
    """Create the assignment and one revision per row (draft copy or empty); ``design`` records why this mode.

    ``purpose``: production work, or the annotator's record (a qualification round, a known-answer check).
    """
    if Assignment.every.filter(clip=clip, annotator=user).exists():
        raise ServiceError(f"{user.username} is already assigned to {clip.sample_id}")
    assignment = Assignment(clip=clip, annotator=user, mode=mode, design=design or {}, purpose=purpose)
    if actor is not None:
        assignment._history_user = actor
    assignment.save()
    drafts = {d.row_id: d for d in Draft.objects.filter(row__clip=clip)}
    revisions = []
    for row in clip.rows.all():
        draft = drafts.get(row.pk)
        if mode == AssignmentMode.FROM_DRAFT and draft is not None:
            content, layout = dict(draft.content), dict(draft.layout)
        else:
            content, layout = empty_content(draft.content if draft else None, row.primary_speaker), dict(draft.layout) if draft else {}
        revisions.append(Revision(row=row, annotator=user, content=content, layout=layout, status=RevisionStatus.UNTOUCHED))
    bulk_create_with_history(revisions, Revision, default_user=actor)
    if purpose == AssignmentPurpose.PRODUCTION and clip.state in (ClipState.IMPORTED, ClipState.PREANNOTATED):
        transition(clip, ClipState.IN_REVIEW, actor=actor, reason=f"assigned to {user.username}")
    return assignment


@transaction.atomic
def reassign(assignment: Assignment, new_user, *, actor=None, discard_edits: bool = False) -> Assignment:
    """Hand a clip to another annotator. Edited work is only thrown away when asked to."""
    if Assignment.every.filter(clip=assignment.clip, annotator=new_user).exists():
        raise ServiceError(f"{new_user.username} is already assigned to {assignment.clip.sample_id}")
    revisions = Revision.objects.filter(row__clip=assignment.clip, annotator=assignment.annotator)
    if not discard_edits and revisions.exclude(status=RevisionStatus.UNTOUCHED).exists():
        raise ServiceError(f"{assignment.annotator.username} has already edited {assignment.clip.sample_id}; reassigning would discard that work")
    clip, mode, design = assignment.clip, assignment.mode, assignment.design
    for revision in revisions:
        revision.delete()  # one by one, so each deletion is in the audit trail
    assignment.delete()
    return start_assignment(clip, new_user, mode=mode, actor=actor, design=design)


def annotator_progress(project: Project) -> list[dict]:
    """Per annotator: clips assigned and submitted, rows reviewed of rows assigned."""
    rows = (
        Revision.objects.filter(row__clip__project=project)
        .values("annotator__username")
        .annotate(
            rows=Count("id"),
            reviewed=Count("id", filter=Q(status=RevisionStatus.REVIEWED)),
            edited=Count("id", filter=Q(status=RevisionStatus.EDITED)),
        )
    )
    clips = (
        Assignment.objects.filter(clip__project=project)
        .values("annotator__username")
        .annotate(clips=Count("id"), submitted=Count("id", filter=Q(state=AssignmentState.SUBMITTED)))
    )
    out = {c["annotator__username"]: {"annotator": c["annotator__username"], "clips": c["clips"], "submitted": c["submitted"], "rows": 0, "reviewed": 0, "edited": 0} for c in clips}
    for r in rows:
        out.setdefault(r["annotator__username"], {"annotator": r["annotator__username"], "clips": 0, "submitted": 0}).update(rows=r["rows"], reviewed=r["reviewed"], edited=r["edited"])
    return sorted(out.values(), key=lambda d: d["annotator"])
