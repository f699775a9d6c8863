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


@pytest.fixture
def release_of_sixty(project, tmp_path):
    """60 synthetic clips, frozen: the train split holds 10 relationship groups (enough for an interval), the test
    split 3 (too few: the card states no interval there)."""
    generate(project, clips=60, annotators=2, seed=3)
    out = tmp_path / "r60"
    freeze(project, version="1.0.0", seed=1, out_dir=out)
    return out


def test_the_drafting_models_interval_and_paired_test_against_the_strongest_rule_are_a_direct_bootstrap(
    release_of_sixty,
):
    """STP: the drafting model's MRR, its 95% interval and the paired bootstrap against the strongest trivial rule
    in stats.json are what resampling whole relationship groups of the files gives (the draws done here, the
    instances of each drawn group concatenated); the card's test-split row states the same score and difference."""
    import numpy as np

    from annotation.releases.stats import BASELINE_RESAMPLES, BASELINE_SEED

    from .builders.card import section, table

    release = release_of_sixty
    stats = json.loads((release / "stats.json").read_text())
    groups = {c["sample_id"]: c["group"] for c in json.loads((release / "manifest.json").read_text())["clips"]}
    answers = {
        line["id"]: line["target_top3"] for line in read_jsonl(release / "predictions" / "drafting_model" / "stp.jsonl")
    }
    rules = {
        "last_client": last_client,
        "group_label": lambda i: [c for c in i["candidates"] if c not in i["participants"]] + i["participants"],
    }

    def rr(gold, ranking) -> float:
        return 1 / (ranking.index(gold) + 1) if gold in ranking[:3] else 0.0

    drafting = stats["drafting_model"]["tasks"]["stp"]
    assert drafting["headline_metric"] == "mrr"
    for split in ("train", "test"):
        items = read_jsonl(release / "tasks" / "stp" / f"{split}.jsonl")
        cell = drafting["splits"][split]["all"]
        best = stats["baselines"]["stp"]["splits"][split]["all"]["best_rule"]
        draft_rr = [rr(i["gold"], answers.get(i["id"]) or []) for i in items]  # no answer: scored as wrong
        rule_rr = [rr(i["gold"], rules[best](i)) for i in items]
        assert cell["scores"]["mrr"] == approx(sum(draft_rr) / len(items), abs=5e-5), split
        assert cell["against_best_rule"]["rule"] == best
        assert cell["against_best_rule"]["difference"] == approx((sum(draft_rr) - sum(rule_rr)) / len(items), abs=5e-5)
        order = list(dict.fromkeys(groups[i["clip_id"]] for i in items))
        assert cell["groups"] == len(order)
        if split == "test":
            continue
        assert len(order) >= 10, "the train split has enough groups for an interval"
        members = {g: [k for k, i in enumerate(items) if groups[i["clip_id"]] == g] for g in order}
        draws = np.random.default_rng(BASELINE_SEED).integers(0, len(order), size=(BASELINE_RESAMPLES, len(order)))
        scores, diffs = [], []
        for row in draws:
            drawn = [k for g in row for k in members[order[g]]]
            scores.append(sum(draft_rr[k] for k in drawn) / len(drawn))
            diffs.append(sum(draft_rr[k] - rule_rr[k] for k in drawn) / len(drawn))
        low, high = np.percentile(scores, [2.5, 97.5])
        assert (cell["interval"]["ci_low"], cell["interval"]["ci_high"]) == (
            approx(low, abs=5e-5),
            approx(high, abs=5e-5),
        )
        d_low, d_high = np.percentile(diffs, [2.5, 97.5])
        against = cell["against_best_rule"]
        assert (against["ci_low"], against["ci_high"]) == (approx(d_low, abs=5e-5), approx(d_high, abs=5e-5))
        diffs = np.array(diffs)
        far = min(int(np.sum(diffs <= 0)), int(np.sum(diffs >= 0)))
        p = f"p < {1 / (BASELINE_RESAMPLES + 1):.2g}" if far == 0 else f"p = {2 * far / BASELINE_RESAMPLES:.4f}"
        assert against["p"] == p

    # The card: the test split, 3 groups, so a score and a difference with neither interval nor p-value.
    test = drafting["splits"]["test"]["all"]
    row = next(
        line
        for line in table(section((release / "README.md").read_text(), "### The drafting model as a baseline"))
        if line["task"] == "stp"
    )
    assert row["drafting model"] == f"{test['scores']['mrr']:.3f}" and row["95% interval"] == "no interval"
    assert (
        row["difference"].split(" ")[0] == f"{test['against_best_rule']['difference']:.3f}"
        and "(p " not in row["difference"]
    )
