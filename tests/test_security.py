"""Security settings that a user relies on without seeing them."""

import io
import json
import re

import pytest
from django.core.management import call_command
from django.test import Client

pytestmark = pytest.mark.django_db


def test_pages_carry_a_content_security_policy_without_inline_script(client, annotator):
    client.force_login(annotator)
    response = client.get("/work/")
    policy = response["Content-Security-Policy"]
    directives = dict(d.strip().split(" ", 1) for d in policy.split(";") if d.strip())
    # Our own files, plus the per-request nonce of the one inline script: the import map.
    self_src, nonce_src = directives["script-src"].split(" ")
    assert self_src == "'self'" and re.fullmatch(r"'nonce-[A-Za-z0-9+/=_-]{16,}'", nonce_src)
    assert "unsafe-inline" not in directives["script-src"] and "unsafe-eval" not in policy
    assert directives["object-src"] == "'none'" and directives["frame-ancestors"] == "'none'"
    nonce = nonce_src[len("'nonce-") : -1]
    inline_scripts = re.findall(r"<script(?![^>]*\bsrc=)([^>]*)>", response.content.decode())
    assert inline_scripts == [f' type="importmap" nonce="{nonce}"'], "the import map is the only inline script"


def test_a_second_request_gets_a_new_nonce(client, annotator):
    client.force_login(annotator)
    first, second = (client.get("/work/")["Content-Security-Policy"] for _ in range(2))
    assert first != second


def test_repeated_failed_logins_lock_the_account_out(client, annotator):
    for _ in range(5):
        response = client.post("/accounts/login/", {"username": "ann1", "password": "wrong"})
        assert response.status_code in (200, 429)
    response = client.post("/accounts/login/", {"username": "ann1", "password": "ann-pass-123"})
    assert response.status_code == 429 and b"Too many failed logins" in response.content
    assert "_auth_user_id" not in client.session


def test_a_correct_password_logs_in(client, annotator):
    response = client.post("/accounts/login/", {"username": "ann1", "password": "ann-pass-123"})
    assert response.status_code == 302 and client.session["_auth_user_id"] == str(annotator.pk)


def made_token(*args) -> tuple[str, str]:
    """Run ``manage.py api_token *args``: (the key it printed, everything it printed)."""
    out = io.StringIO()
    call_command("api_token", *args, stdout=out)
    keys = re.findall(r"\b[0-9a-f]{40,64}$", out.getvalue(), re.MULTILINE)
    assert len(keys) == 1, out.getvalue()
    return keys[0], out.getvalue()


def test_api_tokens_can_be_created_used_and_revoked(client, lead):
    key, _ = made_token("lead1")
    assert client.get("/api/v1/projects/", HTTP_AUTHORIZATION=f"Token {key}").status_code == 200
    out = io.StringIO()
    call_command("api_token", "lead1", "--revoke", stdout=out)
    assert "revoked 1 token(s) of lead1" in out.getvalue()
    assert client.get("/api/v1/projects/", HTTP_AUTHORIZATION=f"Token {key}").status_code == 401


