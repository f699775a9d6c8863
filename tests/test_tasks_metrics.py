"""Metrics, baselines, bootstrap and `manage.py evaluate` on hand-made predictions with known values."""

import io
import json

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from tasks import bootstrap
from tasks.baselines import itp_shortcut, rule_matrix, trivial_rules
from tasks.metrics import scorer_for as profile_scorer
from tasks.predictions import parse_predictions

approx = pytest.approx


def scorer_for(task, taxonomy_version="1"):
    """The platform's own scoring (``platform-v1``); the public code's (``rescue-v1``) is checked in
    test_task_profile_rescue_v1.py."""
    return profile_scorer(task, taxonomy_version, "platform-v1")


def values(task, instances, predictions):
    scorer = scorer_for(task)
    return scorer.values(scorer.matrix(instances, predictions))


def test_itp_precision_recall_and_f1_on_yes_with_a_missing_prediction_counted_wrong():
    gold = [{"gold": g} for g in ("yes", "yes", "no", "no", "yes")]
    got = values("itp", gold, ["yes", "no", "yes", "no", None])
    # tp 1; fn 2 (a "no" and the missing one); fp 1; tn 1
    assert got == approx({"precision": 1 / 2, "recall": 1 / 3, "f1": 0.4, "accuracy": 2 / 5})


def test_ranking_recall_at_k_and_mrr():
    inst = [{"gold": "A", "candidates": ["A", "B", "C"]}] * 5
    got = values("stp", inst, [["A", "B"], ["B", "A"], ["B", "C", "A"], ["B", "C"], None])
    assert got == approx({"recall@1": 1 / 5, "recall@2": 2 / 5, "recall@3": 3 / 5, "mrr": (1 + 1 / 2 + 1 / 3) / 5})


def test_uniform_random_baseline_is_the_exact_expectation():
    scorer = scorer_for("ssp")
    three = [{"gold": "A", "candidates": ["A", "B", "C"]}]
    assert scorer.values(scorer.random_matrix(three)) == approx(
        {"recall@1": 1 / 3, "recall@2": 2 / 3, "recall@3": 1.0, "mrr": (1 + 1 / 2 + 1 / 3) / 3}
    )
    itp = scorer_for("itp")
    assert itp.values(itp.random_matrix([{"gold": "yes"}, {"gold": "no"}])) == approx(
        {"precision": 0.5, "recall": 0.5, "f1": 0.5, "accuracy": 0.5}
    )
    er = scorer_for("er")
    # gold 5: |p - 5| for p = 0..10 gives scores 1,1,2,3,4,5,4,3,2,1,1
    assert er.values(er.random_matrix([{"gold": {"intensity": 5}}]))["intensity_match"] == approx(27 / 11)


def test_vp_random_baseline_is_the_mean_over_every_uniform_source_and_target():
    vp = scorer_for("vp")
    inst = {
        "speaker": "Maya",
        "candidates": ["Tobias", "Therapist", "Couple"],
        "participants": ["Maya", "Tobias"],
        "gold": [
            {"source": "Maya", "target": "Tobias", "viewpoint": "a"},
            {"source": "Maya", "target": "Tobias", "viewpoint": "b"},
            {"source": "Maya", "target": "Couple", "viewpoint": "c"},
        ],
    }
    # Sources: the people (Maya, Tobias, Therapist); targets: every other entity of the clip.
    predictions = [
        (s, t) for s in ("Maya", "Tobias", "Therapist") for t in ("Maya", "Tobias", "Therapist", "Couple") if t != s
    ]
    expected = np.zeros(len(vp.stat_names))
    for source, target in predictions:
        expected += np.array(vp.stats(inst, [{"source": source, "target": target}])) / len(predictions)
    assert vp.random_matrix([inst]).tobytes() == expected.reshape(1, -1).tobytes()  # the same sums, bit for bit
    assert vp.values(vp.random_matrix([inst]))["pair_recovery"] == approx((2 + 1) / 3 / 9)


def test_rpp_accuracy_and_macro_f1_over_the_labels_that_occur():
    inst = [
        {"gold": g, "scenario": "couple"}
        for g in ("pursue_withdraw", "pursue_withdraw", "attack_attack", "mixed_transition")
    ]
    preds = [["pursue_withdraw"], ["attack_attack", "pursue_withdraw"], ["attack_attack"], None]
    got = values("rpp", inst, preds)
    # per class F1: pursue_withdraw 2/3, attack_attack 2/3, mixed_transition 0
    assert got == approx({"accuracy": 0.5, "macro_f1": 4 / 9, "recall@3": 3 / 4})


