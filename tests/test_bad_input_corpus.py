"""A corpus of bad files across every ingest and import format: each one gets a
clear message naming the file, and leaves the database exactly as it was.
The same for bad API bodies: deep and wide JSON, in JSON bodies and in
multipart fields. Plus bounded property-based tests of the parsers' and the
schema's robustness."""

from __future__ import annotations

import codecs
import json

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from annotation.ingest import services as ingest
from annotation.models import Clip, Cue, Draft, Gold, Revision, Row
from annotation.rescue_format.importer import ImportFailed, import_rescue
from annotation.schema import check_clip

from .builders.documents import couple_clip, mutate

pytestmark = pytest.mark.django_db

GOOD = couple_clip()
GOOD_LINE = json.dumps(GOOD)
SRT_OK = "1\n00:00:01,000 --> 00:00:03,000\nMaya: I keep waiting.\n\n"


def deep(n: int) -> str:
    return "[" * n + "]" * n


def deep_object(n: int) -> str:
    return '{"a": ' * n + "1" + "}" * n


def wide_object(n: int) -> str:
    return "{" + ", ".join(f'"k{i}": {i}' for i in range(n)) + "}"


# (file name, bytes) refused by ingest (transcript formats)
INGEST_BAD = {
    "binary.srt": bytes(range(256)) * 8,
    "empty.srt": b"",
    "only_numbers.srt": b"1\n2\n3\n",
    "no_cues.vtt": b"WEBVTT\n\n",
    "truncated_timing.srt": b"1\n00:00:01,000 --> 00:00:0\nMaya: hi\n\n",
    "backwards.srt": (
        SRT_OK
        + "2\n00:10:00,000 --> 00:10:02,000\nTobias: later\n\n3\n00:00:00,500 --> 00:00:00,900\nMaya: way back\n\n"
    ).encode(),
    "end_before_start.srt": b"1\n00:00:05,000 --> 00:00:02,000\nMaya: reversed\n\n",
    "bad_hours.vtt": b"WEBVTT\n\n00:xx:01.000 --> 00:00:03.000\n<v Maya>hi\n\n",
    "missing_columns.csv": b"start,end\n0,1\n",
    "bad_time.csv": b"start,end,speaker,text\nsoon,later,Maya,hello\n",
    "bad_time.tsv": b"start\tend\tspeaker\ttext\n1.0\tnever\tMaya\thello\n",
    "segments_not_list.json": json.dumps({"segments": {"start": 0}}).encode(),
    "segments_wrong_types.json": json.dumps(
        {"segments": [{"start": "a", "end": "b", "speaker": 1, "text": 2}]}
    ).encode(),
    "deeply_nested.json": deep(100_000).encode(),
    "deeply_nested_objects.json": deep_object(50_000).encode(),
    "wide_segments.json": json.dumps({"segments": [7] * 200_000}).encode(),
    "invalid.json": b'{"segments": [ {"start": 0, ',
    "rescue_without_rows.json": json.dumps(
        {"sample_id": "a/b", "scenario": "couple", "participants": ["Maya"]}
    ).encode(),
    "utf16_garbage.srt": codecs.BOM_UTF16_LE + bytes(range(1, 200)),
    "gigantic.srt": b"1\n00:00:01,000 --> 00:00:03,000\nMaya: " + b"a" * (21 * 1024 * 1024) + b"\n\n",
}

