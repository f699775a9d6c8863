"""Writing the project's guidance: every change makes a new, immutable version.

An entry is identified by its scenario (``""``: every scenario), its field and
its set of labels; writing guidance for a set that already has some rewrites
it, and withdrawing removes it. Both take the version number the lead was
looking at (``based_on``): when that entry changed since, the change is refused
with the current version (``GuidanceConflict``), so two leads never overwrite
each other's text unseen. Changes to other entries in between do not conflict.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from ..addressees import names_in
from ..audit import current_source
from ..models import GuidanceVersion, Project
from ..roles import ANNOTATOR, is_lead
from ..services import ServiceError
from ..taxonomy import NONE, SCENARIOS
from .fields import ALL_SCENARIOS, FIELDS, labels_in, labels_title, scenario_title

TEXT_LIMIT = 4000
REASON_LIMIT = 1000


class GuidanceError(ServiceError):
    """The guidance cannot be changed as asked (message for the user)."""


class GuidanceConflict(GuidanceError):
    """The entry changed since the version the lead was looking at; ``current`` is the project's version now."""

    def __init__(self, message: str, current: GuidanceVersion | None):
        self.current = current
        super().__init__(message)


def entry_key(entry: dict) -> tuple[str, str, tuple[str, ...]]:
    return entry["scenario"], entry["field"], tuple(entry["labels"])


def _current(project: Project) -> GuidanceVersion | None:
    return GuidanceVersion.objects.filter(project=project).order_by("-number").first()


def check_target(project: Project, scenario, field, labels) -> tuple[str, str, list[str]]:
    """(scenario, field, labels in the taxonomy's order) of an entry, or GuidanceError saying what is wrong."""
    scenario = (scenario or "").strip() if isinstance(scenario, str) or scenario is None else scenario
    if not isinstance(scenario, str) or scenario not in (ALL_SCENARIOS, *SCENARIOS):
        raise GuidanceError(
            f"scenario must be one of {', '.join(SCENARIOS)} or empty for every scenario, got {scenario!r}"
        )
    if field not in FIELDS:
        raise GuidanceError(f"field must be one of {', '.join(FIELDS)}, got {field!r}")
    if isinstance(labels, str) or not isinstance(labels, (list, tuple)) or not all(isinstance(x, str) for x in labels):
        raise GuidanceError("labels must be a list of label names (one label, or the labels the guidance separates)")
    allowed = labels_in(project.taxonomy_version, scenario, field)
    wanted = [x.strip() for x in labels]
    if not wanted:
        raise GuidanceError("name at least one label")
    if len(set(wanted)) != len(wanted):
        raise GuidanceError("each label may be named once")
    unknown = [x for x in wanted if x not in allowed]
    if unknown:
        shown = ", ".join(repr(x) for x in unknown)
        if NONE in unknown and FIELDS[field][2] is None:
            shown = f"'' ({FIELDS[field][0].lower()} has no empty choice)"
        choices = ", ".join(x or f"'' ({FIELDS[field][2]})" for x in allowed)
        raise GuidanceError(
            f"{shown} {'is not a label' if len(unknown) == 1 else 'are not labels'} of {FIELDS[field][0].lower()} "
            f"for {scenario_title(scenario)} in taxonomy version {project.taxonomy_version} (labels: {choices})"
        )
    return scenario, field, [x for x in allowed if x in wanted]


def _check_text(text, what: str, limit: int) -> str:
    if text is not None and not isinstance(text, str):
        raise GuidanceError(f"{what} must be text")
    text = (text or "").strip()
    if not text:
        raise GuidanceError(
            f"{what} is required" if what == "why" else f"{what} is empty: write the guidance, or withdraw it"
        )
    if len(text) > limit:
        raise GuidanceError(f"{what} is limited to {limit:,} characters (got {len(text):,})")
    return text


def coder_usernames(project: Project) -> list[str]:
    """Who guidance must never name: every annotator, and everyone with work in the project."""
    return list(
        get_user_model()
        .objects.filter(Q(groups__name=ANNOTATOR) | Q(assignments__clip__project=project))
        .values_list("username", flat=True)
        .distinct()
    )


def _check_no_coders(project: Project, text: str, what: str) -> None:
    """Every annotator reads the guidance and its reasons: they must not learn who codes, or what a coder chose."""
    named = names_in(text, coder_usernames(project))
    if named:
        raise GuidanceError(
            f"{what} names {'a coder' if len(named) == 1 else 'coders'} ({', '.join(named)}), and every annotator "
            "reads it: write the rule without coders' names (say what the labels mean, not who chose what)"
        )


