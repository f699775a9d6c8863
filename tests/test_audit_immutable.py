"""Nobody can edit the audit trail: historical records are added, never changed or deleted.

Through the ORM the guards in ``annotation.audit`` refuse it on every database;
on PostgreSQL a trigger (migration 0005) refuses it below the ORM too, for raw
SQL and ``QuerySet.update()``. The one change let through is Django's own
``SET_NULL`` of ``history_user`` when a user is deleted.
"""

from __future__ import annotations

import pytest
from django.db import DatabaseError, connection, transaction
from rest_framework.test import APIClient

from annotation.audit import AuditTrailImmutable, historical_models
from annotation.models import Assignment, Clip, ClipState, Comment, Project, Revision
from annotation.services import create_user, transition
from annotation.workspace.services import add_comment

from .builders.agreement import coded_client_content, make_clip
from .fakes.clips import make_clip as make_imported_clip

pytestmark = pytest.mark.django_db

AUDITED = [Project, Clip, Revision, Assignment, Comment]


def on_postgresql():
    if connection.vendor != "postgresql":
        pytest.skip("the trigger is PostgreSQL's; on SQLite only the ORM guards apply")


@pytest.fixture
def revision(project, annotator):
    make_clip(project, "audit/001", {annotator: [coded_client_content(v) for v in (0, 1)]})
    return Revision.objects.filter(annotator=annotator).order_by("row__row_index").first()


def record_of(revision):
    return revision.history.order_by("-history_id").first()


def snapshot(model) -> list[dict]:
    return list(model.history.model.objects.order_by("history_id").values())