# (file name, bytes) refused by import_rescue (the release format)
IMPORT_BAD = {
    "truncated.jsonl": (GOOD_LINE[:300] + "\n").encode(),
    "empty.jsonl": b"",
    "blank_lines.jsonl": b"\n\n   \n",
    "not_utf8.jsonl": GOOD_LINE.replace("I keep", "Caf\u00e9 I keep").encode("cp1252") + b"\n",
    "wrong_type.jsonl": (json.dumps(mutate(GOOD, lambda c: c["rows"][0].update(start_time="zero"))) + "\n").encode(),
    "unknown_label.jsonl": (
        json.dumps(mutate(GOOD, lambda c: c["rows"][0].update(utterance_type="complaint"))) + "\n"
    ).encode(),
    "entity_outside.jsonl": (
        json.dumps(mutate(GOOD, lambda c: c["rows"][0].update(target=["Grandma"]))) + "\n"
    ).encode(),
    "duplicate_ids.jsonl": (GOOD_LINE + "\n" + GOOD_LINE + "\n").encode(),
    "deeply_nested.jsonl": (deep(100_000) + "\n").encode(),
    "deeply_nested.json": deep(100_000).encode(),
    "wide_row.jsonl": (
        json.dumps(mutate(GOOD, lambda c: c["rows"][0].update({f"extra_{i}": i for i in range(50_000)}))) + "\n"
    ).encode(),
    "missing_rows.json": json.dumps({k: v for k, v in GOOD.items() if k != "rows"}).encode(),
    "unknown_scenario.json": json.dumps({**GOOD, "scenario": "friends"}).encode(),
    "list_of_numbers.json": b"[1, 2, 3]",
    "self_target.jsonl": (json.dumps(mutate(GOOD, lambda c: c["rows"][0].update(target=["Maya"]))) + "\n").encode(),
    "intensity_text.jsonl": (
        json.dumps(mutate(GOOD, lambda c: c["rows"][0]["internal_emotion"][0].update(intensity="high"))) + "\n"
    ).encode(),
    "wrong_extension.txt": GOOD_LINE.encode(),
}


def counts():
    return tuple(m.objects.count() for m in (Clip, Cue, Row, Draft, Revision, Gold))


def test_the_corpus_has_at_least_thirty_files():
    assert len(INGEST_BAD) + len(IMPORT_BAD) >= 30


@pytest.mark.parametrize("name", sorted(INGEST_BAD))
def test_bad_transcript_is_refused_with_its_name_and_nothing_is_written(project, name):
    raw = INGEST_BAD[name]
    before = counts()
    upload = ingest.Upload(name=f"bad/{name}", size=len(raw), read=lambda: raw)
    (result,) = ingest.ingest_files(project, [upload], ingest.IngestOptions(scenario="couple"))
    assert result.status == "refused", (name, result)
    assert name in result.message and len(result.message) < 2000
    assert counts() == before


@pytest.mark.parametrize("name", sorted(IMPORT_BAD))
def test_bad_release_file_is_refused_with_its_name_and_nothing_is_written(project, tmp_path, name):
    path = tmp_path / name
    path.write_bytes(IMPORT_BAD[name])
    before = counts()
    with pytest.raises(ImportFailed) as excinfo:
        import_rescue(path, project)
    message = str(excinfo.value)
    assert name in message and len(message) < 5000
    assert counts() == before


# --- API bodies: deep and wide JSON ---------------------------------------------

# (name, JSON text) sent as the value of a body's field; refused (400) or judged (422), never a 500.
API_BAD_VALUES = {
    "deep_lists": deep(100_000),
    "deep_objects": deep_object(50_000),
    "deep_mixed": '[{"a": ' * 20_000 + "1" + "}]" * 20_000,
    "just_past_the_limit": deep(33),
    "wide_list": "[" + ",".join(["0"] * 200_000) + "]",
    "wide_object": wide_object(50_000),
    "wide_strings": json.dumps(["x" * 100] * 10_000),
}


@pytest.fixture
def assigned(draft_clip, annotator):
    from annotation.starting import start_assignment

    start_assignment(draft_clip, annotator)
    return Revision.objects.get(row__clip=draft_clip, row__row_index=1, annotator=annotator)


def api_counts():
    from annotation.models import Comment

    return counts() + (Comment.objects.count(), tuple(Revision.objects.values_list("version", flat=True)))


@pytest.mark.parametrize("name", sorted(API_BAD_VALUES))
def test_bad_json_in_an_api_body_is_refused_clearly_and_nothing_is_written(client, annotator, assigned, name):
    client.force_login(annotator)
    value = API_BAD_VALUES[name]
    deep_one = name.startswith(("deep", "just_past"))
    for url, method, template in (
        (f"/api/v1/revisions/{assigned.pk}/", "put", '{"content": %s, "version": 1}'),
        (f"/api/v1/clips/{assigned.row.clip_id}/comments/", "post", '{"body": %s}'),
    ):
        before = api_counts()
        response = getattr(client, method)(url, template % value, content_type="application/json")
        assert response.status_code in ((400,) if deep_one else (400, 422)), (name, url, response.status_code)
        detail = json.dumps(response.json())
        assert len(detail) < 10_000, "the answer names the problem without echoing the body"
        if deep_one:
            assert "nested more than 32 levels deep" in detail
        assert api_counts() == before


