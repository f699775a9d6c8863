"""Releases on the web and through the API: leads list, freeze (on a worker), download and compare
releases; annotators reach none of it."""

import io
import json
import os
import re
import stat
import zipfile

import pytest
from django.urls import reverse
from django.utils.html import escape

from annotation.models import Assignment, Job, JobState, Release
from annotation.releases.freeze import freeze
from annotation.rescue_format.importer import import_rescue
from tasks.profiles import get_profile

from .conftest import wait_for

pytestmark = pytest.mark.django_db
# The real sample holds two couples: too few relationship groups for three splits.
TWO_COUPLES = ("couple",)


@pytest.fixture
def sample_project(project, sample_path):
    import_rescue(sample_path, project)
    return project


@pytest.fixture
def frozen(sample_project, lead, releases_root):
    release, _ = freeze(
        sample_project,
        version="1.0.0",
        seed=1,
        out_dir=releases_root / sample_project.slug / "1.0.0",
        user=lead,
        accept_incomplete=TWO_COUPLES,
    )
    return release


def test_leads_see_releases_with_their_manifest_and_a_zip_link(client, lead, frozen, sample_project):
    client.force_login(lead)
    page = client.get(reverse("releases-list", args=[sample_project.slug])).content.decode()
    assert "1.0.0" in page and reverse("releases-download", args=[sample_project.slug, "1.0.0"]) in page
    detail = client.get(reverse("releases-detail", args=[sample_project.slug, "1.0.0"])).content.decode()
    assert "Files intact" in detail and frozen.manifest["files"]["data/all.jsonl"]["sha256"] in detail
    listed = client.get(f"/api/v1/projects/{sample_project.slug}/releases/").json()
    assert [r["version"] for r in listed] == ["1.0.0"] and listed[0]["manifest"] == frozen.manifest
    assert listed[0]["download_url"].endswith(f"/api/v1/projects/{sample_project.slug}/releases/1.0.0/download/")


def test_the_zip_download_is_the_release_folder_byte_for_byte_and_always_the_same(client, lead, frozen, sample_project):
    client.force_login(lead)
    url = reverse("releases-download", args=[sample_project.slug, "1.0.0"])
    first = b"".join(client.get(url).streaming_content)
    second = b"".join(client.get(f"/api/v1/projects/{sample_project.slug}/releases/1.0.0/download/").streaming_content)
    assert first == second
    with zipfile.ZipFile(io.BytesIO(first)) as zf:
        names = zf.namelist()
        assert names == sorted(names) and f"{sample_project.slug}-1.0.0/manifest.json" in names
        folder = frozen.path
        for name in names:
            rel = name.split("/", 1)[1]
            with open(os.path.join(folder, rel), "rb") as fh:
                assert zf.read(name) == fh.read()
        assert {zi.date_time for zi in zf.infolist()} == {(1980, 1, 1, 0, 0, 0)}


def test_a_damaged_release_folder_is_not_served(client, lead, frozen, sample_project):
    os.chmod(frozen.path, stat.S_IRWXU)
    os.chmod(os.path.join(frozen.path, "stats.json"), stat.S_IRWXU)
    os.remove(os.path.join(frozen.path, "stats.json"))
    client.force_login(lead)
    page = client.get(reverse("releases-download", args=[sample_project.slug, "1.0.0"]))
    assert page.status_code == 409 and b"missing: stats.json" in page.content
    api = client.get(f"/api/v1/projects/{sample_project.slug}/releases/1.0.0/download/")
    assert api.status_code == 409 and api.json()["missing"] == ["stats.json"]


def preview(client, project, **data):
    return client.post(
        reverse("releases-preview", args=[project.slug]),
        {"version": "2.0.0", "seed": "4", "splits": "0.6,0.2,0.2", **data},
    )


def confirmation(page: str) -> dict:
    """The hidden fields of the preview's freeze form, as the browser sends them."""
    form = page[page.index('id="freeze-form"') :]
    form = form[: form.index("</form>")]
    fields: dict[str, list[str]] = {}
    for name, value in re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)"', form):
        fields.setdefault(name, []).append(value)
    return fields


