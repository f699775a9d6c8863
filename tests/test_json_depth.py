"""Deeply nested JSON once gave HTTP 500 on every JSON endpoint.

Every body the API parses, and the JSON held in multipart and form fields, is
refused past MAX_JSON_DEPTH levels with a 400 that says so; nothing is written.
Wide JSON (many values side by side, shallow) is parsed and judged as usual.
"""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from annotation.api.parsers import TooDeep, exceeds_depth, loads
from annotation.models import Assignment, Clip, Comment, Cue, Gold, Revision, Row
from annotation.starting import start_assignment

from .builders.api import client_for

pytestmark = pytest.mark.django_db

DEEP = "[" * 100_000 + "]" * 100_000  # the probe's body
JUST_TOO_DEEP = "[" * 33 + "]" * 33  # one level past the default limit of 32
WIDE = "[" + ",".join(["1"] * 200_000) + "]"
SRT = (
    b"1\n00:00:01,000 --> 00:00:03,000\nMaya: I keep waiting.\n\n2\n00:00:03,500 --> 00:00:05,000\nTobias: I know.\n\n"
)


@pytest.fixture
def world(draft_clip, project, annotator, lead):
    clip = draft_clip
    start_assignment(clip, annotator)
    revision = Revision.objects.get(row__clip=clip, row__row_index=1, annotator=annotator)
    ingested = project.clips.create(sample_id="g/ingested", scenario="couple", participants=["Maya", "Tobias"])
    ingested.cues.create(position=1, start_time=0, end_time=1, speaker="Maya", text="hi")
    return {"clip": clip, "revision": revision, "row": revision.row, "ingested": ingested}


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
        (
            "lead",
            "post",
            f"/api/v1/rows/{row}/gold/decide/",
            '{"field": "tone_of_voice", "source": "draft", "version": 0, "note": {value}}',
        ),
        (
            "lead",
            "put",
            f"/api/v1/projects/{project.slug}/clips/{world['ingested'].pk}/speaker-map/",
            '{"speaker_map": {value}}',
        ),
        ("lead", "post", f"/api/v1/clips/{clip}/adjudication/rereview/", '{"annotator": {value}}'),
    ]


@pytest.mark.parametrize("value", [DEEP, JUST_TOO_DEEP], ids=["100000-levels", "33-levels"])
def test_deeply_nested_json_is_refused_with_400_on_every_json_endpoint(world, project, annotator, lead, value):
    users = {"annotator": annotator, "lead": lead}
    for role, method, url, template in json_endpoints(world, project):
        before = snapshot()
        body = template.replace("{value}", value)
        response = getattr(client_for(users[role]), method)(url, body, content_type="application/json")
        assert response.status_code == 400, (url, response.status_code, response.content[:300])
        assert "nested more than 32 levels" in response.json()["detail"], url
        assert snapshot() == before, f"{url} wrote something"


def test_deeply_nested_json_in_ingests_multipart_speaker_map_is_refused(world, project, lead):
    before = snapshot()
    response = client_for(lead).post(
        f"/api/v1/projects/{project.slug}/clips/",
        {"files": [SimpleUploadedFile("g/deep.srt", SRT)], "scenario": "couple", "speaker_map": DEEP},
    )
    assert response.status_code == 400, response.content[:300]
    assert "'speaker_map'" in response.json()["detail"] and "nested more than 32 levels" in response.json()["detail"]
    assert snapshot() == before


def test_deeply_nested_json_in_the_ingest_pages_hidden_field_does_not_break_the_page(world, project, lead):
    response = client_for(lead).post(
        f"/projects/{project.slug}/ingest/",
        {"files": [SimpleUploadedFile("deep.srt", SRT)], "relative_paths": DEEP, "scenario": "couple", "group": "g"},
    )
    assert response.status_code == 200
    assert [r.status for r in response.context["results"]] == ["created"], "the paths are ignored, the file is ingested"


# A scan that went back over the body for every value or quote would take hours on these bodies, and a linear one
# takes well under a second: a timeout of a minute tells the two apart on a machine however loaded.
LINEAR = pytest.mark.timeout(60)


