"""The dataset card's facts: one dictionary computed from the release's own files and recorded provenance.

``card_facts`` reads ``manifest.json`` (its head: release, inputs, and the
task profile where the task rules record one), ``stats.json``,
``agreement.json`` and the file list; the provenance it states is the one
``stats.json`` carries (the database facts recorded at freeze time). The
templates under ``templates/releases/card/`` only word these facts: every
number the card states is a value here, and every sentence about how the
work was done is guarded by the recorded fact that makes it true.

Keys other capabilities produce (``CONTRACTS.md``: C1 the task profile and
instance counts, C2 free-text validity, C3 the coders' record) are read when
present; when absent their entry is None and the card says nothing of them.
"""

from __future__ import annotations

import json
from pathlib import Path

from tasks import bootstrap
from tasks.profiles import PLATFORM_V1
from tasks.profiles.rescue_v1 import RULES_TEXT as RESCUE_RULES_TEXT
from tasks.rules import ALL_TASKS, PREDICTION_FIELDS, RPP_ANY_SPEAKER, TASKS

from ...agreement.scope import left_out_summary
from ...schema import CONVENTION_ROW_KEYS
from ...taxonomy import boundary_rules_markdown
from ..agreement_report import summary_rows
from ..croissant import config_files
from ..human_work import FAR_ABOVE, release_human_work
from ..labels import NO_PATTERN, NO_STRATEGY, NOT_ANNOTATED
from ..manifest import MANIFEST
from ..provenance import CLIP_IMPORTED, PLATFORM, coder_origin_sentence, provenance_sentences, reliability_computable
from ..splits import SPLITS
from ..stats import ALL
from .markdown import count_noun, duration_words, therapy_words
from .texts import CARD_TEMPLATE, FILE_ROWS, LICENCE_NAME, LICENCE_TEXT, ROW_FIELDS, RULES_TEXT, TASK_TABLE

LONG_TAIL_SHARE = 0.02  # labels rarer than this (within their field and scenario) are called out
SHORTCUT_CLOSE = 0.05  # the ITP shortcut is "close" to a reference when within this much F1
SATURATED = 0.9  # a trivial rule at or above this share of a metric's range saturates it
# The paper's Table 6 instance counts for the full public release (contract C1: said under rescue-v1 only).
PAPER_COUNTS = {"itp": 3006, "rpp": 2133, "stp": 1637, "ssp": 1637, "er": 926, "vp": 855}
LOADING_PREFERENCE = ("itp", "rpp", "stp", "ssp", "er", "vp", RPP_ANY_SPEAKER)


def _share_of_range(metric: str, value: float) -> float:
    """Where ``value`` sits in the metric's range (intensity match runs from 1 to 5, the others from 0 to 1)."""
    return (value - 1) / 4 if metric == "intensity_match" else value


def _size_category(n: int) -> str:
    for limit, name in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M")):
        if n < limit:
            return name
    return "n>1M"


def _share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "–"


def _configs(files: dict[str, bytes]) -> list[dict]:
    """The Hugging Face configs with their non-empty split files: the only ones the card names."""
    out = []
    for config, splits in config_files(files).items():
        present = [(s, p) for s, p in splits.items() if files[p]]
        if present:
            out.append(
                {"name": config, "default": config == "rows", "files": [{"split": s, "path": p} for s, p in present]}
            )
    return out


def _loading(configs: list[dict]) -> dict:
    """The ``load_dataset`` examples: the rows config and one task config with a split this release has."""
    by_name = {c["name"]: [f["split"] for f in c["files"]] for c in configs}
    task = next((t for t in LOADING_PREFERENCE if t in by_name), None)
    split = None
    if task:
        split = next(s for s in ("test", "validation", "train") if s in by_name[task])
    return {"rows": "rows" in by_name, "task": task, "split": split}


def _incomplete(inputs: dict, corpus: dict) -> list[dict]:
    wanted = [s for s in SPLITS if inputs["split_ratios"][s] > 0]
    out = []
    for scenario in inputs.get("accepted_incomplete") or []:
        missing = [s for s in wanted if corpus[scenario][s]["clips"] == 0]
        out.append(
            {
                "scenario": scenario,
                "groups": corpus[scenario][ALL]["groups"],
                "missing": " and no ".join(missing),
                "consequence": f"no result on the test split says anything about {scenario} therapy"
                if "test" in missing
                else "compare systems on it with care",
            }
        )
    return out


