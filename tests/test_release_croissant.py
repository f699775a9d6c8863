"""croissant.json carries the data: mlcroissant reads every record set of a release, and
every value it yields equals the value in the JSONL file it names (context rows,
nested records and all); `mlcroissant validate` has nothing to say about it."""

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from annotation.releases.freeze import freeze
from annotation.rescue_format.importer import import_rescue
from annotation.schema import Row
from annotation.synthetic import generate

pytestmark = pytest.mark.django_db


def _plain(value):
    """mlcroissant's value without its bytes for text."""
    if isinstance(value, bytes):
        return value.decode("utf-8")
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k.rsplit("/", 1)[-1]: _plain(v) for k, v in value.items()}
    return value


def _expected(field: dict, value):
    """What the field declares for ``value`` (a JSON value; absent keys are None, as in the reader)."""
    subfields = field.get("subField")
    if subfields:
        if field.get("repeated"):
            return (
                None
                if value is None
                else [{sub["name"]: _expected(sub, entry.get(sub["name"])) for sub in subfields} for entry in value]
            )
        return {sub["name"]: _expected(sub, value.get(sub["name"])) for sub in subfields}
    return value


def _same(actual, expected, where: str) -> None:
    """Equal, and of the same JSON type at every leaf (an int is not a float here)."""
    assert type(actual) is type(expected), f"{where}: {actual!r} is not {expected!r}"
    if isinstance(expected, dict):
        assert actual.keys() == expected.keys(), where
        for key in expected:
            _same(actual[key], expected[key], f"{where}.{key}")
    elif isinstance(expected, list):
        assert len(actual) == len(expected), where
        for i, (a, e) in enumerate(zip(actual, expected)):
            _same(a, e, f"{where}[{i}]")
    elif isinstance(expected, float):
        # mlcroissant reads JSON Lines with pandas' fast float parser, which can land one unit
        # in the last place off the exact value (pandas-dev/pandas#49027: read_json's
        # precise_float defaults to False); json.loads reads the file's number exactly.
        assert abs(actual - expected) <= math.ulp(expected), f"{where}: {actual!r} is not {expected!r}"
    else:
        assert actual == expected, where


@pytest.fixture(params=["public sample", "synthetic"])
def release(request, project, tmp_path) -> Path:
    """Frozen: the 14 real clips of the public release (rows with and without the older
    relation keys), or 12 synthetic clips in the platform's convention (every key on every row)."""
    if request.param == "synthetic":
        generate(project, clips=12, annotators=2, seed=3)
    else:
        import_rescue(request.getfixturevalue("sample_path"), project)
    out = tmp_path / "release"
    freeze(project, version="1.0.0", seed=1, out_dir=out, accept_incomplete=("couple",))  # the sample has two couples
    return out


