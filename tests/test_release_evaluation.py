"""Evaluation on a frozen release: by scenario, trivial rules that transfer between groups,
and the card's results tables, each checked against a computation of its own."""

import io
import json
import re

import pytest
from django.core.management import call_command

from annotation.releases.freeze import freeze
from annotation.synthetic import generate

pytestmark = pytest.mark.django_db
approx = pytest.approx


@pytest.fixture
def release(project, tmp_path):
    """20 synthetic clips (3 families named family_therapy/<NNN>/merged), frozen."""
    generate(project, clips=20, annotators=2, seed=3)
    out = tmp_path / "r"
    freeze(project, version="1.0.0", seed=1, out_dir=out)
    return out


def read_jsonl(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def evaluate(*args) -> str:
    out = io.StringIO()
    call_command("evaluate", *args, stdout=out)
    return out.getvalue()


def mrr(pairs) -> float:
    """Mean reciprocal rank of gold in a top-3 ranking, by hand."""
    pairs = list(pairs)
    return sum(1 / (ranking.index(gold) + 1) if gold in ranking[:3] else 0 for gold, ranking in pairs) / len(pairs)


def last_client(inst) -> list[str]:
    """The client who spoke last first: a second implementation, from the task file's context."""
    seen = []
    for row in reversed(inst["context"]):
        if row["primary_speaker"] in inst["participants"] and row["primary_speaker"] not in seen:
            seen.append(row["primary_speaker"])
    rest = [p for p in inst["participants"] if p not in seen]
    group_label = [c for c in inst["candidates"] if c not in inst["participants"]]
    return (seen + rest + group_label)[:3]


def test_evaluate_by_scenario_scores_each_scenario_and_a_file_for_one_scenario_is_not_missing_the_other(
    release, tmp_path
):
    test = read_jsonl(release / "tasks" / "stp" / "test.jsonl")
    by_scenario = {s: [i for i in test if i["scenario"] == s] for s in ("couple", "family")}
    assert all(by_scenario.values())  # every scenario is in the test split
    family_only = tmp_path / "family.jsonl"
    family_only.write_text(
        "".join(json.dumps({"id": i["id"], "target_top3": [i["gold"]]}) + "\n" for i in by_scenario["family"])
    )
    report = json.loads(
        evaluate(str(family_only), "--release", str(release), "--task", "stp", "--by", "scenario", "--json")
    )
    assert report["scenarios_scored"] == ["family"] and report["scenarios_without_predictions"] == {
        "couple": len(by_scenario["couple"])
    }
    assert report["predictions"]["missing"] == 0 and report["instances"] == len(by_scenario["family"])
    assert list(report["by_scenario"]) == ["family"] and report["system"]["mrr"]["value"] == 1.0
    text = evaluate(str(family_only), "--release", str(release), "--task", "stp", "--by", "scenario")
    assert f"not scored: couple ({len(by_scenario['couple'])} instances)" in text and "0 missing" in text

    # Both scenarios predicted by the last-client rule, a couple instance left out: per scenario and overall, as by
    # hand.
    skipped = by_scenario["couple"][0]["id"]
    both = tmp_path / "both.jsonl"
    both.write_text(
        "".join(json.dumps({"id": i["id"], "target_top3": last_client(i)}) + "\n" for i in test if i["id"] != skipped)
    )
    report = json.loads(evaluate(str(both), "--release", str(release), "--task", "stp", "--by", "scenario", "--json"))
    scored = {
        s: [(i["gold"], [] if i["id"] == skipped else last_client(i)) for i in items]
        for s, items in by_scenario.items()
    }
    assert report["by_scenario"]["couple"]["system"]["mrr"]["value"] == approx(mrr(scored["couple"]))
    assert report["by_scenario"]["family"]["system"]["mrr"]["value"] == approx(mrr(scored["family"]))
    assert report["system"]["mrr"]["value"] == approx(mrr(scored["couple"] + scored["family"]))
    assert (
        report["by_scenario"]["couple"]["prediction_counts"]["missing"] == 1
        and report["by_scenario"]["family"]["prediction_counts"]["missing"] == 0
    )
    # The system is the last-client rule itself, but for the missing instance: the rule's own score is the same, or
    # higher.
    rule = report["by_scenario"]["family"]["baselines"]["last_client"]["metrics"]["mrr"]["value"]
    assert rule == approx(mrr(scored["family"]))
    groups = {c["sample_id"]: c["group"] for c in json.loads((release / "manifest.json").read_text())["clips"]}
    assert report["by_scenario"]["family"]["groups"] == len({groups[i["clip_id"]] for i in by_scenario["family"]})


def test_the_card_names_each_tasks_strongest_trivial_rule_beside_its_primary_metric(release, tmp_path):
    card = (release / "README.md").read_text(encoding="utf-8")
    stats = json.loads((release / "stats.json").read_text())
    test = read_jsonl(release / "tasks" / "stp" / "test.jsonl")
    # STP's client rules, computed here from the task file, per scenario.
    for scope in ("couple", "family", "all"):
        items = [i for i in test if scope in (i["scenario"], "all")]
        ours = {
            "group_label": mrr(
                (i["gold"], [c for c in i["candidates"] if c not in i["participants"]] + i["participants"])
                for i in items
            ),
            "last_client": mrr((i["gold"], last_client(i)) for i in items),
        }
        cell = stats["baselines"]["stp"]["splits"]["test"][scope]
        for name, value in ours.items():
            assert cell["scores"][name]["mrr"] == approx(value, abs=5e-5), (scope, name)
        best = cell["best_rule"]
        assert cell["scores"][best]["mrr"] == max(scores["mrr"] for scores in cell["scores"].values())
        row = next(line for line in card.splitlines() if line.startswith(f"| stp | mrr | {scope} |"))
        assert (
            f"| {best} | {cell['scores'][best]['mrr']:.3f} (no interval: {cell['groups']} "
            f"group{'s' if cell['groups'] != 1 else ''}) |" in row
        )  # few test groups
        assert f"last_client {ours['last_client']:.3f}" in row
    # Every task's baselines in stats.json are what evaluate computes from the files (a second code path).
    for task in ("itp", "rpp", "stp", "ssp", "er", "vp", "rpp_any_speaker"):
        items = read_jsonl(release / "tasks" / task / "test.jsonl")
        if not items:
            continue
        field = {"itp": "should_speak", "er": "predicted_intensity_score", "vp": "predicted_viewpoints"}.get(
            task, "relation_top3" if task.startswith("rpp") else f"{'target' if task == 'stp' else 'strategy'}_top3"
        )
        gold = {"itp": lambda i: i["gold"], "er": lambda i: i["gold"]["intensity"], "vp": lambda i: i["gold"]}.get(
            task, lambda i: [i["gold"]]
        )
        preds = tmp_path / f"{task}.jsonl"
        preds.write_text("".join(json.dumps({"id": i["id"], field: gold(i)}) + "\n" for i in items))
        report = json.loads(evaluate(str(preds), "--release", str(release), "--task", task, "--json"))
        table = stats["baselines"][task]["splits"]["test"]["all"]["scores"]
        assert set(table) == set(report["baselines"]), task
        for rule, entry in report["baselines"].items():
            assert table[rule] == approx({m: round(v["value"], 4) for m, v in entry["metrics"].items()}, abs=1e-9), (
                task,
                rule,
            )
    # VP: no rule-based primary metric, and the card says why.
    assert re.search(r"^\| vp \| none \(pair_recovery shown\) \| all \|", card, re.M)
    assert (
        "- **VP**: none of the rule-based metrics" in card
        and "the metric is saturated, so it is reported, not primary" in card
    )
    assert (
        "Intervals and tests resample relationship groups" in card
        and "fewer than 10: its results come without intervals" in card
    )
