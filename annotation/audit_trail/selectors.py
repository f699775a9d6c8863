"""Reading a project's audit trail: every historical record of its objects, newest first.

django-simple-history keeps one history table per audited model. A lead wants
one timeline: who changed what, when, from which source (``web``, ``api``,
``cli``, ``worker``, ``system``), with the change spelled out field by field.
Each model's records are scoped to the project through the foreign keys they
recorded (a clip's rows, a row's revisions, ...), read a
page at a time with a keyset cursor, merged by date, and diffed against the
previous record of the same object, fetched in one query per model.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from heapq import merge
from itertools import islice

from django.db.models import OuterRef, Q, Subquery
from django.utils.dateparse import parse_datetime

from ..models import Assignment, Clip, Comment, Draft, Gold, Project, Revision, Row

PAGE_SIZE = 50
# Longest text a changed value is shown with in a listing.
VALUE_PREVIEW = 300


@dataclass(frozen=True)
class Kind:
    """An audited model: its key in filters, what a person calls it, how its records reach a project."""

    key: str
    label: str
    model: type
    project_filter: str  # lookup on the historical model that equals the project's id
    clip_filter: str | None  # lookup on the historical model that equals a clip's id
    # The live objects its description names (a deleted one reads as "#id").
    related: tuple[str, ...] = ()


KINDS: tuple[Kind, ...] = (
    Kind("project", "project", Project, "id", None),
    Kind("clip", "clip", Clip, "project_id", "id"),
    Kind("row", "row", Row, "clip__project_id", "clip_id", ("clip",)),
    Kind("draft", "LLM draft", Draft, "row__clip__project_id", "row__clip_id", ("row__clip",)),
    Kind("revision", "revision", Revision, "row__clip__project_id", "row__clip_id", ("row__clip", "annotator")),
    Kind("gold", "gold", Gold, "row__clip__project_id", "row__clip_id", ("row__clip",)),
    Kind("assignment", "assignment", Assignment, "clip__project_id", "clip_id", ("clip", "annotator")),
    Kind("comment", "comment", Comment, "clip__project_id", "clip_id", ("clip", "row__clip")),
)
KIND_BY_KEY = {k.key: k for k in KINDS}
SOURCES = ("web", "api", "cli", "worker", "system")
ACTIONS = {"+": "created", "~": "changed", "-": "deleted"}
# Bookkeeping columns that change on every write and would only clutter a diff.
NOT_DIFFED = {"updated_at", "created_at", "version"}


class BadFilter(ValueError):
    """A filter or cursor the caller sent cannot be used; the message says which and why."""


@dataclass(frozen=True)
class Filters:
    kind: str = ""
    user: str = ""
    source: str = ""
    clip: str = ""  # sample id
    cursor: str = ""

    @classmethod
    def from_query(cls, query) -> Filters:
        filters = cls(
            **{name: (query.get(name) or "").strip() for name in ("kind", "user", "source", "clip", "cursor")}
        )
        if filters.kind and filters.kind not in KIND_BY_KEY:
            raise BadFilter(f"unknown kind {filters.kind!r} (choose from {', '.join(KIND_BY_KEY)})")
        if filters.source and filters.source not in SOURCES:
            raise BadFilter(f"unknown source {filters.source!r} (choose from {', '.join(SOURCES)})")
        if filters.cursor:
            _parse_cursor(filters.cursor)
        return filters

    def as_query(self, **override) -> dict:
        values = {"kind": self.kind, "user": self.user, "source": self.source, "clip": self.clip, "cursor": self.cursor}
        values.update(override)
        return {k: v for k, v in values.items() if v}


@dataclass
class Change:
    field: str
    old: str
    new: str


@dataclass
class Entry:
    kind: Kind
    history_id: int
    object_id: int
    action: str
    date: datetime
    user: str
    source: str
    what: str
    changes: list[Change] = field(default_factory=list)

    @property
    def sort_key(self) -> tuple:
        return (self.date, KINDS.index(self.kind), self.history_id)

    def as_dict(self) -> dict:
        return {
            "id": f"{self.kind.key}:{self.history_id}",
            "kind": self.kind.key,
            "object_id": self.object_id,
            "object": self.what,
            "action": self.action,
            "date": self.date.isoformat(),
            "user": self.user,
            "source": self.source,
            "changes": [{"field": c.field, "old": c.old, "new": c.new} for c in self.changes],
        }


@dataclass
class Page:
    entries: list[Entry]
    next_cursor: str | None


def _cursor(entry: Entry) -> str:
    return f"{entry.date.isoformat()}|{KINDS.index(entry.kind)}|{entry.history_id}"


def _parse_cursor(cursor: str) -> tuple[datetime, int, int]:
    try:
        date_text, kind_index, history_id = cursor.split("|")
        date = parse_datetime(date_text)
        kind_index, history_id = int(kind_index), int(history_id)
    except ValueError:
        date = None
    if date is None or not 0 <= kind_index < len(KINDS):
        raise BadFilter("the page cursor is not one this page gave out; start again from the first page")
    return date, kind_index, history_id


def _after_cursor(kind_index: int, cursor: tuple[datetime, int, int]) -> Q:
    """Records that come after the cursor in the order (date, kind, history id), newest first."""
    date, cursor_kind, history_id = cursor
    if kind_index < cursor_kind:
        return Q(history_date__lte=date)
    if kind_index > cursor_kind:
        return Q(history_date__lt=date)
    return Q(history_date__lt=date) | Q(history_date=date, history_id__lt=history_id)


def _clip_name(clip, clip_id) -> str:
    return clip.sample_id if clip is not None else f"clip #{clip_id}"


def _row_name(row, row_id) -> str:
    return f"{row.clip.sample_id} row {row.row_index}" if row is not None else f"row #{row_id}"


def _username(user) -> str:
    return user.username if user is not None else "?"


def _describe(kind: Kind, record) -> str:
    """What the record is about, in a lead's words (sample id, row number, whose work); "#id" once it is gone."""
    if kind.key == "project":
        return f"project {record.slug}"
    if kind.key == "clip":
        return f"clip {record.sample_id}"
    if kind.key == "row":
        return f"{_clip_name(record.clip, record.clip_id)} row {record.row_index}"
    if kind.key == "assignment":
        return f"assignment of {_clip_name(record.clip, record.clip_id)} to {_username(record.annotator)}"
    if kind.key == "comment":
        where = _row_name(record.row, record.row_id) if record.row_id else _clip_name(record.clip, record.clip_id)
        body = record.body if len(record.body) <= 120 else record.body[:119] + "…"
        return f"{record.get_kind_display().lower()} on {where}: “{body}”"
    where = _row_name(record.row, record.row_id)
    if kind.key == "revision":
        return f"revision of {where} by {_username(record.annotator)}"
    return f"{kind.label} of {where}"