def test_mlcroissant_yields_every_record_of_every_record_set_equal_to_the_jsonl_files(release):
    mlc = pytest.importorskip("mlcroissant")
    doc = json.loads((release / "croissant.json").read_text(encoding="utf-8"))
    files = {f["@id"]: f["contentUrl"] for f in doc["distribution"]}
    dataset = mlc.Dataset(jsonld=release / "croissant.json")
    assert not dataset.metadata.ctx.issues.errors and not dataset.metadata.ctx.issues.warnings, (
        dataset.metadata.ctx.issues.report()
    )

    seen = {}
    for record_set in doc["recordSet"]:
        name = record_set["@id"]
        sources = {f["source"]["fileObject"]["@id"] for f in record_set["field"] if "source" in f}
        assert len(sources) == 1, name
        lines = [json.loads(line) for line in (release / files[sources.pop()]).read_text(encoding="utf-8").splitlines()]
        records = [_plain(r) for r in dataset.records(name)]
        assert len(records) == len(lines) > 0, name
        for i, (record, line) in enumerate(zip(records, lines)):
            expected = {f["name"]: _expected(f, line.get(f["name"])) for f in record_set["field"]}
            _same(record, expected, f"{name}[{i}]")
        seen[name] = lines

    # Every key a reader or a model needs is declared, not only ids and labels.
    # (An optional key that no row of a split carries, e.g. relation_cycle_reason, which no
    # row of the public sample has, is not declared there: a reader would look for it in vain.)
    for split in ("train", "test"):
        carried = {k for line in seen[f"row_records_{split}"] for k in line}
        declared = {f["name"] for f in next(r for r in doc["recordSet"] if r["@id"] == f"row_records_{split}")["field"]}
        assert declared == carried and carried - {"sample_id", "scenario"} <= set(Row.model_fields)
        assert {k for k, info in Row.model_fields.items() if info.is_required()} <= carried
    clips = next(r for r in doc["recordSet"] if r["@id"] == "rows_train")
    assert {f["name"] for f in clips["field"]} == {"sample_id", "scenario", "participants", "source_file", "rows"}
    for task in ("itp", "rpp", "stp", "ssp", "er", "vp", "rpp_any_speaker"):
        for split in ("train", "test"):
            record_set = next(r for r in doc["recordSet"] if r["@id"] == f"{task}_{split}")
            assert {f["name"] for f in record_set["field"]} == set(seen[f"{task}_{split}"][0]), f"{task}_{split}"
    # The context rows came through, row by row, with their nested target lists.
    stp = seen["stp_test"]
    assert any(
        len(i["context"]) == 3 for i in stp
    )  # rescue-v1 (the default profile): the 3 rows before the therapist row
    # The row records are the clip rows, one per line.
    clip_rows = [
        dict(sample_id=c["sample_id"], scenario=c["scenario"], **r) for c in seen["rows_train"] for r in c["rows"]
    ]
    assert clip_rows == seen["row_records_train"]


@pytest.mark.parametrize("release", ["public sample"], indirect=True)
def test_mlcroissant_validate_is_clean(release):
    pytest.importorskip("mlcroissant")
    cli = Path(sys.executable).with_name("mlcroissant")
    done = subprocess.run(
        [str(cli), "validate", "--jsonld", str(release / "croissant.json")], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert "Done." in done.stderr and not [line for line in done.stderr.splitlines() if line[:1] in ("W", "E")], (
        done.stderr
    )


def test_rows_spelt_once_give_the_same_clip_lines_and_row_records_as_spelling_each_whole(sample_path):
    """A freeze spells each row once, for its clip's line and its row record: both must be the text
    ``json.dumps`` gives the whole clip and the merged record, on the public release's own rows (odd keys,
    unicode, nulls and all), and on rows shaped unusually."""
    from annotation.releases.croissant import row_record_files
    from annotation.rescue_format.exporter import dumps_clip, dumps_row

    clips = [json.loads(line) for line in sample_path.read_text(encoding="utf-8").splitlines() if line.strip()]
    clips.append(
        {"sample_id": "odd/1", "scenario": "couple", "rows": [{}, {"scenario": "x", "é": [1.5, None]}], "note": "ü"}
    )
    texts = [[dumps_row(r) for r in c["rows"]] for c in clips]
    for clip, spelt in zip(clips, texts):
        assert dumps_clip(clip, spelt) == json.dumps(clip, ensure_ascii=False)
    splits = {c["sample_id"]: ("train", "validation", "test")[i % 3] for i, c in enumerate(clips)}
    assert row_record_files(clips, splits, texts) == row_record_files(clips, splits)
    expected = [
        json.dumps({"sample_id": c["sample_id"], "scenario": c["scenario"], **r}, ensure_ascii=False)
        for c in clips
        for r in c["rows"]
    ]
    written = [
        line for data in row_record_files(clips, splits, texts).values() for line in data.decode("utf-8").splitlines()
    ]
    assert sorted(written) == sorted(expected)