@pytest.mark.parametrize("name", sorted(API_BAD_VALUES))
def test_bad_json_in_a_multipart_field_is_refused_clearly_and_nothing_is_written(client, lead, project, name):
    from django.core.files.uploadedfile import SimpleUploadedFile

    client.force_login(lead)
    before = counts()
    response = client.post(
        f"/api/v1/projects/{project.slug}/clips/",
        {
            "files": [SimpleUploadedFile("a.srt", SRT_OK.encode())],
            "scenario": "couple",
            "group": "g",
            "speaker_map": API_BAD_VALUES[name],
        },
    )
    assert response.status_code == 400, (name, response.status_code)
    assert "speaker_map" in json.dumps(response.json()) or "speaker map" in json.dumps(response.json())
    assert counts() == before


# --- property-based: the schema never crashes, whatever it is given ------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 20) | st.floats(allow_nan=False, width=32) | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(st.sampled_from(list(GOOD["rows"][0]) + ["x"]), children, max_size=4)
    ),
    max_leaves=12,
)


@hsettings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(field=st.sampled_from(sorted(GOOD["rows"][0])), value=json_values, row=st.integers(0, 2))
def test_schema_reports_any_single_field_value_without_crashing(field, value, row):
    doc = mutate(GOOD, lambda c: c["rows"][row].__setitem__(field, value))
    clip, report = check_clip(doc)
    for issue in report.issues:
        assert issue.path.startswith(("rows[", "participants", "scenario", "sample_id")) or issue.path == ""
        assert issue.message


@hsettings(max_examples=100, deadline=None, derandomize=True)
@given(doc=json_values)
def test_schema_reports_any_document_shape_without_crashing(doc):
    clip, report = check_clip(doc)
    assert clip is None or report is not None


# --- upload names: any length, any characters, never a 500 ---------------------------------------

_unique = iter(range(10**9))


def unique_srt() -> bytes:
    """A valid transcript that no earlier upload had (so that each one is created, not unchanged)."""
    return f"1\n00:00:01,000 --> 00:00:03,000\nMaya: take {next(_unique)}.\n\n".encode()


def browser_multipart(files: list[tuple[str, bytes]], fields: list[tuple[str, str]]) -> tuple[bytes, str]:
    """A multipart body as a browser writes it: UTF-8 names, with '"', CR and LF percent-encoded (WHATWG)."""
    boundary = "namefuzzboundary"

    def quoted(value: str) -> str:
        return value.replace('"', "%22").replace("\r", "%0D").replace("\n", "%0A")

    out = b""
    for key, value in fields:
        out += (
            f'--{boundary}\r\nContent-Disposition: form-data; name="{key}"\r\n\r\n'.encode() + value.encode() + b"\r\n"
        )
    for name, content in files:
        out += f'--{boundary}\r\nContent-Disposition: form-data; name="files"; filename="{quoted(name)}"\r\n'.encode()
        out += b"Content-Type: application/octet-stream\r\n\r\n" + content + b"\r\n"
    return out + f"--{boundary}--\r\n".encode(), f"multipart/form-data; boundary={boundary}"


def history_reasons_fit() -> bool:
    limit = Clip.history.model._meta.get_field("history_change_reason").max_length
    return all(len(r or "") <= limit for r in Clip.history.values_list("history_change_reason", flat=True))


@pytest.mark.parametrize("length", [87, 100, 200, 250])
def test_a_long_transcript_name_is_ingested_and_its_records_fit(client, lead, project, length):
    """The probe's 500: "ingested from <name>" overflowed the history record's 100-character change reason."""
    client.force_login(lead)
    name = ("n" * length)[: length - 4] + ".srt"
    body, content_type = browser_multipart([(name, unique_srt())], [("scenario", "couple"), ("group", "g")])
    response = client.post(f"/api/v1/projects/{project.slug}/clips/", body, content_type=content_type)
    assert response.status_code == 201, response.content[:500]
    clip = Clip.objects.get(pk=response.json()["results"][0]["clip_id"])
    assert clip.source_file == name, "the whole name is kept where names are kept"
    assert history_reasons_fit() and clip.history.first().history_change_reason.startswith("ingested from nnn")


