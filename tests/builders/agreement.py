"""Builders for agreement tests: clips whose annotators' revisions encode given values.

Reliability data arrive as a coders x units table (None = the coder has no
value for that unit). Each run of units coded by the same set of coders
becomes one clip to which exactly those coders are assigned, so missing
values come about the way they do on the platform: the coder was not
assigned to that clip. Reliability data are coded work, so those clips'
assignments are submitted; ``make_clip`` leaves them open (as assigned) unless
told otherwise.
"""

from __future__ import annotations

from django.utils import timezone

from annotation.models import (
    Assignment,
    AssignmentMode,
    AssignmentState,
    Clip,
    ClipState,
    Draft,
    Revision,
    RevisionStatus,
    Row,
)
from annotation.schema import SKELETON_KEYS
from annotation.services import create_user

from .documents import client_row, therapist_row

SUBMITTED = AssignmentState.SUBMITTED
UTTERANCE_LABELS = {0: "disclosure", 1: "defense", 2: "accusation", 3: "request", 4: "recollection", 5: "reflection"}


def client_content(speaker: str = "Maya", **overrides) -> dict:
    """A valid client-row annotation document (no skeleton keys)."""
    row = client_row(1, speaker=speaker, **overrides)
    return {k: v for k, v in row.items() if k not in SKELETON_KEYS}


def therapist_content(**overrides) -> dict:
    row = therapist_row(1, **overrides)
    return {k: v for k, v in row.items() if k not in SKELETON_KEYS}


def coded_client_content(value: int, speaker: str = "Maya") -> dict:
    """One value in two fields at once: the utterance type (nominal) and the speaker's intensity (interval)."""
    return client_content(
        speaker,
        utterance_type=UTTERANCE_LABELS[value],
        internal_emotion=[{"person": speaker, "emotion_description": "feels unheard", "intensity": value}],
    )


def annotators(prefix: str, n: int) -> list:
    return [create_user(f"{prefix}{i}", "annotator")[0] for i in range(1, n + 1)]


def make_clip(
    project,
    sample_id: str,
    contents_by_user: dict,
    *,
    speakers=None,
    draft=None,
    mode=AssignmentMode.FROM_DRAFT,
    scenario="couple",
    assigned=None,
    state=AssignmentState.ASSIGNED,
) -> Clip:
    """A clip with one row per content; ``contents_by_user`` maps each user to a content (or None) per row.

    Every user in ``contents_by_user`` is assigned (with ``mode``, in ``state``)
    unless ``assigned`` names who is; ``draft`` is a content per row for the
    LLM draft. Revisions of submitted assignments are marked reviewed, as the
    workspace requires before a submission.
    """
    n = len(next(iter(contents_by_user.values())) if contents_by_user else draft)
    participants = ["Ada", "Ben", "Chidi", "Dora"] if scenario == "family" else ["Maya", "Tobias"]
    clip = Clip.objects.create(
        project=project, sample_id=sample_id, scenario=scenario, participants=participants, state=ClipState.IN_REVIEW
    )
    rows = [
        Row.objects.create(
            clip=clip,
            row_index=i + 1,
            start_time=5.0 * i,
            end_time=5.0 * i + 4,
            primary_speaker=(speakers[i] if speakers else "Maya"),
            dialogue_cleaned="words",
        )
        for i in range(n)
    ]
    submitted = state == AssignmentState.SUBMITTED
    for user in assigned if assigned is not None else contents_by_user:
        Assignment.objects.create(
            clip=clip, annotator=user, mode=mode, state=state, submitted_at=timezone.now() if submitted else None
        )
    status = RevisionStatus.REVIEWED if submitted else RevisionStatus.UNTOUCHED
    for user, contents in contents_by_user.items():
        for row, content in zip(rows, contents):
            if content is not None:
                Revision.objects.create(row=row, annotator=user, content=content, status=status)
    for row, content in zip(rows, draft or []):
        Draft.objects.create(row=row, content=content, source="synthetic")
    return clip


def reliability_project(project, table: list[list], encode, *, prefix: str = "coder") -> list:
    """Store a coders x units table as clips and revisions (see the module docstring); returns the coders."""
    users = annotators(prefix, len(table))
    units = list(zip(*table))
    runs: list[tuple[frozenset, list[int]]] = []
    for u, column in enumerate(units):
        coders = frozenset(i for i, v in enumerate(column) if v is not None)
        if runs and runs[-1][0] == coders:
            runs[-1][1].append(u)
        else:
            runs.append((coders, [u]))
    for k, (coders, unit_ids) in enumerate(runs, start=1):
        contents = {users[i]: [encode(units[u][i]) for u in unit_ids] for i in sorted(coders)}
        make_clip(project, f"reference/{k:03d}", contents, state=SUBMITTED)
    return users


def reopen_untouched(clip) -> None:
    """As if ``clip`` had just been assigned: open assignments, revisions that are copies of the draft."""
    Assignment.objects.filter(clip=clip).update(state=AssignmentState.ASSIGNED, submitted_at=None)
    for draft in Draft.objects.filter(row__clip=clip):
        Revision.objects.filter(row=draft.row).update(content=draft.content, status=RevisionStatus.UNTOUCHED)


# Krippendorff's example C (four coders, twelve units, values 1-5, None = not coded).
_ = None
EXAMPLE_C = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, _, _, _],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, _, 3],
    [_, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, _],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, _],
]


def report_slice(report: dict, key: str = "all/all") -> dict:
    """One slice of an agreement report (``scenario/clip-group``; default the whole scope)."""
    return next(s for s in report["slices"] if s["key"] == key)