@LINEAR
def test_wide_json_is_parsed_and_judged_like_any_other_body(world, project, annotator, lead):
    """Shallow but wide bodies (200,000 values, under MAX_REQUEST_BYTES) get the endpoint's own answer."""
    users = {"annotator": annotator, "lead": lead}
    for role, method, url, template in json_endpoints(world, project):
        before = snapshot()
        response = getattr(client_for(users[role]), method)(
            url, template.replace("{value}", WIDE), content_type="application/json"
        )
        assert response.status_code in (200, 400, 404, 409, 422), (url, response.status_code)
        if response.status_code != 200:
            assert snapshot() == before, f"{url} refused the body but wrote something"


@LINEAR
def test_depth_is_measured_outside_strings_and_without_recursion():
    assert not exceeds_depth('{"a": "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["}', limit=2)
    assert not exceeds_depth('"\\"[[[[[[[["', limit=1), "escaped quotes do not end the string"
    assert exceeds_depth(DEEP, limit=32) and not exceeds_depth("[" * 32 + "]" * 32, limit=32)
    assert exceeds_depth('{"a": {"b": {"c": 1}}}', limit=2) and not exceeds_depth('{"a": {"b": {"c": 1}}}', limit=3)
    with pytest.raises(TooDeep):
        loads(DEEP)
    assert loads(json.dumps({"rows": [{"target": ["Maya"]}]})) == {"rows": [{"target": ["Maya"]}]}
    many_brackets = "[" + ",".join(['{"a": [1, "]]]"]}'] * 100_000) + "]"  # 2 MB, 300,000 brackets
    assert not exceeds_depth(many_brackets, limit=32)


@LINEAR
def test_an_unclosed_string_of_escaped_quotes_is_measured_in_linear_time(world, annotator):
    """An unclosed string made the depth check rescan the body from every quote (a 60 KB body held a gunicorn
    worker for 20 s, so the whole allowed size would hold it for hours). It is now read once."""
    body = '{"version": 1, "content": "' + '\\"' * 1_000_000 + "[" * 40  # 2 MB, the request limit
    assert not exceeds_depth(body, limit=32), "the brackets are inside the (unclosed) string"
    response = client_for(annotator).put(
        f"/api/v1/revisions/{world['revision'].pk}/", body, content_type="application/json"
    )
    assert response.status_code == 400
    world["revision"].refresh_from_db()
    assert world["revision"].version == 1


def test_a_group_map_nested_too_deep_is_refused_with_a_message_not_a_500(client, lead, project):
    """JSON held inside a text field (the freeze's clip → group map) is bounded too."""
    client.force_login(lead)
    deep_map = '{"a": ' + "[" * 5000 + "]" * 5000 + "}"
    response = client.post(
        f"/api/v1/projects/{project.slug}/releases/preview/",
        {"seed": 0, "groups": deep_map},
        content_type="application/json",
    )
    assert response.status_code == 400 and "nested more than 32 levels" in response.json()["groups"][0]


def test_predictions_nested_too_deep_are_malformed_lines_not_a_crash(tmp_path):
    from tasks.predictions import _records

    path = tmp_path / "p.jsonl"
    path.write_text('{"id": "x", "relation_top3": ["a"]}\n' + "[" * 100_000 + "]" * 100_000 + "\n", encoding="utf-8")
    records = _records(path.read_text(encoding="utf-8"))
    assert records[0] == ("line 1", {"id": "x", "relation_top3": ["a"]})
    assert records[1][0] == "line 2" and isinstance(records[1][1], RecursionError)


# --- one decoding path: the declared charset cannot carry a body past the depth check ----------------

# Charsets JSON does not allow. The probe's bodies were read two ways: the depth check scanned the bytes as UTF-8,
# DRF's parser decoded them with the declared charset. In cp037 (EBCDIC) no bracket is a UTF-8 bracket; in UTF-16
# and UTF-32, "∀" (U+2200) holds the byte of a UTF-8 quote, so the scan took the nesting after it for a string.
OTHER_CHARSETS = ["utf-16-le", "utf-16", "utf-32", "cp037", "latin-1"]


def read_two_ways(charset: str) -> bytes:
    """100,000 nested lists in ``charset``, written so that a UTF-8 scan of the bytes sees at most one level."""
    text = '["\u2200", ' + DEEP + "]"
    try:
        return text.encode(charset)
    except UnicodeEncodeError:  # latin-1 has no "∀" (and a UTF-8 scan reads its brackets right anyway)
        return DEEP.encode(charset)


def settings_snapshot(user):
    from annotation.workspace.selectors import annotator_settings

    return annotator_settings(user)


