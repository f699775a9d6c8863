"""The dataset card states only what is so: a frozen release's card, read back and recomputed from its files.

The card is a pure function of the release's files (``card_facts`` over manifest, stats, agreement and
the file list): rendering the folder's own files gives its README.md byte for byte, so every number can be
recomputed from them. The contract sections (task profile, free-text validity, coders' record) appear
exactly when their keys are there.
"""

import json
import re
from collections import Counter, defaultdict

import pytest

from annotation.releases.card import card_facts, facts_of_folder, render_card
from annotation.releases.freeze import freeze
from annotation.releases.manifest import MANIFEST
from annotation.rescue_format.importer import import_rescue
from tasks.bootstrap import unreliable
from tasks.rules import CONTEXT_KEYS

from .builders.card import duration_seconds, section, table, wrong_plurals

pytestmark = pytest.mark.django_db

SPLITS = ("train", "validation", "test")


def jsonl(data: bytes) -> list[dict]:
    return [json.loads(line) for line in data.decode("utf-8").splitlines() if line.strip()]


@pytest.fixture
def real_release(project, sample_path, tmp_path, settings):
    """The 14 real clips of the public release, imported as gold and frozen (two couples: no validation split)."""
    settings.RELEASES_ROOT = tmp_path / "releases"
    import_rescue(sample_path, project)
    out = tmp_path / "real"
    freeze(project, version="0.1.0", seed=1, out_dir=out, accept_incomplete=("couple",))
    files = {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    return out, files


def test_the_card_of_a_real_release_states_only_what_its_files_say(real_release):
    out, files = real_release
    card = files["README.md"].decode("utf-8")
    manifest = json.loads(files[MANIFEST])
    clips = jsonl(files["data/all.jsonl"])
    split_of = {c["sample_id"]: c["split"] for c in manifest["clips"]}
    group_of = {c["sample_id"]: c["group"] for c in manifest["clips"]}

    # The card is the release's files worded: rendered again from the folder, it is the same bytes.
    assert render_card(facts_of_folder(out)) == card

    # The opening sentence, against direct counts of data/all.jsonl.
    intro = re.search(
        r"It holds \*\*(\d+) clips?\*\* \(([^)]*)\) from \*\*(\d+) couples? or famil(?:y|ies)\*\*, \*\*([\d,]+) "
        r"rows?\*\* and ([^.]+?) of interaction",
        card,
    )
    assert intro, "the opening sentence"
    by_scenario = Counter(c["scenario"] for c in clips)
    assert int(intro.group(1)) == len(clips) == 14
    assert intro.group(2) == ", ".join(f"{n} {s}" for s, n in by_scenario.items())
    assert int(intro.group(3)) == len(set(group_of.values()))
    assert int(intro.group(4).replace(",", "")) == sum(len(c["rows"]) for c in clips)
    duration = sum(max(r["end_time"] for r in c["rows"]) for c in clips)
    assert duration < 3600 and intro.group(5) == f"{round(duration) // 60} min {round(duration) % 60} s"

    # The table per scenario and split, every cell recomputed.
    for line in table(section(card, "### Clips, rows and duration per scenario and split")):
        chosen = [
            c
            for c in clips
            if line["scenario"] in ("all", c["scenario"]) and line["split"] in ("all", split_of[c["sample_id"]])
        ]
        assert int(line["clips"]) == len(chosen)
        assert int(line["rows"]) == sum(len(c["rows"]) for c in chosen)
        assert int(line["groups"]) == len({group_of[c["sample_id"]] for c in chosen})
        assert duration_seconds(line["duration"]) == pytest.approx(
            sum(max(r["end_time"] for r in c["rows"]) for c in chosen),
            abs=0.5 if line["duration"].endswith(" s") else 180,
        )
        assert line["duration"] != "0.0 h"

    # Instances per task, scenario and split: the lines of the task files.
    instances = defaultdict(Counter)
    for path, data in files.items():
        if path.startswith("tasks/"):
            _, task, name = path.split("/")
            for inst in jsonl(data):
                instances[task][(inst["scenario"], name[: -len(".jsonl")])] += 1
    rows = table(section(card, "### Instances per task, scenario and split"))
    assert rows
    for line in rows:
        for split in SPLITS:
            expected = sum(
                n for (s, sp), n in instances[line["task"]].items() if sp == split and line["scenario"] in ("all", s)
            )
            assert int(line[split]) == expected, (line, split)

    # load_dataset examples and the front matter name only configs and splits with records.
    named = re.findall(r'load_dataset\("path/to/this/folder", "(\w+)"(?:, split="(\w+)")?\)', card)
    assert named and ("rows", "") in named
    front = card.split("---\n")[1]
    for config, split in named:
        assert f"- config_name: {config}\n" in front
        if split:
            assert files[f"tasks/{config}/{split}.jsonl"], f"{config}/{split} is empty"
    assert not files["data/validation.jsonl"] and "split: validation" not in front
    for path in re.findall(r"path: (\S+)", front):
        assert files[path], path
    evaluate = re.findall(r"--task (\w+) --split (\w+)", card)
    assert evaluate and all(files[f"tasks/{t}/{s}.jsonl"] for t, s in evaluate)

    # Counts read "1 clip", "2 clips"; nothing is claimed that no record holds.
    assert wrong_plurals(card) == []
    assert "0.0 h" not in card and "in view" not in card
    assert "One scenario only" in card and "no family clips" in card and "family-therapy" not in card
    assert "A benchmark of annotated couple-therapy dialogue." in card
    croissant = json.loads(files["croissant.json"])
    assert "few family" not in json.dumps(croissant) and "no family clips" in croissant["rai:dataLimitations"]
    assert croissant["description"].startswith(
        f"Annotated couple-therapy dialogue: 14 clips (14 couple) from {len(set(group_of.values()))} couples or "
        "families"
    )

    # Imported gold: nobody's coded work counts on any value, and the card says so in its gold table.
    stats = json.loads(files["stats.json"])
    gold = {line["the gold value"]: line for line in table(section(card, "### Where the gold's values came from"))}
    values = stats["provenance"]["gold_sources"]["overall"]["values"]
    assert (
        int(gold["no coder's work counts on the row"]["values"])
        == values
        == sum(len(c["rows"]) for c in clips) * len(stats["provenance"]["gold_sources"]["fields"])
    )
    assert gold["no coder's work counts on the row"]["share"] == "100.0%"
    # No draft recorded: no drafting-model scores, and the section says why.
    assert "No draft of the released rows is recorded" in card
    # The task profile the manifest records (rescue-v1, the default) is named, with the paper's counts beside this
    # release's own; nothing is said of free-text validity, which no one has judged here.
    manifest = json.loads(files[MANIFEST])
    assert manifest["task_profile"]["name"] == "rescue-v1"
    assert "Task rules:" in card and "(profile `rescue-v1`)" in card and "comparable with the paper's" in card
    for task, count in (
        ("ITP", "3,006"),
        ("RPP", "2,133"),
        ("STP", "1,637"),
        ("SSP", "1,637"),
        ("ER", 926),
        ("VP", 855),
    ):
        assert f"{task} {count}" in card
    assert "Validity of the measure" not in card
    # What a context row holds, as the card lists it, is what the task files' context rows hold; nothing is drawn.
    how = section(card, f"### How instances are built (rule version {manifest['inputs']['rule_version']})")
    listed = re.search(r"A context row holds only what is observable — (.+?) — not", how).group(1)
    context_keys = {
        key
        for path, data in files.items()
        if path.startswith("tasks/")
        for inst in jsonl(data)
        for row in inst["context"]
        for key in row
    }
    assert set(re.findall(r"`(\w+)`", listed)) == context_keys == {*CONTEXT_KEYS, "background_dialogue"}
    assert "Sampling is seeded" not in card and "evenly spaced pick" in how
    # The coders' record of a release whose gold was imported: said in one sentence, no table.
    assert (
        section(card, "## The coders")
        .strip()
        .endswith("No coder on this platform worked on the released clips, so there is no coders' record.")
    )


def _facts(files: dict, **changes) -> str:
    manifest = json.loads(files[MANIFEST])
    stats = json.loads(files["stats.json"])
    agreement = json.loads(files["agreement.json"])
    for key, value in changes.items():
        {"manifest": manifest, "stats": stats}[key.split("__")[0]][key.split("__")[1]] = value
    return render_card(card_facts(manifest=manifest, stats=stats, agreement=agreement, files=files))


def test_contract_sections_appear_when_their_keys_are_present_and_not_otherwise(real_release):
    _, files = real_release
    plain = _facts(files)
    assert plain == files["README.md"].decode("utf-8")

    # C1: the task profile. Under rescue-v1 the card gives the paper's Table 6 counts beside the release's own.
    card = _facts(
        files,
        manifest__task_profile={
            "name": "rescue-v1",
            "title": "RESCUE-BENCH rules",
            "comparable_with_paper": True,
            "notes": ["The public code's ER sampling is not seeded."],
        },
    )
    stats = json.loads(files["stats.json"])
    itp = stats["tasks"]["itp"]["counts"]["all"]["all"]["instances"]
    assert "**Task rules: RESCUE-BENCH rules** (profile `rescue-v1`)" in card
    assert (
        "ITP 3,006; RPP 2,133; STP 1,637; SSP 1,637; ER 926; VP 855" in card and f"this release: ITP {itp:,};" in card
    )
    assert "The public code's ER sampling is not seeded." in card
    other = _facts(
        files,
        manifest__task_profile={
            "name": "platform-v2",
            "title": "Platform rules",
            "comparable_with_paper": False,
            "notes": [],
        },
    )
    assert "not comparable with the RESCUE-BENCH paper's" in other and "3,006" not in other

    # C3: the coders' record.
    record = {
        "count": 2,
        "qualification": [
            {"coder": "coder 1", "status": "passed", "rounds": 1},
            {"coder": "coder 2", "status": "waived", "rounds": 0},
        ],
        "per_coder": [
            {"coder": "coder 1", "alpha_all": 0.712, "alpha_without": 0.6, "agreement_with_gold": 0.9},
            {"coder": "coder 2", "alpha_all": 0.712, "alpha_without": None, "agreement_with_gold": 0.85},
        ],
    }
    card = _facts(files, stats__coders=record)
    coders = section(card, "## The coders")
    assert coders.startswith("\n2 coders worked on this release")
    assert "coder 1 passed (1 round); coder 2 waived (0 rounds)" in coders
    lines = table(coders)
    assert [
        (row["coder"], row["alpha, all coders"], row["alpha without this coder"], row["agreement with gold"])
        for row in lines
    ] == [("coder 1", "0.712", "0.600", "0.900"), ("coder 2", "0.712", "–", "0.850")]
    assert wrong_plurals(card) == []
    # Without the keys (releases frozen before profiles and records), nothing is said of them.
    bare = _facts(files, stats__coders=None, manifest__task_profile=None)
    assert "## The coders" not in bare and "Task rules:" not in bare


def test_free_text_is_called_agreement_on_meaning_only_when_validated():
    from annotation.releases.card.facts import _texts

    entry = {
        "label": "Tone of voice",
        "alpha": 0.6,
        "defined": True,
        "ci95": [0.5, 0.7],
        "units": 10,
        "mean_similarity": 0.7,
        "baseline_similarity": 0.3,
        "with_llm_alpha": 0.65,
    }
    report = {"coded_work": True, "model": {"model": "m", "version": "1", "runtime": "cpu"}, "summary": [entry]}
    absent = _texts({"semantic": {"available": True, "report": report}})
    assert absent["any_verdict"] is False and absent["meaning"] is False
    weak = {
        **entry,
        "validity": {
            "verdict": "weak",
            "auroc": 0.61,
            "interval": [0.55, 0.67],
            "pairs": 80,
            "wording": "similarity of wording and topic",
        },
    }
    facts = _texts({"semantic": {"available": True, "report": {**report, "summary": [weak]}}})
    assert (
        facts["meaning"] is False
        and facts["wording"] == "similarity of wording and topic"
        and facts["rows"][0][-1] == "similarity of wording and topic"
    )
    validated = {**entry, "validity": {**weak["validity"], "verdict": "validated", "auroc": 0.9}}
    facts = _texts({"semantic": {"available": True, "report": {**report, "summary": [validated]}}})
    assert facts["meaning"] is True and facts["rows"][0][-1] == "agreement on meaning"


def test_reproducing_a_release_whose_card_an_older_template_wrote_regenerates_the_card_and_compares_the_data(
    real_release, project, tmp_path
):
    from annotation.models import Release
    from annotation.releases.card import CARD_TEMPLATE
    from annotation.releases.freeze import reproduce

    release = Release.objects.get(project=project)
    assert release.manifest["inputs"]["card_template"] == CARD_TEMPLATE
    _, same = reproduce(release, tmp_path / "again")
    assert same.ok and same.regenerated == [] and same.notes == []

    # As a release frozen before the templates recorded it: no card_template, other README.md and croissant.json bytes.
    manifest = json.loads(json.dumps(release.manifest))
    del manifest["inputs"]["card_template"]
    for name in ("README.md", "croissant.json"):
        manifest["files"][name] = {"sha256": "0" * 64, "bytes": 1}
    release.manifest = manifest  # in memory only: a frozen release's record is immutable
    built, older = reproduce(release, tmp_path / "older")
    assert (
        older.regenerated == ["README.md", "croissant.json"]
        and older.changed == []
        and older.missing == []
        and older.extra == []
    )
    assert older.notes == [
        f"README.md and croissant.json regenerated by card template {CARD_TEMPLATE}; the release's were written by "
        "card template 1 and are not compared byte for byte (the data files are)"
    ]
    assert "card_template" not in built.manifest["inputs"]
    # The data files are still compared byte for byte: a changed data digest is a mismatch, whatever the template.
    manifest["files"]["data/all.jsonl"]["sha256"] = "f" * 64
    _, broken = reproduce(release, tmp_path / "broken")
    assert broken.changed == ["data/all.jsonl"] and not broken.ok


def test_the_alpha_the_card_states_is_the_krippendorff_package_s_on_the_coders_values(project, tmp_path, settings):
    """A release with two coders' work: the card's utterance-type alpha and units, against the krippendorff
    package on the coders' own values read from the database; every counted noun agrees with its number."""
    import krippendorff
    import numpy as np

    from annotation.models import Revision
    from annotation.synthetic import generate

    settings.RELEASES_ROOT = tmp_path / "releases"
    generate(project, clips=12, annotators=2, seed=5)
    out = tmp_path / "synthetic"
    freeze(project, version="1.0.0", seed=1, out_dir=out)
    card = (out / "README.md").read_text(encoding="utf-8")
    assert render_card(facts_of_folder(out)) == card
    assert wrong_plurals(card) == [] and "0.0 h" not in card and "in view" not in card

    values: dict[int, dict[str, str]] = defaultdict(dict)
    for row_id, coder, content, speaker in Revision.objects.filter(row__clip__project=project).values_list(
        "row_id", "annotator__username", "content", "row__primary_speaker"
    ):
        if speaker != "Therapist":
            values[row_id][coder] = content["utterance_type"]
    coders = sorted({c for v in values.values() for c in v})
    labels = {u: i for i, u in enumerate(sorted({u for v in values.values() for u in v.values()}))}
    matrix = np.array([[labels[v[c]] if c in v else np.nan for v in values.values()] for c in coders], dtype=float)
    expected = krippendorff.alpha(reliability_data=matrix, level_of_measurement="nominal")
    line = next(row for row in table(section(card, "## Annotator agreement")) if row["field"] == "Utterance type")
    assert line["alpha"] == f"{expected:.3f}" and int(line["units"]) == int(
        (~np.isnan(matrix)).sum(axis=0).__ge__(2).sum()
    )
    assert int(line["coders"]) == len(coders) == 2
    # The coded work the card states: every revision of the two submitted coders, nothing left out.
    coded = re.search(
        r"The report compares ([\d,]+) coded revisions? on ([\d,]+) rows? of ([\d,]+) clips?, by (\d+) annotators?; no "
        r"revision was left out",
        card,
    )
    rows = sum(len(c["rows"]) for c in jsonl((out / "data" / "all.jsonl").read_bytes()))
    assert (
        coded
        and int(coded.group(1).replace(",", ""))
        == Revision.objects.filter(row__clip__project=project).count()
        == 2 * rows
    )
    assert (int(coded.group(2).replace(",", "")), int(coded.group(3)), int(coded.group(4))) == (rows, 12, 2)


@pytest.mark.parametrize(
    "reason",
    [
        "no from-empty work counts in this scope: the draft's pull cannot be measured without coders who never saw it",
        unreliable(5),
    ],
)
def test_the_card_says_in_a_sentence_why_the_drafts_pull_was_not_measured(reason):
    from django.template import Context

    from annotation.releases.card.render import engine

    text = (
        engine()
        .get_template("human_work.md")
        .render(Context({"human": {"anchoring": {"measurable": False, "reason": reason}}}, autoescape=False))
    )
    assert f"was not measured on this release, because {reason}." in text
