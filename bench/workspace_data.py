"""Data for the workspace benchmark: a throw-away project, family clips of a
chosen length, annotators with API tokens, and their assignments.

Clips are drawn with the synthetic generator's row writer (annotation.synthetic)
so that the rows, cues and drafts look like the real release, but with an exact
row count (the generator's own family clips have 45-110 rows). Every document is
checked with ``schema.check_clip`` before it is written, and assignments go
through the real ``assignment.start_assignment`` (revisions + history).
Needs Django set up.
"""

from __future__ import annotations

import random
import uuid
from dataclasses import dataclass, field

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import transaction
from annotation.tokens import issue_token
from simple_history.utils import bulk_create_with_history

from annotation import synthetic
from annotation.assignment import start_assignment
from annotation.audit import audit_source
from annotation.models import Clip, ClipState, Cue, Draft, DraftSource, Project, Revision, Row
from annotation.roles import ANNOTATOR
from annotation.schema import CLIP_KEYS, SKELETON_KEYS
from annotation.services import create_project
from annotation.taxonomy import THERAPIST, load_taxonomy
from annotation.workspace.services import add_comment


@dataclass
class BenchData:
    project: Project
    users: list = field(default_factory=list)
    tokens: dict = field(default_factory=dict)  # user pk -> token key
    clips: dict = field(default_factory=dict)  # label -> Clip


def new_project(prefix: str = "bench-ws") -> Project:
    with audit_source("cli"):
        return create_project(f"{prefix}-{uuid.uuid4().hex[:8]}", name="workspace benchmark (throw-away)")


def make_annotators(project: Project, n: int) -> tuple[list, dict]:
    """``n`` annotators named after the project, each with a DRF token.

    Passwords are unusable: hashing one costs a large fraction of a second and
    nobody logs in with them (the API uses tokens, the page test force_login).
    """
    User = get_user_model()
    group, _ = Group.objects.get_or_create(name=ANNOTATOR)
    users = []
    for k in range(1, n + 1):
        user = User(username=f"{project.slug}-a{k:02d}")
        user.set_unusable_password()
        user.save()
        user.groups.add(group)
        users.append(user)
    tokens = {u.pk: issue_token(u)[1] for u in users}
    return users, tokens


def make_family_clip(project: Project, rows: int, *, seed: int = 0, participants: int = 4) -> Clip:
    """A preannotated family clip with exactly ``rows`` rows, cues and an LLM-like draft."""
    rng = random.Random(f"bench/{seed}/{rows}")
    people = rng.sample(synthetic.FIRST_NAMES, participants)
    sample_id = f"bench_family/{rows:03d}_rows_seed{seed}"
    plan = synthetic._Plan(sample_id, "family", people, rows)
    taxonomy = load_taxonomy("family", project.taxonomy_version)
    writer = synthetic._ClipWriter(plan, taxonomy, rng)
    skeletons = writer.skeletons()
    draft = [
        synthetic._content(s["primary_speaker"], {u: writer.value(u, s) for u in synthetic.UNITS}) for s in skeletons
    ]
    built = synthetic.SyntheticClip(sample_id, "family", people, skeletons, draft, revisions=[], gold=draft)
    problems = synthetic.check_generated([built], project.taxonomy_version)
    if problems:
        raise RuntimeError("generated bench clip does not validate:\n" + "\n".join(problems[:10]))
    with transaction.atomic(), audit_source("cli"):
        clip = Clip.objects.create(
            project=project,
            sample_id=sample_id,
            scenario="family",
            participants=people,
            source_file=built.source_file,
            release_keys=list(CLIP_KEYS),
            duration=built.duration,
            state=ClipState.PREANNOTATED,
            content_hash=built.content_hash,
            speaker_map={name: name for name in (*people, THERAPIST)},
            speaker_map_confirmed=True,
        )
        row_objs = bulk_create_with_history(
            [Row(clip=clip, **{k: s[k] for k in SKELETON_KEYS}) for s in skeletons], Row
        )
        Cue.objects.bulk_create(
            [
                Cue(
                    clip=clip,
                    position=r.row_index,
                    start_time=r.start_time,
                    end_time=r.end_time,
                    speaker=r.primary_speaker,
                    text=r.dialogue_cleaned,
                )
                for r in row_objs
            ]
        )
        bulk_create_with_history(
            [
                Draft(row=r, content=c, source=DraftSource.SYNTHETIC, provenance={"generator": "bench"})
                for r, c in zip(row_objs, draft)
            ],
            Draft,
        )
    return clip


def assign(clip: Clip, users) -> None:
    """Assign the clip to each user through the real service (a revision per row, from the draft)."""
    with transaction.atomic(), audit_source("cli"):
        for user in users:
            start_assignment(clip, user)


def add_some_comments(clip: Clip, user, n: int = 3) -> None:
    """A few row comments, so the page's comment markers are part of what is measured."""
    rows = list(clip.rows.order_by("row_index")[:n])
    with audit_source("cli"):
        for row in rows:
            add_comment(clip, user, f"bench comment on row {row.row_index}", row=row)


def my_revisions(clip: Clip, user) -> list[dict]:
    """The user's revisions of the clip in row order: id, version, content."""
    return list(
        Revision.objects.filter(row__clip=clip, annotator=user)
        .order_by("row__row_index")
        .values("id", "version", "content")
    )


def drop(project: Project, users) -> None:
    """Delete the bench project (clips, rows, documents cascade) and its users.

    Historical records stay: the audit trail is append-only.
    """
    with audit_source("cli"):
        project.delete()
        get_user_model().objects.filter(pk__in=[u.pk for u in users]).delete()