def test_er_intensity_match_is_max_1_5_minus_the_distance():
    inst = [{"gold": {"emotion_description": "x", "intensity": 6}}] * 4
    assert values("er", inst, [6, 8, 0, None]) == approx(
        {"intensity_match": (5 + 3 + 1 + 1) / 4, "exact_intensity": 1 / 4}
    )


def test_vp_source_target_and_pair_recovery():
    inst = [
        {"gold": [{"source": "Maya", "target": "Tobias", "viewpoint": "a"}]},
        {
            "gold": [
                {"source": "Maya", "target": "Tobias", "viewpoint": "b"},
                {"source": "Maya", "target": "Therapist", "viewpoint": "c"},
            ]
        },
    ]
    preds = [
        [{"source": "Maya", "target": "Tobias", "viewpoint": ""}],
        [
            {"source": "Maya", "target": "Therapist", "viewpoint": ""},
            {"source": "Tobias", "target": "Maya", "viewpoint": ""},
        ],
    ]
    assert values("vp", inst, preds) == approx(
        {"source_recovery": 1.0, "target_recovery": 2 / 3, "pair_recovery": 2 / 3, "pair_precision": 2 / 3}
    )


def rules_of(task, train=()):
    return {rule.name: rule for rule in trivial_rules(task, list(train))}


def test_majority_rules_are_fitted_on_training_instances():
    train = [{"gold": g, "scenario": "couple"} for g in ("no", "no", "yes")]
    assert rules_of("itp", train)["majority"].predict({}) == "no"
    tie = [{"gold": g, "scenario": "couple"} for g in ("no", "yes")]
    assert rules_of("itp", tie)["majority"].predict({}) == "yes"
    er = rules_of("er", [{"gold": {"intensity": v}, "scenario": "couple"} for v in (7, 6, 7, 6, 3)])["majority"]
    assert er.predict({}) == 6  # ties go to the lower intensity
    ssp = rules_of("ssp", [{"gold": g, "scenario": "couple"} for g in ("track", "reframe", "track")])["majority"]
    assert ssp.predict({"scenario": "couple", "candidates": ["reframe", "evoke", "track", "join"]}) == [
        "track",
        "reframe",
        "evoke",
    ]
    assert "majority" not in rules_of("itp")  # nothing to fit on


def test_stp_rules_use_roles_never_names_seen_in_training():
    # Names of a couple never seen in training: a name-majority could only fall back on candidate order.
    speakers = ["Maya", "Therapist", "Tobias", "Maya", "Therapist", "Tobias", "Tobias", "Therapist"]
    inst = {
        "gold": "Maya",
        "scenario": "couple",
        "participants": ["Maya", "Tobias"],
        "candidates": ["Maya", "Tobias", "Couple"],
        "context": [{"primary_speaker": s, "target": ["Therapist"]} for s in speakers],
    }
    rules = rules_of("stp", [{"gold": "Ann", "scenario": "couple"}])
    assert set(rules) == {"group_label", "last_client", "most_client", "random"}
    assert rules["group_label"].predict(inst) == ["Couple", "Maya", "Tobias"]
    assert rules["last_client"].predict(inst) == ["Tobias", "Maya", "Couple"]  # Tobias spoke at rows 6 and 7
    assert rules["most_client"].predict(inst) == ["Tobias", "Maya", "Couple"]  # 3 rows against 2
    quiet = {
        **inst,
        "participants": ["Ada", "Ben", "Cy"],
        "candidates": ["Ada", "Ben", "Cy", "Family"],
        "gold": "Cy",
        "context": [{"primary_speaker": s, "target": ["Therapist"]} for s in ["Ben", "Ben", "Ada", "Therapist"]],
    }
    assert rules["last_client"].predict(quiet) == ["Ada", "Ben", "Cy"] and rules["most_client"].predict(quiet) == [
        "Ben",
        "Ada",
        "Cy",
    ]
    scorer = scorer_for("stp")
    # MRR by hand: gold Maya is 2nd for last_client, 2nd for group_label; gold Cy is 3rd for both client rules.
    assert scorer.values(rule_matrix(rules["last_client"], scorer, [inst, quiet]))["mrr"] == approx((1 / 2 + 1 / 3) / 2)
    assert scorer.values(rule_matrix(rules["group_label"], scorer, [inst]))["mrr"] == approx(1 / 2)


