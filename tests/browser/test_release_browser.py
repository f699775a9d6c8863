"""A lead previews a freeze in a real browser, sees a scenario refused, accepts it, and freezes
only after a dialog that states the counts (driven with the mouse)."""

import pytest

from annotation.models import ClipState, Job, Release
from annotation.synthetic import generate

from .conftest import screenshot

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]


@pytest.fixture
def project_with_two_families(project):
    """12 synthetic clips named like the release: 3 couples, families family_therapy/001..003/merged;
    one family clip is back in review, so the family scenario has two groups left for three splits."""
    generate(project, clips=12, annotators=1, seed=5)
    project.clips.filter(sample_id="family_therapy/003/merged").update(state=ClipState.IN_REVIEW)
    return project


def test_lead_previews_accepts_an_incomplete_scenario_and_confirms_the_freeze(
    login, live_server, project_with_two_families, lead, eager_celery
):
    project = project_with_two_families
    page = login("lead1", "lead-pass-123")
    page.goto(f"{live_server.url}/projects/{project.slug}/releases/")
    page.click("input[name=version]")
    page.keyboard.type("1.0.0")
    page.click("#preview-freeze")

    # The dry run: refused, naming the scenario and what to do.
    page.wait_for_selector("#refusal")
    refusal = page.inner_text("#refusal")
    assert "scenario family has 2 relationship groups (family_therapy/001, family_therapy/002) for 3 splits" in refusal
    assert (
        "tick “Freeze anyway … for family”" in refusal and "--" not in refusal
    )  # the page's checkbox, no command flag
    assert page.locator("#freeze-open").count() == 0, "no way to freeze a refused plan"
    left_out = page.inner_text("#left-out")
    assert "in review: still in review" in left_out and "family_therapy/003/merged" in left_out
    counts = page.inner_text("#counts")
    assert "family\tvalidation\t0\t0\t0" in counts  # the empty split, in plain sight
    screenshot(page, "release-preview-refused")

    # Accept it with the mouse; the preview now allows the freeze and says what the card will say.
    page.click("input[name=accept_incomplete][value=family]")
    page.click("#update-preview")
    page.wait_for_selector("#freeze-open")
    assert "Accepted: family has no validation split" in page.inner_text(".warn-box")
    screenshot(page, "release-preview-accepted")
    page.click("details.group-list:has-text('family:') summary")  # every family group with its split
    families = page.locator("details.group-list[open] tbody tr")
    assert families.count() == 2 and "family_therapy/001" in families.first.inner_text()
    screenshot(page, "release-preview-groups")

    # The confirmation states what will happen; cancelling freezes nothing.
    page.click("#freeze-open")
    dialog = page.locator("#freeze-dialog")
    dialog.wait_for(state="visible")
    text = dialog.inner_text()
    assert "Freeze release 1.0.0 of Test benchmark?" in text
    assert (
        "11 clips and" in text and "11 clips move from adjudicated to released" in text and "cannot be undone" in text
    )
    screenshot(page, "release-freeze-confirm")
    page.click("#freeze-cancel")
    dialog.wait_for(state="hidden")
    assert not Job.objects.exists() and not Release.objects.exists()

    page.click("#freeze-open")
    dialog.wait_for(state="visible")
    page.click("#freeze-confirm")
    page.wait_for_url(f"{live_server.url}/projects/{project.slug}/releases/")
    page.wait_for_selector("ul.messages :text('Freezing release 1.0.0')")
    release = Release.objects.get(project=project, version="1.0.0")
    assert len(release.manifest["clips"]) == 11 and release.manifest["inputs"]["accepted_incomplete"] == ["family"]
    page.reload()
    assert "1.0.0" in page.inner_text("table.releases")
    screenshot(page, "release-list-after-freeze")
    assert page.errors == []
