"""Evaluate predictions against a release folder's task instances.

Reads ``tasks/<task>/<split>.jsonl`` (and ``train`` for the rules that learn
from it), the predictions (``tasks.predictions``), and reports every metric
of the task with a 95% bootstrap interval over relationship groups
(``tasks.bootstrap``; each clip's group comes from the manifest) next to the
task's trivial rules (``tasks.baselines``), naming the strongest; with a
second prediction file, a paired bootstrap test of the difference. With
``by_scenario`` every figure is given per scenario as well as overall.

Every instance of a scored scenario is scored: those without a usable
prediction count as wrong and are listed in the account. A scenario for
which the file holds no prediction at all is left out and named, not
counted as missing: a file made for the family clips is a family result.

The scoring details are those of the task profile the release was built with
(``tasks.profiles``, read from its manifest: under ``rescue-v1`` the public
evaluation code's padding and taxonomy-wide macro-F1); the report names it.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from tasks import bootstrap
from tasks.baselines import rule_matrix, trivial_rules
from tasks.metrics import PRIMARY_REASONS, scorer_for
from tasks.predictions import PredictionSet, read_predictions
from tasks.profiles import recorded_profile
from tasks.rules import ALL_TASKS, PREDICTION_FIELDS, TITLES

from ..groups import path_group
from ..taxonomy import SCENARIOS
from .manifest import read_manifest, sha256
from .splits import SPLITS

ALL = "all"


class EvaluationError(Exception):
    """The evaluation cannot run as asked (message for the user)."""


def load_instances(folder: Path, task: str, split: str) -> list[dict]:
    path = folder / "tasks" / task / f"{split}.jsonl"
    if not path.is_file():
        raise EvaluationError(f"{path} does not exist: is {folder} a release folder?")
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _integrity(folder: Path, paths: list[str]) -> dict:
    """Whether the files read match the folder's manifest (a note, not a refusal)."""
    try:
        listed = read_manifest(folder)["files"]
    except (OSError, ValueError, KeyError):
        return {"manifest": False, "mismatched": []}
    mismatched = [p for p in paths if p in listed and sha256((folder / p).read_bytes()) != listed[p]["sha256"]]
    return {"manifest": True, "mismatched": mismatched}


def clip_groups(manifest: dict) -> dict[str, str]:
    """{clip id: relationship group} as the release recorded them (releases made before groups
    were recorded: the id rule, ``groups.path_group``, is applied by the caller)."""
    return {c["sample_id"]: c["group"] for c in manifest.get("clips", []) if "group" in c}


def _scenarios(instances: list[dict]) -> list[str]:
    present = {i["scenario"] for i in instances}
    return [s for s in SCENARIOS if s in present] + sorted(present - set(SCENARIOS))


