"""manage.py ingest: files and folders, per-file output, exit status, speaker maps."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Clip

pytestmark = pytest.mark.django_db
CORPUS = Path(__file__).resolve().parent / "ingest_corpus"


def run(*args) -> str:
    out = io.StringIO()
    call_command("ingest", *args, stdout=out)
    return out.getvalue()


@pytest.fixture
def folder(tmp_path):
    """A folder of transcripts laid out as <group>/<clip>.<ext>."""
    root = tmp_path / "incoming"
    (root / "maya_and_tobias").mkdir(parents=True)
    for name in ("001_clean.srt", "008_voices.vtt", "010_table.csv"):
        shutil.copy(CORPUS / "maya_and_tobias" / name, root / "maya_and_tobias" / name)
    (root / "maya_and_tobias" / "notes.docx").write_bytes(b"ignored: not a transcript type")
    return root


def test_ingests_a_folder_and_prints_a_line_per_file(project, folder):
    out = run(str(folder), "--project", project.slug, "--scenario", "couple")
    assert (
        "created   maya_and_tobias/001_clean  (4 cues, speakers to confirm)  <- incoming/maya_and_tobias/001_clean.srt"
        in out
    )
    assert "3 created, 0 unchanged, 0 replaced, 0 refused" in out
    assert sorted(Clip.objects.values_list("sample_id", flat=True)) == [
        "maya_and_tobias/001_clean",
        "maya_and_tobias/008_voices",
        "maya_and_tobias/010_table",
    ]
    assert set(Clip.history.values_list("history_source", flat=True)) == {"cli"}


def test_running_again_reports_unchanged(project, folder):
    run(str(folder), "--project", project.slug, "--scenario", "couple")
    out = run(str(folder / "maya_and_tobias" / "001_clean.srt"), "--project", project.slug, "--scenario", "couple")
    assert out.startswith("unchanged maya_and_tobias/001_clean") and Clip.objects.count() == 3


def test_exits_non_zero_when_any_file_is_refused_after_ingesting_the_rest(project, folder):
    shutil.copy(CORPUS / "refused" / "backwards.srt", folder / "maya_and_tobias" / "009_backwards.srt")
    out = io.StringIO()
    with pytest.raises(CommandError, match="1 of 4 files refused"):
        call_command("ingest", str(folder), "--project", project.slug, "--scenario", "couple", stdout=out)
    assert "refused   incoming/maya_and_tobias/009_backwards.srt, line 10: time goes backwards" in out.getvalue()
    assert Clip.objects.count() == 3


def test_rolling_captions_are_collapsed_and_the_command_says_so(project):
    out = run(
        str(CORPUS / "rolling" / "001_auto_captions.vtt"),
        "--project",
        project.slug,
        "--scenario",
        "couple",
        "--participants",
        "Maya,Tobias",
    )
    lines = out.splitlines()
    assert (
        lines[0]
        == "created   rolling/001_auto_captions  (3 cues, speakers to confirm)  <- rolling/001_auto_captions.vtt"
    )
    assert lines[1].strip() == (
        "rolling auto-captions: 5 cues, each repeating the line before it, collapsed into 3 lines (word timings "
        "kept in this report)"
    )
    assert Clip.objects.get().cues.count() == 3


def test_speaker_map_file_confirms_and_participants_option(project, tmp_path):
    mapping = tmp_path / "speakers.json"
    mapping.write_text(json.dumps({"SPEAKER_00": "Therapist", "SPEAKER_01": "Maya", "SPEAKER_02": "Tobias", "": ""}))
    out = run(
        str(CORPUS / "maya_and_tobias" / "012_diarised.json"),
        "--project",
        project.slug,
        "--scenario",
        "couple",
        "--participants",
        "Maya,Tobias",
        "--speaker-map",
        str(mapping),
    )
    assert "speakers confirmed" in out
    clip = Clip.objects.get()
    assert clip.speaker_map_confirmed and clip.participants == ["Maya", "Tobias"]


def test_replace_option_replaces_a_changed_untouched_clip(project, tmp_path):
    path = tmp_path / "g" / "a.srt"
    path.parent.mkdir()
    path.write_bytes(b"1\n00:00:00,000 --> 00:00:02,000\nMaya: Hello.\n")
    run(str(path), "--project", project.slug, "--scenario", "couple")
    path.write_bytes(b"1\n00:00:00,000 --> 00:00:02,000\nMaya: Hello again.\n")
    with pytest.raises(CommandError, match="1 of 1 files refused"):
        run(str(path), "--project", project.slug, "--scenario", "couple")
    assert run(str(path), "--project", project.slug, "--scenario", "couple", "--replace").startswith("replaced  g/a")
    assert list(Clip.objects.get().cues.values_list("text", flat=True)) == ["Hello again."]


def test_family_scenario_and_media_beside_the_transcript(project, tmp_path):
    group = tmp_path / "okafor_family"
    group.mkdir()
    shutil.copy(CORPUS / "okafor_family" / "001_dinner.srt", group / "001_dinner.srt")
    (group / "001_dinner.mp4").write_bytes(b"\x00\x00\x00\x18ftypmp42")
    run(str(group), "--project", project.slug, "--scenario", "family")
    clip = Clip.objects.get()
    assert clip.scenario == "family" and clip.speaker_map["ALL"] == "Family" and clip.media.name.endswith(".mp4")


@pytest.mark.parametrize(
    "args, words",
    [
        (["--project", "nope", "--scenario", "couple"], "no project 'nope'"),
        (["--project", "bench", "--scenario", "couple", "--speaker-map", "/nonexistent.json"], "--speaker-map"),
        (["--project", "bench", "--scenario", "couple", "--participants", "Maya,Therapist"], "reserved"),
    ],
)
def test_bad_arguments_stop_before_anything_is_written(project, folder, args, words):
    with pytest.raises(CommandError, match=words):
        run(str(folder), *args)
    assert Clip.objects.count() == 0


def test_a_missing_path_is_an_error(project):
    with pytest.raises(CommandError, match="no such file or folder"):
        run("/nonexistent/folder", "--project", project.slug, "--scenario", "couple")
