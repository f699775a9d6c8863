"""Freezing a release: the files, byte-identical re-freezes, verification, Croissant and
Hugging Face loading, the clips it takes, diffs between versions."""

import io
import json
import logging
import os
import stat
import sys
import tempfile
from collections import defaultdict
from functools import partial
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from annotation.groups import path_group
from annotation.models import Clip, ClipState, Gold, Release
from annotation.releases import figures
from annotation.releases.agreement_report import agreement_document
from annotation.releases.figures import release_figures
from annotation.releases.freeze import FreezeError, build_release, freeze, recorded_figure_style, reproduce
from annotation.releases.manifest import MANIFEST, sha256, verify
from annotation.rescue_format.importer import import_rescue
from annotation.services import transition
from annotation.synthetic import generate

# The datasets library reads these when it is imported: offline, with a private cache.
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HOME", tempfile.mkdtemp(prefix="hf-home-"))

pytestmark = pytest.mark.django_db

TASKS = ("itp", "rpp", "stp", "ssp", "er", "vp", "rpp_any_speaker")
# The real sample holds two couples: too few groups for three splits, so its freezes accept that.
TWO_COUPLES = ("couple",)


@pytest.fixture
def synthetic(project):
    """20 adjudicated synthetic clips (18 couple, 2 family) with two annotators' revisions."""
    generate(project, clips=20, annotators=2, seed=3)
    return project


@pytest.fixture
def sample(project, sample_path):
    """The 14 real clips of the public release, imported as adjudicated gold."""
    import_rescue(sample_path, project)
    return project


def run(*args):
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_the_real_sample_freezes_and_its_data_lines_equal_the_input_lines(sample, sample_path, tmp_path):
    project = sample
    out = tmp_path / "sample-release"
    # Two couples cannot fill three splits: refused, naming the scenario, until the lead accepts it.
    with pytest.raises(
        CommandError,
        match=(
            r"scenario couple has 2 relationship groups \(alan_and_evelyn, alexes_and_casimar\) for 3 splits: it "
            r"would have no validation split"
        ),
    ):
        run("freeze_release", "--project", project.slug, "--version", "0.1.0", "--seed", "1", "-o", str(out))
    assert (
        not out.exists()
        and not Release.objects.exists()
        and set(project.clips.values_list("state", flat=True)) == {ClipState.ADJUDICATED}
    )
    printed = run(
        "freeze_release",
        "--project",
        project.slug,
        "--version",
        "0.1.0",
        "--seed",
        "1",
        "--accept-incomplete",
        "couple",
        "-o",
        str(out),
    )
    assert "14 clips, 406 rows" in printed and "scenario couple does not reach every split" in printed
    card = (out / "README.md").read_text(encoding="utf-8")
    title = card.index("\n# ")
    assert (
        card[title:]
        .split("\n\n")[1]
        .startswith(
            "> **Incomplete splits.** In this release the **couple** scenario has 2 relationship groups and therefore "
            "no validation split"
        )
    )
    assert json.loads((out / MANIFEST).read_text())["inputs"]["accepted_incomplete"] == ["couple"]
    source = sample_path.read_text(encoding="utf-8").splitlines()
    assert (out / "data" / "all.jsonl").read_text(encoding="utf-8").splitlines() == source
    in_splits = sorted(
        line
        for s in ("train", "validation", "test")
        for line in (out / "data" / f"{s}.jsonl").read_text(encoding="utf-8").splitlines()
    )
    assert in_splits == sorted(source)
    # Two couples: each split file holds whole couples only.
    assert {
        path_group(json.loads(line)["sample_id"])
        for line in (out / "data" / "train.jsonl").read_text(encoding="utf-8").splitlines()
    } in ({"alan_and_evelyn"}, {"alexes_and_casimar"})
    assert set(project.clips.values_list("state", flat=True)) == {ClipState.RELEASED}
    rpp = read_jsonl(out / "tasks" / "rpp" / "train.jsonl") + read_jsonl(out / "tasks" / "rpp" / "test.jsonl")
    # The default profile, rescue-v1: relation_cycle_state lives on therapist rows, and an RPP instance's context is
    # every
    # row before the labelled one, without it (the public code's default), background dialogue included.
    speakers = {
        (c["sample_id"], r["row_index"]): r["primary_speaker"] for c in map(json.loads, source) for r in c["rows"]
    }
    assert rpp and all(speakers[i["clip_id"], i["row_index"]] == "Therapist" for i in rpp)
    assert all(
        [r["row_index"] for r in i["context"]] == list(range(1, i["row_index"]))
        and all("background_dialogue" in r for r in i["context"])
        for i in rpp
    )
    assert json.loads((out / MANIFEST).read_text())["task_profile"]["name"] == "rescue-v1"


