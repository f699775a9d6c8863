"""A corpus of bad files across every ingest and import format: each one gets a
clear message naming the file, and leaves the database exactly as it was.
The same for bad API bodies: deep and wide JSON, in JSON bodies and in
multipart fields. Plus bounded property-based tests of the parsers' and the
schema's robustness."""
from __future__ import annotations

import codecs
import json

import pytest
from hypothesis import HealthCheck, given, settings as hsettings, strategies as st

from annotation.ingest import services as ingest
from annotation.models import Clip, Cue, Draft, Gold, Revision, Row
from annotation.rescue_format.importer import ImportFailed, import_rescue
from annotation.schema import check_clip

from .factories import couple_clip, mutate

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
    "backwards.srt": (SRT_OK + "2\n00:10:00,000 --> 00:10:02,000\nTobias: later\n\n3\n00:00:00,500 --> 00:00:00,900\nMaya: way back\n\n").encode(),
    "end_before_start.srt": b"1\n00:00:05,000 --> 00:00:02,000\nMaya: reversed\n\n",
    "bad_hours.vtt": b"WEBVTT\n\n00:xx:01.000 --> 00:00:03.000\n<v Maya>hi\n\n",
    "missing_columns.csv": b"start,end\n0,1\n",
    "bad_time.csv": b"start,end,speaker,text\nsoon,later,Maya,hello\n",
    "bad_time.tsv": b"start\tend\tspeaker\ttext\n1.0\tnever\tMaya\thello\n",
    "segments_not_list.json": json.dumps({"segments": {"start": 0}}).encode(),
    "segments_wrong_types.json": json.dumps({"segments": [{"start": "a", "end": "b", "speaker": 1, "text": 2}]}).encode(),
    "deeply_nested.json": deep(100_000).encode(),
    "deeply_nested_objects.json": deep_object(50_000).encode(),
    "wide_segments.json": json.dumps({"segments": [7] * 200_000}).encode(),
    "invalid.json": b'{"segments": [ {"start": 0, ',
    "rescue_without_rows.json": json.dumps({"sample_id": "a/b", "scenario": "couple", "participants": ["Maya"]}).encode(),
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
    "unknown_label.jsonl": (json.dumps(mutate(GOOD, lambda c: c["rows"][0].update(utterance_type="complaint"))) + "\n").encode(),
    "entity_outside.jsonl": (json.dumps(mutate(GOOD, lambda c: c["rows"][0].update(target=["Grandma"]))) + "\n").encode(),
    "duplicate_ids.jsonl": (GOOD_LINE + "\n" + GOOD_LINE + "\n").encode(),
    "deeply_nested.jsonl": (deep(100_000) + "\n").encode(),
    "deeply_nested.json": deep(100_000).encode(),
    "wide_row.jsonl": (json.dumps(mutate(GOOD, lambda c: c["rows"][0].update({f"extra_{i}": i for i in range(50_000)}))) + "\n").encode(),
    "missing_rows.json": json.dumps({k: v for k, v in GOOD.items() if k != "rows"}).encode(),
    "unknown_scenario.json": json.dumps({**GOOD, "scenario": "friends"}).encode(),
    "list_of_numbers.json": b"[1, 2, 3]",
    "self_target.jsonl": (json.dumps(mutate(GOOD, lambda c: c["rows"][0].update(target=["Maya"]))) + "\n").encode(),
    "intensity_text.jsonl": (json.dumps(mutate(GOOD, lambda c: c["rows"][0]["internal_emotion"][0].update(intensity="high"))) + "\n").encode(),
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
    from annotation.assignment import start_assignment

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
        {"files": [SimpleUploadedFile("a.srt", SRT_OK.encode())], "scenario": "couple", "group": "g", "speaker_map": API_BAD_VALUES[name]},
    )
    assert response.status_code == 400, (name, response.status_code)
    assert "speaker_map" in json.dumps(response.json()) or "speaker map" in json.dumps(response.json())
    assert counts() == before


# --- property-based: the schema never crashes, whatever it is given ------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 20) | st.floats(allow_nan=False, width=32) | st.text(max_size=8),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.sampled_from(list(GOOD["rows"][0]) + ["x"]), children, max_size=4),
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
