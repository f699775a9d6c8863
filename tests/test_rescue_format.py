"""Lossless import/export of the RESCUE release format, and refusing bad input whole."""

import io
import json

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Assignment, Clip, ClipState, Cue, Draft, Gold, Revision, Row
from annotation.rescue_format.exporter import ExportSource, export_rescue
from annotation.rescue_format.importer import ImportFailed, import_rescue

from .builders.documents import couple_clip, family_clip, mutate
from .builders.documents import write_jsonl as write_documents

pytestmark = pytest.mark.django_db


def export_text(project, source="gold", **kwargs) -> str:
    out = io.StringIO()
    export_rescue(project, ExportSource.parse(source), out, **kwargs)
    return out.getvalue()


def write_jsonl(path, clips):
    return write_documents(path, clips, ensure_ascii=False)


@pytest.mark.parametrize("as_source", ["gold", "draft", "revision"])
def test_real_sample_round_trips_line_for_line(project, annotator, sample_path, tmp_path, as_source):
    user = annotator if as_source == "revision" else None
    call_command(
        "import_rescue",
        str(sample_path),
        project=project.slug,
        as_source=as_source,
        annotator=user.username if user else None,
        stdout=io.StringIO(),
    )
    out = tmp_path / "export.jsonl"
    source = f"revision:{user.username}" if user else as_source
    call_command("export_rescue", project=project.slug, source=source, output=str(out), stderr=io.StringIO())
    original = sample_path.read_bytes().decode("utf-8").splitlines()
    exported = out.read_bytes().decode("utf-8").splitlines()
    assert len(exported) == len(original) == 14
    for line_no, (a, b) in enumerate(zip(original, exported), start=1):
        assert a == b, f"line {line_no} differs"
    assert out.read_bytes() == sample_path.read_bytes()


def test_sample_import_records_the_five_evidence_warnings_on_their_rows(project, sample_path):
    result = import_rescue(sample_path, project)
    assert len(result.created) == 14 and result.rows == 406
    assert [(sid, i.code) for sid, i in result.warnings] == [
        (sid, "evidence_row_missing") for sid, _ in result.warnings
    ]
    assert len(result.warnings) == 5
    flagged = Gold.objects.exclude(warnings=[]).select_related("row__clip").order_by("row__clip__sample_id")
    assert flagged.count() == 5
    first = flagged.first()
    assert first.row.clip.sample_id == "alan_and_evelyn/003_s01e02_ct81_segment02" and first.row.row_index == 2
    assert first.warnings[0]["path"] == "relation_pattern_evidence_rows[0]"
    assert first.warnings[0]["severity"] == "warning"


def test_import_keeps_both_relation_keys_null_blank_and_mojibake(project, sample_path):
    import_rescue(sample_path, project)
    therapist = Gold.objects.filter(row__primary_speaker="Therapist").first()
    assert "relation_cycle_state" in therapist.content and "relation_pattern" in therapist.content
    client_keys = Gold.objects.exclude(row__primary_speaker="Therapist").first().content
    assert "relation_cycle_state" not in client_keys
    reasons = [g.content.get("relation_pattern_reason") for g in Gold.objects.all()]
    assert None in reasons
    assert any("\u00e2\u0080\u0099" in (r or "") for r in reasons), "mojibake kept byte for byte"


def test_import_creates_clip_rows_and_cues_with_state(project, sample_path):
    import_rescue(sample_path, project)
    clip = Clip.objects.get(sample_id="alan_and_evelyn/001_s01e01_ct25_segment04")
    assert clip.state == ClipState.ADJUDICATED
    assert clip.participants == ["Alan", "Evelyn"] and clip.group == "alan_and_evelyn"
    assert clip.rows.count() == clip.cues.count() == 16
    assert clip.duration == clip.rows.last().end_time
    assert len(clip.content_hash) == 64


def test_revision_import_assigns_the_annotator(project, annotator, sample_path):
    import_rescue(sample_path, project, as_source="revision", annotator=annotator)
    assert Assignment.objects.filter(annotator=annotator).count() == 14
    assert Revision.objects.filter(annotator=annotator).count() == 406


def test_draft_then_gold_attach_to_the_same_rows(project, tmp_path):
    path = write_jsonl(tmp_path / "c.jsonl", [couple_clip()])
    import_rescue(path, project, as_source="draft")
    result = import_rescue(path, project, as_source="gold")
    assert result.attached == ["maya_and_tobias/001_opening"]
    assert Row.objects.count() == 3 and Draft.objects.count() == Gold.objects.count() == 3


