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