def evaluate(
    folder: str | Path,
    *,
    task: str,
    split: str = "test",
    predictions: str | Path | PredictionSet,
    baseline: str | Path | PredictionSet | None = None,
    resamples: int = bootstrap.DEFAULT_RESAMPLES,
    seed: int = 0,
    by_scenario: bool = False,
) -> dict:
    folder = Path(folder)
    if task not in ALL_TASKS:
        raise EvaluationError(f"unknown task {task!r} (choose from {', '.join(ALL_TASKS)})")
    if split not in SPLITS:
        raise EvaluationError(f"unknown split {split!r} (choose from {', '.join(SPLITS)})")
    instances = load_instances(folder, task, split)
    if not instances:
        raise EvaluationError(f"the {split} split of {task} has no instances in this release")
    train = load_instances(folder, task, "train") if split != "train" else instances
    try:
        manifest = read_manifest(folder)
    except (OSError, ValueError):
        manifest = {}
    recorded = clip_groups(manifest)
    group_of = {i["clip_id"]: recorded.get(i["clip_id"]) or path_group(i["clip_id"]) for i in instances}
    profile = recorded_profile(
        manifest
    )  # a folder without a manifest, or one frozen before profiles existed: platform-v1
    scorer = scorer_for(task, manifest.get("inputs", {}).get("taxonomy_version", "1"), profile.name)

    def read(source) -> PredictionSet:
        return source if isinstance(source, PredictionSet) else read_predictions(source, task)

    system_set = read(predictions)
    named = set(system_set.by_id) | set(system_set.malformed)
    present = _scenarios(instances)
    scored = [s for s in present if any(i["id"] in named for i in instances if i["scenario"] == s)]
    if not scored:
        raise EvaluationError(
            f"no prediction names an instance of the {split} split of {task} (its ids look like "
            f"{instances[0]['id']!r}); "
            "check the task, the split and the ids"
        )
    left_out = {s: sum(i["scenario"] == s for i in instances) for s in present if s not in scored}
    instances = [i for i in instances if i["scenario"] in scored]
    ids = [i["id"] for i in instances]
    system_preds, account = system_set.resolve(ids)
    matrices = {"system": scorer.matrix(instances, system_preds)}
    rules = trivial_rules(task, train)
    for rule in rules:
        matrices[rule.name] = rule_matrix(rule, scorer, instances)
    other_account = None
    if baseline is not None:
        other_preds, other_account = read(baseline).resolve(ids)
        matrices["baseline file"] = scorer.matrix(instances, other_preds)

    def block(rows: list[int]) -> dict:
        """Every figure over the instances at ``rows`` (positions in ``instances``)."""
        part = [instances[k] for k in rows]
        groups = [group_of[i["clip_id"]] for i in part]
        n_groups = len(set(groups))
        weights = bootstrap.resample_weights(n_groups, resamples, seed)

        def sums(name: str) -> np.ndarray:
            return bootstrap.cluster_sums(matrices[name][rows], groups)

        baselines = {
            rule.name: {
                "rule": rule.description,
                "metrics": bootstrap.metric_intervals(scorer, sums(rule.name), weights),
            }
            for rule in rules
        }
        best = max(baselines, key=lambda name: baselines[name]["metrics"][scorer.headline]["value"])  # first wins ties
        out = {
            "instances": len(part),
            "clips": len({i["clip_id"] for i in part}),
            "groups": n_groups,
            "prediction_counts": {
                "scored": sum(system_preds[k] is not None for k in rows),
                "missing": sum(ids[k] not in named for k in rows),
                "malformed": sum(ids[k] in system_set.malformed for k in rows),
            },
            "system": bootstrap.metric_intervals(scorer, sums("system"), weights),
            "baselines": baselines,
            "best_trivial_rule": best,
        }
        if baseline is not None:
            out["comparison"] = {
                "baseline": bootstrap.metric_intervals(scorer, sums("baseline file"), weights),
                "difference": bootstrap.paired_test(scorer, sums("system"), sums("baseline file"), weights),
            }
        return out

    report = {
        "release": manifest.get("release", {}).get("version"),
        "folder": str(folder),
        "task": task,
        "title": TITLES[task],
        "split": split,
        "prediction_field": PREDICTION_FIELDS[task],
        "task_profile": {k: v for k, v in profile.manifest_entry().items() if k != "notes"},
        "primary_metric": scorer.primary,
        "headline_metric": scorer.headline,
        "primary_metric_reason": PRIMARY_REASONS[task],
        "bootstrap": {
            "unit": bootstrap.UNIT,
            "method": bootstrap.METHOD,
            "resamples": resamples,
            "seed": seed,
            "interval": "95% percentile",
            "min_groups": bootstrap.MIN_GROUPS,
            "groups_from": "the release manifest"
            if recorded
            else "the sample ids (sample id without its last path segment)",
        },
        "integrity": _integrity(folder, [f"tasks/{task}/{split}.jsonl", f"tasks/{task}/train.jsonl"]),
        "scenarios_scored": scored,
        "scenarios_without_predictions": left_out,
        "predictions": account,
        **block(list(range(len(instances)))),
    }
    if other_account is not None:
        report["comparison"]["baseline_predictions"] = other_account
    if by_scenario:
        report["by_scenario"] = {s: block([k for k, i in enumerate(instances) if i["scenario"] == s]) for s in scored}
    return report


def _cell(entry: dict | None) -> str:
    if not entry:
        return "n/a"
    if entry.get("unreliable"):
        return f"{entry['value']:.3f} (no interval)"
    return f"{entry['value']:.3f} [{entry['ci_low']:.3f}, {entry['ci_high']:.3f}]"


