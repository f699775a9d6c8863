"""Writes that are not tied to one capability: projects, users and roles, clip states."""

from __future__ import annotations

import secrets

from django.contrib.auth import get_user_model, password_validation
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from .addressees import names_in
from .models import Assignment, AssignmentPurpose, Clip, ClipState, Project
from .roles import ADMIN, GROUP_ROLES, ROLES, is_lead
from .taxonomy import DEFAULT_VERSION, available_versions


class ServiceError(Exception):
    """A request that cannot be carried out; the message is for the user."""


class ClipClosed(ServiceError):
    """The clip is discarded or released: it takes no more work (the API answers 409)."""

    def __init__(self, clip: Clip, what: str):
        self.state = clip.state
        super().__init__(closed_clip_message(clip, what))


# A discarded clip has left the benchmark; a released one is frozen in a release.
CLOSED_STATES = (ClipState.DISCARDED, ClipState.RELEASED)


def closed_clip_message(clip: Clip, what: str = "work") -> str:
    """Why ``clip`` takes no more ``what``, in words any coder may read.

    Never the discard reason: it quotes the proposal and names the coder who made it.
    """
    if clip.state == ClipState.DISCARDED:
        return f"clip {clip.sample_id} was discarded by a lead and takes no more {what}; nothing was saved"
    return (
        f"clip {clip.sample_id} is frozen in a release and takes no more {what}; nothing was saved (corrections go "
        "into a new release)"
    )


# The one exception to the closed-clip rule: a released clip's gold is frozen, yet it is still the
# record's material (a qualification round, a known-answer check codes it). Those assignments are read by
# the annotator's record only (``Assignment.objects`` and ``agreement.scope`` leave them out), so coding
# them cannot reach a release's files, the production agreement or adjudication. A discarded clip has left
# the benchmark and takes no work of any kind.
RECORD_PURPOSES_ON_RELEASED = (AssignmentPurpose.QUALIFICATION, AssignmentPurpose.KNOWN_ANSWER)


def closed_to(state: str, purpose: str = AssignmentPurpose.PRODUCTION) -> bool:
    """Whether a clip in ``state`` refuses the work of an assignment of ``purpose``."""
    if state == ClipState.RELEASED:
        return purpose not in RECORD_PURPOSES_ON_RELEASED
    return state in CLOSED_STATES


def ensure_clip_open(clip: Clip, what: str, purpose: str = AssignmentPurpose.PRODUCTION) -> None:
    """Raise ``ClipClosed`` when ``clip`` takes no more ``what`` ("edits", "comments"...) from work of
    ``purpose``: production work (and comments) on a discarded or released clip, any work on a discarded one."""
    if closed_to(clip.state, purpose):
        raise ClipClosed(clip, what)


def create_project(
    slug: str, *, name: str = "", annotators_per_clip: int = 3, taxonomy_version: str = DEFAULT_VERSION
) -> Project:
    if Project.objects.filter(slug=slug).exists():
        raise ServiceError(f"project {slug!r} already exists")
    if taxonomy_version not in available_versions():
        raise ServiceError(
            f"unknown taxonomy version {taxonomy_version!r} (available: {', '.join(available_versions())})"
        )
    if annotators_per_clip < 1:
        raise ServiceError("annotators per clip must be at least 1")
    return Project.objects.create(
        slug=slug, name=name or slug, annotators_per_clip=annotators_per_clip, taxonomy_version=taxonomy_version
    )


def create_user(username: str, role: str, *, password: str | None = None, email: str = "") -> tuple[object, str | None]:
    """Create a user with a role. Returns (user, generated password or None).

    A given password must pass AUTH_PASSWORD_VALIDATORS (in every mode, production
    included; there is no way around them); a generated one is 16 random characters.
    """
    if role not in ROLES:
        raise ServiceError(f"unknown role {role!r} (choose from {', '.join(ROLES)})")
    User = get_user_model()
    user = User(username=username, email=email)
    generated = None
    if password:
        check_password_rules(password, user)
    else:
        password = generated = secrets.token_urlsafe(12)
    if User.objects.filter(username=username).exists():
        raise ServiceError(f"user {username!r} already exists")
    with transaction.atomic():
        user.set_password(password)
        if role == ADMIN:
            user.is_superuser = user.is_staff = True
        user.save()
        if role in GROUP_ROLES:
            user.groups.add(Group.objects.get_or_create(name=role)[0])
    return user, generated


def check_password_rules(password: str, user) -> None:
    """Refuse a password that AUTH_PASSWORD_VALIDATORS refuse, naming each rule it breaks."""
    try:
        password_validation.validate_password(password, user)
    except ValidationError as exc:
        rules = "; ".join(f"{error.code or 'rule'}: {' '.join(error.messages)}" for error in exc.error_list)
        raise ServiceError(f"password refused ({rules})") from None


def comment_addressee(clip: Clip, author, body: str, addressee=None):
    """Who alone (besides the leads) may read a lead's comment on ``clip``, or None for every coder.

    A message that names a coder of the clip is for that coder: shown to the
    others it would tell them who else codes the clip (and what a lead told
    them). So a lead's comment naming exactly one coder is addressed to them,
    and one naming several is refused: write to each of them; one naming a
    coder of the project who is not on the clip is refused too. A name counts
    in every way it is written (``ann1``, ``@ann1``, ``ANN1:``; the matcher is
    ``addressees.names_in``). An annotator's comments are only ever read by
    their author and the leads.
    """
    if not is_lead(author):
        return addressee
    assigned = Assignment.objects.filter(clip__project=clip.project_id).exclude(annotator=author)
    on_clip = set(assigned.filter(clip=clip).values_list("annotator__username", flat=True))
    named = names_in(body, assigned.values_list("annotator__username", flat=True).distinct())
    elsewhere = [name for name in named if name not in on_clip]
    if elsewhere:
        raise ServiceError(
            f"this message names coders of the project who do not code clip {clip.sample_id} ({', '.join(elsewhere)}); "
            "the clip's coders must not learn who else codes: write it without their names"
        )
    if addressee is not None:
        others = [name for name in named if name != addressee.username]
        if others:
            raise ServiceError(
                f"a message to {addressee.username} must not name other coders of the clip ({', '.join(others)})"
            )
        return addressee
    if len(named) > 1:
        raise ServiceError(
            f"this comment names several coders of the clip ({', '.join(named)}); write to each of them on their own"
        )
    if named:
        return get_user_model().objects.get(username=named[0])
    return None


# Clip life cycle (the states are ``ClipState`` in models.py). Transitions happen here and nowhere else.
TRANSITIONS: dict[str, set[str]] = {
    ClipState.IMPORTED: {ClipState.PREANNOTATING, ClipState.IN_REVIEW, ClipState.DISCARDED},
    ClipState.PREANNOTATING: {ClipState.PREANNOTATED, ClipState.PREANNOTATION_FAILED},
    ClipState.PREANNOTATION_FAILED: {ClipState.PREANNOTATING, ClipState.DISCARDED},
    ClipState.PREANNOTATED: {ClipState.PREANNOTATING, ClipState.IN_REVIEW, ClipState.DISCARDED},
    # In review -> adjudicated: when the project needs fewer submitted coders than it assigned.
    ClipState.IN_REVIEW: {ClipState.REVIEWED, ClipState.ADJUDICATED, ClipState.DISCARDED},
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
        Clip.history.bulk_history_create(
            locked, update=True, default_user=actor, default_change_reason=reason, default_date=now
        )
    return len(locked)