def test_the_preview_shows_what_a_freeze_would_release_and_refuses_an_incomplete_scenario(client, lead, sample_project):
    client.force_login(lead)
    page = preview(client, sample_project)
    text = page.content.decode()
    assert page.status_code == 200
    assert (
        "This freeze would be refused: scenario couple has 2 relationship groups (alan_and_evelyn, alexes_and_casimar)"
        in text
    )
    assert (
        'id="freeze-form"' not in text and 'name="accept_incomplete" value="couple"' in text
    )  # a box to accept it instead
    accepted = preview(client, sample_project, accept_incomplete="couple").content.decode()
    assert "would be refused" not in accepted and 'id="freeze-form"' in accepted
    assert (
        "<b>14</b> clips" in accepted
        and "<b>406</b> rows" in accepted
        and "<b>14</b> clips move to <i>released</i>" in accepted
    )
    assert not Job.objects.exists() and not Release.objects.exists()  # a preview writes nothing


def test_a_lead_freezes_from_the_preview_and_the_job_records_progress(
    client, lead, sample_project, eager_celery, django_capture_on_commit_callbacks, releases_root
):
    client.force_login(lead)
    fields = confirmation(preview(client, sample_project, accept_incomplete="couple").content.decode())
    assert (
        fields["version"] == ["2.0.0"]
        and fields["accept_incomplete"] == ["couple"]
        and len(fields["confirmed"][0]) == 16
    )
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("releases-freeze", args=[sample_project.slug]), fields)
    assert response.status_code == 302
    job = Job.objects.get(kind="freeze_release")
    assert job.state == JobState.SUCCEEDED, job.error
    assert job.progress_done == job.progress_total > 1 and job.result["clips"] == 14
    release = Release.objects.get(project=sample_project, version="2.0.0")
    assert (release.seed, release.split_ratios, release.created_by) == (4, [0.6, 0.2, 0.2], lead)
    assert release.path == str(releases_root / sample_project.slug / "2.0.0") and release.manifest["inputs"][
        "accepted_incomplete"
    ] == ["couple"]
    page = client.get(reverse("releases-list", args=[sample_project.slug])).content.decode()
    assert "2.0.0" in page and "succeeded" in page


def test_a_freeze_runs_only_on_the_plan_the_lead_confirmed(client, lead, sample_project):
    client.force_login(lead)
    fields = confirmation(preview(client, sample_project, accept_incomplete="couple").content.decode())
    url = reverse("releases-freeze", args=[sample_project.slug])
    unconfirmed = client.post(url, {k: v for k, v in fields.items() if k != "confirmed"}, follow=True).content.decode()
    assert "freeze from the preview" in unconfirmed
    # A clip leaves the release after the preview: the confirmed digest no longer matches.
    sample_project.clips.filter(sample_id="alan_and_evelyn/008_s01e09_ct04_segment01").update(state="in_review")
    stale = client.post(url, fields, follow=True).content.decode()
    assert "changed since the preview you confirmed" in stale
    assert not Job.objects.exists()


def test_a_plan_that_changes_after_the_job_is_queued_stops_the_freeze_on_the_worker(
    lead, sample_project, releases_root
):
    """Review of §2: the confirmed plan was checked only when the job was queued; the worker checks it again."""
    from annotation.releases.celery_tasks import freeze_release_task
    from annotation.releases.preview import preview_freeze
    from annotation.releases.services import start_freeze

    digest = preview_freeze(sample_project, seed=3, accept_incomplete=["couple"]).digest
    # Queue it as start_freeze does, without running it (the broker may be eager in this test run).
    from unittest import mock

    with mock.patch("annotation.jobs.enqueue", side_effect=lambda job, task: job):
        job = start_freeze(
            sample_project, version="3.0.0", seed=3, accept_incomplete=["couple"], confirmed=digest, user=lead
        )
    sample_project.clips.filter(sample_id="alan_and_evelyn/008_s01e09_ct04_segment01").update(state="in_review")
    freeze_release_task.apply(args=[job.pk])
    job.refresh_from_db()
    assert job.state == JobState.FAILED and "changed since the preview you confirmed" in job.error
    assert not Release.objects.filter(project=sample_project, version="3.0.0").exists()


def test_the_freeze_form_explains_what_is_wrong(client, lead, sample_project, tmp_path):
    client.force_login(lead)
    for data, message in (
        ({"version": "bad version", "seed": "1"}, "must be 1–40 letters"),
        ({"version": "3.0.0", "seed": "x"}, "seed must be a whole number"),
        ({"version": "3.0.0", "seed": "1", "splits": "0.5,0.5"}, "split ratios"),
        (
            {"version": "3.0.0", "seed": "1", "group_map": "nobody/1,g\n"},
            "the group map names 1 clips this project does not have: nobody/1",
        ),
        ({"version": "3.0.0", "seed": "1", "group_map": "just one column"}, "group map line 1"),
    ):
        page = client.post(reverse("releases-preview", args=[sample_project.slug]), data)
        assert page.status_code == 400 and message in page.content.decode(), message
    assert not Job.objects.exists()


