"""Writes that are not tied to one capability: projects, users and roles, clip states."""
from __future__ import annotations

import secrets

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import transaction
from django.utils import timezone

from .models import Clip, ClipState, Project
from .roles import ADMIN, GROUP_ROLES, ROLES
from .taxonomy import DEFAULT_VERSION, available_versions


class ServiceError(Exception):
    """A request that cannot be carried out; the message is for the user."""


def create_project(slug: str, *, name: str = "", annotators_per_clip: int = 3, taxonomy_version: str = DEFAULT_VERSION) -> Project:
    if Project.objects.filter(slug=slug).exists():
        raise ServiceError(f"project {slug!r} already exists")
    if taxonomy_version not in available_versions():
        raise ServiceError(f"unknown taxonomy version {taxonomy_version!r} (available: {', '.join(available_versions())})")
    if annotators_per_clip < 1:
        raise ServiceError("annotators per clip must be at least 1")
    return Project.objects.create(slug=slug, name=name or slug, annotators_per_clip=annotators_per_clip, taxonomy_version=taxonomy_version)


def create_user(username: str, role: str, *, password: str | None = None, email: str = "") -> tuple[object, str | None]:
    """Create a user with a role. Returns (user, generated password or None)."""
    if role not in ROLES:
        raise ServiceError(f"unknown role {role!r} (choose from {', '.join(ROLES)})")
    User = get_user_model()
    if User.objects.filter(username=username).exists():
        raise ServiceError(f"user {username!r} already exists")
    generated = None
    if not password:
        password = generated = secrets.token_urlsafe(12)
    with transaction.atomic():
        user = User(username=username, email=email)
        user.set_password(password)
        if role == ADMIN:
            user.is_superuser = user.is_staff = True
        user.save()
        if role in GROUP_ROLES:
            user.groups.add(Group.objects.get_or_create(name=role)[0])
    return user, generated


# Clip life cycle (DESIGN.md). Transitions happen here and nowhere else.
TRANSITIONS: dict[str, set[str]] = {
    ClipState.IMPORTED: {ClipState.PREANNOTATING, ClipState.IN_REVIEW, ClipState.DISCARDED},
    ClipState.PREANNOTATING: {ClipState.PREANNOTATED, ClipState.PREANNOTATION_FAILED},
    ClipState.PREANNOTATION_FAILED: {ClipState.PREANNOTATING, ClipState.DISCARDED},
    ClipState.PREANNOTATED: {ClipState.PREANNOTATING, ClipState.IN_REVIEW, ClipState.DISCARDED},
    ClipState.IN_REVIEW: {ClipState.REVIEWED, ClipState.DISCARDED},
    ClipState.REVIEWED: {ClipState.IN_REVIEW, ClipState.ADJUDICATED, ClipState.DISCARDED},
    ClipState.ADJUDICATED: {ClipState.IN_REVIEW, ClipState.RELEASED, ClipState.DISCARDED},
    ClipState.RELEASED: {ClipState.ADJUDICATED},
    ClipState.DISCARDED: set(),
}


def transition(clip: Clip, to_state: str, *, actor=None, reason: str = "") -> Clip:
    """Move a clip to ``to_state`` if the life cycle allows it; audited with the reason."""
    if to_state not in TRANSITIONS.get(clip.state, set()):
        raise ServiceError(f"clip {clip.sample_id} cannot go from {clip.state} to {to_state}")
    if to_state == ClipState.DISCARDED:
        if not reason.strip():
            raise ServiceError("discarding a clip needs a reason")
        clip.discard_reason, clip.discarded_by = reason, actor
    clip.state = to_state
    clip._change_reason = reason or f"state -> {to_state}"
    if actor is not None:
        clip._history_user = actor
    clip.save()
    return clip


def transition_many(clips, to_state: str, *, actor=None, reason: str) -> int:
    """Move every clip of the queryset ``clips`` to ``to_state`` at once (a release marks hundreds).

    The same life-cycle rule and the same audit record per clip as
    ``transition``, written with one UPDATE and one history INSERT instead of
    two statements per clip; the clips are locked first, so the records hold
    what was written. Discarding is not done in bulk: each discard has its reason.
    """
    if to_state == ClipState.DISCARDED:
        raise ServiceError("clips are discarded one at a time, each with its reason")
    with transaction.atomic():
        locked = list(clips.select_for_update().order_by("pk"))
        for clip in locked:
            if to_state not in TRANSITIONS.get(clip.state, set()):
                raise ServiceError(f"clip {clip.sample_id} cannot go from {clip.state} to {to_state}")
        if not locked:
            return 0
        now = timezone.now()
        for clip in locked:
            clip.state, clip.updated_at = to_state, now
        Clip.objects.filter(pk__in=[c.pk for c in locked]).update(state=to_state, updated_at=now)
        Clip.history.bulk_history_create(locked, update=True, default_user=actor, default_change_reason=reason, default_date=now)
    return len(locked)
