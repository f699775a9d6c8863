"""A bench-only prototype of a leaner row save, measured against the app's save
(annotation/workspace/services.py) before anyone adopts it.

The app already reads the revision with the checks' data in one query, writes
it with a conditional UPDATE on the version and records history through
simple-history's bulk API. This prototype goes one step further:
``save_revision_single_statement`` (see its docstring) writes the revision and its
historical record in one SQL statement, without the ORM on the write path.

Same contract as ``PUT /api/v1/revisions/<id>/``: the caller's own revision only
(anything else is a 404), optimistic version check (409 with the current
revision), the whole document validated strictly (422), a submitted or missing
assignment refused (403), one historical record per save, the same response body.
"""

from __future__ import annotations

import json
from types import SimpleNamespace

from django.db import connection
from rest_framework.views import APIView

from annotation.audit import current_source
from annotation.models import Assignment, AssignmentState, Clip, Project, Revision, RevisionStatus, Row
from annotation.schema import ClipContext
from annotation.services import ServiceError
from annotation.workspace import services
from annotation.workspace.api import MyRevisionMixin, SaveRevisionSerializer


# --- option B: one statement writes the revision and its historical record ------------------------


def _history_insert_sql() -> str:
    """UPDATE ... RETURNING * feeding INSERT INTO the history table, built from the models' metadata.

    The column list comes from the historical model, so a field added to it later either maps
    here or fails at import (no history column is ever silently left out).
    """
    history = Revision.history.model
    tracked = {f.column for f in Revision._meta.concrete_fields}
    extra = {
        "history_date": "now()",
        "history_change_reason": "NULL",
        "history_type": "'~'",
        "history_user_id": "%(user)s",
        "history_source": "%(source)s",
    }
    columns, values = [], []
    for f in history._meta.concrete_fields:
        if f.column == "history_id":
            continue  # identity
        if f.column in tracked:
            columns.append(f.column)
            values.append(f"upd.{f.column}")
        elif f.column in extra:
            columns.append(f.column)
            values.append(extra[f.column])
        else:
            raise RuntimeError(f"historical revision column {f.column!r} has no source in the single-statement save")
    revision, assignment = Revision._meta.db_table, Assignment._meta.db_table
    return (
        f"WITH upd AS (UPDATE {revision} SET content = %(content)s, warnings = '[]'::jsonb, status = %(status)s, "
        "version = version + 1, updated_at = now() "
        "WHERE id = %(id)s AND annotator_id = %(user)s AND version = %(version)s "
        f"AND NOT EXISTS (SELECT 1 FROM {assignment} a WHERE a.clip_id = %(clip)s AND a.annotator_id = %(user)s "
        "AND a.state = 'submitted') RETURNING *) "
        f"INSERT INTO {history._meta.db_table} ({', '.join(columns)}) SELECT {', '.join(values)} FROM upd "
        "RETURNING id, version, status, updated_at, content"
    )


def _context_sql() -> str:
    revision, row, clip, project, assignment = (m._meta.db_table for m in (Revision, Row, Clip, Project, Assignment))
    return (
        "SELECT r.row_index, r.start_time, r.end_time, r.primary_speaker, r.dialogue_cleaned, r.clip_id, "
        "c.scenario, c.participants, c.duration, p.taxonomy_version, "
        f"(SELECT count(*) FROM {row} r2 WHERE r2.clip_id = r.clip_id), "
        f"(SELECT a.state FROM {assignment} a WHERE a.clip_id = r.clip_id AND a.annotator_id = %(user)s LIMIT 1), "
        "v.version, v.status, v.layout, v.content "
        f"FROM {revision} v JOIN {row} r ON r.id = v.row_id JOIN {clip} c ON c.id = r.clip_id "
        f"JOIN {project} p ON p.id = c.project_id WHERE v.id = %(id)s AND v.annotator_id = %(user)s"
    )


HISTORY_INSERT_SQL = _history_insert_sql()
CONTEXT_SQL = _context_sql()


