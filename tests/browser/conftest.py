"""Headless Chromium (Debian's /usr/bin/chromium) driven by Playwright against a live server.

Locally the browser tests skip when Chromium is missing; under CI=true that is a failure.
"""

import os
import shutil
from pathlib import Path

import pytest

from ..conftest import require

CHROMIUM = os.environ.get("CHROMIUM_PATH") or shutil.which("chromium") or "/usr/bin/chromium"
LAUNCH_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SCREENSHOTS = Path(__file__).resolve().parents[2] / "var" / "screenshots"

# Playwright's sync API runs an event loop in this thread; the ORM calls the
# tests make around it are ordinary synchronous code.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


@pytest.fixture(scope="session")
def browser():
    require(Path(CHROMIUM).exists(), f"no Chromium at {CHROMIUM} (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        yield b
        b.close()


@pytest.fixture
def login(browser, live_server):
    """login(username, password) -> a logged-in page in a fresh browser context."""
    contexts = []

    def _login(username, password, viewport=(1440, 900)):
        context = browser.new_context(viewport={"width": viewport[0], "height": viewport[1]})
        contexts.append(context)
        page = context.new_page()
        page.errors = []
        page.on("pageerror", lambda e: page.errors.append(str(e)))
        page.on("dialog", lambda d: (page.errors.append(f"dialog: {d.message}"), d.dismiss()))
        page.goto(f"{live_server.url}/accounts/login/")
        page.fill("#id_username", username)
        page.fill("#id_password", password)
        page.click("button[type=submit]")
        page.wait_for_url(f"{live_server.url}/")
        return page

    yield _login
    for c in contexts:
        c.close()
    # ORM calls made while Playwright's sync API is active may have opened their
    # own connection; close them, or PostgreSQL refuses to drop the test database.
    from django.db import connections

    connections.close_all()


def screenshot(page, name):
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"))


@pytest.fixture
def frozen_team(project, lead, annotator, tmp_path):
    """``frozen_team(own_rows)``: three coders' synthetic work on 3 clips, frozen as release 1.0.0 (both scenarios
    accepted incomplete) with its agreement report stored, and an annotator's own open family clip of ``own_rows``
    rows. Returns {"adjudicated": the clip with most people and rows, "own": the annotator's clip}."""

    def make(own_rows: int) -> dict:
        from annotation.agreement import services as agreement
        from annotation.releases.freeze import freeze
        from annotation.starting import start_assignment
        from annotation.synthetic import generate
        from bench.workspace_data import make_family_clip

        generate(project, clips=3, annotators=3, seed=4)
        freeze(
            project,
            version="1.0.0",
            seed=0,
            out_dir=tmp_path / "release",
            user=lead,
            accept_incomplete=["couple", "family"],
        )
        params = agreement.Params.from_query({}, project.work_scope)
        agreement.ensure_report(project, params, user=lead, compute=agreement.Compute.IN_PROCESS)
        adjudicated = max(project.clips.all(), key=lambda c: (len(c.participants), c.rows.count()))
        own = make_family_clip(project, own_rows, seed=1)
        start_assignment(own, annotator)
        return {"adjudicated": adjudicated, "own": own}

    return make