def _check_based_on(project: Project, current: GuidanceVersion | None, based_on, key) -> None:
    """Refuse when the entry ``key`` changed after version ``based_on`` (None: the caller does not ask)."""
    if based_on is None:
        return
    if isinstance(based_on, bool) or not isinstance(based_on, int) or based_on < 0:
        raise GuidanceError(f"based_on must be a guidance version number (0 before any), got {based_on!r}")
    now = current.number if current else 0
    if based_on > now:
        raise GuidanceError(f"guidance version {based_on} does not exist (the project is at version {now})")
    if based_on == now:
        return
    seen = GuidanceVersion.objects.filter(project=project, number=based_on).first()
    then = {entry_key(e): e for e in (seen.entries if seen else [])}.get(key)
    later = {entry_key(e): e for e in current.entries}.get(key)
    if (then or {}).get("text") != (later or {}).get("text"):
        raise GuidanceConflict(
            f"the guidance for {labels_title(key[1], key[2])} changed since version {based_on} "
            f"(now version {now}, by {current.created_by.username if current.created_by else 'someone'}); "
            "read it and write again",
            current,
        )


def _ordered(entries: list[dict]) -> list[dict]:
    field_order = list(FIELDS)
    return sorted(entries, key=lambda e: (field_order.index(e["field"]), e["scenario"], e["labels"]))


def _new_version(project: Project, user, current, entries, change: dict, why: str) -> GuidanceVersion:
    version = GuidanceVersion(
        project=project,
        number=(current.number if current else 0) + 1,
        taxonomy_version=project.taxonomy_version,
        entries=_ordered(entries),
        change=change,
        reason=why,
        created_by=user,
        source=current_source(),
    )
    version.save()
    return version


def _locked(project: Project, user) -> tuple[Project, GuidanceVersion | None]:
    if user is None or not is_lead(user):
        raise GuidanceError("only leads write guidance")
    # One writer at a time per project, so that version numbers follow each other.
    project = Project.objects.select_for_update().get(pk=project.pk)
    return project, _current(project)


@transaction.atomic
def write_guidance(
    project: Project, user, *, field, labels, text, why, scenario=ALL_SCENARIOS, based_on=None
) -> GuidanceVersion:
    """Attach ``text`` to ``labels`` of ``field`` (new, or rewriting that set's guidance): a new version."""
    project, current = _locked(project, user)
    scenario, field, labels = check_target(project, scenario, field, labels)
    text = _check_text(text, "the guidance text", TEXT_LIMIT)
    why = _check_text(why, "why", REASON_LIMIT)
    _check_no_coders(project, text, "the guidance text")
    _check_no_coders(project, why, "why")
    key = (scenario, field, tuple(labels))
    _check_based_on(project, current, based_on, key)
    entries = list(current.entries) if current else []
    previous = next((e for e in entries if entry_key(e) == key), None)
    if previous is not None and previous["text"] == text:
        raise GuidanceError(
            f"the guidance for {labels_title(field, labels)} already says exactly this; nothing changed"
        )
    number = (current.number if current else 0) + 1
    entry = {
        "scenario": scenario,
        "field": field,
        "labels": labels,
        "text": text,
        "written_by": user.username,
        "written_at": timezone.now().isoformat(),
        "version": number,
    }
    entries = [e for e in entries if entry_key(e) != key] + [entry]
    change = {"action": "rewrote" if previous else "wrote", "scenario": scenario, "field": field, "labels": labels}
    return _new_version(project, user, current, entries, change, why)


@transaction.atomic
def withdraw_guidance(
    project: Project, user, *, field, labels, why, scenario=ALL_SCENARIOS, based_on=None
) -> GuidanceVersion:
    """Remove the guidance of ``labels`` of ``field``: a new version without it."""
    project, current = _locked(project, user)
    scenario, field, labels = check_target(project, scenario, field, labels)
    why = _check_text(why, "why", REASON_LIMIT)
    _check_no_coders(project, why, "why")
    key = (scenario, field, tuple(labels))
    _check_based_on(project, current, based_on, key)
    entries = list(current.entries) if current else []
    if not any(entry_key(e) == key for e in entries):
        raise GuidanceError(
            f"there is no guidance for {labels_title(field, labels)} ({scenario_title(scenario)}) to withdraw"
        )
    change = {"action": "withdrew", "scenario": scenario, "field": field, "labels": labels}
    return _new_version(project, user, current, [e for e in entries if entry_key(e) != key], change, why)