def test_freeze_writes_the_whole_release_read_only_and_records_it(synthetic, lead, tmp_path):
    out = tmp_path / "r1"
    release, built = freeze(synthetic, version="1.0.0", seed=1, out_dir=out, user=lead)
    expected = {"README.md", "agreement.json", "croissant.json", "stats.json", MANIFEST}
    expected |= {f"data/{s}.jsonl" for s in ("all", "train", "validation", "test")}
    expected |= {f"tasks/{t}/{s}.jsonl" for t in TASKS for s in ("train", "validation", "test")}
    on_disk = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()}
    assert expected <= on_disk and any(p.startswith("figures/") and p.endswith(".png") for p in on_disk)
    manifest = json.loads((out / MANIFEST).read_text())
    assert set(manifest["files"]) == on_disk - {MANIFEST}
    for rel, entry in manifest["files"].items():
        data = (out / rel).read_bytes()
        assert entry == {"sha256": sha256(data), "bytes": len(data)}
    for path in out.rglob("*"):
        assert not path.stat().st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH), path
    inputs = manifest["inputs"]
    assert (
        inputs["project"],
        inputs["seed"],
        inputs["split_ratios"],
        inputs["taxonomy_version"],
        inputs["rule_version"],
    ) == (synthetic.slug, 1, {"train": 0.7, "validation": 0.1, "test": 0.2}, "2", "2")
    assert len(manifest["clips"]) == 20 and manifest["tasks"]["itp"]["all"]["all"]["instances"] > 0
    assert (release.path, release.manifest, release.created_by, release.seed) == (str(out.resolve()), manifest, lead, 1)
    assert set(synthetic.clips.values_list("state", flat=True)) == {ClipState.RELEASED}
    clip = synthetic.clips.first()
    record = (
        clip.history.first()
    )  # the state change is audited: one historical record per clip, with the reason and who froze
    assert (record.history_change_reason, record.history_user, record.history_type, record.state) == (
        "frozen in release 1.0.0",
        lead,
        "~",
        ClipState.RELEASED,
    )
    assert all(
        c.history.filter(history_change_reason="frozen in release 1.0.0").count() == 1 for c in synthetic.clips.all()
    )
    # Whole relationship groups per split, in the data files and the task files alike.
    groups = defaultdict(set)
    for split in ("train", "validation", "test"):
        for clip_doc in read_jsonl(out / "data" / f"{split}.jsonl"):
            groups[path_group(clip_doc["sample_id"])].add(split)
    assert all(len(s) == 1 for s in groups.values()) and len({s for v in groups.values() for s in v}) == 3
    # Families named as the release names them, each its own group; every scenario is in the test split.
    assert {g for g in groups if g.startswith("family_therapy/")} == {
        "family_therapy/001",
        "family_therapy/002",
        "family_therapy/003",
    }
    assert {c["scenario"] for c in read_jsonl(out / "data" / "test.jsonl")} == {"couple", "family"}
    recorded = {c["sample_id"]: (c["group"], c["split"]) for c in json.loads((out / MANIFEST).read_text())["clips"]}
    assert all(
        recorded[c["sample_id"]] == (path_group(c["sample_id"]), split)
        for split in ("train", "validation", "test")
        for c in read_jsonl(out / "data" / f"{split}.jsonl")
    )
    for split in ("train", "validation", "test"):
        for task in TASKS:
            for inst in read_jsonl(out / "tasks" / task / f"{split}.jsonl"):
                assert inst["split"] == split and groups[path_group(inst["clip_id"])] == {split}
    stats = json.loads((out / "stats.json").read_text())
    assert stats["corpus"]["all"]["all"] == {
        "clips": 20,
        "groups": stats["corpus"]["all"]["all"]["groups"],
        "rows": built.rows,
        "duration_seconds": stats["corpus"]["all"]["all"]["duration_seconds"],
    }
    assert set(stats["label_distributions"]) == {"relation_pattern", "support_strategy", "utterance_type", "intensity"}
    assert set(stats["baselines"]["itp"]["splits"]["test"]["all"]["scores"]) == {"majority", "shortcut", "random"}
    assert set(stats["baselines"]["stp"]["splits"]["test"]["family"]["scores"]) == {
        "group_label",
        "last_client",
        "most_client",
        "random",
    }
    assert stats["relation_pattern_transitions"]["couple"]["labels"][0] == "pursue_withdraw"
    card = (out / "README.md").read_text()
    assert (
        card.startswith("---\n")
        and "config_name: itp" in card
        and "Synthetic data" in card
        and "The ITP shortcut" in card
    )
    # The boundary rules of the release's taxonomy, read here straight from its data files.
    for scenario in ("couple", "family"):
        data = json.loads(
            (
                Path(__file__).resolve().parent.parent / "annotation" / "taxonomy" / "data" / f"{scenario}-2.json"
            ).read_text()
        )
        for rule in data["rules"]:
            assert f"- *{rule['title']}* ({rule['field'].replace('_', ' ')}): {rule['text']}\n" in card, rule["id"]
    agreement = json.loads((out / "agreement.json").read_text())
    assert (
        agreement["available"] is True
        and agreement["scope"]["clips"] == 20
        and "Krippendorff's alpha per field" in card
    )