def test_different_rows_under_an_existing_sample_id_are_refused(project, tmp_path):
    import_rescue(write_jsonl(tmp_path / "a.jsonl", [couple_clip()]), project)
    changed = mutate(couple_clip(), lambda c: c["rows"][0].update(dialogue_cleaned="Something else."))
    with pytest.raises(ImportFailed, match="already exists with different rows"):
        import_rescue(write_jsonl(tmp_path / "b.jsonl", [changed]), project)


def test_folder_of_json_and_jsonl_files(project, tmp_path):
    (tmp_path / "one.json").write_text(json.dumps(couple_clip()), encoding="utf-8")
    write_jsonl(tmp_path / "more.jsonl", [family_clip()])
    result = import_rescue(tmp_path, project)
    assert sorted(result.created) == ["maya_and_tobias/001_opening", "okafor_family/001_dinner"]


def test_export_skips_clips_the_source_does_not_fully_cover(project, tmp_path):
    import_rescue(write_jsonl(tmp_path / "c.jsonl", [couple_clip(), family_clip()]), project)
    Gold.objects.filter(row__clip__sample_id="okafor_family/001_dinner", row__row_index=2).delete()
    out = io.StringIO()
    result = export_rescue(project, ExportSource("gold"), out)
    assert result.skipped == ["okafor_family/001_dinner"] and result.clips == 1
    assert json.loads(out.getvalue())["sample_id"] == "maya_and_tobias/001_opening"


def test_clip_from_the_platform_exports_in_the_regular_convention(project, tmp_path):
    doc = family_clip()
    import_rescue(write_jsonl(tmp_path / "f.jsonl", [doc]), project)
    Gold.objects.update(layout={})  # as documents made on the platform have
    row = json.loads(export_text(project))["rows"][4]
    assert list(row)[:15] == [
        "start_time",
        "end_time",
        "primary_speaker",
        "target",
        "dialogue_cleaned",
        "utterance_type",
        "background_dialogue",
        "tone_of_voice",
        "body_posture",
        "facial_expressions",
        "self_directed_behavior",
        "interaction_behavior",
        "internal_emotion",
        "viewpoints_attitudes",
        "support_strategy",
    ]
    assert list(row)[15:] == [
        "relation_cycle_state",
        "relation_cycle_reason",
        "row_index",
        "relation_pattern",
        "relation_pattern_reason",
        "relation_pattern_evidence_rows",
    ]


# --- bad input: one clear message, nothing written ---------------------------------


def _db_counts():
    return tuple(m.objects.count() for m in (Clip, Row, Cue, Gold, Draft, Revision, Assignment))


def _bad_inputs(tmp_path):
    good = couple_clip()
    second = couple_clip("maya_and_tobias/002_later")
    lines = [json.dumps(good), json.dumps(second)]
    return {
        "truncated JSON": (
            "t.jsonl",
            (lines[0] + "\n" + lines[1][:200] + "\n").encode(),
            ["t.jsonl", "line 2", "invalid JSON"],
        ),
        "wrong type": (
            "w.jsonl",
            (
                lines[0] + "\n" + json.dumps(mutate(second, lambda c: c["rows"][1].update(end_time="late"))) + "\n"
            ).encode(),
            [
                "w.jsonl",
                "line 2",
                "sample maya_and_tobias/002_later",
                "row 2",
                "field rows[1].end_time",
                "must be a number of seconds",
            ],
        ),
        "unknown label": (
            "l.jsonl",
            (
                json.dumps(mutate(good, lambda c: c["rows"][1]["support_strategy"][0].update(strategy_type="soothing")))
                + "\n"
            ).encode(),
            [
                "l.jsonl",
                "line 1",
                "sample maya_and_tobias/001_opening",
                "row 2",
                "field rows[1].support_strategy[0].strategy_type",
                "'soothing' is not a support strategy",
            ],
        ),
        "entity not in the clip": (
            "e.jsonl",
            (
                lines[0] + "\n" + json.dumps(mutate(second, lambda c: c["rows"][2].update(target=["Grandpa"]))) + "\n"
            ).encode(),
            [
                "e.jsonl",
                "line 2",
                "sample maya_and_tobias/002_later",
                "row 3",
                "field rows[2].target[0]",
                "'Grandpa' is not a person of this clip",
            ],
        ),
        "duplicate sample id": (
            "d.jsonl",
            (lines[0] + "\n" + lines[1] + "\n" + lines[0] + "\n").encode(),
            [
                "d.jsonl",
                "line 3",
                "sample maya_and_tobias/001_opening",
                "field sample_id",
                "duplicate sample id (first seen in",
                "line 1)",
            ],
        ),
        "non-UTF-8 file": (
            "n.jsonl",
            (lines[0] + "\n").encode().replace(b"I keep", "Caf\u00e9".encode("cp1252"), 1),
            ["n.jsonl", "line 1", "not valid UTF-8"],
        ),
        "empty file": ("z.jsonl", b"", ["z.jsonl", "file is empty"]),
        "missing key": (
            "m.json",
            json.dumps(mutate(good, lambda c: c["rows"][0].pop("target")), indent=2).encode(),
            ["m.json", "line 1", "row 1", "field rows[0].target", "required but missing"],
        ),
        "unknown scenario": (
            "s.jsonl",
            (json.dumps({**good, "scenario": "friends"}) + "\n").encode(),
            ["s.jsonl", "line 1", "field scenario", "unknown scenario 'friends'"],
        ),
        "not a clip object": ("x.jsonl", b"[1, 2, 3]\n", ["x.jsonl", "line 1", "a clip must be a JSON object"]),
    }