def _corpus(stats: dict) -> dict:
    corpus = stats["corpus"]
    scenarios = [s for s in corpus if s != ALL]
    total = corpus[ALL][ALL]
    glance = []
    for scenario in [*scenarios, ALL]:
        for split in (*SPLITS, ALL):
            c = corpus[scenario][split]
            glance.append([scenario, split, c["groups"], c["clips"], c["rows"], duration_words(c["duration_seconds"])])
    test_groups = corpus[ALL]["test"]["groups"]
    return {
        "total": {**total, "duration": duration_words(total["duration_seconds"])},
        "scenarios": [
            {
                "name": s,
                **corpus[s][ALL],
                "share": _share(corpus[s][ALL]["clips"], total["clips"]),
                "test_groups": corpus[s]["test"]["groups"],
            }
            for s in scenarios
        ],
        "missing_scenarios": [s for s in ("couple", "family") if s not in corpus],
        "glance": glance,
        "test_groups": test_groups,
        "test_groups_enough": test_groups >= bootstrap.MIN_GROUPS,
        "min_groups": bootstrap.MIN_GROUPS,
    }


def _instance_counts(stats: dict) -> dict:
    """Instances per task, scenario and split (contract C1), from ``stats.json``'s task counts."""
    tasks = stats["tasks"]
    scenarios = [s for s in stats["corpus"] if s != ALL]
    rows = []
    for task in ALL_TASKS:
        counts = tasks[task]["counts"]
        for scenario in [*scenarios, ALL]:
            cell = counts.get(scenario)
            if cell is None:
                continue
            rows.append([task, scenario, *(cell[s]["instances"] for s in SPLITS), cell[ALL]["instances"]])
    return {"rows": rows}


def _task_rows(stats: dict) -> list[list]:
    rows = []
    for task in ALL_TASKS:
        group, question, gold, metric = TASK_TABLE[task]
        counts = stats["tasks"][task]["counts"][ALL]
        rows.append(
            [
                f"**{task}**" if task in TASKS else task,
                group,
                question,
                gold,
                metric,
                *(counts[s]["instances"] for s in SPLITS),
                counts[ALL]["clips"],
            ]
        )
    return rows


def _rules(inputs: dict) -> list[dict]:
    """The instance rules in words, as the release's task profile builds them (releases made before profiles:
    platform-v1's)."""
    params = inputs["rule_parameters"]
    texts = RULES_TEXT if inputs.get("task_profile", PLATFORM_V1) == PLATFORM_V1 else RESCUE_RULES_TEXT
    return [
        {"name": task.upper() if task in TASKS else task, "text": texts[task].format(**params)} for task in ALL_TASKS
    ]


def _task_profile(manifest: dict, stats: dict) -> dict | None:
    """Contract C1: the task profile the manifest records, with the paper's counts beside this release's under
    rescue-v1."""
    profile = manifest.get("task_profile")
    if not isinstance(profile, dict):
        return None
    comparable = profile.get("name") == "rescue-v1"
    return {
        "name": profile.get("name"),
        "title": profile.get("title"),
        "comparable_with_paper": bool(profile.get("comparable_with_paper")),
        "rescue_v1": comparable,
        "notes": [n for n in profile.get("notes") or [] if isinstance(n, str)],
        "paper": [
            [t, PAPER_COUNTS[t], stats["tasks"][t]["counts"][ALL][ALL]["instances"]]
            for t in PAPER_COUNTS
            if t in stats["tasks"]
        ]
        if comparable
        else [],
    }


def _score_with_interval(entry: dict, metric: str) -> str:
    value = f"{entry['scores'][entry['best_rule']][metric]:.3f}"
    interval = entry["best_interval"]
    if interval.get("unreliable"):
        return f"{value} (no interval: {count_noun(entry['groups'], 'group')})"
    return f"{value} [{interval['ci_low']:.3f}, {interval['ci_high']:.3f}]"