def test_a_dry_run_with_nothing_to_release_says_why_each_clip_is_out(synthetic):
    """Review of §2: with no clip eligible the dry run said only "nothing to release"."""
    synthetic.clips.update(state=ClipState.IN_REVIEW)
    Clip.objects.filter(pk=synthetic.clips.order_by("sample_id").first().pk).update(state=ClipState.ADJUDICATED)
    Gold.objects.filter(row__clip__state=ClipState.ADJUDICATED, row__row_index=1).delete()
    with pytest.raises(CommandError) as refused:
        run("freeze_release", "--project", synthetic.slug, "--seed", "1", "--dry-run")
    message = str(refused.value)
    in_review = synthetic.clips.filter(state=ClipState.IN_REVIEW).count()
    assert "nothing to release. Why the clips are out:" in message
    assert f"{in_review} in review:" in message and "1 adjudicated or released, but some rows have no gold" in message
    assert "rows lack gold" in message


def test_a_dry_run_shows_what_the_freeze_releases_and_writes_nothing(synthetic, lead, tmp_path):
    Clip.objects.filter(project=synthetic, sample_id="family_therapy/003/merged").update(state=ClipState.IN_REVIEW)
    Gold.objects.filter(
        row__clip__sample_id=synthetic.clips.filter(scenario="couple").order_by("sample_id").last().sample_id,
        row__row_index=1,
    ).delete()
    printed = run("freeze_release", "--project", synthetic.slug, "--seed", "1", "--dry-run", "--splits", "0.8,0,0.2")
    assert printed.startswith("dry run: nothing was written\nwould release 18 clips")
    assert "in review: still in review: 1 (family_therapy/003/merged)" in printed
    assert "adjudicated or released, but some rows have no gold: 1 (" in printed and "(1 of " in printed
    assert (
        "family: 2 groups (train 1, validation 0, test 1)" in printed
        and "a freeze with these settings would go ahead" in printed
    )
    preview = json.loads(
        run(
            "freeze_release", "--project", synthetic.slug, "--seed", "1", "--dry-run", "--splits", "0.8,0,0.2", "--json"
        )
    )
    assert (
        not Release.objects.exists()
        and not any(tmp_path.iterdir())
        and synthetic.clips.filter(state=ClipState.RELEASED).count() == 0
    )
    # The counts are the ones the freeze then writes (a second code path: the files' statistics).
    _, built = freeze(synthetic, version="1.0.0", seed=1, ratios="0.8,0,0.2", out_dir=tmp_path / "r", user=lead)
    stats = json.loads(built.files["stats.json"])
    for scenario in ("couple", "family", "all"):
        for split in ("train", "validation", "test", "all"):
            cell = preview["counts"][scenario][split]
            assert {k: cell[k] for k in ("clips", "groups", "rows")} == {
                k: stats["corpus"][scenario][split][k] for k in ("clips", "groups", "rows")
            }
            assert all(cell[task] == stats["tasks"][task]["counts"][scenario][split]["instances"] for task in TASKS)
    assert (
        preview["eligible"] == {"clips": 18, "rows": built.rows, "groups": preview["eligible"]["groups"]}
        and preview["moves_to_released"] == 18
    )