def test_vp_trivial_rule_names_every_other_participant_and_saturates_recovery():
    rule = rules_of("vp")["speaker_about_others"]
    inst = {
        "speaker": "Ada",
        "participants": ["Ada", "Ben", "Cy"],
        "candidates": ["Ben", "Cy", "Therapist", "Family"],
        "gold": [{"source": "Ada", "target": "Cy", "viewpoint": "x"}],
    }
    assert rule.predict(inst) == [
        {"source": "Ada", "target": "Ben", "viewpoint": ""},
        {"source": "Ada", "target": "Cy", "viewpoint": ""},
    ]
    scorer = scorer_for("vp")
    assert scorer.primary is None and scorer.headline == "pair_recovery"
    assert scorer.values(rule_matrix(rule, scorer, [inst])) == approx(
        {"pair_recovery": 1.0, "source_recovery": 1.0, "target_recovery": 1.0, "pair_precision": 0.5}
    )


def test_itp_shortcut_says_yes_exactly_when_the_therapist_is_addressed():
    assert itp_shortcut(["Therapist"]) == "yes"
    assert itp_shortcut(["Maya", "Therapist"]) == "yes"
    assert itp_shortcut(["Tobias"]) == "no"


def test_prediction_files_account_for_every_unusable_line():
    text = "\n".join(
        [
            json.dumps({"id": "a", "should_speak": "YES"}),
            json.dumps({"id": "b", "should_speak": "maybe"}),
            json.dumps({"id": "c"}),
            json.dumps({"id": "a", "should_speak": "no"}),
            json.dumps({"id": "zzz", "should_speak": True}),
            "{not json",
            json.dumps({"should_speak": "no"}),
        ]
    )
    preds = parse_predictions(text, "itp")
    aligned, account = preds.resolve(["a", "b", "c", "d"])
    assert aligned == ["yes", None, None, None]
    assert (
        account["scored"],
        account["missing"],
        account["malformed"],
        account["unknown_ids"],
        account["duplicate_ids"],
        account["unreadable_lines"],
    ) == (1, 1, 2, 1, 1, 2)
    assert account["examples"]["missing"] == ["d"]
    assert {m["id"] for m in account["examples"]["malformed"]} == {"b", "c"}
    keyed = parse_predictions(json.dumps({"a": {"target_top3": ["X"]}, "b": {"target_top3": "X"}}), "stp")
    assert keyed.by_id == {"a": ["X"]} and set(keyed.malformed) == {"b"}


def hand_f1(pairs):
    tp = sum(g == "yes" and p == "yes" for g, p in pairs)
    fp = sum(g == "no" and p == "yes" for g, p in pairs)
    fn = sum(g == "yes" and p == "no" for g, p in pairs)
    return 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 0.0


def test_the_bootstrap_resamples_whole_groups_as_a_direct_computation_does():
    scorer = scorer_for("itp")
    rng = np.random.default_rng(0)
    gold = ["yes" if x else "no" for x in rng.random(200) < 0.5]
    preds = [g if keep else ("no" if g == "yes" else "yes") for g, keep in zip(gold, rng.random(200) < 0.7)]
    groups = [f"g{i % 12}" for i in range(200)]  # 12 relationship groups, interleaved
    sums = bootstrap.cluster_sums(scorer.matrix([{"gold": g} for g in gold], preds), groups)
    weights = bootstrap.resample_weights(len(sums), 500, seed=3)
    got = bootstrap.metric_intervals(scorer, sums, weights)["f1"]
    assert (
        got == bootstrap.metric_intervals(scorer, sums, bootstrap.resample_weights(len(sums), 500, seed=3))["f1"]
    )  # seeded
    # The same draws, done the plain way: each resample concatenates the instances of the groups it drew.
    members = {f"g{k}": [(gold[i], preds[i]) for i in range(200) if groups[i] == f"g{k}"] for k in range(12)}
    order = list(dict.fromkeys(groups))
    draws = np.random.default_rng(3).integers(0, 12, size=(500, 12))
    direct = [hand_f1([pair for k in row for pair in members[order[k]]]) for row in draws]
    low, high = np.percentile(direct, [2.5, 97.5])
    assert got["value"] == approx(hand_f1(list(zip(gold, preds))))
    assert (got["ci_low"], got["ci_high"]) == (approx(low, abs=1e-12), approx(high, abs=1e-12))


def test_below_the_stated_number_of_groups_an_interval_is_reported_as_unreliable():
    scorer = scorer_for("er")
    matrix = scorer.matrix([{"gold": {"intensity": 5}}] * 40, [5, 7, 3, 6] * 10)
    few = bootstrap.metric_intervals(
        scorer, bootstrap.cluster_sums(matrix, [f"g{i % 9}" for i in range(40)]), bootstrap.resample_weights(9)
    )
    assert few["intensity_match"]["ci_low"] is None and few["intensity_match"]["unreliable"].startswith(
        "only 9 relationship groups (fewer than 10)"
    )
    enough = bootstrap.metric_intervals(
        scorer, bootstrap.cluster_sums(matrix, [f"g{i % 10}" for i in range(40)]), bootstrap.resample_weights(10)
    )
    assert (
        "unreliable" not in enough["intensity_match"]
        and enough["intensity_match"]["ci_low"] <= enough["intensity_match"]["value"]
    )