def test_api_tokens_are_stored_only_as_hashes_and_expire_after_api_token_days(client, lead, settings):
    import hashlib
    from datetime import timedelta

    from django.db import connection
    from django.utils import timezone

    settings.API_TOKEN_DAYS = 90
    key, printed = made_token("lead1")
    with connection.cursor() as cursor:  # every text column of every table: the key is nowhere
        for table in connection.introspection.table_names():
            columns = [c.name for c in connection.introspection.get_table_description(cursor, table)]
            cursor.execute(
                f"SELECT {', '.join(f'CAST({connection.ops.quote_name(c)} AS TEXT)' for c in columns)} FROM "
                f"{connection.ops.quote_name(table)}"
            )
            assert not any(key in (value or "") for row in cursor.fetchall() for value in row), (
                f"the key is stored in {table}"
            )
    assert "token for lead1, expires" in printed and "shown only now" in printed and len(key) == 64
    from annotation.models import ApiToken

    (token,) = ApiToken.objects.filter(user=lead)
    assert token.digest == hashlib.sha512(key.encode()).hexdigest(), "a SHA-512 digest (knox) is all that is kept"
    assert abs(token.expiry - (timezone.now() + timedelta(days=90))) < timedelta(minutes=1)
    assert client.get("/api/v1/projects/", HTTP_AUTHORIZATION=f"Token {key}").status_code == 200
    ApiToken.objects.filter(pk=token.pk).update(expiry=timezone.now() - timedelta(seconds=1))
    assert client.get("/api/v1/projects/", HTTP_AUTHORIZATION=f"Token {key}").status_code == 401, (
        "an expired token is refused"
    )
    settings.API_TOKEN_DAYS = 7
    made_token("lead1")
    assert ApiToken.objects.get(user=lead).expiry < timezone.now() + timedelta(days=7, minutes=1), (
        "the setting sets the days"
    )


def test_a_read_only_token_may_read_and_not_write(client, coded_clip, annotator):
    read_key, printed = made_token("ann1")
    assert "read-only token" in printed and "--scope read-write to write" in printed, "read-only unless asked"
    write_key, _ = made_token("ann1", "--scope", "read-write")
    url = f"/api/v1/clips/{coded_clip.pk}/comments/"
    assert client.get(url, HTTP_AUTHORIZATION=f"Token {read_key}").status_code == 200
    refused = client.post(
        url, {"body": "row 2 again"}, content_type="application/json", HTTP_AUTHORIZATION=f"Token {read_key}"
    )
    assert (
        refused.status_code == 403
        and "read-only" in refused.json()["detail"]
        and "--scope read-write" in refused.json()["detail"]
    )
    settings_put = client.put(
        "/api/v1/me/workspace-settings/",
        {"replay_speed": "0.75", "pre_roll": 1.0},
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Token {read_key}",
    )
    assert settings_put.status_code == 403
    assert coded_clip.comments.count() == 0
    written = client.post(
        url, {"body": "row 2 again"}, content_type="application/json", HTTP_AUTHORIZATION=f"Token {write_key}"
    )
    assert written.status_code == 201
    mine = client.get("/api/v1/me/tokens/", HTTP_AUTHORIZATION=f"Token {read_key}").json()
    assert mine["current"]["scope"] == "read" and sorted(t["scope"] for t in mine["tokens"]) == ["read", "read-write"]
    assert mine["policy"]["days"] == 90 and mine["policy"]["revoked_on_password_change"] is True
    assert read_key not in json.dumps(mine) and write_key not in json.dumps(mine)


def test_a_password_change_revokes_every_api_token_of_the_user(client, annotator, other_annotator):
    key, _ = made_token("ann1")
    other_key, _ = made_token("ann2")
    client.force_login(annotator)
    changed = client.post(
        "/accounts/password/",
        {
            "old_password": "ann-pass-123",  # pragma: allowlist secret
            "new_password1": "a fresh long passphrase",  # pragma: allowlist secret
            "new_password2": "a fresh long passphrase",  # pragma: allowlist secret
        },
    )
    assert changed.status_code == 302
    assert Client().get("/api/v1/assignments/", HTTP_AUTHORIZATION=f"Token {key}").status_code == 401
    assert Client().get("/api/v1/assignments/", HTTP_AUTHORIZATION=f"Token {other_key}").status_code == 200, (
        "only that user's"
    )
    other_annotator.set_password("another long passphrase")  # the admin's and changepassword's way
    other_annotator.save()
    assert Client().get("/api/v1/assignments/", HTTP_AUTHORIZATION=f"Token {other_key}").status_code == 401
    fresh, _ = made_token("ann2")
    other_annotator.last_login = None
    other_annotator.save()  # any other save keeps the tokens
    assert Client().get("/api/v1/assignments/", HTTP_AUTHORIZATION=f"Token {fresh}").status_code == 200


