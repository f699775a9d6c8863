"""Bench-only prototypes of a leaner row save, to measure proposed changes before
they are made in the app (annotation/workspace/services.py and api.py).

Option A, ``save_revision_lean`` (the ORM, simple-history's signal, fewer statements)
and option B, ``save_revision_single_statement`` (see its docstring).

Same contract as ``PUT /api/v1/revisions/<id>/``: the caller's own revision only
(anything else is a 404), optimistic version check (409 with the current
revision), the whole document validated strictly (422), a submitted or missing
assignment refused (403), one historical record per save (simple-history), the
same response body. What differs is only how many statements it takes:

* the row lock is ``FOR UPDATE OF`` the revision alone; the app's
  ``select_for_update().select_related("row__clip__project")`` also locks the
  row, the clip and the *project* rows, so every save in a project waits for
  the one before it to commit;
* no scoped pre-fetch in the view before the service fetches the same revision
  again (the service's own ``annotator=user`` filter is the scoping);
* the assignment state and the clip's row count (for the evidence-row bounds)
  come with the locking SELECT as subqueries instead of two more queries;
* the assignment is moved to ``in_progress`` only when it is still ``assigned``
  (the first save), not with an UPDATE on every save;
* the UPDATE writes only the columns a save changes.

Option A's statements per save: token lookup, BEGIN, SELECT ... FOR UPDATE OF,
UPDATE, INSERT (history), COMMIT; the app's path takes 11.
"""

from __future__ import annotations

import json
from types import SimpleNamespace

from django.db import connection, transaction
from django.db.models import Count, OuterRef, Subquery
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.audit import current_source
from annotation.models import Assignment, AssignmentState, Clip, Project, Revision, RevisionStatus, Row
from annotation.schema import ClipContext
from annotation.services import ServiceError
from annotation.workspace import services
from annotation.workspace.api import RevisionSerializer, SaveRevisionSerializer, _conflict, _issues


@transaction.atomic
def save_revision_lean(
    revision_id: int, user, content, expected_version: int, *, reviewed: bool | None = None
) -> services.SaveResult:
    """services.save_revision with the statements above; raises Revision.DoesNotExist for another's revision."""
    my_assignment = Assignment.objects.filter(clip_id=OuterRef("row__clip_id"), annotator=user)
    row_count = (
        Row.objects.filter(clip_id=OuterRef("row__clip_id"))
        .order_by()
        .values("clip_id")
        .annotate(n=Count("id"))
        .values("n")
    )
    revision = (
        Revision.objects.select_for_update(of=("self",))
        .select_related("row__clip__project")
        .annotate(assignment_state=Subquery(my_assignment.values("state")[:1]), clip_row_count=Subquery(row_count))
        .get(pk=revision_id, annotator=user)
    )
    if revision.assignment_state is None:
        raise ServiceError("this clip is not assigned to you")
    if revision.assignment_state == AssignmentState.SUBMITTED:
        raise ServiceError("this clip was submitted; ask a lead to reopen it before editing")
    if revision.version != expected_version:
        raise services.VersionConflict(revision)
    if not isinstance(content, dict):
        raise services.InvalidDocument([services.Issue("", "the document must be a JSON object", "model_type")])
    content = services.mirror_relation(content, revision.row.primary_speaker, revision.layout or {})
    ctx = services.clip_context(revision.row.clip, revision.clip_row_count)
    issues = services.validate_content(revision.row, content, ctx)
    if issues:
        raise services.InvalidDocument(issues)
    changed = content != revision.content
    revision.content = content
    revision.warnings = []
    if reviewed is True:
        revision.status = RevisionStatus.REVIEWED
    elif reviewed is False or (changed and revision.status == RevisionStatus.UNTOUCHED):
        revision.status = RevisionStatus.EDITED
    revision.version += 1
    revision._history_user = user
    revision.save(update_fields=["content", "warnings", "status", "version", "updated_at"])
    if revision.assignment_state == AssignmentState.ASSIGNED:
        Assignment.objects.filter(clip_id=revision.row.clip_id, annotator=user, state=AssignmentState.ASSIGNED).update(
            state=AssignmentState.IN_PROGRESS
        )
    return services.SaveResult(revision, changed)


class ProposedRevisionSave(APIView):
    """PUT like RevisionDetail.put, through save_revision_lean."""

    save = staticmethod(save_revision_lean)

    def put(self, request, revision_id: int):
        data = SaveRevisionSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            result = self.save(
                revision_id,
                request.user,
                data.validated_data["content"],
                data.validated_data["version"],
                reviewed=data.validated_data["reviewed"],
            )
        except Revision.DoesNotExist:
            return Response({"detail": "Not found."}, status=status.HTTP_404_NOT_FOUND)
        except services.VersionConflict as exc:
            return Response(_conflict(exc), status=status.HTTP_409_CONFLICT)
        except services.InvalidDocument as exc:
            return Response(_issues(exc), status=status.HTTP_422_UNPROCESSABLE_ENTITY)
        except ServiceError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_403_FORBIDDEN)
        return Response(RevisionSerializer(result.revision).data)


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


class SingleStatementRevisionSave(ProposedRevisionSave):
    """PUT like RevisionDetail.put, through save_revision_single_statement."""

    save = staticmethod(save_revision_single_statement)