def _saturation_note(entry: dict) -> str:
    cell = entry["splits"]["test"][ALL]
    if not cell["instances"]:
        return ""
    metric, best = entry["headline_metric"], cell["best_rule"]
    value = cell["scores"][best][metric]
    if _share_of_range(metric, value) < SATURATED:
        return ""
    verdict = (
        "so it is reported, not primary"
        if entry["primary_metric"] is None
        else "so compare systems on it with the rule's score beside them"
    )
    return (
        f" On this release's test split the trivial rule *{best}* already reaches {metric} {value:.3f}: the metric "
        f"is saturated, {verdict}."
    )


def _baselines(stats: dict) -> dict:
    baselines = stats["baselines"]
    rows, judged = [], []
    for task in ALL_TASKS:
        entry = baselines[task]
        metric = entry["headline_metric"]
        primary = entry["primary_metric"] or f"none ({metric} shown)"
        for scope, cell in entry["splits"]["test"].items():
            if not cell["instances"]:
                rows.append([task, primary, scope, 0, cell["groups"], "–", "no test instances", ""])
                continue
            rows.append(
                [
                    task,
                    primary,
                    scope,
                    cell["instances"],
                    cell["groups"],
                    cell["best_rule"],
                    _score_with_interval(cell, metric),
                    ", ".join(f"{name} {scores[metric]:.3f}" for name, scores in cell["scores"].items()),
                ]
            )
        judged.append(
            {
                "name": task.upper() if task in TASKS else task,
                "reason": entry["primary_metric_reason"],
                "saturation": _saturation_note(entry),
            }
        )
    return {"rows": rows, "judged": judged, "shortcut": _shortcut(baselines.get("itp")), "vp": _vp(baselines.get("vp"))}


def _shortcut(itp: dict | None) -> dict | None:
    if not itp:
        return None
    test = itp["splits"]["test"][ALL]
    if "shortcut" not in test.get("scores", {}):
        return {"scored": False}
    scores = test["scores"]
    shortcut = scores["shortcut"]["f1"]
    references = {name: values["f1"] for name, values in scores.items() if name != "shortcut"}
    best_name, best = max(references.items(), key=lambda kv: kv[1]) if references else ("random", 0.0)
    verdict = (
        "clearly_above"
        if shortcut >= best + SHORTCUT_CLOSE
        else "close"
        if shortcut >= best - SHORTCUT_CLOSE
        else "below"
    )
    return {
        "scored": True,
        "f1": shortcut,
        "precision": scores["shortcut"]["precision"],
        "recall": scores["shortcut"]["recall"],
        "best": best,
        "best_name": best_name,
        "verdict": verdict,
    }


def _vp(vp: dict | None) -> dict | None:
    """VP's recovery when a trivial rule nearly solves it (None otherwise)."""
    cell = vp["splits"]["test"][ALL] if vp else {"instances": 0}
    if not cell["instances"] or cell["scores"][cell["best_rule"]]["pair_recovery"] < 0.8:
        return None
    return {"rule": cell["best_rule"], "recovery": cell["scores"][cell["best_rule"]]["pair_recovery"]}


def _labels(stats: dict) -> list[dict]:
    dist, fields = stats["label_distributions"], stats["label_fields"]
    out = []
    for field in ("relation_pattern", "support_strategy", "utterance_type"):
        scenarios = list(dist[field])
        labels: list[str] = []
        for s in scenarios:
            labels += [k for k in dist[field][s][ALL] if k not in labels]
        rows = []
        for label in labels:
            row = [label]
            for s in scenarios:
                counts = dist[field][s][ALL]
                row.append(
                    f"{counts[label]} ({_share(counts[label], sum(counts.values()))})" if label in counts else "n/a"
                )
            rows.append(row)
        out.append(
            {
                "title": field.replace("_", " ").capitalize(),
                "over": fields[field],
                "header": ["label", *scenarios],
                "rows": rows,
            }
        )
    return out


def _long_tail(stats: dict) -> list[str]:
    dist = stats["label_distributions"]
    rare = []
    for field in ("relation_pattern", "support_strategy", "utterance_type"):
        for scenario, per_split in dist[field].items():
            counts = {k: v for k, v in per_split[ALL].items() if k not in (NO_PATTERN, NOT_ANNOTATED, NO_STRATEGY)}
            total = sum(counts.values())
            for label, n in counts.items():
                if total and n / total < LONG_TAIL_SHARE:
                    rare.append(f"`{label}` ({field.replace('_', ' ')}, {scenario}: {n} of {total})")
    return rare


