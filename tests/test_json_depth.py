"""Issue 14, finding 2: deeply nested JSON gave HTTP 500 on every JSON endpoint.

Every body the API parses, and the JSON held in multipart and form fields, is
refused past MAX_JSON_DEPTH levels with a 400 that says so; nothing is written.
Wide JSON (many values side by side, shallow) is parsed and judged as usual.
"""
from __future__ import annotations

import json
import time

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from annotation.api.parsers import TooDeep, exceeds_depth, loads
from annotation.assignment import start_assignment
from annotation.models import Assignment, Clip, Comment, Cue, Gold, Revision, Row

pytestmark = pytest.mark.django_db

DEEP = "[" * 100_000 + "]" * 100_000  # the probe's body
JUST_TOO_DEEP = "[" * 33 + "]" * 33  # one level past the default limit of 32
WIDE = "[" + ",".join(["1"] * 200_000) + "]"
SRT = b"1\n00:00:01,000 --> 00:00:03,000\nMaya: I keep waiting.\n\n2\n00:00:03,500 --> 00:00:05,000\nTobias: I know.\n\n"


@pytest.fixture
def world(draft_clip, project, annotator, lead):
    clip = draft_clip
    start_assignment(clip, annotator)
    revision = Revision.objects.get(row__clip=clip, row__row_index=1, annotator=annotator)
    ingested = project.clips.create(sample_id="g/ingested", scenario="couple", participants=["Maya", "Tobias"])
    ingested.cues.create(position=1, start_time=0, end_time=1, speaker="Maya", text="hi")
    return {"clip": clip, "revision": revision, "row": revision.row, "ingested": ingested}


