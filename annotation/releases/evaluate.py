"""Evaluate predictions against a release folder's task instances.

Reads ``tasks/<task>/<split>.jsonl`` (and ``train`` for the majority
baseline), the predictions (``tasks.predictions``), and reports every metric
of the task with a 95% clip-level bootstrap interval next to the majority,
random and (ITP) shortcut baselines; with a second prediction file, a paired
bootstrap test of the difference. Every instance is scored: those without a
usable prediction count as wrong and are listed in the account.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from tasks import bootstrap
from tasks.baselines import MajorityBaseline, itp_shortcut
from tasks.metrics import scorer_for
from tasks.predictions import PredictionSet, read_predictions
from tasks.rules import ALL_TASKS, PREDICTION_FIELDS, TITLES

from .manifest import read_manifest, sha256
from .splits import SPLITS


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


def evaluate(
    folder: str | Path,
    *,
    task: str,
    split: str = "test",
    predictions: str | Path | PredictionSet,
    baseline: str | Path | PredictionSet | None = None,
    resamples: int = bootstrap.DEFAULT_RESAMPLES,
    seed: int = 0,
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
    taxonomy_version = manifest.get("inputs", {}).get("taxonomy_version", "1")
    scorer = scorer_for(task, taxonomy_version)
    ids = [i["id"] for i in instances]
    clip_ids = [i["clip_id"] for i in instances]
    weights = bootstrap.resample_weights(len(set(clip_ids)), resamples, seed)

    def summary(matrix: np.ndarray) -> dict:
        return bootstrap.metric_intervals(scorer, bootstrap.clip_sums(matrix, clip_ids), weights)

    def read(source) -> PredictionSet:
        return source if isinstance(source, PredictionSet) else read_predictions(source, task)

    system_preds, account = read(predictions).resolve(ids)
    system = scorer.matrix(instances, system_preds)
    majority = MajorityBaseline(task, train)
    baselines = {
        "majority": {"rule": majority.describe(), "metrics": summary(scorer.matrix(instances, [majority.predict(i) for i in instances])) if majority.fitted else None},
        "random": {"rule": "uniform over the instance's candidates (expected value)", "metrics": summary(scorer.random_matrix(instances))},
    }
    if task == "itp":
        shortcut = [itp_shortcut(i["context"][-1]["target"] if i["context"] else []) for i in instances]
        baselines["shortcut"] = {"rule": "yes exactly when the current row is addressed to the therapist", "metrics": summary(scorer.matrix(instances, shortcut))}
    report = {
        "release": manifest.get("release", {}).get("version"),
        "folder": str(folder),
        "task": task,
        "title": TITLES[task],
        "split": split,
        "prediction_field": PREDICTION_FIELDS[task],
        "instances": len(instances),
        "clips": len(set(clip_ids)),
        "primary_metric": scorer.primary,
        "bootstrap": {"unit": "clip", "resamples": resamples, "seed": seed, "interval": "95% percentile"},
        "integrity": _integrity(folder, [f"tasks/{task}/{split}.jsonl", f"tasks/{task}/train.jsonl"]),
        "predictions": account,
        "system": summary(system),
        "baselines": baselines,
    }
    if baseline is not None:
        other_preds, other_account = read(baseline).resolve(ids)
        other = scorer.matrix(instances, other_preds)
        report["comparison"] = {
            "baseline_predictions": other_account,
            "baseline": summary(other),
            "difference": bootstrap.paired_test(scorer, bootstrap.clip_sums(system, clip_ids), bootstrap.clip_sums(other, clip_ids), weights),
        }
    return report


def _cell(entry: dict | None) -> str:
    if not entry:
        return "n/a"
    return f"{entry['value']:.3f} [{entry['ci_low']:.3f}, {entry['ci_high']:.3f}]"


def format_report(report: dict) -> str:
    acc = report["predictions"]
    out = [
        (
            f"{report['title']} ({report['task']}), {report['split']} split of release {report['release'] or report['folder']}: "
            f"{report['instances']} instances from {report['clips']} clips"
        ),
        (
            f"predictions: {acc['scored']} scored, {acc['missing']} missing, {acc['malformed']} malformed (missing and malformed count as wrong); "
            f"{acc['unknown_ids']} with unknown ids and {acc['duplicate_ids']} duplicates ignored; {acc['unreadable_lines']} unreadable lines"
        ),
    ]
    for kind in ("missing", "malformed", "unknown_ids", "duplicate_ids", "unreadable_lines"):
        examples = acc["examples"][kind]
        if examples:
            shown = [f"{e['id']} ({e['reason']})" if isinstance(e, dict) else str(e) for e in examples]
            out.append(f"  e.g. {kind.replace('_', ' ')}: " + "; ".join(shown))
    if report["integrity"]["mismatched"]:
        out.append("WARNING: these files do not match the release manifest: " + ", ".join(report["integrity"]["mismatched"]))
    columns = ["system", *report["baselines"]]
    metrics = list(report["system"])
    width = max(len(m) for m in metrics) + 2
    out.append("")
    out.append("metric".ljust(width) + "".join(c.ljust(26) for c in columns) + ("baseline file" if "comparison" in report else ""))
    for m in metrics:
        row = m.ljust(width) + _cell(report["system"][m]).ljust(26)
        for name in columns[1:]:
            values = report["baselines"][name]["metrics"]
            row += _cell(values[m] if values else None).ljust(26)
        if "comparison" in report:
            row += _cell(report["comparison"]["baseline"][m])
        out.append(row + ("   <- primary" if m == report["primary_metric"] else ""))
    out.append(f"(95% intervals: percentile bootstrap over clips, {report['bootstrap']['resamples']} resamples, seed {report['bootstrap']['seed']})")
    for name in columns[1:]:
        out.append(f"{name}: {report['baselines'][name]['rule']}")
    if "comparison" in report:
        other = report["comparison"]["baseline_predictions"]
        out.append("")
        out.append(f"paired bootstrap, system - baseline file ({other['scored']} scored, {other['missing']} missing, {other['malformed']} malformed):")
        for m, d in report["comparison"]["difference"].items():
            out.append(f"  {m.ljust(width)}{d['difference']:+.3f} [{d['ci_low']:+.3f}, {d['ci_high']:+.3f}]  p = {d['p_value']:.4f}")
    return "\n".join(out)
