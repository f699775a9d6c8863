"""Hostile text (HTML, JavaScript URLs, template syntax, SQL, very long strings) is
stored verbatim and shown inert on every page that displays it."""

import io
import json

import pytest

from annotation.rescue_format.exporter import ExportSource, export_rescue
from annotation.rescue_format.importer import import_rescue
from annotation.services import ServiceError
from annotation.starting import start_assignment
from annotation.workspace.services import add_comment

from .builders.documents import couple_clip

pytestmark = pytest.mark.django_db

PAYLOADS = [
    "<script>alert('x')</script>",
    '<img src=x onerror="alert(1)">',
    "javascript:alert(document.cookie)",
    "{{ settings.SECRET_KEY }} {% debug %}",
    "'; DROP TABLE annotation_clip; --",
    "Robert'); DELETE FROM auth_user WHERE ('1'='1",
]


@pytest.fixture
def hostile_clip(project, annotator, lead, tmp_path):
    doc = couple_clip()
    for i, payload in enumerate(PAYLOADS[:3]):
        doc["rows"][i]["dialogue_cleaned"] = payload
    doc["rows"][0]["tone_of_voice"] = PAYLOADS[3]
    doc["rows"][1]["support_strategy"][0]["strategy_content"] = PAYLOADS[4]
    doc["rows"][2]["dialogue_cleaned"] += " " + "long " * 20_000
    doc["source_file"] = PAYLOADS[5]
    path = tmp_path / "h.jsonl"
    path.write_text(json.dumps(doc, ensure_ascii=False) + "\n", encoding="utf-8")
    import_rescue(path, project, as_source="draft")
    clip = project.clips.get()
    start_assignment(clip, annotator)
    add_comment(clip, annotator, PAYLOADS[1] + PAYLOADS[3], row=clip.rows.first())
    add_comment(clip, lead, PAYLOADS[0])
    return clip, doc


def test_hostile_text_round_trips_verbatim(hostile_clip, project):
    clip, doc = hostile_clip
    out = io.StringIO()
    export_rescue(project, ExportSource("draft"), out)
    assert json.loads(out.getvalue()) == doc


@pytest.mark.parametrize("who", ["annotator", "lead"])
def test_pages_escape_hostile_text(hostile_clip, client, annotator, lead, project, who):
    clip, _ = hostile_clip
    client.force_login(annotator if who == "annotator" else lead)
    urls = [f"/work/clips/{clip.pk}/", "/work/", f"/projects/{project.slug}/"]
    if who == "lead":
        urls += [
            f"/adjudication/clips/{clip.pk}/",
            f"/projects/{project.slug}/adjudication/",
            f"/projects/{project.slug}/assignments/",
        ]
    for url in urls:
        page = client.get(url).content.decode()
        assert "<script>alert" not in page, url
        assert 'onerror="alert' not in page, url
        assert "dev-only-insecure-secret" not in page and "SECRET_KEY" not in page.replace("settings.SECRET_KEY", ""), (
            url
        )
    # the embedded editor data is JSON with <, > and & escaped: inert inside the page
    page = client.get(f"/work/clips/{clip.pk}/").content.decode()
    assert "\\u003Cscript\\u003Ealert" in page


def test_over_long_comments_are_refused_with_a_message(hostile_clip, annotator):
    clip, _ = hostile_clip
    with pytest.raises(ServiceError, match="10,000 characters"):
        add_comment(clip, annotator, "x" * 10_001)