def test_a_p_value_is_never_zero_but_bounded_by_the_number_of_resamples():
    diffs = np.linspace(0.1, 0.5, 999)  # no resample crosses zero
    assert bootstrap.p_value(diffs) == (1 / 1000, True) and bootstrap.format_p(*bootstrap.p_value(diffs)) == "p < 0.001"
    crossing = np.array([-0.1] * 10 + [0.2] * 990)
    assert bootstrap.p_value(crossing) == (2 * 10 / 1000, False) and bootstrap.format_p(0.02, False) == "p = 0.0200"


# --- manage.py evaluate ------------------------------------------------------------


def itp_instance(n, gold, target, split):
    clip = f"g{n % 10}/clip{n % 20}"  # 20 clips in 10 relationship groups; even groups say yes, odd ones no
    return {
        "id": f"itp:{clip}:{n}",
        "task": "itp",
        "clip_id": clip,
        "row_index": n,
        "scenario": "couple",
        "split": split,
        "participants": ["Maya", "Tobias"],
        "context": [
            {
                "row_index": n,
                "start_time": 0.0,
                "end_time": 1.0,
                "primary_speaker": "Maya",
                "target": [target],
                "dialogue_cleaned": "...",
            }
        ],
        "gold": gold,
    }


@pytest.fixture
def itp_release(tmp_path):
    """A release folder holding only what evaluate reads: ITP train and test instances."""
    folder = tmp_path / "release"
    (folder / "tasks" / "itp").mkdir(parents=True)
    # Test: 40 instances, yes on even n; the current row addresses the therapist on n % 4 in (0, 1).
    test = [
        itp_instance(n, "yes" if n % 2 == 0 else "no", "Therapist" if n % 4 in (0, 1) else "Tobias", "test")
        for n in range(40)
    ]
    train = [itp_instance(100 + n, "no" if n < 7 else "yes", "Tobias", "train") for n in range(10)]
    for name, items in (("test", test), ("train", train)):
        (folder / "tasks" / "itp" / f"{name}.jsonl").write_text(
            "".join(json.dumps(i) + "\n" for i in items), encoding="utf-8"
        )
    return folder, test