def _versions_counted(counts: dict) -> str:
    return (
        ", ".join(f"{'none recorded' if key == 'none' else f'version {key}'}: {n}" for key, n in counts.items())
        or "none"
    )


def _guidelines(inputs: dict, provenance: dict, guidance: dict | None) -> dict:
    """The boundary rules and the project's guidance. The card says the platform *shows* the rules (what it
    does), never that coders worked with them in view: no record says what a coder looked at."""
    record = inputs.get("guidance")
    shipped = None
    if record is not None and guidance is not None:
        entries = []
        for e in guidance["entries"]:
            body = "\n  ".join(line.strip() for line in e["text"].splitlines() if line.strip())
            entries.append(
                {**e, "field_title": e["field_title"].lower(), "written_on": e["written_at"][:10], "body": body}
            )
        shipped = {**guidance, "entries": entries}
    return {
        "version": inputs["taxonomy_version"],
        "rules": boundary_rules_markdown(inputs["taxonomy_version"]) if inputs["taxonomy_version"] != "1" else "",
        "platform_coders": provenance["coders"][PLATFORM]["assignments"] > 0,
        "guidance": None
        if record is None
        else {
            "shipped": shipped,
            "revisions": _versions_counted(record["revisions"]),
            "gold": _versions_counted(record["gold"]),
        },
    }


def _summary_table(agreement: dict) -> dict:
    report = agreement.get("report") or {}
    summary = report.get("summary")
    if isinstance(summary, list) and summary:
        rows, presence = [], None
        for entry in summary:
            if not isinstance(entry, dict):
                continue
            name = entry.get("label") or entry.get("field")
            if entry.get("defined") is False:
                rows.append(
                    [
                        name,
                        "undefined",
                        "–",
                        "–",
                        entry.get("units", "–"),
                        entry.get("coders", "–"),
                        "–",
                        "–",
                        "–",
                        entry.get("undefined_reason") or "",
                    ]
                )
            else:
                ci = entry.get("ci95") or [None, None]
                below = next((v for k, v in entry.items() if k.startswith("p_alpha_below_0_8")), None)
                rows.append(
                    [
                        name,
                        _f(entry.get("alpha")),
                        f"{_f(ci[0])} – {_f(ci[1])}",
                        _f(below, 2),
                        entry.get("units", "–"),
                        entry.get("coders", "–"),
                        _f(entry.get("majority_share"), 2),
                        _f(entry.get("with_llm_alpha")),
                        _f(entry.get("changed_from_draft"), 2),
                        entry.get("rare_values_note") or "",
                    ]
                )
            if entry.get("field") in ("relation_pattern", "relation_pattern_presence"):
                presence = presence or {}
                presence[entry["field"]] = {
                    "label": name,
                    "alpha": entry.get("alpha") if entry.get("defined") is not False else None,
                    "units": entry.get("units"),
                }
        if presence is not None and "relation_pattern_presence" not in presence:
            presence = None
        return {"kind": "summary", "rows": rows, "presence": presence}
    figures = summary_rows(agreement)
    if not figures:
        return {"kind": "none", "rows": [], "presence": None}
    return {
        "kind": "figures",
        "rows": [
            [
                r["figure"],
                _f(r["alpha"]),
                f"{_f(r['ci_low'])} – {_f(r['ci_high'])}",
                r["units"] if r["units"] is not None else "–",
                r["coders"] if r["coders"] is not None else "–",
                r["note"],
            ]
            for r in figures
        ],
        "presence": None,
    }