def test_a_group_map_file_on_the_preview_places_clips_as_the_cli_file_does(client, lead, sample_project):
    client.force_login(lead)
    upload = io.BytesIO(b"sample_id,group\nalan_and_evelyn/008_s01e09_ct04_segment01,evelyn_alone\n")
    upload.name = "groups.csv"
    page = preview(client, sample_project, group_map_file=upload).content.decode()
    # Alan and Evelyn are in both folders: the clip the map does not name joins the mapped one.
    assert "alan_and_evelyn/008_s01e09_ct04_segment01,evelyn_alone" in page  # the map, shown and sent on
    assert "placed by the lead&#x27;s map: evelyn_alone" in page
    large = io.BytesIO(b"x/1,g\n" * 200_000)
    large.name = "large.csv"
    refused = preview(client, sample_project, group_map_file=large)
    assert refused.status_code == 400 and "the group map file is 1,200,000 bytes" in refused.content.decode()
    # Over the request limit, the body is refused before anything reads it.
    huge = io.BytesIO(b"x/1,g\n" * 400_000)
    huge.name = "huge.csv"
    refused = preview(client, sample_project, group_map_file=huge)
    assert (
        refused.status_code == 413
        and "over the limit of 2,097,152 bytes (MAX_REQUEST_BYTES)" in refused.content.decode()
    )


def test_the_api_starts_a_freeze_and_reports_its_job(client, lead, sample_project):
    client.force_login(lead)
    api = f"/api/v1/projects/{sample_project.slug}/releases/"
    refused = client.post(api, {"version": "1.0.0", "seed": 2}, content_type="application/json")
    assert refused.status_code == 400 and refused.json()["detail"].startswith(
        "scenario couple has 2 relationship groups"
    )
    planned = client.post(
        api + "preview/", {"seed": 2, "accept_incomplete": ["couple"]}, content_type="application/json"
    ).json()
    assert (
        planned["eligible"] == {"clips": 14, "rows": 406, "groups": 2}
        and planned["incomplete"] == {"couple": ["validation"]}
        and planned["refusal"] == ""
    )
    assert (
        sum(planned["counts"]["all"]["all"][t] for t in ("itp", "rpp", "stp", "ssp", "er", "vp", "rpp_any_speaker")) > 0
    )
    started = client.post(
        api,
        {
            "version": "1.0.0",
            "seed": 2,
            "splits": [0.7, 0.1, 0.2],
            "accept_incomplete": ["couple"],
            "preview_digest": planned["digest"],
        },
        content_type="application/json",
    )
    assert started.status_code == 202
    body = started.json()
    assert body["state"] == "queued" and body["params"] == {"version": "1.0.0", "seed": 2, "ratios": [0.7, 0.1, 0.2]}
    status = client.get(body["status_url"]).json()
    assert status["id"] == body["id"]
    twice = client.post(
        f"/api/v1/projects/{sample_project.slug}/releases/",
        {"version": "1.0.0", "seed": 2},
        content_type="application/json",
    )
    assert twice.status_code == 400 and "already under way" in twice.json()["detail"]


def test_compare_page_and_api_list_what_changed(client, lead, frozen, sample_project, releases_root):
    from annotation.models import ClipState, Gold
    from annotation.services import transition

    clip = sample_project.clips.order_by("sample_id").first()
    transition(transition(clip, ClipState.ADJUDICATED, actor=lead), ClipState.IN_REVIEW, actor=lead)
    gold = Gold.objects.filter(
        row__clip__sample_id="alexes_and_casimar/001_s03e04_ct09_segment07", row__row_index=1
    ).get()
    gold.content = {**gold.content, "utterance_type": "withdrawal"}
    gold.save()
    freeze(
        sample_project,
        version="1.1.0",
        seed=1,
        out_dir=releases_root / sample_project.slug / "1.1.0",
        user=lead,
        accept_incomplete=TWO_COUPLES,
    )
    client.force_login(lead)
    page = client.get(
        reverse("releases-diff", args=[sample_project.slug]), {"a": "1.0.0", "b": "1.1.0"}
    ).content.decode()
    assert clip.sample_id in page and "utterance_type" in page and "withdrawal" in page
    diff = client.get(f"/api/v1/projects/{sample_project.slug}/releases/diff/", {"a": "1.0.0", "b": "1.1.0"}).json()
    assert diff["clips_removed"] == [clip.sample_id]
    assert [c["sample_id"] for c in diff["clips_changed"]] == ["alexes_and_casimar/001_s03e04_ct09_segment07"]
    assert diff["label_changes"]["utterance_type"]["changes"][0]["to"] == "withdrawal"


