"""Released data stays released, and every import leaves a record.

Each file import_rescue reads is recorded (kind, file and its SHA-256, who, when,
annotator, clips and rows). Gold onto a clip that is in a release is refused unless a
lead imports it as a correction; the correction records what it changed, the next
release's card and diff_releases list the corrected clips, rows and task instances,
and verify_release checks any copy of a release against the database record it names.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import stat
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse
from django.utils import timezone

from annotation.models import Gold, ImportRecord, ImportRecordImmutable
from annotation.releases.freeze import freeze
from annotation.releases.manifest import MANIFEST, sha256
from annotation.rescue_format.importer import ImportFailed, import_rescue

from .builders.documents import couple_clip, mutate, write_jsonl

pytestmark = pytest.mark.django_db

GROUPS = ("maya_and_tobias", "ana_and_ben", "lea_and_sam")


def run(*args) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def clips() -> list[dict]:
    return [couple_clip(f"{group}/001_opening") for group in GROUPS]


def gold_contents(project) -> dict:
    return {
        (g.row.clip.sample_id, g.row.row_index): g.content
        for g in Gold.objects.filter(row__clip__project=project).select_related("row__clip")
    }


def read_instances(folder: Path) -> dict[str, dict]:
    """{instance id: instance} over every task file of a release folder (read with json, line by line)."""
    out = {}
    for path in sorted((folder / "tasks").rglob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            instance = json.loads(line)
            out[instance["id"]] = instance
    return out


# --- import records ----------------------------------------------------------------------


def test_every_kind_of_import_records_its_file_who_when_and_what(project, tmp_path, lead, annotator):
    docs = clips()
    draft = write_jsonl(tmp_path / "drafts.jsonl", docs)
    before = timezone.now()
    run("import_rescue", str(draft), "--project", project.slug, "--as", "draft", "--by", lead.username)
    folder = tmp_path / "ann1"
    folder.mkdir()
    write_jsonl(folder / "a.jsonl", docs[:2])
    write_jsonl(folder / "b.jsonl", docs[2:])
    out = run(
        "import_rescue", str(folder), "--project", project.slug, "--as", "revision", "--annotator", annotator.username
    )
    gold = write_jsonl(tmp_path / "gold.jsonl", docs)
    import_rescue(gold, project, actor=lead)

    records = list(ImportRecord.objects.filter(project=project))
    expected = [
        ("draft", draft, None, lead, [d["sample_id"] for d in docs], 9),
        ("revision", folder / "a.jsonl", annotator, None, [d["sample_id"] for d in docs[:2]], 6),
        ("revision", folder / "b.jsonl", annotator, None, [docs[2]["sample_id"]], 3),
        ("gold", gold, None, lead, [d["sample_id"] for d in docs], 9),
    ]
    assert [
        (r.kind, Path(r.file_path), r.annotator, r.imported_by, r.sample_ids, r.row_count) for r in records
    ] == expected
    for record, (_, path, *_rest) in zip(records, expected):
        assert record.sha256 == hashlib.sha256(path.read_bytes()).hexdigest() and record.file_name == path.name
        assert before <= record.created_at <= timezone.now() and record.source == (
            "system" if record.kind == "gold" else "cli"
        )
    assert records[0].created_sample_ids == [d["sample_id"] for d in docs] and records[3].created_sample_ids == []
    assert records[1].assignments_created == [d["sample_id"] for d in docs[:2]]  # the import made those assignments
    assert f"recorded: {folder / 'a.jsonl'} (sha256 {records[1].sha256}), 2 clips, 6 rows" in out
    with pytest.raises(ImportRecordImmutable):
        records[0].save()
    with pytest.raises(ImportRecordImmutable):
        ImportRecord.objects.filter(pk=records[0].pk).update(file_path="elsewhere")


def test_a_refused_import_leaves_no_record(project, tmp_path):
    bad = write_jsonl(
        tmp_path / "bad.jsonl", [mutate(couple_clip(), lambda d: d["rows"][0].update(target=["Grandpa"]))]
    )
    with pytest.raises(ImportFailed):
        import_rescue(bad, project)
    assert not ImportRecord.objects.exists() and not project.clips.exists()


# --- released gold -----------------------------------------------------------------------


@pytest.fixture
def released(project, tmp_path):
    """Three couples imported as gold and frozen as release 1.0.0."""
    import_rescue(write_jsonl(tmp_path / "gold.jsonl", clips()), project)
    freeze(project, version="1.0.0", seed=1, out_dir=tmp_path / "v1", accept_incomplete=("couple",))  # one couple
    return project


def corrected_file(tmp_path: Path) -> Path:
    """The second couple with a different tone on row 1 and another strategy on row 2 (therapist)."""
    doc = couple_clip(f"{GROUPS[1]}/001_opening")
    doc["rows"][0]["tone_of_voice"] = "flat"
    doc["rows"][1]["support_strategy"][0]["strategy_type"] = "safeguard"
    return write_jsonl(tmp_path / "fix.jsonl", [doc])


def test_gold_onto_a_released_clip_is_refused_and_nothing_changes(released, tmp_path, lead, annotator):
    before = gold_contents(released)
    path = corrected_file(tmp_path)
    with pytest.raises(CommandError) as refused:
        run("import_rescue", str(path), "--project", released.slug)
    message = str(refused.value)
    assert "import refused, nothing was written" in message and f"sample {GROUPS[1]}/001_opening" in message
    assert "in release 1.0.0" in message and "--correct-released" in message
    with pytest.raises(CommandError, match="needs --by USERNAME of a lead"):
        run("import_rescue", str(path), "--project", released.slug, "--correct-released")
    with pytest.raises(CommandError, match="needs --by USERNAME of a lead"):
        run("import_rescue", str(path), "--project", released.slug, "--correct-released", "--by", annotator.username)
    with pytest.raises(CommandError, match="goes with --as gold"):
        run(
            "import_rescue",
            str(path),
            "--project",
            released.slug,
            "--as",
            "draft",
            "--correct-released",
            "--by",
            lead.username,
        )
    assert gold_contents(released) == before and ImportRecord.objects.filter(project=released).count() == 1
    # Drafts and revisions of a released clip are closed too: the release's agreement figures come from them.
    for kind in (["--as", "draft"], ["--as", "revision", "--annotator", annotator.username]):
        with pytest.raises(CommandError, match=f"in release 1.0.0; a released clip takes no more {kind[1]}s"):
            run("import_rescue", str(path), "--project", released.slug, *kind)
    assert ImportRecord.objects.filter(project=released).count() == 1


def test_a_correction_is_recorded_and_the_next_release_lists_it(released, tmp_path, lead, client):
    path = corrected_file(tmp_path)
    out = run("import_rescue", str(path), "--project", released.slug, "--correct-released", "--by", lead.username)
    sample_id = f"{GROUPS[1]}/001_opening"
    assert f"corrected {sample_id} (in release 1.0.0): 2 rows changed: 1 (tone_of_voice), 2 (support_strategy)" in out
    record = ImportRecord.objects.filter(project=released).latest("id")
    assert (record.kind, record.imported_by, record.file_name) == ("gold", lead, "fix.jsonl")
    assert record.correction == {
        "clips": [
            {
                "sample_id": sample_id,
                "releases": ["1.0.0"],
                "rows": [
                    {"row_index": 1, "fields": ["tone_of_voice"]},
                    {"row_index": 2, "fields": ["support_strategy"]},
                ],
            }
        ],
        "rows_changed": 2,
    }

    freeze(released, version="1.1.0", seed=1, out_dir=tmp_path / "v2", accept_incomplete=("couple",))  # one couple
    diff = json.loads(run("diff_releases", "1.0.0", "1.1.0", "--project", released.slug, "--json"))
    [correction] = diff["corrections"]
    assert correction == {
        "file": "fix.jsonl",
        "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
        "date": record.created_at.date().isoformat(),
        "by": lead.username,
        "releases": ["1.0.0"],
        "clips": [{"sample_id": sample_id, "rows": [1, 2]}],
        "rows_changed": 2,
    }
    [changed] = diff["clips_changed"]
    assert (changed["sample_id"], changed["rows"], changed["fields"]) == (
        sample_id,
        [1, 2],
        {"support_strategy": 1, "tone_of_voice": 1},
    )
    # The task instances that changed, found here by reading both releases' task files line by line.
    a, b = read_instances(tmp_path / "v1"), read_instances(tmp_path / "v2")
    expected = {}
    for instance_id in sorted(set(a) | set(b)):
        if a.get(instance_id) != b.get(instance_id):
            kind = "added" if instance_id not in a else "removed" if instance_id not in b else "changed"
            expected.setdefault(instance_id.split(":", 1)[0], {"added": [], "removed": [], "changed": []})[kind].append(
                instance_id
            )
    assert expected and diff["instances_changed"] == expected
    assert expected["ssp"]["changed"] == [f"ssp:{sample_id}:2"] and b[f"ssp:{sample_id}:2"]["gold"] == "safeguard"

    text = run("diff_releases", str(tmp_path / "v1"), str(tmp_path / "v2"))
    assert f"corrected gold (recorded {correction['date']} by {lead.username}, from fix.jsonl" in text
    assert (
        f"  {sample_id}: 2 rows changed (3 -> 3 rows): rows 1, 2" in text and f"    changed: ssp:{sample_id}:2" in text
    )
    card = (tmp_path / "v2" / "README.md").read_text(encoding="utf-8")
    assert (
        f"Gold already released in 1.0.0 was corrected on {correction['date']} by {lead.username} from `fix.jsonl` "
        f"(SHA-256 `{correction['sha256'][:12]}…`): 1 clip, 2 rows changed." in card
    )
    # The compare page and the API say the same.
    client.force_login(lead)
    page = client.get(reverse("releases-diff", args=[released.slug]), {"a": "1.0.0", "b": "1.1.0"}).content.decode()
    assert "Corrections of released gold" in page and "fix.jsonl" in page and f"{sample_id} (rows 1, 2)" in page
    assert "Task instances that changed" in page and f"ssp:{sample_id}:2" in page
    assert client.get(f"/api/v1/projects/{released.slug}/releases/diff/", {"a": "1.0.0", "b": "1.1.0"}).json() == diff
    # A later release that changes nothing lists no correction again.
    freeze(released, version="1.2.0", seed=1, out_dir=tmp_path / "v3", accept_incomplete=("couple",))  # one couple
    later = json.loads(run("diff_releases", "1.1.0", "1.2.0", "--project", released.slug, "--json"))
    assert later["corrections"] == [] and later["instances_changed"] == {} and later["clips_changed"] == []


def _make_writable(folder: Path, *names: str) -> None:
    os.chmod(folder, stat.S_IRWXU)
    for name in names:
        os.chmod(folder / name, stat.S_IRUSR | stat.S_IWUSR)


def test_verify_release_checks_a_copy_against_the_database_record(released, tmp_path):
    copy = tmp_path / "elsewhere" / "copy"
    shutil.copytree(tmp_path / "v1", copy)
    out = run("verify_release", str(copy))
    assert (
        f"and the database record of release 1.0.0 of {released.slug}, frozen into {(tmp_path / 'v1').resolve()}" in out
    )
    # A copy whose file and manifest entry were both edited is consistent with itself, not with the record.
    _make_writable(copy, "stats.json", MANIFEST)
    (copy / "stats.json").write_text("{}\n")
    manifest = json.loads((copy / MANIFEST).read_text())
    manifest["files"]["stats.json"] = {"sha256": sha256(b"{}\n"), "bytes": 3}
    (copy / MANIFEST).write_text(json.dumps(manifest))
    with pytest.raises(CommandError, match="manifest.json differs from the release's database record"):
        run("verify_release", str(copy))
    # A release this database never recorded is checked against its own manifest, and says so.
    manifest["release"]["version"] = "9.9.9"
    (copy / MANIFEST).write_text(json.dumps(manifest))
    out = run("verify_release", str(copy))
    assert f"this database has no record of release 9.9.9 of {released.slug}" in out


def test_a_correction_replaces_only_the_rows_it_changes_and_keeps_the_others_decisions(released, tmp_path, lead):
    """Review of §6: a correction of one row made every other row of the clip look imported (its decisions gone)."""
    sample_id = f"{GROUPS[1]}/001_opening"
    decided = {"tone_of_voice": {"source": "edit", "by": lead.username, "at": "2026-11-30T10:00:00+00:00", "note": ""}}
    Gold.objects.filter(row__clip__sample_id=sample_id).update(decisions=decided, decided_by=lead)
    untouched_before = {
        g.row.row_index: (g.pk, g.content)
        for g in Gold.objects.filter(row__clip__sample_id=sample_id).select_related("row")
    }
    run(
        "import_rescue",
        str(corrected_file(tmp_path)),
        "--project",
        released.slug,
        "--correct-released",
        "--by",
        lead.username,
    )
    after = {g.row.row_index: g for g in Gold.objects.filter(row__clip__sample_id=sample_id).select_related("row")}
    assert set(after) == set(untouched_before)
    for index, gold in after.items():
        if index in (1, 2):  # the corrected rows: the file's gold, recorded as imported
            assert gold.decisions == {} and gold.note == "imported"
        else:  # every other row keeps its gold document and its adjudication record
            assert (gold.pk, gold.content, gold.decisions) == (*untouched_before[index], decided)


def test_a_release_reproduces_byte_for_byte_after_later_work_in_the_project(released, tmp_path, annotator):
    """Review of §7: the card's database facts are those of freeze time, whatever the project did since."""
    from annotation.models import Release
    from annotation.releases.freeze import reproduce

    import_rescue(
        write_jsonl(tmp_path / "more.jsonl", [couple_clip("zoe_and_kai/001_opening")]), released, as_source="draft"
    )
    released.clips.filter(sample_id="zoe_and_kai/001_opening").update(state="discarded")
    _, result = reproduce(Release.objects.get(project=released, version="1.0.0"), tmp_path / "again")
    assert result.ok, (result.changed, result.problems)