@pytest.mark.parametrize(
    "case",
    [
        "truncated JSON",
        "wrong type",
        "unknown label",
        "entity not in the clip",
        "duplicate sample id",
        "non-UTF-8 file",
        "empty file",
        "missing key",
        "unknown scenario",
        "not a clip object",
    ],
)
def test_bad_input_is_refused_with_one_clear_message_and_nothing_written(project, tmp_path, case):
    import_rescue(write_jsonl(tmp_path / "existing.jsonl", [family_clip()]), project)
    before = _db_counts()
    name, content, expected = _bad_inputs(tmp_path)[case]
    path = tmp_path / "bad" / name
    path.parent.mkdir()
    path.write_bytes(content)
    with pytest.raises(CommandError) as excinfo:
        call_command("import_rescue", str(path), project=project.slug, stdout=io.StringIO())
    message = str(excinfo.value)
    assert message.startswith("import refused, nothing was written:")
    problem_lines = message.splitlines()[1:]
    assert len(problem_lines) == 1, message
    for fragment in expected:
        assert fragment in problem_lines[0], (fragment, problem_lines[0])
    assert _db_counts() == before


def test_a_failure_late_in_the_batch_rolls_back_the_whole_import(project, tmp_path, monkeypatch):
    """Even an error raised while writing (after validation) leaves nothing behind."""
    from annotation.rescue_format import importer

    path = write_jsonl(tmp_path / "two.jsonl", [couple_clip(), family_clip()])
    real = importer._create_clip
    calls = []

    def failing(project, item, as_source):
        calls.append(item)
        if len(calls) == 2:
            raise RuntimeError("disk full")
        return real(project, item, as_source)

    monkeypatch.setattr(importer, "_create_clip", failing)
    with pytest.raises(RuntimeError):
        import_rescue(path, project)
    assert _db_counts() == (0, 0, 0, 0, 0, 0, 0)


def test_import_command_argument_errors(project, annotator, sample_path):
    with pytest.raises(CommandError, match="no project 'nope'"):
        call_command("import_rescue", str(sample_path), project="nope")
    with pytest.raises(CommandError, match="--as revision needs --annotator"):
        call_command("import_rescue", str(sample_path), project=project.slug, as_source="revision")
    with pytest.raises(CommandError, match="no user named 'ghost'"):
        call_command("import_rescue", str(sample_path), project=project.slug, as_source="revision", annotator="ghost")
    with pytest.raises(CommandError, match="unknown source 'everything'"):
        call_command("export_rescue", project=project.slug, source="everything", output="-")


def test_import_is_audited_with_its_source(project, sample_path):
    from annotation.audit import audit_source

    with audit_source("cli"):
        import_rescue(sample_path, project)
    history = Gold.history.all()
    assert history.count() == 406
    assert set(history.values_list("history_source", flat=True)) == {"cli"}
    assert set(history.values_list("history_type", flat=True)) == {"+"}