def test_a_group_map_file_regroups_clips_and_is_recorded(sample, tmp_path):
    mapping = tmp_path / "groups.csv"
    mapping.write_text("sample_id,group\nalan_and_evelyn/001_s01e01_ct25_segment04,elsewhere\n", encoding="utf-8")
    printed = run(
        "freeze_release",
        "--project",
        sample.slug,
        "--seed",
        "1",
        "--dry-run",
        "--groups",
        str(mapping),
        "--splits",
        "0.7,0,0.3",
    )
    # The mapped clip still shares Alan and Evelyn with the unmapped ones: joined back, and said so.
    assert (
        "alan_and_evelyn and elsewhere share Alan, Evelyn" in printed
        and "placed by the lead's map: elsewhere" in printed
    )
    apart = tmp_path / "apart.json"
    apart.write_text(
        json.dumps(
            {
                c: ("alan" if c.startswith("alan") else "alexes")
                for c in sample.clips.values_list("sample_id", flat=True)
            }
        )
    )
    out = tmp_path / "r"
    run(
        "freeze_release",
        "--project",
        sample.slug,
        "--version",
        "1.0.0",
        "--seed",
        "1",
        "--groups",
        str(apart),
        "--splits",
        "0.7,0,0.3",
        "-o",
        str(out),
    )
    manifest = json.loads((out / MANIFEST).read_text())
    assert {c["group"] for c in manifest["clips"]} == {"alan", "alexes"} and manifest["inputs"][
        "group_map"
    ] == json.loads(apart.read_text())
    _, verification = reproduce(Release.objects.get(project=sample), tmp_path / "again")
    assert verification.ok, verification.lines()  # the recorded map gives the same splits again
    bad = tmp_path / "bad.csv"
    bad.write_text("only-one-column\n", encoding="utf-8")
    with pytest.raises(CommandError, match=r"bad.csv: group map line 1: expected '<sample_id>,<group>'"):
        run("freeze_release", "--project", sample.slug, "--seed", "1", "--dry-run", "--groups", str(bad))
    unknown = tmp_path / "unknown.csv"
    unknown.write_text("nobody/001,g\n", encoding="utf-8")
    with pytest.raises(CommandError, match="the group map names 1 clips this project does not have: nobody/001"):
        run(
            "freeze_release",
            "--project",
            sample.slug,
            "--version",
            "2.0.0",
            "--seed",
            "1",
            "--groups",
            str(unknown),
            "-o",
            str(tmp_path / "x"),
        )


