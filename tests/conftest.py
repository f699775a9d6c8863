"""Shared fixtures. Real services only: SQLite/eager by default, PostgreSQL,
Redis and a real Celery worker when DATABASE_URL / CELERY_BROKER_URL are set
(as .ci/run does). Under CI=true a missing service is a failure, not a skip."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

from annotation.services import create_project, create_user

from .services import celery_worker_command

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
SAMPLE = SHARED / "data" / "rescue_bench_sample.jsonl"
TRANSCRIPTS = SHARED / "data" / "transcripts"
IN_CI = os.environ.get("CI", "").lower() == "true"


WAITING_FIXTURES = {"celery_worker_process", "live_server", "workers", "browser", "login"}


@pytest.hookimpl(tryfirst=True)  # before `-m` selects: tests/run_suite.py splits the suite by these marks
def pytest_collection_modifyitems(items):
    """Every test in tests/browser is a browser test, and every test that waits on a real worker or a live server
    is a services test, whether or not its module says so."""
    for item in items:
        if "browser" in Path(str(item.fspath)).parts:
            item.add_marker(pytest.mark.browser)
        if WAITING_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.services)


def require(condition: bool, why: str) -> None:
    """Skip locally when a service or file is missing; fail in CI."""
    if condition:
        return
    if IN_CI:
        pytest.fail(f"required in CI: {why}")
    pytest.skip(why)


@pytest.fixture
def sample_path() -> Path:
    require(SAMPLE.is_file(), f"real sample not found at {SAMPLE}")
    return SAMPLE


@pytest.fixture
def project(db):
    return create_project("bench", name="Test benchmark")


@pytest.fixture
def lead(db):
    return create_user("lead1", "lead", password="lead-pass-123")[0]


@pytest.fixture
def annotator(db):
    return create_user("ann1", "annotator", password="ann-pass-123")[0]


@pytest.fixture
def other_annotator(db):
    return create_user("ann2", "annotator", password="ann-pass-456")[0]


@pytest.fixture
def draft_clip(project, tmp_path):
    """The factories' couple clip, imported into ``project`` with its LLM draft; nobody assigned yet."""
    import json

    from annotation.rescue_format.importer import import_rescue

    from .builders.documents import couple_clip

    path = tmp_path / "draft_clip.jsonl"
    path.write_text(json.dumps(couple_clip()) + "\n", encoding="utf-8")
    import_rescue(path, project, as_source="draft")
    return project.clips.get()


@pytest.fixture
def coded_clip(draft_clip, annotator, other_annotator):
    """``draft_clip`` assigned to two coders, ann1 and ann2."""
    from annotation.starting import start_assignment

    start_assignment(draft_clip, annotator)
    start_assignment(draft_clip, other_annotator)
    return draft_clip


def _test_database_url() -> str:
    """The URL of the database the tests are using right now (the test_ copy)."""
    from django.db import connection

    base = urlsplit(os.environ["DATABASE_URL"])
    return urlunsplit(base._replace(path="/" + connection.settings_dict["NAME"]))


@pytest.fixture(scope="session")
def celery_worker_process(django_db_setup, django_db_blocker):
    """A real Celery worker process on the real broker, sharing the test database."""
    broker = os.environ.get("CELERY_BROKER_URL", "")
    require(bool(broker), "CELERY_BROKER_URL is not set: no broker for a real worker")
    require(
        os.environ.get("DATABASE_URL", "").startswith("postgres"),
        "a real worker needs a shared PostgreSQL test database (DATABASE_URL)",
    )
    with django_db_blocker.unblock():
        env = {**os.environ, "DATABASE_URL": _test_database_url()}
    (REPO / "var").mkdir(exist_ok=True)
    log = open(REPO / "var" / "test-worker.log", "w")
    proc = subprocess.Popen(
        celery_worker_command(f"test-{os.getpid()}"),
        cwd=REPO,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    from rescue_annot.celery import app

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"celery worker exited with {proc.returncode}; see var/test-worker.log")
        if app.control.ping(timeout=0.5):
            break
    else:
        proc.kill()
        pytest.fail("celery worker did not answer a ping within 60 s")
    yield proc
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
    log.close()


@pytest.fixture
def releases_root(settings):
    """Where this test's releases are written (a folder of its own, set by ``_test_settings``)."""
    return settings.RELEASES_ROOT


def wait_for(predicate, timeout: float = 60, interval: float = 0.2):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"condition not met within {timeout} s")


@pytest.fixture(autouse=True)
def _test_settings(tmp_path, settings):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.RELEASES_ROOT = tmp_path / "releases"
    # Password hashing is deliberately slow; tests do not need that.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    # Eager jobs run on commit, where the test can wait for them (the demo's thread: tests that ask for it).
    settings.JOBS_EAGER_IN_THREAD = False
    # API request counts live in the cache: no test inherits another's (user ids repeat between tests).
    from django.core.cache import cache

    cache.clear()


@pytest.fixture
def eager_celery():
    """Run tasks in-process for this test even when CI configured a broker."""
    from rescue_annot.celery import app

    was = app.conf.task_always_eager
    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = was


# Fixtures kept with their builders, registered here for every test module (at the end: the builders read
# this module's helpers).
from .builders.drafts import drafted_sample  # noqa: E402,F401
from .builders.gemini import fake, preannotate  # noqa: E402,F401
from .builders.workers import worker_fake, workers  # noqa: E402,F401