def _text(value) -> str:
    if isinstance(value, (dict, list)):
        text = json.dumps(value, ensure_ascii=False)
    elif value is None:
        text = "∅"
    else:
        text = str(value)
    return text if len(text) <= VALUE_PREVIEW else text[: VALUE_PREVIEW - 1] + "…"


def _changes(record, previous) -> list[Change]:
    """Field-by-field changes; a JSON document (the six dimensions) is diffed key by key."""
    if previous is None:
        return []
    out: list[Change] = []
    for change in record.diff_against(previous, excluded_fields=NOT_DIFFED).changes:
        old, new = change.old, change.new
        if isinstance(old, dict) and isinstance(new, dict):
            for key in [*new, *[k for k in old if k not in new]]:
                if old.get(key) != new.get(key):
                    out.append(Change(f"{change.field}.{key}", _text(old.get(key)), _text(new.get(key))))
        else:
            out.append(Change(change.field, _text(old), _text(new)))
    return out


def _records(kind: Kind, project: Project, filters: Filters, cursor, clip_ids, limit: int) -> list[Entry]:
    history = kind.model.history.model
    qs = history.objects.filter(**{kind.project_filter: project.pk})
    if clip_ids is not None:
        if kind.clip_filter is None:
            return []
        qs = qs.filter(**{f"{kind.clip_filter}__in": clip_ids})
    if filters.user:
        qs = qs.filter(history_user__username=filters.user)
    if filters.source:
        qs = qs.filter(history_source=filters.source)
    if cursor is not None:
        qs = qs.filter(_after_cursor(KINDS.index(kind), cursor))
    # History ids grow with every write, so an object's previous record is its largest smaller id.
    previous = history.objects.filter(id=OuterRef("id"), history_id__lt=OuterRef("history_id"))
    qs = (
        qs.select_related("history_user", *kind.related)
        .annotate(previous_id=Subquery(previous.order_by("-history_id").values("history_id")[:1]))
        .order_by("-history_date", "-history_id")[:limit]
    )
    records = list(qs)
    earlier = {
        r.history_id: r
        for r in history.objects.filter(history_id__in=[r.previous_id for r in records if r.previous_id])
    }
    return [
        Entry(
            kind=kind,
            history_id=r.history_id,
            object_id=r.id,
            action=ACTIONS.get(r.history_type, r.history_type),
            date=r.history_date,
            user=r.history_user.username if r.history_user else "",
            source=r.history_source,
            what=_describe(kind, r),
            changes=_changes(r, earlier.get(r.previous_id)) if r.history_type == "~" else [],
        )
        for r in records
    ]


def project_history(project: Project, filters: Filters, page_size: int = PAGE_SIZE) -> Page:
    """One page of the project's audit trail, newest first, with the cursor of the next page."""
    cursor = _parse_cursor(filters.cursor) if filters.cursor else None
    clip_ids = None
    if filters.clip:
        clip_ids = list(
            Clip.history.model.objects.filter(project_id=project.pk, sample_id=filters.clip)
            .values_list("id", flat=True)
            .distinct()
        )
    kinds = [KIND_BY_KEY[filters.kind]] if filters.kind else list(KINDS)
    # Each model gives at most one page more than needed; merging them by date and
    # taking a page is then exact, and one extra entry tells whether a next page exists.
    per_kind = [_records(kind, project, filters, cursor, clip_ids, page_size + 1) for kind in kinds]
    ordered = list(islice(merge(*per_kind, key=lambda e: e.sort_key, reverse=True), page_size + 1))
    entries = ordered[:page_size]
    return Page(entries, _cursor(entries[-1]) if len(ordered) > page_size else None)
