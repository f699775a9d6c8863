"""The audit trail is append-only in the database too (PostgreSQL).

A row trigger on every history table refuses UPDATE and DELETE, whoever sends
them: the ORM (including ``QuerySet.update()``, which sends no signal to the
guards in ``annotation.audit``), raw SQL, a psql session.

One UPDATE is let through: Django's ``on_delete=SET_NULL`` of ``history_user``
when a user is deleted, which sets ``history_user_id`` from a user to NULL and
changes nothing else. Refusing it would make users impossible to delete once
they have done anything; allowing it loses only the link to an account that no
longer exists (the record still says what changed, when, and from which source).

Not covered, on purpose: TRUNCATE (row triggers do not fire on it; Django's
``flush``, which the test suite uses between transactional tests, truncates),
DROP TABLE, and ALTER TABLE ... DISABLE TRIGGER. They need the table's owner;
an app database role that does not own the tables cannot run them.

A new historical model needs its table added here (in a new migration);
tests/test_audit_immutable.py fails until it is.

Nothing on SQLite: a trigger there would also fire on the ``DELETE FROM`` that
Django's flush uses instead of TRUNCATE. There the ORM guards apply.
"""
from django.db import migrations

TABLES = [
    "annotation_historicalproject",
    "annotation_historicalclip",
    "annotation_historicalrow",
    "annotation_historicaldraft",
    "annotation_historicalrevision",
    "annotation_historicalgold",
    "annotation_historicalassignment",
    "annotation_historicalcomment",
]

FUNCTION = """
CREATE OR REPLACE FUNCTION annotation_history_append_only() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    -- on_delete=SET_NULL of history_user when a user is deleted: that change alone is allowed.
    IF TG_OP = 'UPDATE'
       AND OLD.history_user_id IS NOT NULL AND NEW.history_user_id IS NULL
       AND (to_jsonb(NEW) - 'history_user_id') = (to_jsonb(OLD) - 'history_user_id') THEN
        RETURN NEW;
    END IF;
    RAISE EXCEPTION 'the audit trail is append-only: % on % refused', TG_OP, TG_TABLE_NAME
        USING ERRCODE = 'insufficient_privilege',
              HINT = 'historical records can be added, never changed or deleted';
END;
$$;
"""


class PostgreSQLOnly(migrations.RunSQL):
    """RunSQL on PostgreSQL, nothing on other databases."""

    def database_forwards(self, app_label, schema_editor, from_state, to_state):
        if schema_editor.connection.vendor == "postgresql":
            super().database_forwards(app_label, schema_editor, from_state, to_state)

    def database_backwards(self, app_label, schema_editor, from_state, to_state):
        if schema_editor.connection.vendor == "postgresql":
            super().database_backwards(app_label, schema_editor, from_state, to_state)


class Migration(migrations.Migration):
    dependencies = [("annotation", "0004_gold_version")]

    operations = [
        PostgreSQLOnly(
            sql=[FUNCTION]
            + [
                f"CREATE TRIGGER history_append_only BEFORE UPDATE OR DELETE ON {table} "
                "FOR EACH ROW EXECUTE FUNCTION annotation_history_append_only();"
                for table in TABLES
            ],
            reverse_sql=[f"DROP TRIGGER IF EXISTS history_append_only ON {table};" for table in TABLES]
            + ["DROP FUNCTION IF EXISTS annotation_history_append_only();"],
        ),
    ]
