"""`make demo` really serves the app and the demo accounts can log in."""

import http.cookiejar
import os
import re
import signal
import socket
import subprocess
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from annotation.management.commands.load_demo import DEMO_ACCOUNTS

REPO = Path(__file__).resolve().parent.parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _login(base: str, username: str, password: str) -> str:
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    page = opener.open(f"{base}/accounts/login/", timeout=10).read().decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    data = urllib.parse.urlencode(
        {"username": username, "password": password, "csrfmiddlewaretoken": token, "next": "/"}
    ).encode()
    request = urllib.request.Request(
        f"{base}/accounts/login/", data=data, headers={"Referer": f"{base}/accounts/login/"}
    )
    return opener.open(request, timeout=10).read().decode()


@pytest.mark.slow
def test_make_demo_serves_the_app_and_every_demo_account_logs_in(tmp_path):
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CELERY_BROKER_URL", "DJANGO_ENV")}
    env.update(VAR_DIR=str(tmp_path / "var"), PORT=str(port))
    log = open(tmp_path / "demo.log", "w")
    proc = subprocess.Popen(
        ["make", "demo", f"PORT={port}"],
        cwd=REPO,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while True:
            assert proc.poll() is None, (tmp_path / "demo.log").read_text()
            try:
                urllib.request.urlopen(f"{base}/healthz", timeout=2)
                break
            except OSError:
                assert time.monotonic() < deadline, (tmp_path / "demo.log").read_text()
                time.sleep(0.5)
        output = (tmp_path / "demo.log").read_text()
        for username, role, password in DEMO_ACCOUNTS:
            assert f"{username:<11} password: {password}" in output
            home = _login(base, username, password)
            # Annotators land on their queue, leads on the projects.
            assert (
                "<h1>My queue</h1>" if role == "annotator" else f"Signed in as <strong>{username}</strong> ({role})"
            ) in home
            assert "demo" in home, "every demo account sees the demo project"
        assert "didn't match" in _login(base, "lead", "wrong-password")
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=20)
        log.close()


@pytest.mark.django_db
def test_the_demo_has_coded_work_to_adjudicate_and_a_clip_left_for_the_visitor():
    """After ``load_demo`` a new team sees adjudication and agreement at once: the family clip is submitted by all
    three coders with the disagreements their habits make (annotator3 keeps every draft), and the couple clip with
    the video waits for annotator1, whose work the visitor does; loading again changes nothing."""
    import io

    import numpy as np
    from django.core.management import call_command

    from annotation.adjudication.selectors import readiness, row_states
    from annotation.agreement.extract import NOT_CODED, extract, scope_clips
    from annotation.management.commands.load_demo import DEMO_WORK
    from annotation.models import Assignment, AssignmentState, Clip, Revision, RevisionStatus

    call_command("load_demo", stdout=io.StringIO())
    call_command("load_demo", stdout=io.StringIO())  # idempotent: no second round of work
    family = Clip.objects.get(project__slug="demo", sample_id="demo_hartwell_family/001_after_the_concert")
    couple = Clip.objects.get(project__slug="demo", sample_id="demo_maya_and_tobias/001_session_opening")
    assert readiness(family).ready and readiness(family).submitted == ("annotator1", "annotator2", "annotator3")
    ready = readiness(couple)
    assert (
        not ready.ready
        and ready.waiting == ("annotator1",)
        and "waiting for 1 more (annotator1)" in ready.refusal(couple)
    )
    assert couple.media, "the clip the visitor codes has the video"

    # The disputed rows are exactly those some coder edited; annotator3 kept every draft row unchanged.
    edited = {row for edits in DEMO_WORK[family.sample_id].values() for row in edits}
    disputed = {s.row.row_index for s in row_states(family) if s.disputes}
    assert disputed == edited == {2, 5, 9, 10, 12}
    kept = Revision.objects.filter(row__clip=family, annotator__username="annotator3")
    assert all(r.content == r.row.draft.content for r in kept.select_related("row__draft"))
    assert set(kept.values_list("status", flat=True)) == {RevisionStatus.REVIEWED}
    assert Assignment.every.filter(clip__project__slug="demo", state=AssignmentState.SUBMITTED).count() == 5

    # The agreement report counts the submitted work only: 3 coders on the family clip, 2 on the couple clip.
    ex = extract(scope_clips(family.project))
    humans = [i for i, name in enumerate(ex.coders) if name.startswith("annotator")]
    coded = {
        (ex.sample_ids[ex.unit_clip[u]], ex.coders[c])
        for c in humans
        for u in np.flatnonzero(ex.coding[c] != NOT_CODED)
    }
    assert {clip for clip, _ in coded} == {family.sample_id, couple.sample_id}
    assert {name for clip, name in coded if clip == couple.sample_id} == {"annotator2", "annotator3"}
