"""PostgreSQL restarts while the app runs: requests fail cleanly, nothing is half-written, and the
same gunicorn serves again once the database is back.

For real: the test makes its own throw-away cluster (initdb as the postgres
user, a free port, its socket in a private folder, fsync off), migrates it,
starts gunicorn on it, and while an annotator keeps saving it stops the cluster
with ``pg_ctl stop -m fast`` (open transactions rolled back, clients cut off),
then starts it again. Never the machine's shared PostgreSQL.
"""

from __future__ import annotations

import os
import pwd
import threading
import time

import pytest

from . import services as svc
from .builders.agreement import coded_client_content
from .conftest import require

pytestmark = [pytest.mark.services]

ANNOTATOR = "pgfault-a"
CONTENT = coded_client_content(0)
UNAVAILABLE = "The database is unavailable right now; nothing was saved."


def seed() -> dict:
    """(Run in a Django process on the throw-away cluster.) An annotator with a token and a
    logged-in session, assigned to a clip of four rows."""
    from django.test import Client

    from annotation.models import Revision
    from annotation.services import create_project, create_user
    from annotation.tokens import issue_token

    from .builders.agreement import make_clip

    project = create_project("pgfault", name="PostgreSQL restart")
    annotator = create_user(ANNOTATOR, "annotator")[0]
    make_clip(project, "pgfault/001", {annotator: [coded_client_content(v) for v in (0, 1, 2, 3)]})
    browser = Client()
    browser.force_login(annotator)
    return {
        "token": issue_token(annotator)[1],
        "session": browser.cookies["sessionid"].value,
        "revisions": list(
            Revision.objects.filter(annotator=annotator).order_by("row__row_index").values_list("pk", flat=True)
        ),
    }


@pytest.fixture(scope="module")
def cluster():
    missing = svc.missing_tools(svc.INITDB, svc.PG_CTL, svc.RUNUSER)
    require(not missing, f"a throw-away PostgreSQL cluster needs {', '.join(missing)}")
    require(os.geteuid() == 0, "runuser (to run initdb as the postgres user) needs root")
    try:
        pwd.getpwnam(svc.PG_USER)
    except KeyError:
        require(False, f"no {svc.PG_USER!r} user to own the throw-away cluster")
    cluster = svc.PostgresCluster()
    try:
        cluster.init()
        cluster.start()
        yield cluster
    finally:
        cluster.destroy()


@pytest.fixture(scope="module")
def app(cluster, tmp_path_factory):
    """The migrated database, its seed, and a gunicorn (two workers, no broker) serving it."""
    env = svc.app_env(DATABASE_URL=cluster.create_database("app"), CELERY_BROKER_URL="")
    svc.manage(env, "migrate", "--noinput", "-v0")
    seeded = svc.django_call(env, "tests.test_faults_postgres:seed")
    server = svc.Gunicorn(env, tmp_path_factory.mktemp("faults-postgres"), workers=2)
    try:
        server.wait_ready("/readyz")
        yield server, seeded
    finally:
        server.stop()


class Annotator:
    """Keeps saving one row through the API, as the row editor would, recording every answer."""

    def __init__(self, server: svc.Gunicorn, token: str, revision: int, content: dict, version: int = 1):
        self.server, self.revision, self.content, self.version = server, revision, content, version
        self.headers = {"Authorization": f"Token {token}"}
        self.answers: list[tuple[int, float]] = []  # (status, seconds)
        self.acknowledged: dict[int, str] = {}  # version -> tone the server said it stored
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def save(self, tone: str) -> svc.Answer:
        body = {"content": {**self.content, "tone_of_voice": tone}, "version": self.version}
        return self.server.request("PUT", f"/api/v1/revisions/{self.revision}/", body, self.headers, timeout=30)

    def run(self, limit: int = 2000) -> None:
        for i in range(limit):
            if self.stop.is_set():
                return
            tone = f"edit {i}"
            try:
                answer = self.save(tone)
            except OSError:
                self.answers.append((0, 0.0))
                continue
            self.answers.append((answer.status, answer.seconds))
            if answer.status == 200:
                self.version = answer.json()["version"]
                self.acknowledged[self.version] = tone
            elif answer.status == 409:
                self.version = answer.json()["current"]["version"]
            else:
                time.sleep(0.05)  # the editor's retry is not a tight loop

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join(timeout=60)


