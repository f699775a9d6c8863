"""Security settings that a user relies on without seeing them."""
import io
import re

import pytest
from django.core.management import call_command
from rest_framework.authtoken.models import Token

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
    nonce = nonce_src[len("'nonce-"):-1]
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


def test_api_tokens_can_be_created_used_and_revoked(client, lead):
    out = io.StringIO()
    call_command("api_token", "lead1", stdout=out)
    key = Token.objects.get(user=lead).key
    assert key in out.getvalue()
    assert client.get("/api/v1/projects/", HTTP_AUTHORIZATION=f"Token {key}").status_code == 200
    call_command("api_token", "lead1", "--revoke", stdout=io.StringIO())
    assert client.get("/api/v1/projects/", HTTP_AUTHORIZATION=f"Token {key}").status_code == 401


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
