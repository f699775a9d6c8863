"""Writing generated clips into a project: clips, cues and rows, drafts, revisions, gold and assignments, in bulk and
with their history records."""

from __future__ import annotations

import time
from collections import Counter

from django.db import transaction
from django.utils import timezone
from simple_history.utils import bulk_create_with_history

from ..models import (
    Assignment,
    AssignmentMode,
    AssignmentState,
    Clip,
    ClipState,
    Cue,
    Draft,
    DraftSource,
    Gold,
    Project,
    Revision,
    RevisionStatus,
    Row,
)
from ..roles import ANNOTATOR
from ..schema import CLIP_KEYS, SKELETON_KEYS
from ..taxonomy import THERAPIST
from .clips import SyntheticClip, SyntheticError, build_clips, check_generated
from .shape import (
    RELEASE_CLIPS,
)

BATCH = 1000


def annotator_usernames(project: Project, annotators: int) -> list[str]:
    return [f"{project.slug}_annotator{k}" for k in range(1, annotators + 1)]


def ensure_annotators(project: Project, annotators: int) -> list:
    """``<slug>_annotator1..N`` with the annotator role: reused when they exist."""
    from django.contrib.auth import get_user_model

    from ..services import create_user

    User = get_user_model()
    names = annotator_usernames(project, annotators)
    existing = {u.username: u for u in User.objects.filter(username__in=names)}
    return [existing.get(name) or create_user(name, ANNOTATOR)[0] for name in names]


def generate(project: Project, *, clips: int = RELEASE_CLIPS, annotators: int = 3, seed: int = 0) -> dict:
    """Build and store a synthetic adjudicated benchmark in ``project``; returns the counts.

    Refuses (SyntheticError, nothing written) when a generated sample id already
    exists in the project or a generated document fails ``check_clip``.
    """
    started = time.perf_counter()
    built = build_clips(clips=clips, annotators=annotators, seed=seed, taxonomy_version=project.taxonomy_version)
    problems = check_generated(built, project.taxonomy_version)
    if problems:  # a generator bug, never data to store
        raise SyntheticError("generated documents fail validation:\n" + "\n".join(problems[:20]))
    taken = set(project.clips.filter(sample_id__in=[c.sample_id for c in built]).values_list("sample_id", flat=True))
    if taken:
        raise SyntheticError(
            f"project {project.slug} already has {len(taken)} of these clips (e.g. {sorted(taken)[0]}); "
            "use another seed or project"
        )

    with transaction.atomic():
        users = ensure_annotators(project, annotators)
        written = store_clips(
            project,
            built,
            state=ClipState.ADJUDICATED,
            provenance={"generator": "synthetic", "seed": seed},
            annotators=users,
            gold_note=f"synthetic: per-field majority of {annotators} annotators, else annotator 1",
        )

    scenarios = Counter(c.scenario for c in built)
    return {
        "clips": len(built),
        "couple_clips": scenarios["couple"],
        "family_clips": scenarios["family"],
        **written,
        "documents": written["drafts"] + written["revisions"] + written["gold"],
        "annotators": [u.username for u in users],
        "seconds": round(time.perf_counter() - started, 2),
    }


def _clip(project: Project, c: SyntheticClip, **fields) -> Clip:
    """The clip row of a generated clip; ``fields``: its state and what else the caller's stage has."""
    return Clip(
        project=project,
        sample_id=c.sample_id,
        scenario=c.scenario,
        participants=list(c.participants),
        source_file=c.source_file,
        duration=c.duration,
        content_hash=c.content_hash,
        **fields,
    )


def store_transcripts(project: Project, built: list[SyntheticClip]) -> int:
    """Write generated clips as ingest leaves them: imported clips with their cues, no rows, drafts or work (for
    runs that start at pre-annotation). Returns the number of cues written."""
    clip_objs = bulk_create_with_history(
        [_clip(project, c, state=ClipState.IMPORTED) for c in built],
        Clip,
        batch_size=BATCH,
    )
    cues = [
        Cue(
            clip=obj,
            position=s["row_index"],
            start_time=s["start_time"],
            end_time=s["end_time"],
            speaker=s["primary_speaker"],
            text=s["dialogue_cleaned"],
        )
        for obj, c in zip(clip_objs, built)
        for s in c.skeletons
    ]
    Cue.objects.bulk_create(cues, batch_size=BATCH)
    return len(cues)


def store_clips(
    project: Project,
    built: list[SyntheticClip],
    *,
    state: str,
    provenance: dict,
    annotators: list = (),
    gold_note: str | None = None,
) -> dict:
    """Write generated clips into ``project`` in bulk, with their history records; returns what was written.

    Every clip gets its rows, cues and draft. With ``annotators``, each of them gets a submitted assignment and their
    revision of every row (in the order of ``SyntheticClip.revisions``); with ``gold_note``, every row gets its gold.
    The caller holds the transaction and has checked the documents (``check_generated``)."""
    clip_objs = [
        _clip(
            project,
            c,
            release_keys=list(CLIP_KEYS),
            state=state,
            # The rows exist, so the speaker tags (already entity names) count as confirmed.
            speaker_map={name: name for name in (*c.participants, THERAPIST)},
            speaker_map_confirmed=True,
        )
        for c in built
    ]
    # bulk_create_with_history returns the objects with their ids, in order, on every backend.
    clip_objs = bulk_create_with_history(clip_objs, Clip, batch_size=BATCH)
    row_objs = [
        Row(clip=obj, **{k: s[k] for k in SKELETON_KEYS}) for obj, c in zip(clip_objs, built) for s in c.skeletons
    ]
    row_objs = bulk_create_with_history(row_objs, Row, batch_size=BATCH)
    Cue.objects.bulk_create(
        [
            Cue(
                clip_id=r.clip_id,
                position=r.row_index,
                start_time=r.start_time,
                end_time=r.end_time,
                speaker=r.primary_speaker,
                text=r.dialogue_cleaned,
            )
            for r in row_objs
        ],
        batch_size=BATCH,
    )

    def paired(contents_of):
        rows = iter(row_objs)
        for c in built:
            for content in contents_of(c):
                yield next(rows), content

    drafts = [
        Draft(row=r, content=content, source=DraftSource.SYNTHETIC, provenance=provenance)
        for r, content in paired(lambda c: c.draft)
    ]
    bulk_create_with_history(drafts, Draft, batch_size=BATCH)
    revisions = [
        Revision(row=r, annotator=user, content=content, status=RevisionStatus.REVIEWED)
        for k, user in enumerate(annotators)
        for r, content in paired(lambda c, k=k: c.revisions[k])
    ]
    bulk_create_with_history(revisions, Revision, batch_size=BATCH)
    golds = (
        []
        if gold_note is None
        else [Gold(row=r, content=content, note=gold_note) for r, content in paired(lambda c: c.gold)]
    )
    bulk_create_with_history(golds, Gold, batch_size=BATCH)
    now = timezone.now()
    assignments = [
        Assignment(
            clip=obj, annotator=user, mode=AssignmentMode.FROM_DRAFT, state=AssignmentState.SUBMITTED, submitted_at=now
        )
        for obj in clip_objs
        for user in annotators
    ]
    bulk_create_with_history(assignments, Assignment, batch_size=BATCH)
    return {
        "rows": len(row_objs),
        "cues": len(row_objs),
        "drafts": len(drafts),
        "revisions": len(revisions),
        "gold": len(golds),
        "assignments": len(assignments),
    }