def test_annotators_reach_no_release_page_or_endpoint(client, annotator, other_annotator, frozen, sample_project):
    Assignment.objects.create(clip=sample_project.clips.first(), annotator=annotator)
    slug = sample_project.slug
    pages = [
        reverse("releases-list", args=[slug]),
        reverse("releases-detail", args=[slug, "1.0.0"]),
        reverse("releases-download", args=[slug, "1.0.0"]),
        reverse("releases-diff", args=[slug]) + "?a=1.0.0&b=1.0.0",
        reverse("releases-preview", args=[slug]) + "?version=9.0.0&seed=1",
    ]
    endpoints = [
        f"/api/v1/projects/{slug}/releases/{p}"
        for p in ("", "1.0.0/", "1.0.0/download/", "diff/?a=1.0.0&b=1.0.0", "jobs/1/")
    ]
    client.force_login(annotator)  # assigned to a clip of the project: may see it, not its releases
    assert {client.get(url).status_code for url in pages} == {403}
    assert client.post(reverse("releases-freeze", args=[slug]), {"version": "9.0.0", "seed": 1}).status_code == 403
    assert {client.get(url).status_code for url in endpoints} == {403}
    assert (
        client.post(
            f"/api/v1/projects/{slug}/releases/", {"version": "9.0.0", "seed": 1}, content_type="application/json"
        ).status_code
        == 403
    )
    client.force_login(other_annotator)  # not even the project
    assert {client.get(url).status_code for url in pages} == {404}
    client.logout()
    assert all(client.get(url).status_code == 302 for url in pages)
    assert {client.get(url).status_code for url in endpoints} <= {401, 403}
    assert not Job.objects.exists() and Release.objects.count() == 1


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_a_freeze_started_through_the_api_runs_on_a_real_worker(
    celery_worker_process, client, lead, sample_project, releases_root
):
    client.force_login(lead)
    started = client.post(
        f"/api/v1/projects/{sample_project.slug}/releases/",
        {"version": "1.0.0", "seed": 5, "accept_incomplete": ["couple"]},
        content_type="application/json",
    )
    assert started.status_code == 202
    job = wait_for(
        lambda: Job.objects.filter(pk=started.json()["id"], state__in=[JobState.SUCCEEDED, JobState.FAILED]).first(),
        timeout=120,
    )
    assert job.state == JobState.SUCCEEDED, job.error
    assert job.celery_task_id, "dispatched through the broker, not run in-process"
    assert job.progress_done == job.progress_total and job.result["rows"] == 406
    release = Release.objects.get(project=sample_project, version="1.0.0")
    assert json.loads((releases_root / sample_project.slug / "1.0.0" / "manifest.json").read_text()) == release.manifest


def test_the_lead_picks_the_task_rules_on_the_page_and_the_release_records_them(
    client, lead, sample_project, eager_celery, django_capture_on_commit_callbacks, releases_root
):
    client.force_login(lead)
    form = client.get(reverse("releases-list", args=[sample_project.slug])).content.decode()
    assert '<select name="task_profile" aria-describedby="task-rules-help">' in form
    assert re.search(r'value="rescue-v1" title="[^"]*" selected', form) and 'value="platform-v1"' in form
    # The options are short (the profile's name); the line under the select says what each one is.
    help_line = re.search(r'<p id="task-rules-help"[^>]*>(.*?)</p>', form, re.S).group(1)
    for name in ("rescue-v1", "platform-v1"):
        assert f"<strong>{name}</strong>: {escape(get_profile(name).title)}" in help_line
    page = preview(client, sample_project, accept_incomplete="couple", task_profile="platform-v1").content.decode()
    assert re.search(r'value="platform-v1" title="[^"]*" selected', page)
    fields = confirmation(page)
    assert fields["task_profile"] == ["platform-v1"]
    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("releases-freeze", args=[sample_project.slug]), fields)
    release = Release.objects.get(project=sample_project, version="2.0.0")
    assert release.manifest["task_profile"]["name"] == release.manifest["inputs"]["task_profile"] == "platform-v1"
    refused = preview(client, sample_project, version="3.0.0", accept_incomplete="couple", task_profile="no-such-rules")
    assert refused.status_code == 400 and "no-such-rules" in refused.content.decode()