def test_freezing_the_same_state_again_gives_byte_identical_files(synthetic, tmp_path):
    _, built = freeze(synthetic, version="1.0.0", seed=7, out_dir=tmp_path / "first")
    # The clips are "released" now and the agreement report comes from its cache: same bytes all the same.
    out = run(
        "freeze_release",
        "--project",
        synthetic.slug,
        "--version",
        "1.0.0",
        "--reproduce",
        "-o",
        str(tmp_path / "second"),
    )
    assert f"{len(built.files)} files byte-identical" in out
    for rel, data in built.files.items():
        assert (tmp_path / "second" / rel).read_bytes() == data
    assert {
        p.relative_to(tmp_path / "second").as_posix() for p in (tmp_path / "second").rglob("*") if p.is_file()
    } == set(built.files)


def test_verify_release_names_changed_missing_and_extra_files(sample, tmp_path):
    out = tmp_path / "r"
    freeze(sample, accept_incomplete=TWO_COUPLES, version="2.0.0", seed=1, out_dir=out)
    assert "ok: " in run("verify_release", str(out))
    for folder in (out, out / "tasks" / "er", out / "data"):
        os.chmod(folder, stat.S_IRWXU)
    changed = out / "tasks" / "er" / "test.jsonl"
    os.chmod(changed, stat.S_IRUSR | stat.S_IWUSR)
    changed.write_text(changed.read_text() + "\n", encoding="utf-8")
    (out / "data" / "train.jsonl").unlink()
    (out / "notes.txt").write_text("added later")
    with pytest.raises(CommandError) as failure:
        run("verify_release", str(out))
    message = str(failure.value)
    assert (
        "changed: tasks/er/test.jsonl" in message
        and "missing: data/train.jsonl" in message
        and "extra:   notes.txt" in message
    )
    assert "stats.json" not in message


def test_verify_release_catches_a_manifest_edited_to_match_a_changed_file(sample, tmp_path):
    out = tmp_path / "r"
    freeze(sample, accept_incomplete=TWO_COUPLES, version="2.1.0", seed=1, out_dir=out)
    os.chmod(out, stat.S_IRWXU)
    for name in ("stats.json", MANIFEST):
        os.chmod(out / name, stat.S_IRUSR | stat.S_IWUSR)
    (out / "stats.json").write_text("{}\n")
    manifest = json.loads((out / MANIFEST).read_text())
    manifest["files"]["stats.json"] = {"sha256": sha256(b"{}\n"), "bytes": 3}
    (out / MANIFEST).write_text(json.dumps(manifest))
    assert verify(out).ok  # consistent with itself...
    with pytest.raises(CommandError, match="manifest.json differs from the release's database record"):
        run("verify_release", str(out))  # ...but not with the record