def test_wrong_old_passwords_on_the_password_page_are_throttled_like_failed_logins(client, annotator):
    client.force_login(annotator)
    for _ in range(5):
        wrong = client.post(
            "/accounts/password/",
            {
                "old_password": "guess",  # pragma: allowlist secret
                "new_password1": "a fresh long passphrase",  # pragma: allowlist secret
                "new_password2": "a fresh long passphrase",  # pragma: allowlist secret
            },
        )
        assert wrong.status_code in (200, 429)
    locked = client.post(
        "/accounts/password/",
        {
            "old_password": "ann-pass-123",  # pragma: allowlist secret
            "new_password1": "a fresh long passphrase",  # pragma: allowlist secret
            "new_password2": "a fresh long passphrase",  # pragma: allowlist secret
        },
    )
    assert locked.status_code == 429 and b"Too many failed logins" in locked.content
    annotator.refresh_from_db()
    assert annotator.check_password("ann-pass-123"), "the password was not changed"


def test_session_api_writes_need_a_csrf_token(annotator):
    from django.test import Client

    strict = Client(enforce_csrf_checks=True)
    strict.force_login(annotator)
    response = strict.post("/api/v1/clips/1/comments/", {"body": "x"}, content_type="application/json")
    assert response.status_code == 403 and "CSRF" in response.json()["detail"]


def test_readiness_reports_database_and_broker(client, settings):
    response = client.get("/readyz")
    body = response.json()
    assert response.status_code == 200 and body["status"] == "ready"
    assert body["checks"]["database"] == {"ok": True, "detail": "reachable, migrations applied"}
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:1/0"
    response = client.get("/readyz")
    assert response.status_code == 503
    assert response.json()["checks"]["broker"] == {"ok": False, "detail": "broker unreachable"}
    assert "127.0.0.1" not in response.content.decode(), "no internals leak"


def test_api_docs_are_served_without_a_cdn(client, lead):
    client.force_login(lead)
    page = client.get("/api/docs/").content.decode()
    assert "cdn" not in page.lower() and "/static/drf_spectacular_sidecar/" in page


def test_a_lost_database_connection_gives_a_clear_503(client, annotator, monkeypatch):
    from django.db import OperationalError

    from annotation.workspace import views

    client.force_login(annotator)

    def outage(*args, **kwargs):
        raise OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr(views.selectors, "my_assignments", outage)
    response = client.get("/work/")
    assert response.status_code == 503 and response["Retry-After"] == "10"
    assert b"nothing was saved" in response.content


# --- create_user applies the password rules ------------------------------


@pytest.mark.parametrize(
    "password, rule",
    [
        ("a", "password_too_short: This password is too short. It must contain at least 12 characters."),
        ("840273619452873", "password_entirely_numeric"),
        ("password1234", "password_too_common"),
        ("ops-admin-ops", "password_too_similar"),
    ],
)
def test_create_user_refuses_a_password_the_validators_refuse_and_names_the_rule(monkeypatch, password, rule):
    from django.contrib.auth import get_user_model
    from django.core.management import CommandError

    monkeypatch.setattr("sys.stdin", io.StringIO(password + "\n"))
    with pytest.raises(CommandError) as excinfo:
        call_command("create_user", "ops-admin", "--role", "admin", "--password-stdin", stdout=io.StringIO())
    assert str(excinfo.value).startswith("password refused (") and rule in str(excinfo.value)
    assert not get_user_model().objects.filter(username="ops-admin").exists()