def raw_sql(sql: str, params=()):
    """Run ``sql`` in a savepoint, so that a refusal leaves the test's transaction usable."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.rowcount


def test_every_historical_model_is_guarded():
    models = historical_models()
    assert {m.instance_type for m in models} >= set(AUDITED)
    from django.db.models.signals import pre_delete, pre_save

    for model in models:
        assert pre_save.has_listeners(model) and pre_delete.has_listeners(model), model


def test_the_orm_refuses_to_change_a_historical_record(revision):
    before = snapshot(Revision)
    record = record_of(revision)
    record.content = {"rewritten": True}
    with pytest.raises(AuditTrailImmutable, match="cannot be changed"):
        record.save()
    with pytest.raises(AuditTrailImmutable):
        record.save(update_fields=["content"])
    # Nor by saving a fresh instance that carries an existing record's id.
    forged = Revision.history.model(
        **{**Revision.history.model.objects.filter(pk=record.pk).values().get(), "version": 99}
    )
    with pytest.raises(AuditTrailImmutable):
        forged.save()
    assert snapshot(Revision) == before


def test_the_orm_refuses_to_delete_historical_records(revision, project):
    before = snapshot(Revision), snapshot(Project)
    # Each in a savepoint: Django's delete runs in an atomic block without one, so a refusal
    # inside the test's transaction would leave it unusable.
    with pytest.raises(AuditTrailImmutable, match="cannot be deleted"), transaction.atomic():
        record_of(revision).delete()
    with pytest.raises(AuditTrailImmutable), transaction.atomic():
        revision.history.all().delete()
    with pytest.raises(AuditTrailImmutable), transaction.atomic():
        Project.history.model.objects.filter(id=project.pk).delete()
    assert (snapshot(Revision), snapshot(Project)) == before


def test_every_history_table_has_the_trigger_on_postgresql():
    on_postgresql()
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT tgrelid::regclass::text FROM pg_trigger WHERE tgname = 'history_append_only' AND tgenabled <> 'D'"
        )
        guarded = {name for (name,) in cursor.fetchall()}
    missing = {m._meta.db_table for m in historical_models()} - guarded
    assert not missing, (
        f"history tables without the append-only trigger (add them in a new migration): {sorted(missing)}"
    )


def test_queryset_update_which_sends_no_signal_is_refused_by_postgresql(revision):
    on_postgresql()
    record = record_of(revision)
    refused = "audit trail is append-only: UPDATE on annotation_historicalrevision"
    with pytest.raises(DatabaseError, match=refused), transaction.atomic():
        Revision.history.filter(pk=record.pk).update(content={"rewritten": True})
    with pytest.raises(DatabaseError, match=refused), transaction.atomic():
        Revision.history.model.objects.filter(pk=record.pk).update(history_type="-")
    assert record_of(revision).content == revision.content


def test_raw_sql_update_and_delete_are_refused_by_postgresql(revision, project):
    on_postgresql()
    before = snapshot(Revision), snapshot(Project)
    for sql in (
        "UPDATE annotation_historicalrevision SET content = '{}'::jsonb",
        "UPDATE annotation_historicalrevision SET history_date = now() - interval '1 year'",
        "DELETE FROM annotation_historicalrevision",
        "DELETE FROM annotation_historicalproject WHERE id = %s",
    ):
        with pytest.raises(DatabaseError, match="append-only"):
            raw_sql(sql, [project.pk] if "%s" in sql else ())
    assert (snapshot(Revision), snapshot(Project)) == before


def test_postgresql_lets_through_only_the_unlinking_of_a_deleted_user(revision, annotator, lead):
    on_postgresql()
    comment = add_comment(revision.row.clip, annotator, "a note")
    table = Comment.history.model._meta.db_table
    for sql, params in (
        (f"UPDATE {table} SET history_user_id = %s WHERE id = %s", [lead.pk, comment.pk]),  # pinning it on someone else
        (
            f"UPDATE {table} SET history_user_id = NULL, body = 'edited' WHERE id = %s",
            [comment.pk],
        ),  # unlinking as a cover
        (f"UPDATE {table} SET body = 'edited' WHERE id = %s", [comment.pk]),
    ):
        with pytest.raises(DatabaseError, match="append-only"):
            raw_sql(sql, params)
    # What Django's on_delete=SET_NULL sends when the user is deleted.
    assert raw_sql(f"UPDATE {table} SET history_user_id = NULL WHERE id = %s", [comment.pk]) == 1
    assert list(Comment.history.filter(id=comment.pk).values_list("body", "history_user_id")) == [("a note", None)]


def test_saves_are_still_audited(client, revision, annotator, lead, project):
    before = revision.history.count()
    api = APIClient()
    api.force_authenticate(annotator)
    answer = api.put(
        f"/api/v1/revisions/{revision.pk}/",
        {"content": {**revision.content, "tone_of_voice": "calm"}, "version": 1},
        format="json",
    )
    assert answer.status_code == 200, answer.content
    newest = record_of(revision)
    assert revision.history.count() == before + 1
    assert (newest.version, newest.content["tone_of_voice"], newest.history_user_id, newest.history_source) == (
        2,
        "calm",
        annotator.pk,
        "api",
    )
    clip = revision.row.clip
    add_comment(clip, annotator, "a note")
    assert Comment.history.filter(clip_id=clip.pk, body="a note", history_type="+").count() == 1
    imported = make_imported_clip(project, "audit/002")
    transition(imported, ClipState.PREANNOTATING, actor=lead, reason="checked")
    assert imported.history.order_by("-history_id").first().history_change_reason == "checked"


def test_a_user_who_left_a_trail_can_still_be_deleted_and_the_trail_stays(project):
    lead = create_user("leaving-lead", "lead")[0]
    clip = make_imported_clip(project, "audit/003")
    transition(clip, ClipState.DISCARDED, actor=lead, reason="out of scope")
    trail = list(clip.history.order_by("history_id").values())
    assert trail[-1]["history_user_id"] == lead.pk and trail[-1]["discarded_by_id"] == lead.pk
    lead.delete()  # on_delete=SET_NULL: Django nulls history_user on every record the lead made
    after = list(clip.history.order_by("history_id").values())
    assert len(after) == len(trail)
    assert [{**r, "history_user_id": None} for r in trail] == after, "only the link to the deleted account went"
    clip.refresh_from_db()
    assert clip.discarded_by_id is None and clip.discard_reason == "out of scope"


@pytest.mark.django_db(transaction=True)
def test_truncate_still_works_so_the_test_suite_can_flush_between_tests(project, annotator):
    on_postgresql()
    # Row triggers do not fire on TRUNCATE, which Django's flush uses after every transactional
    # test (this one's included).
    make_clip(project, "audit/004", {annotator: [coded_client_content(0)]})
    assert Revision.history.exists()
    raw_sql(f"TRUNCATE {Revision.history.model._meta.db_table}")
    assert not Revision.history.exists()
