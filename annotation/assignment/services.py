"""Assigning clips in bulk: k coders per clip with balanced load, the study design's from-empty share, the
record's qualification rules and known-answer checks."""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal

from django.db import transaction
from django.db.models import Count

from ..labels import state_label
from ..models import (
    Assignment,
    AssignmentMode,
    Clip,
    ClipState,
    Project,
)
from ..selectors import annotators
from ..services import ServiceError
from ..starting import start_assignment

ASSIGNABLE_STATES = {ClipState.PREANNOTATED, ClipState.IN_REVIEW, ClipState.IMPORTED}


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
    from ..record.selectors import refusals  # the record reads assignments too: imported here, not at the top

    per_clip = per_clip or project.annotators_per_clip
    named = users is not None
    users = list(users if users is not None else annotators())
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
        candidates = sorted(
            (pk for pk in load if pk not in have and pk not in unqualified),
            key=lambda pk: (load[pk], empty_first(pk), by_pk[pk].username),
        )[:needed]
        for pk in candidates:
            plan.created.append(start_assignment(clip, by_pk[pk], mode=mode, actor=actor, design=design))
            load[pk] += 1
            empty_load[pk] += mode == AssignmentMode.FROM_EMPTY
    from ..record.services import add_known_answer_checks

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


def _design(
    project: Project, clips: list[Clip], calibration, seed: int, selection: list[Clip] | None = None
) -> dict[str, tuple[str, dict]]:
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
        return {
            c.sample_id: (AssignmentMode.FROM_EMPTY if c.sample_id in chosen else AssignmentMode.FROM_DRAFT, lead)
            for c in clips
        }
    share = Decimal(project.from_empty_share)
    record = {"by": "design", "share": float(share), "seed": seed}
    assigned, reserved = Counter(), Counter()
    for _clip_id, scenario in (
        Assignment.objects.filter(clip__project=project).values_list("clip_id", "clip__scenario").distinct()
    ):
        assigned[scenario] += 1
    for _clip_id, scenario in (
        Assignment.objects.filter(clip__project=project, mode=AssignmentMode.FROM_EMPTY)
        .values_list("clip_id", "clip__scenario")
        .distinct()
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