def save_revision_single_statement(
    revision_id: int, user, content, expected_version: int, *, reviewed: bool | None = None
) -> services.SaveResult:
    """Option B: read the row's context (one SELECT, no lock), validate, then one compare-and-set
    statement in autocommit: ``UPDATE ... WHERE version = expected RETURNING *`` feeding the history
    INSERT. A concurrent save of the same version finds the new version after waiting for the row
    lock and updates nothing, which is the 409; no transaction block, so no BEGIN/COMMIT round trips.

    The returned revision is a plain object with what RevisionSerializer reads.
    """
    with connection.cursor() as cursor:
        cursor.execute(CONTEXT_SQL, {"id": revision_id, "user": user.pk})
        found = cursor.fetchone()
        if found is None:
            raise Revision.DoesNotExist
        (index, start, end, speaker, dialogue, clip_id, scenario, participants, duration, taxonomy_version,
         row_count, assignment_state, version, current_status, layout, old) = found  # fmt: skip
        if assignment_state is None:
            raise ServiceError("this clip is not assigned to you")
        if assignment_state == AssignmentState.SUBMITTED:
            raise ServiceError("this clip was submitted; ask a lead to reopen it before editing")
        if version != expected_version:
            raise services.VersionConflict(Revision.objects.select_related("row").get(pk=revision_id))
        if not isinstance(content, dict):
            raise services.InvalidDocument([services.Issue("", "the document must be a JSON object", "model_type")])
        # Django leaves jsonb as text on raw cursors.
        participants, layout, old = json.loads(participants), json.loads(layout), json.loads(old)
        skeleton = {
            "start_time": start,
            "end_time": end,
            "primary_speaker": speaker,
            "dialogue_cleaned": dialogue,
            "row_index": index,
        }
        row = SimpleNamespace(row_index=index, clip_id=clip_id, skeleton=lambda: skeleton)
        content = services.mirror_relation(content, speaker, layout or {})
        ctx = ClipContext.for_clip(scenario, participants, row_count, taxonomy_version, duration)
        issues = services.validate_content(row, content, ctx)
        if issues:
            raise services.InvalidDocument(issues)
        changed = content != old
        new_status = current_status
        if reviewed is True:
            new_status = RevisionStatus.REVIEWED
        elif reviewed is False or (changed and current_status == RevisionStatus.UNTOUCHED):
            new_status = RevisionStatus.EDITED
        params = {"content": json.dumps(content), "status": new_status, "id": revision_id, "user": user.pk}
        params.update(version=expected_version, clip=clip_id, source=current_source())
        cursor.execute(HISTORY_INSERT_SQL, params)
        saved = cursor.fetchone()
    if saved is None:  # lost the race to another save of the same version, or the clip was just submitted
        current = Revision.objects.select_related("row").get(pk=revision_id)
        if current.version != expected_version:
            raise services.VersionConflict(current)
        raise ServiceError("this clip was submitted; ask a lead to reopen it before editing")
    if assignment_state == AssignmentState.ASSIGNED:
        Assignment.objects.filter(clip_id=clip_id, annotator=user, state=AssignmentState.ASSIGNED).update(
            state=AssignmentState.IN_PROGRESS
        )
    pk, version, saved_status, updated_at, saved_content = saved
    revision = SimpleNamespace(
        id=pk,
        row=row,
        version=version,
        status=saved_status,
        content=json.loads(saved_content),
        warnings=[],
        updated_at=updated_at,
    )
    return services.SaveResult(revision, changed)


class SingleStatementRevisionSave(MyRevisionMixin, APIView):
    """PUT like RevisionDetail.put, through save_revision_single_statement."""

    def put(self, request, revision_id: int):
        return self._write(
            request,
            revision_id,
            SaveRevisionSerializer,
            lambda d: save_revision_single_statement(revision_id, request.user, d["content"], d["version"], reviewed=d["reviewed"]).revision,
        )
