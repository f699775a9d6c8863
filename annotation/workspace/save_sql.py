"""The SQL of a row save, built once from the models' metadata.

A save is the hottest write of the platform (annotators save every row, many
at a time), so it skips the ORM's per-request query compilation: one SELECT
reads everything the checks need, and one compare-and-set statement writes the
revision and its audit record. The column lists come from the models, so a
field added to ``Revision`` or to its historical model either maps here or
fails at import; no audit column is ever silently left out.

The historical record written here is the one simple-history would write for a
model save (``history_type`` ``~``, the user, the time, ``history_source``).
"""

from __future__ import annotations

from functools import cache

from ..models import Assignment, AssignmentState, Clip, ClipState, GuidanceVersion, Project, Revision, Row
from ..services import RECORD_PURPOSES_ON_RELEASED

# Values of the historical record's own columns (everything else is copied from the revision).
_HISTORY_OWN = {
    "history_date": "%(now)s",
    "history_change_reason": "NULL",
    "history_type": "'~'",
    "history_user_id": "%(user)s",
    "history_source": "%(source)s",
}


def _table(model) -> str:
    return model._meta.db_table


@cache
def context_select() -> str:
    """The caller's revision with its row, clip (and its state), project, the clip's row count and the caller's
    assignment state and purpose."""
    return (
        "SELECT r.id, r.row_index, r.start_time, r.end_time, r.primary_speaker, r.dialogue_cleaned, r.clip_id, "
        "c.scenario, c.participants, c.duration, p.taxonomy_version, "
        f"(SELECT count(*) FROM {_table(Row)} r2 WHERE r2.clip_id = r.clip_id), "
        f"(SELECT a.state FROM {_table(Assignment)} a WHERE a.clip_id = r.clip_id AND a.annotator_id = %(user)s), "
        "v.version, v.status, v.layout, v.content, c.state, "
        f"(SELECT a.purpose FROM {_table(Assignment)} a WHERE a.clip_id = r.clip_id AND a.annotator_id = %(user)s) "
        f"FROM {_table(Revision)} v JOIN {_table(Row)} r ON r.id = v.row_id "
        f"JOIN {_table(Clip)} c ON c.id = r.clip_id JOIN {_table(Project)} p ON p.id = c.project_id "
        "WHERE v.id = %(id)s AND v.annotator_id = %(user)s"
    )


def _history_columns(source_alias: str) -> tuple[str, str]:
    history = Revision.history.model
    tracked = {f.column for f in Revision._meta.concrete_fields}
    columns, values = [], []
    for f in history._meta.concrete_fields:
        if f.column == "history_id":
            continue  # generated
        if f.column in tracked:
            columns.append(f.column)
            values.append(f"{source_alias}.{f.column}")
        elif f.column in _HISTORY_OWN:
            columns.append(f.column)
            values.append(_HISTORY_OWN[f.column])
        else:
            raise RuntimeError(f"historical revision column {f.column!r} has no source in the row save")
    return ", ".join(columns), ", ".join(values)


# The compare-and-set: only the version the editor started from, only the caller's own
# revision, and never once the caller has submitted the clip or a lead has discarded or
# released it (a submit or a discard can land between the read and the write). A released
# clip still takes the record's work (``services.closed_to``: a qualification round or a
# known-answer check on its frozen gold); a discarded one takes nothing.
_RECORD_PURPOSES = ", ".join(f"'{p.value}'" for p in RECORD_PURPOSES_ON_RELEASED)
_CLOSED_TO_CALLER = (
    f"c.state = '{ClipState.DISCARDED.value}' OR (c.state = '{ClipState.RELEASED.value}' AND NOT EXISTS "
    "(SELECT 1 FROM {assignment} ra WHERE ra.clip_id = %(clip)s AND ra.annotator_id = %(user)s "
    f"AND ra.purpose IN ({_RECORD_PURPOSES})))"
)
# Every save records the project's guidance version in force at that moment (its latest), read
# inside the same statement, so no guidance change can fall between the read and the write.
_GUIDANCE_IN_FORCE = (
    "(SELECT g.id FROM {guidance} g JOIN {clip} gc ON gc.project_id = g.project_id "
    "WHERE gc.id = %(clip)s ORDER BY g.number DESC LIMIT 1)"
)
_UPDATE = (
    "UPDATE {revision} SET content = %(content)s, warnings = %(warnings)s, status = %(status)s, "
    f"version = version + 1, updated_at = %(now)s, guidance_version_id = {_GUIDANCE_IN_FORCE} "
    "WHERE id = %(id)s AND annotator_id = %(user)s AND version = %(version)s "
    "AND NOT EXISTS (SELECT 1 FROM {assignment} a WHERE a.clip_id = %(clip)s AND a.annotator_id = %(user)s "
    f"AND a.state = '{AssignmentState.SUBMITTED.value}') "
    f"AND NOT EXISTS (SELECT 1 FROM {{clip}} c WHERE c.id = %(clip)s AND ({_CLOSED_TO_CALLER}))"
)


@cache
def write_and_audit_postgresql() -> str:
    """One statement: the UPDATE's new row feeds the history INSERT, which gives back the version and the
    number of the guidance version recorded; no row written means a lost race."""
    columns, values = _history_columns("upd")
    update = _UPDATE.format(
        revision=_table(Revision), assignment=_table(Assignment), clip=_table(Clip), guidance=_table(GuidanceVersion)
    )
    return (
        f"WITH upd AS ({update} RETURNING *), "
        f"audit AS (INSERT INTO {_table(Revision.history.model)} ({columns}) SELECT {values} FROM upd RETURNING "
        "version, guidance_version_id) "
        f"SELECT audit.version, g.number FROM audit LEFT JOIN {_table(GuidanceVersion)} g ON g.id = "
        "audit.guidance_version_id"
    )


@cache
def write_statements_portable() -> tuple[str, str]:
    """The same as two statements, for databases without data-modifying CTEs (SQLite); run in a transaction."""
    columns, values = _history_columns("v")
    update = _UPDATE.format(
        revision=_table(Revision), assignment=_table(Assignment), clip=_table(Clip), guidance=_table(GuidanceVersion)
    )
    audit = (
        f"INSERT INTO {_table(Revision.history.model)} ({columns}) SELECT {values} FROM {_table(Revision)} v WHERE "
        "v.id = %(id)s"
    )
    return update, audit


@cache
def guidance_number() -> str:
    """The number of the guidance version a revision records (after a portable write)."""
    return (
        f"SELECT g.number FROM {_table(Revision)} v JOIN {_table(GuidanceVersion)} g ON g.id = v.guidance_version_id "
        "WHERE v.id = %(id)s"
    )