def test_production_refuses_the_probes_one_letter_admin_password(tmp_path):
    """`printf 'a\\n' | manage.py create_user x --role admin --password-stdin` in production mode."""
    import os
    import subprocess
    import sys

    from .conftest import REPO

    env = {k: v for k, v in os.environ.items() if k not in ("DEBUG", "DJANGO_ALLOW_ASYNC_UNSAFE")}
    env.update(
        DJANGO_ENV="production",
        SECRET_KEY="p" * 30 + "-production-secret-for-this-test-only-0123456789",
        ALLOWED_HOSTS="annot.example.org",
        DATABASE_URL=f"sqlite:///{tmp_path}/empty.sqlite3",
        STATIC_ROOT=str(tmp_path / "static"),
    )
    result = subprocess.run(
        [sys.executable, "manage.py", "create_user", "x", "--role", "admin", "--password-stdin"],
        input="a\n",
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode != 0
    assert "password refused (password_too_short" in result.stderr and "created" not in result.stdout


def test_djangos_createsuperuser_without_input_applies_the_same_rules(monkeypatch):
    """`createsuperuser --noinput` is held to the rules too (`DJANGO_SUPERUSER_PASSWORD=a` once went through)."""
    from django.contrib.auth import get_user_model
    from django.core.management import CommandError

    monkeypatch.setenv("DJANGO_SUPERUSER_PASSWORD", "a")
    with pytest.raises(CommandError) as excinfo:
        call_command(
            "createsuperuser", "--noinput", "--username", "weak", "--email", "w@example.org", stdout=io.StringIO()
        )
    assert str(excinfo.value).startswith("password refused (password_too_short") and "nothing was created" in str(
        excinfo.value
    )
    assert not get_user_model().objects.filter(username="weak").exists()
    monkeypatch.setenv("DJANGO_SUPERUSER_PASSWORD", "a long and unusual passphrase")
    call_command(
        "createsuperuser", "--noinput", "--username", "strong", "--email", "s@example.org", stdout=io.StringIO()
    )
    assert get_user_model().objects.get(username="strong").is_superuser


def test_the_password_change_page_applies_the_same_rules(client, annotator):
    client.force_login(annotator)
    response = client.post(
        "/accounts/password/",
        {
            "old_password": "ann-pass-123",  # pragma: allowlist secret
            "new_password1": "short1",  # pragma: allowlist secret
            "new_password2": "short1",  # pragma: allowlist secret
        },  # pragma: allowlist secret
    )
    assert response.status_code == 200 and "at least 12 characters" in response.content.decode()


# --- expected refusals are one log line; the demo's 404 lists no URLs ----------


@pytest.fixture
def console_log():
    """What the configured console handler writes, while the test runs."""
    import logging

    from annotation.log_filters import RefusalsInOneLine

    (handler,) = [h for h in logging.getLogger().handlers if any(isinstance(f, RefusalsInOneLine) for f in h.filters)]
    stream = io.StringIO()
    previous = handler.setStream(stream)
    yield stream
    handler.setStream(previous)


def test_a_403_is_logged_as_one_line_without_a_traceback(client, annotator, project, console_log):
    client.force_login(annotator)
    response = client.get(f"/projects/{project.slug}/ingest/")  # leads only: PermissionDenied
    assert response.status_code == 403
    assert console_log.getvalue() == f"Forbidden (Permission denied): /projects/{project.slug}/ingest/\n"


def test_refusals_of_every_kind_are_one_line_each(client, annotator, console_log):
    client.force_login(annotator)
    assert client.get("/work/clips/99999/").status_code == 404
    assert client.get("/api/v1/clips/99999/workspace/").status_code == 404
    lines = console_log.getvalue().splitlines()
    assert lines == ["Not Found: /work/clips/99999/", "Not Found: /api/v1/clips/99999/workspace/"]


def test_a_server_error_keeps_its_traceback():
    import logging

    from annotation.log_filters import RefusalsInOneLine

    try:
        raise RuntimeError("boom")
    except RuntimeError:
        import sys

        exc_info = sys.exc_info()
    for status, kept in ((500, True), (403, False), (409, False)):
        record = logging.LogRecord("django.request", logging.ERROR, __file__, 1, "x", (), exc_info)
        record.status_code = status
        assert RefusalsInOneLine().filter(record) and (record.exc_info is not None) == kept


@pytest.mark.parametrize("who", ["anonymous", "annotator"])
def test_the_debug_demo_serves_the_ordinary_404_page(client, annotator, settings, who):
    settings.DEBUG = True
    urls = ["/no/such/page/", "/api/v1/no-such-endpoint/"]
    if who == "annotator":
        client.force_login(annotator)
        urls.append("/work/clips/99999/")  # a view's Http404, which DEBUG also turns into a technical page
    for url in urls:
        response = client.get(url)
        page = response.content.decode()
        assert response.status_code == 404
        assert "Not found" in page and "There is nothing here" in page, url
        assert "URLconf" not in page and "accounts/login/" not in page and "Raised by" not in page, url


def test_a_superuser_still_gets_djangos_debug_404_in_the_demo(client, settings):
    from annotation.services import create_user

    settings.DEBUG = True
    client.force_login(create_user("root", "admin", password="root-pass-12345")[0])  # pragma: allowlist secret
    assert "URLconf" in client.get("/no/such/page/").content.decode()


@pytest.mark.parametrize("who", ["anonymous", "annotator", "lead"])
def test_the_debug_demo_shows_the_ordinary_500_page_to_everyone_but_staff(annotator, lead, settings, who):
    settings.DEBUG = True
    settings.ROOT_URLCONF = "tests.urls_server_error"
    client = Client(raise_request_exception=False)
    if who != "anonymous":
        client.force_login(annotator if who == "annotator" else lead)
    for accept in ("text/html", "application/json"):
        response = client.get("/fail/", HTTP_ACCEPT=accept)
        page = response.content.decode()
        assert response.status_code == 500
        assert "SECRET_SETTING_VALUE" not in page and "Traceback" not in page and "settings" not in page.lower(), (
            who,
            accept,
        )
    assert "Something went wrong" in client.get("/fail/").content.decode()


def test_staff_still_get_djangos_debug_500_page_in_the_demo(settings):
    from annotation.services import create_user

    settings.DEBUG = True
    settings.ROOT_URLCONF = "tests.urls_server_error"
    client = Client(raise_request_exception=False)
    client.force_login(create_user("root", "admin", password="root-pass-12345")[0])  # pragma: allowlist secret
    assert "SECRET_SETTING_VALUE" in client.get("/fail/").content.decode()


def test_plain_text_tokens_of_an_earlier_version_become_hashed_tokens_and_are_deleted(client, lead, settings):
    """Upgrading: DRF's authtoken table held keys in plain text. The migration keeps each script working (a
    read-write token that expires API_TOKEN_DAYS after the upgrade) and deletes the plain-text keys."""
    import importlib

    from django.apps import apps
    from django.db import connection

    migration = importlib.import_module("annotation.migrations.0015_hashed_scoped_api_tokens")
    key = "0123456789abcdef0123456789abcdef01234567"  # pragma: allowlist secret
    with connection.cursor() as cursor:
        cursor.execute(
            "CREATE TABLE authtoken_token (key varchar(40) PRIMARY KEY, created timestamp with time zone, user_id "
            "integer)"
        )
        cursor.execute("INSERT INTO authtoken_token VALUES (%s, CURRENT_TIMESTAMP, %s)", [key, lead.pk])
    # The step reads only the editor's connection: a stand-in, since SQLite opens no schema editor inside the
    # test's transaction.
    migration.hash_plain_text_tokens(apps, type("Editor", (), {"connection": connection})())
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM authtoken_token")
        assert cursor.fetchone()[0] == 0, "no plain-text key is left"
        cursor.execute("DROP TABLE authtoken_token")
    response = client.get("/api/v1/projects/", HTTP_AUTHORIZATION=f"Token {key}")
    assert response.status_code == 200
    assert (
        client.post(
            "/api/v1/projects/", {}, content_type="application/json", HTTP_AUTHORIZATION=f"Token {key}"
        ).status_code
        != 403
    )