def test_the_folder_validates_as_croissant_and_loads_with_hugging_face_datasets(synthetic, tmp_path, caplog):
    mlc = pytest.importorskip("mlcroissant")
    datasets = pytest.importorskip("datasets")
    out = tmp_path / "r"
    freeze(synthetic, version="1.0.0", seed=1, out_dir=out)

    with caplog.at_level(logging.WARNING):
        dataset = mlc.Dataset(jsonld=out / "croissant.json")  # raises on any validation error
    assert not dataset.metadata.ctx.issues.errors and not dataset.metadata.ctx.issues.warnings, (
        dataset.metadata.ctx.issues.report()
    )
    assert not [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]  # e.g. a non-standard @context
    records = list(dataset.records("itp_test"))
    expected = read_jsonl(out / "tasks" / "itp" / "test.jsonl")
    assert {r["itp_test/id"].decode() for r in records} == {i["id"] for i in expected} and len(records) == len(expected)
    assert {r["er_train/gold"]["er_train/gold/intensity"] for r in dataset.records("er_train")} <= set(range(11))

    # Every config of the card's YAML, from the folder as it is, with the row counts of stats.json.
    counts = json.loads((out / "stats.json").read_text())
    for config in ("rows", "row_records", *TASKS):
        loaded = datasets.load_dataset(str(out), name=config, cache_dir=str(tmp_path / "hf-cache"))
        if config == "rows":
            expected_counts = {s: counts["corpus"]["all"][s]["clips"] for s in ("train", "validation", "test")}
        elif config == "row_records":
            expected_counts = {s: counts["corpus"]["all"][s]["rows"] for s in ("train", "validation", "test")}
        else:
            expected_counts = {
                s: counts["tasks"][config]["counts"]["all"][s]["instances"] for s in ("train", "validation", "test")
            }
        assert {s: loaded[s].num_rows for s in loaded} == {s: n for s, n in expected_counts.items() if n}, config
    for sample in datasets.load_dataset(str(out), name="stp", split="test", cache_dir=str(tmp_path / "hf-cache")):
        # rescue-v1 (the default profile): the three rows before the therapist row, not the row itself
        assert sample["gold"] in sample["candidates"] and [r["row_index"] for r in sample["context"]] == list(
            range(max(1, sample["row_index"] - 3), sample["row_index"])
        )


def test_a_new_version_takes_released_clips_again_but_not_discarded_or_incomplete_ones(sample, lead, tmp_path):
    freeze(sample, accept_incomplete=TWO_COUPLES, version="1.0.0", seed=1, out_dir=tmp_path / "v1")
    clips = list(sample.clips.order_by("sample_id"))
    dropped = transition(
        transition(clips[0], ClipState.ADJUDICATED, actor=lead),
        ClipState.DISCARDED,
        actor=lead,
        reason="audio unusable",
    )
    Gold.objects.filter(row__clip=clips[1], row__row_index=2).delete()
    _, built = freeze(sample, accept_incomplete=TWO_COUPLES, version="1.1.0", seed=1, out_dir=tmp_path / "v2")
    assert dropped.sample_id not in built.clip_ids and clips[1].sample_id not in built.clip_ids
    assert built.skipped == [clips[1].sample_id] and len(built.clip_ids) == 12
    assert json.loads(built.files["stats.json"])["provenance"]["project_clips_not_released"] == {
        "discarded": 1,
        "released": 1,
    }


def test_freeze_refuses_an_existing_version_an_existing_folder_and_a_bad_version(sample, tmp_path):
    freeze(sample, accept_incomplete=TWO_COUPLES, version="1.0.0", seed=1, out_dir=tmp_path / "v1")
    with pytest.raises(FreezeError, match="already exists"):
        freeze(sample, accept_incomplete=TWO_COUPLES, version="1.0.0", seed=2, out_dir=tmp_path / "other")
    (tmp_path / "taken").mkdir()
    with pytest.raises(CommandError, match="never overwritten"):
        run(
            "freeze_release",
            "--project",
            sample.slug,
            "--version",
            "1.0.1",
            "--seed",
            "1",
            "-o",
            str(tmp_path / "taken"),
        )
    with pytest.raises(CommandError, match="version"):
        run("freeze_release", "--project", sample.slug, "--version", "../up", "--seed", "1", "-o", str(tmp_path / "x"))
    assert Release.objects.filter(project=sample).count() == 1