# Short and long names of any characters (long ones are where the records overflowed), with transcript suffixes or none.
stems = (
    st.text(max_size=20)
    | st.text(min_size=80, max_size=300)
    | st.text(alphabet="abcé -_.'\"%&", min_size=80, max_size=300)
)
names = st.builds(lambda stem, suffix: stem + suffix, stems, st.sampled_from([".srt", ".srt", ".vtt", ".SRT", ""]))
folders = st.just("") | st.text(max_size=30) | st.text(min_size=200, max_size=600)


@hsettings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(name=names, folder=folders, media_name=st.none() | stems.map(lambda stem: stem + ".mp4"))
def test_upload_names_of_any_length_and_characters_are_ingested_or_refused_by_name(
    client, lead, project, name, folder, media_name
):
    """Fuzzed file names and folder paths through the ingest API, as a browser sends them: every answer is one the
    API documents, each transcript gets one result, a refusal says why, and nothing is half-written."""
    client.force_login(lead)
    files = [(name, unique_srt())] + ([(media_name, b"\0" * 64)] if media_name else [])
    fields = [("scenario", "couple"), ("group", "g")] + (
        [("relative_paths", f"{folder}/{n}") for n, _ in files] if folder else []
    )
    body, content_type = browser_multipart(files, fields)
    clips_before = Clip.objects.count()
    response = client.post(f"/api/v1/projects/{project.slug}/clips/", body, content_type=content_type)
    assert response.status_code in (200, 201, 400, 422), (name, folder, response.status_code, response.content[:300])
    answer = response.json()
    if response.status_code == 400:
        assert answer.get("detail") or answer, "a 400 says why"
        assert Clip.objects.count() == clips_before
        return
    created = [r for r in answer["results"] if r["status"] in ("created", "replaced")]
    for result in answer["results"]:
        assert result["message"], result
        assert len(result["message"]) < 2000
    assert Clip.objects.count() == clips_before + len(created)
    assert history_reasons_fit()


@hsettings(
    max_examples=80,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    name=st.text(min_size=1, max_size=700)
    | st.sampled_from(
        ["caf\udce9/001.srt", "g/\udcff\udcfe.srt", "g/tab\there.srt", "g/nul\x00.srt", "g/" + "é" * 300 + ".srt"]
    )
)
def test_names_read_from_the_disk_are_ingested_or_refused_by_name(project, name):
    """``manage.py ingest`` reads names from the disk: any length, control characters, bytes that are not UTF-8."""
    name = name if "/" in name else f"g/{name}"
    raw = unique_srt()
    before = counts()
    (result,) = ingest.ingest_files(
        project, [ingest.Upload(name=name, size=len(raw), read=lambda: raw)], ingest.IngestOptions(scenario="couple")
    )
    assert result.status in ("created", "refused"), result
    if result.status == "refused":
        assert result.message and counts() == before
        json.dumps(result.as_dict()).encode("utf-8")  # the answer can be sent
    assert history_reasons_fit()


def test_a_media_file_name_too_long_for_the_file_system_is_stored_under_a_shorter_one(client, lead, project):
    client.force_login(lead)
    stem = "é" * 200  # 400 bytes in UTF-8: more than a file system allows in one name
    body, content_type = browser_multipart(
        [(f"{stem}.srt", unique_srt()), (f"{stem}.mp4", b"\0" * 64)], [("scenario", "couple"), ("group", "g")]
    )
    response = client.post(f"/api/v1/projects/{project.slug}/clips/", body, content_type=content_type)
    assert response.status_code == 201, response.content[:500]
    clip = Clip.objects.get(pk=response.json()["results"][0]["clip_id"])
    stored = clip.media.name.rsplit("/", 1)[-1]
    assert stored.endswith(".mp4") and len(stored.encode()) <= 255 and clip.media.storage.exists(clip.media.name)
