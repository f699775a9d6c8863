"""Ingest through the browser and the API: leads only, per-file results,
the speaker-mapping step, and the documented HTTP semantics."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import include, path

from annotation.ingest.api import ProjectClipsView
from annotation.models import Assignment, Clip

pytestmark = pytest.mark.django_db
CORPUS = Path(__file__).resolve().parent / "ingest_corpus"
SIMPLE = b"1\n00:00:00,000 --> 00:00:02,000\nMaya: Hello.\n\n2\n00:00:02,500 --> 00:00:04,000\nDr. Weiss: Hi.\n"

# The read-only clip list of annotation.api is mounted first and answers GET
# and POST on this path until the route points at ProjectClipsView; this
# module's URLconf does that, as the merged project will.
urlpatterns = [
    path("api/v1/projects/<slug:slug>/clips/", ProjectClipsView.as_view(), name="merged-project-clips"),
    path("", include("rescue_annot.urls")),
]


@pytest.fixture
def merged_routes(settings):
    settings.ROOT_URLCONF = __name__


def corpus_file(relative: str) -> SimpleUploadedFile:
    return SimpleUploadedFile(Path(relative).name, (CORPUS / relative).read_bytes())


def upload_page(project):
    return f"/projects/{project.slug}/ingest/"


# --- pages ---------------------------------------------------------------------------


def test_upload_page_is_for_leads_only(client, project, annotator):
    response = client.get(upload_page(project))
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
    client.force_login(annotator)
    assert client.get(upload_page(project)).status_code == 403
    assert (
        client.post(
            upload_page(project), {"scenario": "couple", "files": [SimpleUploadedFile("a.srt", SIMPLE)], "group": "g"}
        ).status_code
        == 403
    )
    assert client.post(f"/projects/{project.slug}/ingest/accept-speakers/", {"clip": ["1"]}).status_code == 403
    assert Clip.objects.count() == 0


def test_upload_page_shows_the_form_and_limits_to_a_lead(client, project, lead, settings):
    settings.MAX_UPLOAD_BYTES = 1024 * 1024
    client.force_login(lead)
    page = client.get(upload_page(project)).content.decode()
    assert 'name="files"' in page and "multipart/form-data" in page and "1.0\xa0MB per transcript" in page
    assert client.get("/projects/nope/ingest/").status_code == 404


def test_lead_uploads_a_folder_and_sees_a_result_per_file(client, project, lead):
    client.force_login(lead)
    files = [
        corpus_file("maya_and_tobias/001_clean.srt"),
        corpus_file("maya_and_tobias/008_voices.vtt"),
        corpus_file("refused/backwards.srt"),
    ]
    paths = [
        "corpus/maya_and_tobias/001_clean.srt",
        "corpus/maya_and_tobias/008_voices.vtt",
        "corpus/refused/backwards.srt",
    ]
    response = client.post(
        upload_page(project), {"files": files, "relative_paths": json.dumps(paths), "scenario": "couple"}
    )
    assert response.status_code == 200
    page = response.content.decode()
    statuses = [r.status for r in response.context["results"]]
    assert statuses == ["created", "created", "refused"]
    assert "corpus/refused/backwards.srt, line 10: time goes backwards" in page
    clip = Clip.objects.get(sample_id="maya_and_tobias/001_clean")
    assert clip.source_file == "corpus/maya_and_tobias/001_clean.srt"
    assert f"/projects/{project.slug}/clips/{clip.pk}/speakers/" in page
    record = clip.history.first()
    assert record.history_source == "web" and record.history_user == lead


def test_files_picked_one_by_one_take_the_group_field(client, project, lead):
    client.force_login(lead)
    response = client.post(
        upload_page(project),
        {"files": [SimpleUploadedFile("s01.srt", SIMPLE)], "scenario": "couple", "group": "maya_and_tobias"},
    )
    assert [r.sample_id for r in response.context["results"]] == ["maya_and_tobias/s01"]


def test_upload_form_errors_are_shown_not_raised(client, project, lead):
    client.force_login(lead)
    response = client.post(upload_page(project), {"scenario": "couple"})
    assert response.status_code == 200 and "Choose at least one transcript file." in response.content.decode()
    response = client.post(
        upload_page(project),
        {
            "files": [SimpleUploadedFile("a.srt", SIMPLE), SimpleUploadedFile("b.srt", SIMPLE)],
            "scenario": "couple",
            "sample_id": "g/x",
        },
    )
    assert "a sample id can only be given when ingesting a single transcript" in response.content.decode()


def test_mapping_page_suggests_and_the_lead_confirms(client, project, lead):
    client.force_login(lead)
    client.post(
        upload_page(project),
        {"files": [corpus_file("maya_and_tobias/012_diarised.json")], "scenario": "couple", "group": "maya_and_tobias"},
    )
    clip = Clip.objects.get()
    url = f"/projects/{project.slug}/clips/{clip.pk}/speakers/"
    page = client.get(url).content.decode()
    assert "SPEAKER_00" in page and "How are the two of you today?" in page and "waiting for confirmation" in page
    response = client.post(
        url,
        {
            "participants": "Maya, Tobias",
            "speaker_0": "Therapist",
            "speaker_1": "Maya",
            "speaker_2": "",
            "speaker_3": "Tobias",
        },
    )
    assert response.status_code == 302
    clip.refresh_from_db()
    assert clip.speaker_map_confirmed and clip.participants == ["Maya", "Tobias"]
    assert clip.speaker_map == {"SPEAKER_00": "Therapist", "SPEAKER_01": "Maya", "": "", "SPEAKER_02": "Tobias"}
    assert clip.history.first().history_source == "web"


def test_maps_to_offers_the_clips_people_as_choices(client, project, lead):
    client.force_login(lead)
    client.post(
        upload_page(project),
        {"files": [corpus_file("maya_and_tobias/001_clean.srt")], "scenario": "couple", "group": "g"},
    )
    clip = Clip.objects.get()
    url = f"/projects/{project.slug}/clips/{clip.pk}/speakers/"
    response = client.get(url)
    field = response.context["form"]["speaker_0"]  # Dr. Weiss, suggested as the therapist
    assert [value for value, _ in field.field.widget.choices] == ["", "Maya", "Tobias", "Therapist", "Couple"]
    page = response.content.decode()
    assert '<select name="speaker_0"' in page and '<option value="Therapist" selected>Therapist</option>' in page
    # After a refused confirmation the choices follow the participants that were posted.
    refused = client.post(
        url, {"participants": "Maya, Toby", "speaker_0": "Therapist", "speaker_1": "Maya", "speaker_2": "Tobias"}
    )
    assert (
        refused.status_code == 200
        and "&#x27;Tobias&#x27;, which is not a person of this clip" in refused.content.decode()
    )
    choices = [value for value, _ in refused.context["form"]["speaker_2"].field.widget.choices]
    assert choices == ["", "Maya", "Toby", "Therapist", "Couple", "Tobias"]  # the stored choice stays visible


def test_mapping_page_refuses_a_name_outside_the_clip(client, project, lead):
    client.force_login(lead)
    client.post(
        upload_page(project),
        {"files": [corpus_file("maya_and_tobias/001_clean.srt")], "scenario": "couple", "group": "g"},
    )
    clip = Clip.objects.get()
    url = f"/projects/{project.slug}/clips/{clip.pk}/speakers/"
    response = client.post(
        url, {"participants": "Maya, Tobias", "speaker_0": "Dr. Weiss", "speaker_1": "Maya", "speaker_2": "Tobias"}
    )
    assert response.status_code == 200 and "not a person of this clip" in response.content.decode()
    clip.refresh_from_db()
    assert not clip.speaker_map_confirmed


def test_mapping_page_is_for_leads_only(client, project, lead, annotator):
    client.force_login(lead)
    client.post(
        upload_page(project),
        {"files": [corpus_file("maya_and_tobias/001_clean.srt")], "scenario": "couple", "group": "g"},
    )
    clip = Clip.objects.get()
    Assignment.objects.create(clip=clip, annotator=annotator)
    client.force_login(annotator)
    url = f"/projects/{project.slug}/clips/{clip.pk}/speakers/"
    assert client.get(url).status_code == 403
    assert client.post(url, {"participants": "Maya, Tobias"}).status_code == 403


def test_transcript_text_is_escaped_on_the_pages(client, project, lead):
    client.force_login(lead)
    raw = b"1\n00:00:00,000 --> 00:00:02,000\nMaya: <script>alert(1)</script>\n"
    client.post(upload_page(project), {"files": [SimpleUploadedFile("x.srt", raw)], "scenario": "couple", "group": "g"})
    page = client.get(f"/projects/{project.slug}/clips/{Clip.objects.get().pk}/speakers/").content.decode()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "<script>alert" not in page


def test_upload_page_lists_clips_waiting_and_accepts_complete_suggestions(client, project, lead):
    client.force_login(lead)
    files = [corpus_file("maya_and_tobias/001_clean.srt"), corpus_file("maya_and_tobias/012_diarised.json")]
    client.post(upload_page(project), {"files": files, "scenario": "couple", "group": "maya_and_tobias"})
    page = client.get(upload_page(project)).content.decode()
    assert "Speakers to confirm (2 clips)" in page and "Accept the suggested speakers of 1 clip" in page
    ids = [c.pk for c, complete in client.get(upload_page(project)).context["waiting"] if complete]
    response = client.post(f"/projects/{project.slug}/ingest/accept-speakers/", {"clip": ids}, follow=True)
    assert "Speakers of 1 clip(s) confirmed as suggested." in response.content.decode()
    assert list(Clip.objects.filter(speaker_map_confirmed=True).values_list("sample_id", flat=True)) == [
        "maya_and_tobias/001_clean"
    ]


def test_rolling_captions_are_collapsed_and_said_so_on_the_upload_and_speaker_pages(client, project, lead):
    client.force_login(lead)
    response = client.post(
        upload_page(project),
        {
            "files": [corpus_file("rolling/001_auto_captions.vtt")],
            "scenario": "couple",
            "participants": "Maya, Tobias",
            "group": "rolling",
        },
    )
    [result] = response.context["results"]
    assert (result.status, result.cues) == ("created", 3)
    page = response.content.decode()
    assert "rolling auto-captions: 5 cues, each repeating the line before it, collapsed into 3 lines" in page
    clip = Clip.objects.get()
    speakers = client.get(f"/projects/{project.slug}/clips/{clip.pk}/speakers/").content.decode()
    assert "they were collapsed into their 3 distinct lines" in speakers and 'id="word-timings"' in speakers
    assert '<span class="ingest-word">money<sub>3.04</sub></span>' in speakers


# --- API -----------------------------------------------------------------------------


def api_url(project):
    return f"/api/v1/projects/{project.slug}/clips/"


def test_api_ingest_creates_clips_and_answers_201(client, project, lead, merged_routes):
    client.force_login(lead)
    response = client.post(
        api_url(project),
        {
            "files": [corpus_file("maya_and_tobias/001_clean.srt"), corpus_file("maya_and_tobias/012_diarised.json")],
            "relative_paths": ["maya_and_tobias/001_clean.srt", "maya_and_tobias/012_diarised.json"],
            "scenario": "couple",
            "speaker_map": json.dumps(
                {"SPEAKER_00": "Therapist", "SPEAKER_01": "Maya", "SPEAKER_02": "Tobias", "": ""}
            ),
        },
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["created"], body["refused"]) == (2, 0)
    assert [r["speaker_map_confirmed"] for r in body["results"]] == [True, True]
    clip = Clip.objects.get(sample_id="maya_and_tobias/012_diarised")
    assert clip.participants == ["Maya", "Tobias"]
    record = clip.history.first()
    assert record.history_source == "api" and record.history_user == lead


def test_api_ingest_says_when_rolling_captions_were_collapsed(client, project, lead, merged_routes):
    client.force_login(lead)
    response = client.post(
        api_url(project),
        {
            "files": [corpus_file("rolling/001_auto_captions.vtt")],
            "relative_paths": ["rolling/001_auto_captions.vtt"],
            "scenario": "couple",
            "participants": "Maya, Tobias",
        },
    )
    assert response.status_code == 201, response.content
    [result] = response.json()["results"]
    assert result["cues"] == 3 and result["notes"] == [
        "rolling auto-captions: 5 cues, each repeating the line before it, collapsed into 3 lines (word timings kept "
        "in this report)"
    ]


def test_api_answers_200_when_everything_is_unchanged_and_422_when_a_file_is_refused(
    client, project, lead, merged_routes
):
    client.force_login(lead)
    data = {"files": [SimpleUploadedFile("a.srt", SIMPLE)], "group": "g", "scenario": "couple"}
    assert client.post(api_url(project), data).status_code == 201
    data["files"] = [SimpleUploadedFile("a.srt", SIMPLE)]
    response = client.post(api_url(project), data)
    assert response.status_code == 200 and response.json()["unchanged"] == 1
    response = client.post(
        api_url(project),
        {
            "files[]": [
                SimpleUploadedFile("b.srt", SIMPLE.replace(b"Hello", b"Bye")),
                corpus_file("refused/bad_time.csv"),
            ],
            "group": "g",
            "scenario": "couple",
        },
    )
    assert response.status_code == 422
    body = response.json()
    assert [r["status"] for r in body["results"]] == ["created", "refused"]
    refused = body["results"][1]
    assert refused["line"] == 3 and refused["message"].startswith("bad_time.csv, line 3: end time 'soon' is not a time")


def test_api_refuses_bad_parameters_with_400(client, project, lead, merged_routes):
    client.force_login(lead)
    response = client.post(
        api_url(project), {"files": [SimpleUploadedFile("a.srt", SIMPLE)], "group": "g", "scenario": "solo"}
    )
    assert response.status_code == 400 and "scenario" in response.json()
    response = client.post(
        api_url(project),
        {
            "files": [SimpleUploadedFile("a.srt", SIMPLE)],
            "group": "g",
            "scenario": "couple",
            "speaker_map": "{not json",
        },
    )
    assert response.status_code == 400 and "speaker_map" in response.json()
    assert Clip.objects.count() == 0


def test_api_ingest_is_for_leads_only_but_listing_still_works(client, project, lead, annotator, merged_routes):
    assert client.post(api_url(project), {"scenario": "couple"}).status_code in (401, 403)
    client.force_login(lead)
    client.post(api_url(project), {"files": [SimpleUploadedFile("a.srt", SIMPLE)], "group": "g", "scenario": "couple"})
    clip = Clip.objects.get()
    client.force_login(annotator)
    response = client.post(
        api_url(project), {"files": [SimpleUploadedFile("b.srt", SIMPLE + b"\n")], "group": "g", "scenario": "couple"}
    )
    assert response.status_code == 403 and Clip.objects.count() == 1
    assert client.get(api_url(project)).status_code == 404  # nothing assigned: the project is invisible
    Assignment.objects.create(clip=clip, annotator=annotator)
    assert [c["sample_id"] for c in client.get(api_url(project)).json()] == ["g/a"]
    client.force_login(lead)
    assert client.get(api_url(project)).json()[0]["content_hash"] == clip.content_hash


def test_api_speaker_map_read_and_confirm(client, project, lead, annotator, merged_routes):
    client.force_login(lead)
    client.post(
        api_url(project), {"files": [corpus_file("maya_and_tobias/001_clean.srt")], "group": "g", "scenario": "couple"}
    )
    clip = Clip.objects.get()
    url = f"/api/v1/projects/{project.slug}/clips/{clip.pk}/speaker-map/"
    body = client.get(url).json()
    assert body["confirmed"] is False and body["entities"] == ["Maya", "Tobias", "Therapist", "Couple"]
    assert [(s["tag"], s["cues"], s["suggested"]) for s in body["speakers"]] == [
        ("Dr. Weiss", 2, "Therapist"),
        ("Maya", 1, "Maya"),
        ("Tobias", 1, "Tobias"),
    ]
    bad = client.put(
        url,
        {"speaker_map": {"Dr. Weiss": "Weiss", "Maya": "Maya", "Tobias": "Tobias"}},
        content_type="application/json",
    )
    assert bad.status_code == 400 and "not a person of this clip" in bad.json()["detail"]
    ok = client.put(
        url,
        {"speaker_map": {"Dr. Weiss": "Therapist", "Maya": "Maya", "Tobias": "Tobias"}},
        content_type="application/json",
    )
    assert ok.status_code == 200 and ok.json()["confirmed"] is True
    clip.refresh_from_db()
    assert clip.speaker_map_confirmed and clip.history.first().history_source == "api"
    Assignment.objects.create(clip=clip, annotator=annotator)
    client.force_login(annotator)
    assert client.get(url).status_code == 403
    assert client.put(url, {"speaker_map": {}}, content_type="application/json").status_code == 403


def test_openapi_documents_the_ingest_statuses(client, lead, merged_routes):
    client.force_login(lead)
    schema = client.get("/api/schema/", {"format": "json"}).json()
    post = schema["paths"]["/api/v1/projects/{slug}/clips/"]["post"]
    assert {"200", "201", "400", "403", "422"} <= set(post["responses"])
    assert "multipart/form-data" in post["requestBody"]["content"]
    assert "put" in schema["paths"]["/api/v1/projects/{slug}/clips/{clip_id}/speaker-map/"]