def _block_lines(report: dict, block: dict, title: str) -> list[str]:
    columns = ["system", *block["baselines"]]
    metrics = list(block["system"])
    width = max(len(m) for m in metrics) + 2
    counts = block["prediction_counts"]
    out = [
        "",
        f"{title}: {block['instances']} instances, {block['clips']} clips, {block['groups']} relationship groups; "
        f"{counts['scored']} scored, {counts['missing']} missing, {counts['malformed']} malformed",
        "metric".ljust(width)
        + "".join(c.ljust(26) for c in columns)
        + ("baseline file" if "comparison" in block else ""),
    ]
    for m in metrics:
        row = m.ljust(width) + _cell(block["system"][m]).ljust(26)
        for name in columns[1:]:
            row += _cell(block["baselines"][name]["metrics"][m]).ljust(26)
        if "comparison" in block:
            row += _cell(block["comparison"]["baseline"][m])
        out.append(row + ("   <- primary" if m == report["primary_metric"] else ""))
    best = block["best_trivial_rule"]
    headline = report["headline_metric"]
    out.append(
        f"strongest trivial rule: {best} ({headline} {block['baselines'][best]['metrics'][headline]['value']:.3f})"
    )
    why = block["system"][headline].get("unreliable")
    if why:
        out.append(f"intervals not given: {why}")
    if "comparison" in block:
        out.append("paired bootstrap, system - baseline file:")
        for m, d in block["comparison"]["difference"].items():
            span = "(no interval)" if d.get("unreliable") else f"[{d['ci_low']:+.3f}, {d['ci_high']:+.3f}]"
            out.append(f"  {m.ljust(width)}{d['difference']:+.3f} {span}  {d['p']}")
    return out


def format_report(report: dict) -> str:
    acc = report["predictions"]
    out = [
        (
            f"{report['title']} ({report['task']}), {report['split']} split of release "
            f"{report['release'] or report['folder']}: "
            f"{report['instances']} instances from {report['clips']} clips in {report['groups']} relationship groups"
        ),
    ]
    profile = report["task_profile"]
    out.append(
        f"task profile: {profile['name']} ({profile['title']})"
        + ("" if profile["comparable_with_paper"] else "; these figures are not comparable with the paper's tables")
    )
    for scenario, n in report["scenarios_without_predictions"].items():
        out.append(
            f"not scored: {scenario} ({n} instances): the file has no prediction for any of them, so they are left "
            "out, not counted as missing"
        )
    out.append(
        f"predictions: {acc['scored']} scored, {acc['missing']} missing, {acc['malformed']} malformed (missing and "
        "malformed count as wrong); "
        f"{acc['unknown_ids']} with unknown ids and {acc['duplicate_ids']} duplicates ignored; "
        f"{acc['unreadable_lines']} unreadable lines"
    )
    for kind in ("missing", "malformed", "unknown_ids", "duplicate_ids", "unreadable_lines"):
        examples = acc["examples"][kind]
        if examples:
            shown = [f"{e['id']} ({e['reason']})" if isinstance(e, dict) else str(e) for e in examples]
            out.append(f"  e.g. {kind.replace('_', ' ')}: " + "; ".join(shown))
    if report["integrity"]["mismatched"]:
        out.append(
            "WARNING: these files do not match the release manifest: " + ", ".join(report["integrity"]["mismatched"])
        )
    primary = report["primary_metric"]
    out.append(f"primary metric: {primary or 'none of these'} — {report['primary_metric_reason']}")
    out += _block_lines(report, report, f"{ALL} scored scenarios ({', '.join(report['scenarios_scored'])})")
    for scenario, block in report.get("by_scenario", {}).items():
        out += _block_lines(report, block, scenario)
    boot = report["bootstrap"]
    out.append("")
    out.append(
        f"95% intervals: {boot['method']}; {boot['resamples']} resamples, seed {boot['seed']}; groups from "
        f"{boot['groups_from']}"
    )
    out.append("trivial rules:")
    for name, entry in report["baselines"].items():
        out.append(f"  {name}: {entry['rule']}")
    if "comparison" in report:
        other = report["comparison"]["baseline_predictions"]
        out.append(
            f"baseline file: {other['scored']} scored, {other['missing']} missing, {other['malformed']} malformed"
        )
    return "\n".join(out)
