"""Data for the workspace benchmark: a throw-away project, family clips of a
chosen length, annotators with API tokens, and their assignments.

Clips are drawn and stored by the synthetic generator (annotation.synthetic)
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

from annotation import synthetic
from annotation.audit import audit_source
from annotation.models import Clip, ClipState, Project, Revision
from annotation.roles import ANNOTATOR
from annotation.services import create_project
from annotation.starting import start_assignment
from annotation.tokens import issue_token
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
    built = synthetic.drafted_clip(
        sample_id, "family", people, rows, rng=rng, taxonomy_version=project.taxonomy_version
    )
    problems = synthetic.check_generated([built], project.taxonomy_version)
    if problems:
        raise RuntimeError("generated bench clip does not validate:\n" + "\n".join(problems[:10]))
    with transaction.atomic(), audit_source("cli"):
        synthetic.store_clips(project, [built], state=ClipState.PREANNOTATED, provenance={"generator": "bench"})
    return project.clips.get(sample_id=sample_id)


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