def write_predictions(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def run_evaluate(*args):
    out = io.StringIO()
    call_command("evaluate", *args, stdout=out)
    return out.getvalue()


def test_evaluate_reports_known_metrics_baselines_and_the_prediction_account(itp_release, tmp_path):
    folder, test = itp_release
    preds = []
    for inst in test:
        n = inst["row_index"]
        if n in (38, 39):
            continue  # two missing: 38 is a yes (fn), 39 a no (fp)
        if n == 37:
            preds.append({"id": inst["id"], "should_speak": "perhaps"})  # malformed, gold no: fp
            continue
        # Right on n < 30, always "yes" from 30 on.
        preds.append({"id": inst["id"], "should_speak": inst["gold"] if n < 30 else "yes"})
    preds.append({"id": "itp:nowhere:1", "should_speak": "yes"})
    path = write_predictions(tmp_path / "preds.jsonl", preds)
    report = json.loads(run_evaluate(path, "--release", str(folder), "--task", "itp", "--split", "test", "--json"))
    # n < 30: tp 15, tn 15. n 30..36: yes on 30,32,34,36 (tp 4), 31,33,35 (fp 3). 37 malformed (fp), 38 missing (fn), 39
    # missing (fp).
    tp, fp, fn, tn = 19, 5, 1, 15
    assert report["system"]["precision"]["value"] == approx(tp / (tp + fp))
    assert report["system"]["recall"]["value"] == approx(tp / (tp + fn))
    assert report["system"]["f1"]["value"] == approx(2 * tp / (2 * tp + fp + fn))
    assert report["system"]["accuracy"]["value"] == approx((tp + tn) / 40)
    assert (
        report["predictions"]["scored"],
        report["predictions"]["missing"],
        report["predictions"]["malformed"],
        report["predictions"]["unknown_ids"],
    ) == (37, 2, 1, 1)
    assert (report["instances"], report["clips"], report["groups"]) == (40, 20, 10)
    assert (
        report["bootstrap"]["unit"] == "relationship group" and "relationship groups" in report["bootstrap"]["method"]
    )
    # Majority fitted on train (7 "no" of 10) says "no" everywhere: F1 0. Random: precision 0.5, recall 0.5.
    assert report["baselines"]["majority"]["metrics"]["f1"]["value"] == 0.0
    assert report["baselines"]["random"]["metrics"]["f1"]["value"] == approx(0.5)
    # Shortcut: yes on n % 4 in (0, 1): tp on n % 4 == 0 (10), fp on n % 4 == 1 (10), fn on n % 4 == 2 (10).
    assert report["baselines"]["shortcut"]["metrics"]["precision"]["value"] == approx(0.5)
    assert report["baselines"]["shortcut"]["metrics"]["recall"]["value"] == approx(0.5)
    assert report["best_trivial_rule"] == "shortcut"  # F1 0.5, tied with random: the first listed wins
    for entry in report["system"].values():
        assert entry["ci_low"] <= entry["value"] <= entry["ci_high"]
    text = run_evaluate(path, "--release", str(folder), "--task", "itp", "--split", "test")
    assert "2 missing, 1 malformed" in text and "shortcut" in text and "<- primary" in text
    assert (
        "strongest trivial rule: shortcut (f1 0.500)" in text
        and "percentile bootstrap over relationship groups" in text
    )


def test_evaluate_takes_relationship_groups_from_the_manifest_and_says_when_they_are_too_few(itp_release, tmp_path):
    folder, test = itp_release
    clips = sorted({i["clip_id"] for i in test})
    (folder / "manifest.json").write_text(
        json.dumps({"clips": [{"sample_id": c, "group": f"family_{int(c[1]) % 5}"} for c in clips]})
    )
    path = write_predictions(tmp_path / "p.jsonl", [{"id": i["id"], "should_speak": i["gold"]} for i in test])
    report = json.loads(run_evaluate(path, "--release", str(folder), "--task", "itp", "--json"))
    assert report["groups"] == 5 and report["bootstrap"]["groups_from"] == "the release manifest"
    assert report["system"]["f1"] == {
        "value": 1.0,
        "ci_low": None,
        "ci_high": None,
        "unreliable": "only 5 relationship groups (fewer than 10): too few independent units for a bootstrap interval",
    }
    text = run_evaluate(path, "--release", str(folder), "--task", "itp")
    assert (
        "1.000 (no interval)" in text
        and "intervals not given: only 5 relationship groups" in text
        and "[" not in text.split("metric", 1)[1].split("strongest")[0]
    )


def test_evaluate_with_a_baseline_file_runs_a_paired_bootstrap(itp_release, tmp_path):
    folder, test = itp_release
    perfect = write_predictions(tmp_path / "perfect.jsonl", [{"id": i["id"], "should_speak": i["gold"]} for i in test])
    always_yes = write_predictions(tmp_path / "yes.jsonl", [{"id": i["id"], "should_speak": "yes"} for i in test])
    report = json.loads(
        run_evaluate(perfect, "--release", str(folder), "--task", "itp", "--baseline", always_yes, "--json")
    )
    diff = report["comparison"]["difference"]["f1"]
    assert diff["difference"] == approx(1 - 2 / 3)
    assert 0 <= diff["ci_low"] <= diff["difference"] <= diff["ci_high"]
    assert diff["p_value"] < 0.05  # only resamples of "no" groups alone tie
    same = json.loads(run_evaluate(perfect, "--release", str(folder), "--task", "itp", "--baseline", perfect, "--json"))
    assert same["comparison"]["difference"]["f1"] == {
        "difference": 0.0,
        "ci_low": 0.0,
        "ci_high": 0.0,
        "p_value": 1.0,
        "p_value_bound": False,
        "p": "p = 1.0000",
    }
    # Always wrong: accuracy 0 in every resample against 1, so no resample crosses zero.
    wrong = write_predictions(
        tmp_path / "wrong.jsonl", [{"id": i["id"], "should_speak": "no" if i["gold"] == "yes" else "yes"} for i in test]
    )
    text = run_evaluate(perfect, "--release", str(folder), "--task", "itp", "--baseline", wrong, "--resamples", "999")
    accuracy = next(line for line in text.splitlines() if line.strip().startswith("accuracy") and "p " in line)
    assert accuracy.endswith("p < 0.001") and "p = 0.0000" not in text


def test_evaluate_refuses_a_folder_without_the_task_file(tmp_path):
    with pytest.raises(CommandError, match="does not exist"):
        run_evaluate(write_predictions(tmp_path / "p.jsonl", []), "--release", str(tmp_path), "--task", "stp")