def _f(value, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _pct(share) -> str:
    return "–" if share is None else f"{100 * share:.1f}%"


def _coded_work(agreement: dict) -> dict | None:
    """The coded revisions the agreement report compared and those it left out, by reason: the report's own
    overall slice, the figures the agreement page and API show (the adjudication page counts the same rule)."""
    report = agreement.get("report") or {}
    slices = report.get("slices")
    if not isinstance(slices, list) or not slices:
        return None
    overall = slices[0]
    scope = report.get("work_scope") or {}
    return {
        "work_scope": scope.get("label"),
        "rule": scope.get("rule"),
        "revisions": overall.get("revisions", 0),
        "rows": overall.get("rows"),
        "clips": overall.get("clips"),
        "annotators": len(overall.get("annotators") or []),
        "left_out": left_out_summary(overall.get("left_out") or {}),
    }


def _validity(entry: dict) -> dict | None:
    """Contract C2: a free-text field's validity verdict, when the report gives one."""
    v = entry.get("validity")
    if not isinstance(v, dict) or v.get("verdict") not in ("validated", "weak", "not_validated"):
        return None
    return {
        "verdict": v["verdict"],
        "validated": v["verdict"] == "validated",
        "wording": v.get("wording") or "similarity of wording and topic",
        "auroc": v.get("auroc"),
        "interval": v.get("interval"),
        "pairs": v.get("pairs"),
    }


def _texts(agreement: dict, judgements: dict | None = None) -> dict | None:
    """The free-text figures (``agreement.json``'s ``semantic`` entry); None when the release has none.
    ``judgements``: the judgements of meaning the validity read, as the manifest records them (releases frozen
    before they were recorded have none, and their card names none)."""
    semantic = agreement.get("semantic")
    if not isinstance(semantic, dict):
        return None
    if not semantic.get("available"):
        return {"state": "unavailable", "reason": semantic.get("reason") or "no report"}
    report = semantic["report"]
    if not report.get("coded_work"):
        return {"state": "empty", "reason": report.get("empty_reason")}
    rows, validity = [], []
    for entry in report["summary"]:
        ci = entry.get("ci95") or [None, None]
        v = _validity(entry)
        if v:
            validity.append({"label": entry["label"], "verdict_words": v["verdict"].replace("_", " "), **v})
        rows.append(
            [
                entry["label"],
                _f(entry["alpha"]) if entry["defined"] else "undefined",
                f"{_f(ci[0])} – {_f(ci[1])}" if entry["defined"] else "–",
                entry["units"],
                _f(entry["mean_similarity"], 2),
                _f(entry["baseline_similarity"], 2),
                _f(entry["with_llm_alpha"]),
                (v["wording"] if v and not v["validated"] else "agreement on meaning" if v else "")
                + ("; " if v and entry.get("undefined_reason") else "")
                + (entry.get("undefined_reason") or ""),
            ]
        )
    # The heading speaks of meaning only when every field with a verdict is validated (contract C2); without verdicts
    # it keeps the measure's own name and says what embeddings judge.
    meaning = bool(validity) and all(v["validated"] for v in validity)
    wording = next((v["wording"] for v in validity if not v["validated"]), "similarity of wording and topic")
    judged = {"count": judgements["count"], "date": (judgements["as_of"] or "")[:10]} if judgements else None
    if judged is not None:
        judged["judge"] = _judge(judgements.get("judge"), (report.get("meaning") or {}).get("judge_run"))
    return {
        "state": "figures",
        "model": report["model"],
        "rows": rows,
        "validity": validity,
        "meaning": meaning,
        "any_verdict": bool(validity),
        "wording": wording,
        "judgements": judged,
    }


def _judge(recorded: dict | None, run: dict | None) -> dict | None:
    """The LLM judge the release's free-text validity read (as the manifest records it), when it read any verdict or
    showed a judge run's alpha; None for releases frozen before the judge was recorded (their card names none)."""
    if not recorded or not (recorded["verdicts"] or recorded["run"] is not None):
        return None
    return {
        "model": recorded["model"],
        "prompt_version": recorded["prompt_version"],
        "verdicts": recorded["verdicts"],
        "run_date": ((run or {}).get("finished_at") or "")[:10] if recorded["run"] is not None else None,
    }


def _coders_record(stats: dict) -> dict | None:
    """Contract C3: the coders' anonymised record, when stats.json carries one."""
    coders = stats.get("coders")
    if not isinstance(coders, dict) or "count" not in coders:
        return None
    per_coder = [p for p in coders.get("per_coder") or [] if isinstance(p, dict)]
    return {
        "count": coders["count"],
        "qualification": [q for q in coders.get("qualification") or [] if isinstance(q, dict)],
        "per_coder": per_coder,
        "rows": [
            [p.get("coder", "–"), _f(p.get("alpha_all")), _f(p.get("alpha_without")), _f(p.get("agreement_with_gold"))]
            for p in per_coder
        ],
    }


def _human_work(stats: dict, agreement: dict) -> dict:
    """``human_work``'s facts (the release page's), with the per-task words the card adds."""
    human = release_human_work(stats, agreement)
    gold = human["gold"]
    if gold:
        keys = [r["key"] for r in gold["overall"]]
        human["gold_table"] = {
            "header": ["field", "values", *keys],
            "rows": [["**all fields**", gold["values"], *(_pct(r["share"]) for r in gold["overall"])]]
            + [[f["title"], f["values"], *(_pct(r["share"]) for r in f["rows"])] for f in gold["fields"]],
        }
    anchoring = human["anchoring"]
    if anchoring and anchoring["measurable"]:
        human["anchoring_rows"] = [
            [
                m["label"],
                _f((m["anchored"].get("human_human") or {}).get("alpha")),
                _f((m["from_empty"].get("human_human") or {}).get("alpha")),
                _effect(m["human_human"]),
                _f((m["anchored"].get("human_draft") or {}).get("alpha")),
                _f((m["from_empty"].get("human_draft") or {}).get("alpha")),
                _effect(m["human_draft"]),
            ]
            for m in anchoring["measures"]
        ]
    if gold:
        human["gold_overall"] = [[r["words"], r["count"], _pct(r["share"])] for r in gold["overall"]]
    drafting = human["drafting"]
    if drafting:
        rows = []
        for t in drafting["tasks"]:
            if not t["applicable"]:
                rows.append([t["task"], "–", f"not applicable: {t['reason']}", "", "", ""])
            elif not t["instances"]:
                rows.append([t["task"], t["metric"], "no test instances", "", "", ""])
            else:
                iv = t["interval"] or {}
                against = t["against_best_rule"] or {}
                rows.append(
                    [
                        t["task"],
                        t["metric"],
                        _f(t["score"]),
                        f"[{iv['ci_low']:.3f}, {iv['ci_high']:.3f}]" if iv.get("ci_low") is not None else "no interval",
                        f"{t['best_rule']} {t['best_rule_score']:.3f}",
                        _f(against.get("difference"))
                        + (f" (p {against['p']})" if against.get("p") else "")
                        + (" · far above" if t["far_above"] else ""),
                    ]
                )
        human["drafting_rows"] = rows
        human["far_tasks"] = ", ".join(t["task"] for t in drafting["tasks"] if t.get("far_above"))
    human["far_above"] = FAR_ABOVE
    return human


def _effect(entry: dict | None) -> str:
    if not entry or entry.get("difference") is None:
        return "–"
    ci = entry.get("ci95")
    return (
        f"{entry['difference']:.3f} [{ci[0]:.3f}, {ci[1]:.3f}]"
        if ci and ci[0] is not None
        else f"{entry['difference']:.3f} (no interval)"
    )


def _studied(provenance: dict, computable: bool) -> list[str]:
    studied = ["disagreement"] if computable else []
    if provenance["drafts"]["rows"] and not provenance.get("synthetic"):
        studied.append("the effect of a pre-annotation draft")
    return [*studied, "label ambiguity"]


def _files_table(files: dict[str, bytes]) -> list[list[str]]:
    rows = [list(r) for r in FILE_ROWS]
    if any(p.startswith("predictions/") for p in files):
        rows.insert(
            4,
            [
                "`predictions/drafting_model/<task>.jsonl`",
                "the drafting model's answers to every instance (its stored drafts read as predictions), scored in "
                "`stats.json` under `drafting_model`",
            ],
        )
    return rows


def _evaluate_example(configs: list[dict]) -> dict:
    """The ``evaluate`` command's example: a task with instances, on a split this release has (STP first)."""
    by_name = {c["name"]: [f["split"] for f in c["files"]] for c in configs}
    task = next((t for t in ("stp", *LOADING_PREFERENCE) if t in by_name), "stp")
    split = next((s for s in ("test", "validation", "train") if s in by_name.get(task, [])), "test")
    return {"task": task, "split": split}


def _limits(corpus: dict) -> dict:
    scenarios = corpus["scenarios"]
    smaller = min(scenarios, key=lambda s: (s["clips"], s["name"])) if len(scenarios) > 1 else None
    return {
        "missing": " or ".join(corpus["missing_scenarios"]),
        "scenario_share": ", ".join(f"{s['name']} {count_noun(s['clips'], 'clip')} ({s['share']})" for s in scenarios),
        "smaller": smaller,
    }


def card_facts(
    *, manifest: dict, stats: dict, agreement: dict, files: dict[str, bytes], guidance: dict | None = None
) -> dict:
    """Every fact the card states, from the release's files.

    ``manifest``: the manifest (or, during a freeze, its head: ``release``, ``inputs`` and any
    ``task_profile``); ``files``: {path: bytes} of the release's other files (README.md and the
    manifest not needed); ``guidance``: the project guidance version the release ships, as
    ``codebook.selectors.release_guidance`` gives it (None when none).
    """
    release, inputs = manifest["release"], manifest["inputs"]
    provenance = stats["provenance"]
    computable, why = reliability_computable(provenance, agreement)
    configs = _configs(files)
    corpus = _corpus(stats)
    return {
        "release": {"name": release["name"], "slug": release["project"], "version": release["version"]},
        "inputs": inputs,
        "front": {
            "pretty_name": f"{release['name']} {release['version']}",
            "licence": LICENCE_NAME,
            "size_category": _size_category(corpus["total"]["rows"]),
            "configs": configs,
        },
        "loading": _loading(configs),
        "incomplete": _incomplete(inputs, stats["corpus"]),
        "synthetic": bool(provenance.get("synthetic")),
        "imported_clips": bool(provenance["clip_origin"]["counts"].get(CLIP_IMPORTED)),
        "corpus": corpus,
        "row_keys": ", ".join(CONVENTION_ROW_KEYS),
        "tasks": {"rows": _task_rows(stats), "rules": _rules(inputs), "instances": _instance_counts(stats)},
        "task_profile": _task_profile(manifest, stats),
        "prediction_fields": list(PREDICTION_FIELDS.items()),
        "bootstrap_method": bootstrap.METHOD,
        "baselines": _baselines(stats),
        "labels": _labels(stats),
        "long_tail": _long_tail(stats),
        "long_tail_share": f"{LONG_TAIL_SHARE:.0%}",
        "rpp_instances": stats["tasks"]["rpp"]["counts"][ALL][ALL]["instances"],
        "rpp_any_instances": stats["tasks"][RPP_ANY_SPEAKER]["counts"][ALL][ALL]["instances"],
        "provenance": {
            "paragraphs": [" ".join(p) for p in provenance_sentences(provenance)],
            "clips": provenance["clips"],
            "clips_with_media": provenance.get("clips_with_media", 0),
            # Recorded since the study design (issue 22); releases frozen before say nothing of it.
            "mode_choice": provenance["coders"][PLATFORM].get("mode_choice") or [],
        },
        "guidelines": _guidelines(inputs, provenance, guidance),
        "reliability": {
            "computable": computable,
            "why": why,
            "coders": coder_origin_sentence(provenance) if computable else "",
        },
        "coded_work": _coded_work(agreement) if computable else None,
        "agreement_table": _summary_table(agreement) if computable else None,
        "texts": _texts(agreement, inputs.get("meaning_judgements")) if computable else None,
        "human": _human_work(stats, agreement),
        "coders_record": _coders_record(stats),
        "studied": ", ".join(_studied(provenance, computable)),
        "group_map_clips": len(inputs.get("group_map") or {}),
        "files_table": _files_table(files),
        "row_fields": [list(r) for r in ROW_FIELDS],
        "evaluate_example": _evaluate_example(configs),
        "limits": _limits(corpus),
        "therapy_words": therapy_words(stats),
        "licence_text": LICENCE_TEXT,
        "card_template": CARD_TEMPLATE,
    }


def facts_of_folder(folder: str | Path, guidance: dict | None = None) -> dict:
    """``card_facts`` of a release folder on disk (its manifest, stats, agreement report and files)."""
    folder = Path(folder)
    manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    files = {rel: (folder / rel).read_bytes() for rel in manifest["files"]}
    return card_facts(
        manifest=manifest,
        stats=json.loads(files["stats.json"]),
        agreement=json.loads(files["agreement.json"]),
        files=files,
        guidance=guidance,
    )