@pytest.mark.parametrize("charset", OTHER_CHARSETS)
def test_a_json_body_in_a_charset_json_does_not_allow_is_refused_with_415_and_never_parsed(world, annotator, charset):
    client = client_for(annotator)
    before, saved = snapshot(), settings_snapshot(annotator)
    revision = world["revision"].pk
    for url, body in (
        ("/api/v1/me/workspace-settings/", read_two_ways(charset)),
        ("/api/v1/me/workspace-settings/", '{"replay_speed": "0.75", "pre_roll": 1.5}'.encode(charset)),
        (f"/api/v1/revisions/{revision}/", ('{"content": ' + DEEP + ', "version": 1}').encode(charset)),
    ):
        # PUT: the test client sends the bytes as they are
        response = client.put(url, body, content_type=f"application/json; charset={charset}")
        assert response.status_code == 415, (url, charset, response.status_code, response.content[:300])
        detail = response.json()["detail"]
        assert f"charset={charset}" in detail and "must be UTF-8" in detail and "RFC 8259" in detail, detail
    assert snapshot() == before and settings_snapshot(annotator) == saved


@pytest.mark.parametrize("declared", ["utf-8", "UTF-8", "utf8", None])
def test_a_json_body_declared_as_utf8_or_undeclared_is_read_as_usual(world, annotator, declared):
    content_type = "application/json" + (f"; charset={declared}" if declared else "")
    body = b'{"replay_speed": "0.75", "pre_roll": 1.5}'
    response = client_for(annotator).put("/api/v1/me/workspace-settings/", body, content_type=content_type)
    assert response.status_code == 200, response.content[:300]
    deep = client_for(annotator).put("/api/v1/me/workspace-settings/", DEEP.encode(), content_type=content_type)
    assert deep.status_code == 400 and "nested more than 32 levels" in deep.json()["detail"]


def test_the_parser_measures_the_text_it_parses_whatever_the_body_declares():
    """Without the middleware (a view called directly), the parser refuses the charset itself, and bytes that are
    not UTF-8 are a 400 that says so, not a decoding error or a RecursionError."""
    from io import BytesIO

    from rest_framework.exceptions import ParseError, UnsupportedMediaType

    from annotation.api.parsers import BoundedJSONParser

    parser = BoundedJSONParser()
    for charset in OTHER_CHARSETS:
        with pytest.raises(UnsupportedMediaType, match="must be UTF-8"):
            parser.parse(BytesIO(read_two_ways(charset)), f"application/json; charset={charset}", {"encoding": charset})
    with pytest.raises(ParseError, match="not valid UTF-8"):
        parser.parse(BytesIO('{"a": "Café"}'.encode("latin-1")), "application/json", {})
    with pytest.raises(ParseError, match="nested more than 32 levels"):
        parser.parse(BytesIO(DEEP.encode()), "application/json; charset=utf-8", {})
    assert parser.parse(BytesIO('{"a": "Café"}'.encode()), "application/json", {}) == {"a": "Café"}


def test_multipart_json_fields_in_another_charset_are_refused_before_they_are_decoded(world, project, lead):
    """Django decodes every multipart field with the request's charset: the speaker map's JSON is refused
    (415) for that charset before any field is decoded, and so is a page's form in another charset."""
    boundary = "charsetboundary"
    before = snapshot()
    for charset in ("utf-16-le", "cp037"):
        body = b"".join(
            f'--{boundary}\r\nContent-Disposition: form-data; name="{key}"\r\n\r\n'.encode() + value + b"\r\n"
            for key, value in (("scenario", b"couple"), ("group", b"g"), ("speaker_map", read_two_ways(charset)))
        )
        body += f'--{boundary}\r\nContent-Disposition: form-data; name="files"; filename="a.srt"\r\n\r\n'.encode() + SRT
        body += f"\r\n--{boundary}--\r\n".encode()
        response = client_for(lead).generic(  # generic: the bytes are sent as they are
            "POST",
            f"/api/v1/projects/{project.slug}/clips/",
            body,
            content_type=f"multipart/form-data; boundary={boundary}; charset={charset}",
        )
        assert response.status_code == 415, (charset, response.status_code, response.content[:300])
        assert "must be UTF-8" in response.json()["detail"]
    page = client_for(lead).generic(
        "POST",
        f"/projects/{project.slug}/ingest/",
        "scenario=couple&group=g".encode("utf-16-le"),
        content_type="application/x-www-form-urlencoded; charset=utf-16-le",
    )
    assert page.status_code == 415 and b"must be UTF-8" in page.content
    assert snapshot() == before