def test_diff_lists_clips_added_removed_changed_and_label_changes(sample, lead, tmp_path):
    clips = list(sample.clips.order_by("sample_id"))
    held_back = transition(clips[2], ClipState.IN_REVIEW, actor=lead)  # not in 1.0.0
    freeze(sample, accept_incomplete=TWO_COUPLES, version="1.0.0", seed=1, out_dir=tmp_path / "a")
    transition(
        transition(held_back, ClipState.REVIEWED, actor=lead), ClipState.ADJUDICATED, actor=lead
    )  # back for 1.1.0
    transition(Clip.objects.get(pk=clips[0].pk), ClipState.ADJUDICATED, actor=lead)
    transition(Clip.objects.get(pk=clips[0].pk), ClipState.IN_REVIEW, actor=lead)  # reopened: out of 1.1.0
    gold = Gold.objects.filter(row__clip=clips[1], row__primary_speaker="Therapist").order_by("row__row_index").first()
    before = gold.content["support_strategy"]
    gold.content = {
        **gold.content,
        "support_strategy": [
            {
                "provider": "Therapist",
                "target": ["Couple"],
                "strategy_type": "safeguard",
                "strategy_content": "protects both",
            }
        ],
    }
    gold.save()
    freeze(sample, accept_incomplete=TWO_COUPLES, version="1.1.0", seed=1, out_dir=tmp_path / "b")
    diff = json.loads(run("diff_releases", "1.0.0", "1.1.0", "--project", sample.slug, "--json"))
    assert diff["clips_added"] == [clips[2].sample_id]
    assert diff["clips_removed"] == [clips[0].sample_id]
    assert [c["sample_id"] for c in diff["clips_changed"]] == [clips[1].sample_id]
    assert diff["clips_changed"][0]["fields"] == {"support_strategy": 1}
    old = before[0]["strategy_type"] if before else "(none)"
    assert diff["label_changes"]["support_strategy"]["changes"] == [{"from": old, "to": "safeguard", "rows": 1}]
    text = run("diff_releases", str(tmp_path / "a"), str(tmp_path / "b"))
    assert f"clips added: 1: {clips[2].sample_id}" in text and f"{old} -> safeguard: 1" in text


def test_agreement_json_says_so_when_agreement_is_not_available(sample, monkeypatch):
    # As on a platform without the agreement module (its services too: a module already imported would be found).
    monkeypatch.setitem(sys.modules, "annotation.agreement", None)
    monkeypatch.setitem(sys.modules, "annotation.agreement.services", None)
    document = agreement_document(sample, list(sample.clips.values_list("sample_id", flat=True)))
    assert document["available"] is False and "not available" in document["reason"]


def test_a_release_records_its_figure_style_and_is_reproduced_in_it(sample, tmp_path, monkeypatch):
    new = build_release(sample, accept_incomplete=TWO_COUPLES, version="1.0.0", seed=1)
    assert new.inputs["figure_style"] == figures.FIGURE_STYLE == recorded_figure_style(new.inputs)
    old = build_release(sample, accept_incomplete=TWO_COUPLES, version="1.0.0", seed=1, figure_style=1)
    assert (
        "figure_style" not in old.inputs and recorded_figure_style(old.inputs) == 1
    )  # as recorded before styles were numbered
    pngs = sorted(p for p in new.files if p.startswith("figures/"))
    assert pngs and {p: old.files[p] for p in pngs} == release_figures(
        json.loads(old.files["stats.json"]), figure_style=1
    )
    assert all(old.files[p] != new.files[p] for p in pngs)  # the styles differ in bytes, not in what they show
    # A release frozen in the first style (as every release before styles were numbered) reproduces byte for byte.
    from annotation.releases import freeze as freezing

    monkeypatch.setattr(freezing, "plan_build", partial(freezing.plan_build, figure_style=1))
    release, _ = freeze(sample, accept_incomplete=TWO_COUPLES, version="1.0.0", seed=1, out_dir=tmp_path / "frozen")
    monkeypatch.undo()
    assert "figure_style" not in release.manifest["inputs"]
    _, verification = reproduce(release, tmp_path / "again")
    assert verification.ok, verification.lines()
    with pytest.raises(FreezeError, match="style 9"):
        recorded_figure_style({"figure_style": 9})