def client_for(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def snapshot():
    return [(m.__name__, m.objects.count()) for m in (Clip, Cue, Row, Revision, Gold, Assignment, Comment)] + [
        ("revision versions", sorted(Revision.objects.values_list("version", flat=True)))
    ]


def json_endpoints(world, project):
    """(role, method, url, body template with {value}) for every JSON endpoint an annotator or a lead writes to."""
    rev, row, clip = world["revision"].pk, world["row"].pk, world["clip"].pk
    return [
        ("annotator", "put", f"/api/v1/revisions/{rev}/", '{"content": {value}, "version": 1}'),
        ("annotator", "post", f"/api/v1/revisions/{rev}/validate/", '{"content": {value}}'),
        ("annotator", "post", f"/api/v1/revisions/{rev}/review/", '{"version": {value}}'),
        ("annotator", "post", f"/api/v1/clips/{clip}/comments/", '{"body": {value}}'),
        ("lead", "put", f"/api/v1/rows/{row}/gold/", '{"content": {value}, "version": 0}'),
        ("lead", "post", f"/api/v1/rows/{row}/gold/validate/", '{"content": {value}}'),
        ("lead", "post", f"/api/v1/rows/{row}/gold/decide/", '{"field": "tone_of_voice", "source": "draft", "version": 0, "note": {value}}'),
        ("lead", "put", f"/api/v1/projects/{project.slug}/clips/{world['ingested'].pk}/speaker-map/", '{"speaker_map": {value}}'),
        ("lead", "post", f"/api/v1/clips/{clip}/adjudication/rereview/", '{"annotator": {value}}'),
    ]


@pytest.mark.parametrize("value", [DEEP, JUST_TOO_DEEP], ids=["100000-levels", "33-levels"])
def test_finding_2_deeply_nested_json_is_refused_with_400_on_every_json_endpoint(world, project, annotator, lead, value):
    users = {"annotator": annotator, "lead": lead}
    for role, method, url, template in json_endpoints(world, project):
        before = snapshot()
        body = template.replace("{value}", value)
        response = getattr(client_for(users[role]), method)(url, body, content_type="application/json")
        assert response.status_code == 400, (url, response.status_code, response.content[:300])
        assert "nested more than 32 levels" in response.json()["detail"], url
        assert snapshot() == before, f"{url} wrote something"


def test_finding_2_deeply_nested_json_in_ingests_multipart_speaker_map_is_refused(world, project, lead):
    before = snapshot()
    response = client_for(lead).post(
        f"/api/v1/projects/{project.slug}/clips/",
        {"files": [SimpleUploadedFile("g/deep.srt", SRT)], "scenario": "couple", "speaker_map": DEEP},
    )
    assert response.status_code == 400, response.content[:300]
    assert "'speaker_map'" in response.json()["detail"] and "nested more than 32 levels" in response.json()["detail"]
    assert snapshot() == before


def test_finding_2_deeply_nested_json_in_the_ingest_pages_hidden_field_does_not_break_the_page(world, project, lead):
    response = client_for(lead).post(
        f"/projects/{project.slug}/ingest/",
        {"files": [SimpleUploadedFile("deep.srt", SRT)], "relative_paths": DEEP, "scenario": "couple", "group": "g"},
    )
    assert response.status_code == 200
    assert [r.status for r in response.context["results"]] == ["created"], "the paths are ignored, the file is ingested"


def test_wide_json_is_parsed_and_judged_like_any_other_body(world, project, annotator, lead):
    """Shallow but wide bodies (200,000 values, under MAX_REQUEST_BYTES) get the endpoint's own answer."""
    users = {"annotator": annotator, "lead": lead}
    for role, method, url, template in json_endpoints(world, project):
        before = snapshot()
        started = time.monotonic()
        response = getattr(client_for(users[role]), method)(url, template.replace("{value}", WIDE), content_type="application/json")
        assert response.status_code in (200, 400, 404, 409, 422), (url, response.status_code)
        assert time.monotonic() - started < 10, f"{url} took too long over a wide body"
        if response.status_code != 200:
            assert snapshot() == before, f"{url} refused the body but wrote something"


def test_depth_is_measured_outside_strings_and_without_recursion():
    assert not exceeds_depth('{"a": "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["}', limit=2)
    assert not exceeds_depth('"\\"[[[[[[[["', limit=1), "escaped quotes do not end the string"
    assert exceeds_depth(DEEP, limit=32) and not exceeds_depth("[" * 32 + "]" * 32, limit=32)
    assert exceeds_depth('{"a": {"b": {"c": 1}}}', limit=2) and not exceeds_depth('{"a": {"b": {"c": 1}}}', limit=3)
    with pytest.raises(TooDeep):
        loads(DEEP)
    assert loads(json.dumps({"rows": [{"target": ["Maya"]}]})) == {"rows": [{"target": ["Maya"]}]}
    many_brackets = "[" + ",".join(['{"a": [1, "]]]"]}'] * 100_000) + "]"  # 2 MB, 300,000 brackets
    started = time.monotonic()
    assert not exceeds_depth(many_brackets, limit=32)
    assert time.monotonic() - started < 2


def test_an_unclosed_string_of_escaped_quotes_is_measured_in_linear_time(world, annotator):
    """Review of finding 2: an unclosed string made the depth check rescan the body from every quote (a 60 KB
    body held a gunicorn worker for 20 s). The whole allowed body size now takes a fraction of a second."""
    body = '{"version": 1, "content": "' + '\\"' * 1_000_000 + "[" * 40  # 2 MB, the request limit
    started = time.monotonic()
    assert not exceeds_depth(body, limit=32), "the brackets are inside the (unclosed) string"
    assert time.monotonic() - started < 2
    response = client_for(annotator).put(f"/api/v1/revisions/{world['revision'].pk}/", body, content_type="application/json")
    assert response.status_code == 400
    world["revision"].refresh_from_db()
    assert world["revision"].version == 1


def test_a_group_map_nested_too_deep_is_refused_with_a_message_not_a_500(client, lead, project):
    """Review of finding 2: JSON held inside a text field (the freeze's clip → group map) is bounded too."""
    client.force_login(lead)
    deep_map = '{"a": ' + "[" * 5000 + "]" * 5000 + "}"
    response = client.post(f"/api/v1/projects/{project.slug}/releases/preview/", {"seed": 0, "groups": deep_map}, content_type="application/json")
    assert response.status_code == 400 and "nested more than 32 levels" in response.json()["groups"][0]


def test_predictions_nested_too_deep_are_malformed_lines_not_a_crash(tmp_path):
    from tasks.predictions import _records

    path = tmp_path / "p.jsonl"
    path.write_text('{"id": "x", "relation_top3": ["a"]}\n' + "[" * 100_000 + "]" * 100_000 + "\n", encoding="utf-8")
    records = _records(path.read_text(encoding="utf-8"))
    assert records[0] == ("line 1", {"id": "x", "relation_top3": ["a"]})
    assert records[1][0] == "line 2" and isinstance(records[1][1], RecursionError)
