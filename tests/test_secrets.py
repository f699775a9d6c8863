"""No secret in the repository or in the logs (issue 7, access)."""

from __future__ import annotations

import json
import logging
import subprocess
from pathlib import Path

import pytest

from annotation.preannotate.services import start_preannotation
from annotation.tokens import issue_token

from .conftest import require
from .fakes import gemini_server as g
from .fakes.clips import make_clip

REPO = Path(__file__).resolve().parent.parent
BASELINE = REPO / ".secrets.baseline"


def _tracked_files() -> list[str]:
    try:
        out = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        out = ""
    require(bool(out), "not a git checkout: cannot list the tracked files")
    # The baseline itself holds only hashes of the known placeholders.
    return [name for name in out.splitlines() if (REPO / name).is_file() and name != BASELINE.name]


def test_no_secret_is_committed():
    """detect-secrets over every tracked file; the baseline lists the known placeholders only.

    The baseline holds the development SECRET_KEY that production refuses, the
    test users' passwords and the fake Gemini keys of the tests. A new finding
    fails here: remove the secret, or, if it is a placeholder, mark the line
    ``# pragma: allowlist secret`` or re-run ``detect-secrets scan`` into the baseline.
    """
    from detect_secrets import SecretsCollection
    from detect_secrets.settings import transient_settings

    baseline = json.loads(BASELINE.read_text())
    known = {(name, r["hashed_secret"]) for name, found in baseline["results"].items() for r in found}
    secrets = SecretsCollection(root=str(REPO))
    with transient_settings({"plugins_used": baseline["plugins_used"], "filters_used": baseline["filters_used"]}):
        secrets.scan_files(*_tracked_files())
    new = sorted(f"{name}:{s.line_number} ({s.type})" for name, s in secrets if (name, s.secret_hash) not in known)
    assert not new, "possible secrets committed:\n" + "\n".join(new)
    for name, _found in baseline["results"].items():
        assert name.startswith(("tests/", "bench/")) or name in ("rescue_annot/settings.py", ".env.example"), (
            f"the baseline excuses a finding in {name}; only tests, benchmarks and the refused development key may "
            "have one"
        )


@pytest.mark.django_db
def test_secrets_never_reach_the_logs(
    client, settings, caplog, project, annotator, eager_celery, django_capture_on_commit_callbacks
):
    gemini_key = "fake-gemini-key-that-must-never-be-logged-0123456789"  # pragma: allowlist secret
    password = "correct-horse-battery-staple-not-this-one"  # pragma: allowlist secret
    caplog.set_level(logging.DEBUG)
    with g.FakeGemini() as fake:
        settings.GEMINI_API_KEY = gemini_key
        settings.GEMINI_BASE_URL = fake.url
        settings.GEMINI_RPM = 100_000
        settings.PREANNOTATE_RETRY_BASE_DELAY = 0.01
        make_clip(project)
        fake.script(g.error(500))  # one failure, so that the retry and its error are logged too
        with django_capture_on_commit_callbacks(execute=True):
            start_preannotation(project)
        assert any(r.headers.get("x-goog-api-key") == gemini_key for r in fake.generate_requests), (
            "the key was not used"
        )

    client.post("/accounts/login/", {"username": annotator.username, "password": password})
    token = issue_token(annotator)[1]
    assert client.get("/api/v1/assignments/", HTTP_AUTHORIZATION=f"Token {token}").status_code == 200
    assert client.get("/api/v1/assignments/", HTTP_AUTHORIZATION=f"Token {token[::-1]}").status_code == 401

    logged = "\n".join(f"{r.name} {r.getMessage()} {r.exc_text or ''}" for r in caplog.records)
    assert logged, "nothing was logged: the test would prove nothing"
    for secret in (gemini_key, password, token, token[::-1]):
        assert secret not in logged