def test_a_postgres_restart_gives_clean_503s_no_partial_write_and_the_same_gunicorn_serves_again(cluster, app):
    server, seeded = app
    master, workers = server.pid, server.worker_pids()
    assert len(workers) == 2
    api = {"Authorization": f"Token {seeded['token']}"}
    browser = {"Cookie": f"sessionid={seeded['session']}"}
    first, other = seeded["revisions"][0], seeded["revisions"][1]
    assert (
        server.request(
            "PUT", f"/api/v1/revisions/{other}/", {"content": {**CONTENT, "tone_of_voice": "before"}, "version": 1}, api
        ).status
        == 200
    )

    with Annotator(server, seeded["token"], first, CONTENT) as annotator:
        svc.wait_until(lambda: len(annotator.acknowledged) >= 3, 30, "saves to go through before the outage")
        cluster.stop()  # mid-stream: whatever save is in flight is cut off
        down_since = len(annotator.answers)

        # The API: 503, a message that says nothing was saved, and when to try again.
        # A refusal is quick: the client gives up (TimeoutError) after 20 s, well past an honest 503.
        answer = server.request(
            "PUT",
            f"/api/v1/revisions/{other}/",
            {"content": {**CONTENT, "tone_of_voice": "during"}, "version": 2},
            api,
            timeout=20,
        )
        assert answer.status == 503, answer.text
        assert answer.json() == {"detail": f"{UNAVAILABLE} Try again in a moment."}
        assert answer.headers["retry-after"] == "10"
        # A page: the same, as a page a person can read.
        page = server.request("GET", "/", headers=browser)
        assert page.status == 503 and page.headers["content-type"].startswith("text/html")
        assert "Temporarily unavailable" in page.text and "nothing was saved" in page.text
        assert "Traceback" not in page.text and "OperationalError" not in page.text
        # The load balancer keeps the process (it is up); readiness says what is missing, not why.
        assert server.request("GET", "/healthz").status == 200
        ready = server.request("GET", "/readyz")
        assert ready.status == 503 and ready.json()["checks"]["database"] == {
            "ok": False,
            "detail": "database unreachable",
        }
        assert str(cluster.port) not in ready.text and "127.0.0.1" not in ready.text
        svc.wait_until(
            lambda: len(annotator.answers) >= down_since + 5,
            30,
            "the annotator's saves during the outage to be answered",
        )

        cluster.start()
        back = len(annotator.answers)
        svc.wait_until(
            lambda: annotator.answers[back:] and annotator.answers[-1][0] == 200,
            30,
            "a save to succeed after the restart",
        )
        svc.wait_until(lambda: len(annotator.acknowledged) >= 3 + 3, 30, "saves to go on after the restart")

    statuses = [status for status, _ in annotator.answers]
    assert set(statuses) <= {200, 503}, f"only saves and clean refusals: {sorted(set(statuses))}"
    assert statuses.count(503) >= 5 and statuses.count(200) >= 6
    # (A refusal slower than the annotator's 30 s client timeout would be a status 0 above, and fail.)
    # Same process, same workers: nobody restarted the app.
    assert server.pid == master and server.proc.poll() is None and server.worker_pids() == workers
    assert server.request("GET", "/readyz").status == 200
    assert server.request("GET", "/", headers=browser).status == 200
    answer = server.request(
        "PUT", f"/api/v1/revisions/{other}/", {"content": {**CONTENT, "tone_of_voice": "after"}, "version": 2}, api
    )
    assert answer.status == 200 and answer.json()["version"] == 3, answer.text

    # Nothing half-written: each revision's version has exactly one audit record per version,
    # the newest holds the current content, and every save the server acknowledged is in it.
    with cluster.connect("app") as conn:
        rows = conn.execute(
            "SELECT r.id, r.version, r.content->>'tone_of_voice', "
            "array_agg(h.version ORDER BY h.version), "
            "(array_agg(h.content->>'tone_of_voice' ORDER BY h.version DESC))[1] "
            "FROM annotation_revision r JOIN annotation_historicalrevision h ON h.id = r.id "
            "WHERE r.id = ANY(%s) GROUP BY r.id, r.version",
            [[first, other]],
        ).fetchall()
        audited = dict(
            conn.execute(
                "SELECT version, content->>'tone_of_voice' FROM annotation_historicalrevision WHERE id = %s", [first]
            ).fetchall()
        )
    by_id = {r[0]: r[1:] for r in rows}
    for revision_id, (version, tone, versions, newest_tone) in by_id.items():
        assert versions == list(range(1, version + 1)), (
            f"revision {revision_id}: versions {versions} for version {version}"
        )
        assert newest_tone == tone
    assert by_id[other][:2] == (3, "after"), "the save refused during the outage left nothing behind"
    lost = {v: t for v, t in annotator.acknowledged.items() if audited.get(v) != t}
    assert not lost, f"acknowledged saves missing from the database: {lost}"
    assert by_id[first][0] == max(annotator.acknowledged), "the last acknowledged save is the current version"
