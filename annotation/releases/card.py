"""``README.md``: the dataset card, for a researcher who has never seen this platform.

Hugging Face YAML front matter declares one config per task plus the
benchmark rows, each with its split files, so that
``datasets.load_dataset(<folder>, <config>)`` works on the folder as is.
The body is generated from ``stats.json``, ``agreement.json`` and the freeze
inputs; it states what the numbers say (imbalance, long tails, how well the
ITP shortcut does) rather than leaving the reader to find it.
"""
from __future__ import annotations

import json
from dataclasses import dataclass

from tasks import bootstrap
from tasks.profiles import PLATFORM_V1
from tasks.profiles.rescue_v1 import RULES_TEXT as RESCUE_RULES_TEXT
from tasks.rules import ALL_TASKS, PREDICTION_FIELDS, RPP_ANY_SPEAKER, TASKS

from ..agreement.card import texts_section
from ..schema import CONVENTION_ROW_KEYS
from ..taxonomy import boundary_rules_markdown
from .agreement_report import summary_rows
from .croissant import config_files
from .labels import NO_PATTERN, NO_STRATEGY, NOT_ANNOTATED
from .provenance import CLIP_IMPORTED, PLATFORM, coder_origin_sentence, provenance_sentences, reliability_computable
from .splits import SPLITS
from .stats import ALL

LICENCE_NAME = "research-only"
LICENCE_TEXT = (
    "Research use only. The transcripts and annotations may be used for non-commercial research and "
    "teaching; they may not be redistributed outside this release, used to identify or contact the "
    "people in the clips, or used for clinical decisions."
)
LONG_TAIL_SHARE = 0.02  # labels rarer than this (within their field and scenario) are called out
SHORTCUT_CLOSE = 0.05  # the ITP shortcut is "close" to a reference when within this much F1

TASK_TABLE = {
    "itp": ("support", "After a client's row: does the therapist speak next?", "`yes` / `no`", "precision, recall, **F1** on `yes`"),
    "rpp": ("understanding", "Which relation pattern organises this moment?", "a relation-pattern label", "**accuracy** (top-1), macro-F1"),
    "stp": ("support", "Whom will the therapist address with support?", "a participant or the group label", "Recall@1..3, **MRR**"),
    "ssp": ("support", "Which support strategy will the therapist use (target given)?", "a strategy label", "Recall@1..3, **MRR**"),
    "er": ("understanding", "What does the speaker feel, and how strongly?", "emotion description + intensity 0–10", "judge score 1–5 (LLM); **intensity match** (rule-based)"),
    "vp": ("understanding", "What viewpoints does the speaker hold about others?", "list of (source, target, viewpoint)", "**judge score** (LLM, not computed here); source/target recovery (rule-based; saturated by a trivial rule)"),
    RPP_ANY_SPEAKER: ("understanding", "RPP over every row that carries a label (variant)", "a relation-pattern label", "**accuracy**, macro-F1"),
}

RULES_TEXT = {
    "itp": (
        "A decision point is the boundary after a row not spoken by the therapist. It is positive (`yes`) "
        "when the next row is the therapist's, negative (`no`) when the next row is another non-therapist "
        "row. Within each clip the larger class is sampled down (seeded) so that both classes have the same "
        "size; clips without a candidate of either class contribute nothing. Context: the rows up to and "
        "including the current one."
    ),
    "rpp": (
        "Rows whose `relation_cycle_state` holds a relation-pattern label of the clip's scenario. In the "
        "public RESCUE-BENCH release this key is carried by therapist rows (client rows leave it empty or "
        "omit it), and the public evaluation code reads it; this rule therefore reproduces the instance "
        "counts the original paper reports, even though the paper's prose describes RPP as not restricted "
        "to therapist turns. Rows labelled `\"\"` (\"no clear pattern\") are left out. Clips annotated on this "
        "platform mirror the relation pattern of therapist rows into `relation_cycle_state`, so the same rule "
        "applies to them. Context: the rows up to and including the labelled row. The candidate labels "
        "(the scenario's set) are given with each instance."
    ),
    RPP_ANY_SPEAKER: (
        "The any-speaker variant allowed by the task definition: every row with a relation-pattern label of "
        "its scenario under either key (the key the row itself uses first, then the other). It is a separate "
        "config (`rpp_any_speaker`) and not one of the six headline tasks."
    ),
    "stp": (
        "Therapist rows. The gold target is the first support strategy's target, or the row's own target "
        "when the row has no strategy. A single participant or the group label (`Couple`/`Family`) is "
        "taken as is; a list naming every participant counts as the group label; anything else cannot be "
        "resolved and the row is dropped. Candidates: the clip's participants, then the group label. "
        "Context: the rows before the therapist's row (the row itself would give the answer away)."
    ),
    "ssp": (
        "Like STP, and the first strategy's type must be a label of the scenario's strategy set. The "
        "resolved target is given as input; the candidate strategies are the scenario's set. Context: the "
        "rows before the therapist's row."
    ),
    "er": (
        "Rows not spoken by the therapist or the group label, that carry an `internal_emotion` entry for "
        "the speaker with an integer intensity 0–10, and whose dialogue has at least {er_min_words} words. "
        "The first {er_skip_earliest} such rows of each clip are skipped (they have little context), then at "
        "most {er_max_per_clip} per clip are sampled uniformly (seeded). Context: the rows up to and including "
        "the row."
    ),
    "vp": (
        "Rows not spoken by the therapist or the group label with at least one viewpoint whose source is the "
        "speaker and whose target and text are non-empty; at most {vp_max_per_clip} per clip, sampled "
        "uniformly (seeded). The gold is every such viewpoint of the row. Context: the rows up to and "
        "including the row."
    ),
}

ROW_FIELDS = (
    ("timing & entities", "`start_time`, `end_time` (seconds), `primary_speaker`, `target` (list; never the speaker), `row_index` (1-based)"),
    ("verbal content", "`dialogue_cleaned` (faithful transcript, not paraphrased), `utterance_type` (`\"\"` on therapist rows), `background_dialogue` (overlapping speech)"),
    ("individual cues", "`tone_of_voice`, `body_posture`, `facial_expressions`, `self_directed_behavior` (lists of `{person, description}`), `internal_emotion` (`{person, emotion_description, intensity 0–10}`)"),
    ("relational stance", "`interaction_behavior` (`{initiator, target[], description}`), `viewpoints_attitudes` (`{source, target, viewpoint, attitude}`)"),
    ("therapist strategy", "`support_strategy` (`{provider: \"Therapist\", target[], strategy_type, strategy_content}`; therapist rows only)"),
    ("relation pattern", "`relation_pattern` / `relation_cycle_state` (label, `\"\"` = no clear pattern, `null` = not annotated), with `*_reason` and `*_evidence_rows` (see below)"),
)


@dataclass
class CardInputs:
    project_name: str
    project_slug: str
    version: str
    inputs: dict  # the manifest's "inputs"
    stats: dict
    agreement: dict
    files: dict  # {relative path: bytes}, README.md and manifest.json excluded
    # The project guidance version the card ships (``codebook.selectors.release_guidance``), or None.
    guidance: dict | None = None


def _yaml_str(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)  # a JSON string is a valid YAML scalar


def _size_category(n: int) -> str:
    for limit, name in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M")):
        if n < limit:
            return name
    return "n>1M"


def front_matter(card: CardInputs) -> str:
    rows = card.stats["corpus"][ALL][ALL]["rows"]
    lines = [
        "---",
        f"pretty_name: {_yaml_str(f'{card.project_name} {card.version}')}",
        "license: other",
        f"license_name: {LICENCE_NAME}",
        "language:",
        "- en",
        "task_categories:",
        "- text-classification",
        "- text-generation",
        "tags:",
        "- dialogue",
        "- couple-therapy",
        "- family-therapy",
        "- benchmark",
        "size_categories:",
        f"- {_size_category(rows)}",
        "configs:",
    ]
    for config, splits in config_files(card.files).items():
        present = {s: p for s, p in splits.items() if card.files[p]}
        if not present:
            continue
        lines.append(f"- config_name: {config}")
        if config == "rows":
            lines.append("  default: true")
        lines.append("  data_files:")
        for split, path in present.items():
            lines += [f"  - split: {split}", f"    path: {path}"]
    lines.append("---")
    return "\n".join(lines) + "\n"


def _table(header: list[str], rows: list[list]) -> str:
    def cell(v):
        if isinstance(v, float):
            return f"{v:.3f}"
        return str(v).replace("|", "\\|").replace("\n", " ")

    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(out) + "\n"


def _hours(seconds: float) -> str:
    return f"{seconds / 3600:.1f} h"


def _share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "–"


def _scenarios(stats: dict) -> list[str]:
    return [s for s in stats["corpus"] if s != ALL]


def _incomplete_splits_notice(card: CardInputs) -> str:
    """The card's first lines when the lead froze a scenario whose groups do not reach every split."""
    accepted = card.inputs.get("accepted_incomplete") or []
    if not accepted:
        return ""
    corpus = card.stats["corpus"]
    wanted = [s for s in SPLITS if card.inputs["split_ratios"][s] > 0]
    parts = []
    for scenario in accepted:
        missing = [s for s in wanted if corpus[scenario][s]["clips"] == 0]
        groups = corpus[scenario][ALL]["groups"]
        consequence = f"no result on the test split says anything about {scenario} therapy" if "test" in missing else "compare systems on it with care"
        parts.append(
            f"the **{scenario}** scenario has {groups} relationship group{'s' if groups != 1 else ''} and therefore no "
            f"{' and no '.join(missing)} split ({consequence})"
        )
    return (
        "> **Incomplete splits.** In this release " + "; ".join(parts) + ". Splits keep each couple or family whole, so a "
        "scenario needs at least one relationship group per split; the lead accepted this shortfall explicitly when "
        "freezing the release.\n\n"
    )


def _intro(card: CardInputs) -> str:
    corpus = card.stats["corpus"]
    total = corpus[ALL][ALL]
    parts = ", ".join(f"{corpus[s][ALL]['clips']} {s}" for s in _scenarios(card.stats))
    prov = card.stats["provenance"]
    text = f"# {card.project_name} — release {card.version}\n\n" + _incomplete_splits_notice(card)
    if prov.get("synthetic"):
        text += (
            "> **Synthetic data.** Every clip of this release was produced by the platform's synthetic generator "
            "(invented names and dialogue, labels drawn to resemble the real benchmark's frequencies). It exists to "
            "test the release pipeline and tooling; do not report results on it as results on therapy dialogue.\n\n"
        )
    text += (
        f"A benchmark of annotated couple- and family-therapy dialogue. It holds **{total['clips']} clips** "
        f"({parts}) from **{total['groups']} couples or families**, **{total['rows']:,} rows** and "
        f"{_hours(total['duration_seconds'])} of interaction. Each clip is a short, self-contained segment of a "
        "therapy session, transcribed into *rows*: interaction units in which one person speaks to one or more "
        "others. Every row is annotated along six dimensions — timing and entities, verbal content, individual "
        "cues (tone, posture, facial expression, self-directed behaviour, internal emotion), relational stance "
        "(behaviour towards others, viewpoints and attitudes), the therapist's support strategy, and the relation "
        "pattern that organises the moment. The released annotation is the *gold* version; how it was made, as far as "
        "the platform recorded it, is described below.\n\n"
        "From the rows the release derives six benchmark tasks, in two groups: **support** (when should the "
        "therapist intervene, towards whom, with which strategy) and **understanding** (which relation pattern is "
        "at work, what a person feels, what they think of the others). The rows, the task instances, the splits, "
        "baselines, label statistics and "
        + (
            "agreement figures"
            if reliability_computable(prov, card.agreement)[0]
            else "an agreement report (which says why this release carries no reliability figure)"
        )
        + " are all in this folder, with checksums.\n\n"
    )
    return text


def _files_section(card: CardInputs) -> str:
    rows = [
        ["`data/{train,validation,test}.jsonl`", "the benchmark rows: one clip per line, in the RESCUE-BENCH release format, sorted by sample id"],
        ["`data/all.jsonl`", "every clip of the release in one file (the union of the three splits)"],
        ["`data/row_records/{train,validation,test}.jsonl`", "the same rows, one per line, each with its clip's `sample_id` and `scenario`"],
        ["`tasks/<task>/{train,validation,test}.jsonl`", "task instances (`itp`, `rpp`, `stp`, `ssp`, `er`, `vp`, and the `rpp_any_speaker` variant)"],
        ["`stats.json`", "clip, row and duration counts per scenario and split; label distributions; instance counts; baseline scores; transition matrices"],
        ["`agreement.json`", "inter-annotator agreement for the released clips (or why it is not available)"],
        ["`figures/`", "label distributions per scenario and split; relation-pattern transition matrices"],
        ["`croissant.json`", "MLCommons Croissant 1.0 metadata for the same files"],
        ["`manifest.json`", "how the release was made (project, seed, split ratios, taxonomy and rule versions, clip list) and the SHA-256 and size of every other file"],
    ]
    loading = (
        "```python\n"
        "from datasets import load_dataset\n\n"
        "rows = load_dataset(\"path/to/this/folder\", \"rows\")               # clips, one per record\n"
        "itp_test = load_dataset(\"path/to/this/folder\", \"itp\", split=\"test\")\n"
        "```\n\n"
        "Plain `json` works as well: every `.jsonl` file has one JSON object per line.\n\n"
    )
    return "## What is in this folder\n\n" + _table(["path", "content"], rows) + "\n" + loading


def _glance(card: CardInputs) -> str:
    corpus = card.stats["corpus"]
    rows = []
    for scenario in [*_scenarios(card.stats), ALL]:
        for split in (*SPLITS, ALL):
            c = corpus[scenario][split]
            rows.append([scenario, split, c["groups"], c["clips"], c["rows"], _hours(c["duration_seconds"])])
    return "### Clips, rows and duration per scenario and split\n\n" + _table(["scenario", "split", "groups", "clips", "rows", "duration"], rows) + "\n"


def _data_section(card: CardInputs) -> str:
    text = "## The data: clips and rows\n\n"
    text += (
        "Each line of `data/*.jsonl` is one clip with the fields `sample_id` (`<relationship group>/<clip>`, e.g. "
        "`maya_and_tobias/003_session2_part1`, or `family_therapy/<NNN>/merged` for a family), `scenario` (`couple` or `family`, which decides the label sets), "
        "`participants` (the on-screen people, without the therapist; their order carries no meaning), "
        "`source_file` and `rows`. Person fields only ever hold a participant's name, `Therapist`, or the group "
        "label (`Couple` / `Family`, meaning everyone at once); people who are only talked about appear in "
        "free text, never as entities.\n\n"
        "The six dimensions of a row:\n\n"
    )
    text += _table(["dimension", "fields"], [[a, b] for a, b in ROW_FIELDS]) + "\n"
    text += (
        "Three states of the relation pattern are distinct and kept apart: a label, `\"\"` (an annotator looked "
        "and found no clear dominant pattern) and `null` (nobody annotated the row for it). Empty lists are `[]`, "
        "never `null`. Text is kept exactly as it was transcribed or imported, and nothing was silently repaired"
        + (
            # Only imported clips can carry the public release's mojibake.
            ": rows imported from another release (such as the public RESCUE-BENCH release) may contain a few "
            "characters of mojibake (UTF-8 punctuation once mis-decoded as Latin-1).\n\n"
            if card.stats["provenance"]["clip_origin"]["counts"].get(CLIP_IMPORTED)
            else ".\n\n"
        )
        + "### Row keys: where the relation pattern lives\n\n"
        "Two key families carry the relation pattern, for historical reasons:\n\n"
        "- `relation_pattern`, `relation_pattern_reason`, `relation_pattern_evidence_rows` — the label as "
        "annotated on the row, with a short evidence-based reason and the 1-based rows of the same clip it "
        "rests on;\n"
        "- `relation_cycle_state`, `relation_cycle_reason`, `relation_cycle_evidence_rows` — an older key. In the "
        "public RESCUE-BENCH release, therapist rows carry their label here (and the public evaluation code reads "
        "it for RPP), while client rows carry `relation_pattern`; some clips carry both families on every row.\n\n"
        "Clips imported from an existing release keep their keys, key order and values exactly as they came, so "
        "their lines are byte-identical to the source. Clips annotated on this platform follow one regular "
        "convention: every row carries all six keys; `relation_pattern*` hold the label as annotated on that row "
        "(`null` when nobody annotated it) and `relation_cycle_*` mirror the same label on therapist rows "
        "(`\"\"` and `[]` on the other rows), so the public evaluation code reads them unchanged. Their key order is:\n\n"
        "```\n" + ", ".join(CONVENTION_ROW_KEYS) + "\n```\n\n"
        "To read a row's label whatever its origin: take `relation_cycle_state` on therapist rows that carry it "
        "(or on rows without `relation_pattern`), `relation_pattern` otherwise. `stats.json` counts labels this way.\n\n"
    )
    return text + _glance(card)


def _task_section(card: CardInputs) -> str:
    tasks = card.stats["tasks"]
    params = card.inputs["rule_parameters"]
    rows = []
    for task in ALL_TASKS:
        group, question, gold, metric = TASK_TABLE[task]
        counts = tasks[task]["counts"][ALL]
        rows.append([f"**{task}**" if task in TASKS else task, group, question, gold, metric, *(counts[s]["instances"] for s in SPLITS), counts[ALL]["clips"]])
    text = "## The tasks\n\n"
    text += _table(["task", "group", "question", "gold", "metric (primary in bold)", "train", "validation", "test", "clips"], rows) + "\n"
    text += f"### How instances are built (rule version {card.inputs['rule_version']})\n\n"
    text += (
        "Every instance looks only backwards: its context is the clip's rows up to its decision point, never a "
        "later row. A context row holds only what is observable — `row_index`, `start_time`, `end_time`, "
        "`primary_speaker`, `target`, `dialogue_cleaned` — not the annotations of earlier rows (they would give "
        "other rows' gold away); join back to `data/` through `clip_id` and `row_index` if you want them. "
        "Sampling is seeded by (release seed, task, clip), so a clip yields the same instances whatever else "
        "the release contains.\n\n"
    )
    # The instances' rules are the task profile's (tasks.profiles; releases without one: platform-v1).
    profile = card.inputs.get("task_profile", PLATFORM_V1)
    rules_text = RULES_TEXT if profile == PLATFORM_V1 else RESCUE_RULES_TEXT
    if profile != PLATFORM_V1:
        text += f"Task profile `{profile}`: the instances, their context and the metrics follow the public benchmark's evaluation code.\n\n"
    for task in ALL_TASKS:
        text += f"- **{task.upper() if task in TASKS else task}** — {rules_text[task].format(**params)}\n"
    text += (
        "\nAn instance is one JSON object:\n\n"
        "```json\n"
        '{"id": "stp:<sample_id>:<row_index>", "task": "stp", "clip_id": "<sample_id>", "row_index": 12,\n'
        ' "scenario": "couple", "split": "test", "participants": ["...", "..."],\n'
        ' "context": [{"row_index": 1, "start_time": 0.0, "end_time": 4.2, "primary_speaker": "...", "target": ["Therapist"], "dialogue_cleaned": "..."}],\n'
        ' "candidates": ["...", "...", "Couple"], "gold": "Couple"}\n'
        "```\n\n"
        "Task inputs besides the context: `candidates` (RPP, STP, SSP, VP), `target` (SSP), `speaker` (ER, VP). "
        "The id `<task>:<sample_id>:<row_index>` is stable across releases built with the same rule version "
        "from the same clip.\n\n"
    )
    return text


def _evaluation_section(card: CardInputs) -> str:
    formats = "\n".join(f"- {task}: `{field}`" for task, field in PREDICTION_FIELDS.items())
    return (
        "## Evaluating a system\n\n"
        "Write one JSON object per instance, with its `id` and the field the public evaluation code uses:\n\n"
        f"{formats}\n\n"
        "(`should_speak` is `\"yes\"`/`\"no\"`; the `*_top3` fields are ranked lists, best first; "
        "`predicted_intensity_score` is a number 0–10; `predicted_viewpoints` is a list of "
        "`{source, target, viewpoint}`.) Then, on the platform that made this release:\n\n"
        "```sh\n"
        "python manage.py evaluate --release path/to/this/folder --task stp --split test predictions.jsonl --by scenario\n"
        "python manage.py evaluate --release path/to/this/folder --task stp --split test predictions.jsonl --baseline other.jsonl\n"
        "```\n\n"
        "It prints every metric with a 95% confidence interval next to the task's trivial rules (below), naming the "
        "strongest, overall and, with `--by scenario`, for each scenario. **Intervals and tests resample relationship "
        f"groups**, the unit of independence (instances of one couple or family share the same people): {bootstrap.METHOD}. "
        + _test_groups_sentence(card)
        + "Differences between systems smaller than the spread between groups are not evidence. With `--baseline`, a paired bootstrap (both systems on the same resampled groups) tests the "
        "difference; its p-value is two-sided, and with B resamples the smallest one reported is `p < 1/(B+1)`, never 0. "
        "Missing or malformed predictions are counted, reported and scored as wrong — never dropped; a scenario for which "
        "the file has no prediction at all is left out and named (a file made for the family clips is a family result, "
        "not a result with every couple instance missing). For ER and VP only the rule-based parts are computed "
        "(intensity match = max(1, 5 − |predicted − gold|); recovery of the gold viewpoints' sources, targets and "
        "(source, target) pairs); the judge scores need an LLM judge and are not part of this release's tooling.\n\n"
    )


def _test_groups_sentence(card: CardInputs) -> str:
    corpus = card.stats["corpus"]
    groups = corpus[ALL]["test"]["groups"]
    parts = ", ".join(f"{corpus[s]['test']['groups']} {s}" for s in _scenarios(card.stats))
    if groups >= bootstrap.MIN_GROUPS:
        return f"This release's test split holds {groups} relationship group{'s' if groups != 1 else ''} ({parts}). "
    return (
        f"This release's test split holds only {groups} relationship group{'s' if groups != 1 else ''} ({parts}), fewer than {bootstrap.MIN_GROUPS}: "
        "its results come without intervals, and no single test score here is a precise estimate. "
    )


SATURATED = 0.9  # a trivial rule at or above this share of a metric's range saturates it


def _share_of_range(metric: str, value: float) -> float:
    """Where ``value`` sits in the metric's range (intensity match runs from 1 to 5, the others from 0 to 1)."""
    return (value - 1) / 4 if metric == "intensity_match" else value


def _score_with_interval(entry: dict, metric: str) -> str:
    value = f"{entry['scores'][entry['best_rule']][metric]:.3f}"
    interval = entry["best_interval"]
    if interval.get("unreliable"):
        return f"{value} (no interval: {entry['groups']} group{'s' if entry['groups'] != 1 else ''})"
    return f"{value} [{interval['ci_low']:.3f}, {interval['ci_high']:.3f}]"


def _baseline_section(card: CardInputs) -> str:
    baselines = card.stats["baselines"]
    text = "## Baselines: the scores a system must beat\n\n"
    text += (
        "Splits keep every couple and family whole, so nobody in the test split was seen in training, and a baseline "
        "that predicts names learned from training cannot transfer. The trivial rules use only what does: the labels of "
        "the scenario's closed sets, the roles of the people in the instance, or nothing at all. *majority*: the "
        "training split's most frequent answer (RPP, SSP: the scenario's labels ranked by training frequency); *random*: "
        "the exact expected score of a uniform answer over the instance's candidates; ITP *shortcut*: `yes` exactly when "
        "the current row is addressed to the therapist; STP *group_label*, *last_client*, *most_client*: rank first the "
        "group label, the client who spoke last, or the client who spoke most in the context; VP *speaker_about_others*: "
        "the speaker's viewpoint about every other participant.\n\n"
        "For every task and scenario, the strongest trivial rule on the **test split** (by the primary metric; for VP, "
        "by pair recovery), its score with a 95% interval over relationship groups, and every rule's score "
        "(validation and train values are in `stats.json`):\n\n"
    )
    rows = []
    for task in ALL_TASKS:
        entry = baselines[task]
        metric = entry["headline_metric"]
        for scope, cell in entry["splits"]["test"].items():
            if not cell["instances"]:
                rows.append([task, entry["primary_metric"] or f"none ({metric} shown)", scope, 0, cell["groups"], "–", "no test instances", ""])
                continue
            rows.append(
                [
                    task,
                    entry["primary_metric"] or f"none ({metric} shown)",
                    scope,
                    cell["instances"],
                    cell["groups"],
                    cell["best_rule"],
                    _score_with_interval(cell, metric),
                    ", ".join(f"{name} {scores[metric]:.3f}" for name, scores in cell["scores"].items()),
                ]
            )
    text += _table(["task", "primary metric", "scenario", "test instances", "groups", "strongest trivial rule", "its score (95% interval)", "every rule"], rows) + "\n"
    text += "### What each task is judged on\n\n"
    for task in ALL_TASKS:
        entry = baselines[task]
        text += f"- **{task.upper() if task in TASKS else task}**: {entry['primary_metric_reason']}{_saturation_note(entry)}\n"
    text += "\n" + _shortcut_paragraph(baselines.get("itp")) + "\n"
    return text


def _saturation_note(entry: dict) -> str:
    """Say so when a trivial rule nearly saturates the task's headline metric on the test split."""
    cell = entry["splits"]["test"][ALL]
    if not cell["instances"]:
        return ""
    metric, best = entry["headline_metric"], cell["best_rule"]
    value = cell["scores"][best][metric]
    if _share_of_range(metric, value) < SATURATED:
        return ""
    verdict = "so it is reported, not primary" if entry["primary_metric"] is None else "so compare systems on it with the rule's score beside them"
    return f" On this release's test split the trivial rule *{best}* already reaches {metric} {value:.3f}: the metric is saturated, {verdict}."


def _shortcut_paragraph(itp: dict | None) -> str:
    if not itp:
        return ""
    test = itp["splits"]["test"][ALL]
    if "shortcut" not in test.get("scores", {}):
        return "The ITP shortcut baseline could not be scored: the test split has no ITP instances.\n"
    scores = test["scores"]
    shortcut = scores["shortcut"]["f1"]
    references = {name: values["f1"] for name, values in scores.items() if name != "shortcut"}
    best_name, best = max(references.items(), key=lambda kv: kv[1]) if references else ("random", 0.0)
    text = (
        f"**The ITP shortcut.** A one-rule baseline says `yes` exactly when the current row is addressed to the "
        f"therapist (`Therapist` is among its targets). On the test split it reaches F1 = {shortcut:.3f} "
        f"(precision {scores['shortcut']['precision']:.3f}, recall {scores['shortcut']['recall']:.3f}), against "
        f"{best:.3f} for the best other trivial rule ({best_name}). "
    )
    if shortcut >= best + SHORTCUT_CLOSE:
        text += (
            "Addressee cues alone already beat the trivial baselines clearly, so ITP partly measures turn-taking "
            "cues rather than clinical judgement: **a model that does not beat the shortcut clearly has not shown "
            "clinical timing**. Report the shortcut next to your model's score."
        )
    elif shortcut >= best - SHORTCUT_CLOSE:
        text += (
            "The shortcut scores close to the trivial baselines here, so addressee cues alone do not solve the "
            "task on this release; still report it next to your model's score, since a model may exploit the same cue."
        )
    else:
        text += "The shortcut does worse than the trivial baselines on this release; addressee cues alone do not solve it."
    return text + "\n"


def _labels_section(card: CardInputs) -> str:
    dist = card.stats["label_distributions"]
    fields = card.stats["label_fields"]
    text = "## Label distributions\n\n"
    text += "Counts over all splits; per-split counts are in `stats.json`, and `figures/label_distributions_<scenario>.png` compares the splits.\n\n"
    for field in ("relation_pattern", "support_strategy", "utterance_type"):
        text += f"### {field.replace('_', ' ').capitalize()}\n\n*Counted over {fields[field]}.*\n\n"
        scenarios = list(dist[field])
        labels: list[str] = []
        for s in scenarios:
            labels += [k for k in dist[field][s][ALL] if k not in labels]
        rows = []
        for label in labels:
            row = [label]
            for s in scenarios:
                counts = dist[field][s][ALL]
                total = sum(counts.values())
                row.append(f"{counts[label]} ({_share(counts[label], total)})" if label in counts else "n/a")
            rows.append(row)
        text += _table(["label", *scenarios], rows) + "\n"
    return text


def _long_tail(card: CardInputs) -> list[str]:
    dist = card.stats["label_distributions"]
    rare = []
    for field in ("relation_pattern", "support_strategy", "utterance_type"):
        for scenario, per_split in dist[field].items():
            counts = {k: v for k, v in per_split[ALL].items() if k not in (NO_PATTERN, NOT_ANNOTATED, NO_STRATEGY)}
            total = sum(counts.values())
            for label, n in counts.items():
                if total and n / total < LONG_TAIL_SHARE:
                    rare.append(f"`{label}` ({field.replace('_', ' ')}, {scenario}: {n} of {total})")
    return rare


def _provenance_section(card: CardInputs) -> str:
    """Every sentence from a recorded fact (``provenance``); nothing inferred from a kind of document being there."""
    text = "## How the data was made\n\n"
    text += (
        "What follows is what the platform's database records about the released clips: import records, drafts and "
        "their runs, assignments, adjudication decisions. Where nothing is recorded, it says so.\n\n"
    )
    for paragraph in provenance_sentences(card.stats["provenance"]):
        text += " ".join(paragraph) + "\n\n"
    return text


def _guidelines_section(card: CardInputs) -> str:
    """The taxonomy's boundary rules and the project's guidance, and only as much about their use as the database records."""
    version = card.inputs["taxonomy_version"]
    # Cards of releases under taxonomy 1 were frozen before the card listed the rules, and cards of releases
    # frozen before releases recorded guidance have no guidance; both must reproduce byte for byte.
    if version == "1":
        return "" if "guidance" not in card.inputs else "## Annotation guidelines\n\n" + _guidance_text(card)
    text = "## Annotation guidelines\n\n"
    if card.stats["provenance"]["coders"][PLATFORM]["assignments"]:
        text += (
            f"The platform shows these rules of taxonomy version {version} next to each choice; the coders it "
            "assigned worked with them in view.\n\n"
        )
    else:
        text += (
            f"These are the rules of taxonomy version {version} as the platform shows them next to each choice. No "
            "coder of this release worked on this platform, so they document the labels, not how the gold was "
            "decided.\n\n"
        )
    text += boundary_rules_markdown(version)
    if "guidance" in card.inputs:
        text += _guidance_text(card)
    return text


def _versions_counted(counts: dict) -> str:
    """``version 1: 12, version 2: 30, none recorded: 40`` from a ``{"1": 12, ..., "none": 40}`` count."""
    return ", ".join(f"{'none recorded' if key == 'none' else f'version {key}'}: {n}" for key, n in counts.items()) or "none"


def _guidance_text(card: CardInputs) -> str:
    """The project's own guidance as the release records it: the version in force at the freeze with
    who wrote each entry and when, and the versions the released rows were saved under."""
    record, shipped = card.inputs["guidance"], card.guidance
    text = "### Project guidance\n\n"
    if shipped is None:
        text += "The project had written no guidance of its own when this release was frozen.\n\n"
    else:
        text += (
            f"The project's own guidance, version {shipped['version']} (written against taxonomy version "
            f"{shipped['taxonomy_version']}; last changed by {shipped['created_by'] or 'an unrecorded user'} on "
            f"{shipped['created_at']}), was in force when this release was frozen. The platform shows it to coders "
            "beside the boundary rules wherever they choose one of its labels. Each entry names the lead who wrote it, "
            "when, and the guidance version it was written in.\n\n"
        )
        for e in shipped["entries"]:
            body = "\n  ".join(line.strip() for line in e["text"].splitlines() if line.strip())
            text += (
                f"- *{e['title']}* ({e['field_title'].lower()}, {e['scenario_title']}; written by {e['written_by']} on "
                f"{e['written_at'][:10]}, version {e['version']}): {body}\n"
            )
        text += "\n"
    text += (
        "Each revision and each gold row records the guidance version in force when it was last saved on the "
        f"platform. Revisions of the released rows: {_versions_counted(record['revisions'])}. Gold rows: "
        f"{_versions_counted(record['gold'])}. *None recorded* means saved before the project had guidance, never "
        "saved on the platform, or imported from a file.\n\n"
    )
    return text


def _fmt(value, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _agreement_section(card: CardInputs) -> str:
    text = "## Annotator agreement\n\n"
    computable, why = reliability_computable(card.stats["provenance"], card.agreement)
    if not computable:
        return text + why + "\n\n"
    return _label_agreement(card, text) + texts_section(card.agreement, _table)


def _label_agreement(card: CardInputs, text: str) -> str:
    report = card.agreement.get("report") or {}
    summary = report.get("summary")
    text += coder_origin_sentence(card.stats["provenance"]) + "\n\n"
    text += (
        "Krippendorff's alpha per field over the released clips, among the coders, with a 95% bootstrap "
        "interval, the probability that alpha is below 0.800 (the customary threshold for reliable data; 0.667 for "
        "tentative conclusions), the number of units and coders behind it, and the share of the most frequent value "
        "(a high share explains a low alpha on rare labels). *With LLM* treats the draft as one more coder (the "
        "drafts' origin is stated above); *changed from draft* is the share of the coders' values that differ from "
        "the draft, i.e. how much the coders corrected it. The full report (per scenario, anchored vs. calibration assignments, every "
        "pair of coders, confusion matrices, the method) is in `agreement.json`.\n\n"
    )
    if isinstance(summary, list) and summary:
        rows = []
        for entry in summary:
            if not isinstance(entry, dict):
                continue
            if entry.get("defined") is False:
                rows.append([entry.get("label") or entry.get("field"), "undefined", "–", "–", entry.get("units", "–"), entry.get("coders", "–"), "–", "–", "–", entry.get("undefined_reason") or ""])
                continue
            ci = entry.get("ci95") or [None, None]
            below = next((v for k, v in entry.items() if k.startswith("p_alpha_below_0_8")), None)
            rows.append(
                [
                    entry.get("label") or entry.get("field"),
                    _fmt(entry.get("alpha")),
                    f"{_fmt(ci[0])} – {_fmt(ci[1])}",
                    _fmt(below, 2),
                    entry.get("units", "–"),
                    entry.get("coders", "–"),
                    _fmt(entry.get("majority_share"), 2),
                    _fmt(entry.get("with_llm_alpha")),
                    _fmt(entry.get("changed_from_draft"), 2),
                    entry.get("rare_values_note") or "",
                ]
            )
        text += _table(["field", "alpha", "95% interval", "P(α<0.800)", "units", "coders", "majority share", "with LLM", "changed from draft", "note"], rows)
        return text + "\n"
    figures = summary_rows(card.agreement)
    if not figures:
        return text + "The report holds no per-field alpha figures; see `agreement.json`.\n\n"
    text += _table(
        ["figure", "alpha", "95% interval", "units", "coders", "note"],
        [[r["figure"], _fmt(r["alpha"]), f"{_fmt(r['ci_low'])} – {_fmt(r['ci_high'])}", r["units"] if r["units"] is not None else "–", r["coders"] if r["coders"] is not None else "–", r["note"]] for r in figures],
    )
    return text + "\n"


def _uses_section(card: CardInputs) -> str:
    prov = card.stats["provenance"]
    studied = ["disagreement"] if reliability_computable(prov, card.agreement)[0] else []
    if prov["drafts"]["rows"] and not prov.get("synthetic"):
        studied.append("the effect of a pre-annotation draft")
    studied.append("label ambiguity")
    return (
        "## Intended uses\n\n"
        "- Benchmarking language models on understanding relational dynamics in multi-party therapy dialogue "
        "(relation patterns, emotions, viewpoints) and on the timing, target and kind of therapist support.\n"
        f"- Studying annotation itself: {', '.join(studied)}.\n\n"
        "## Out-of-scope uses\n\n"
        "- Clinical decisions, diagnosis or assessment of real couples, families or individuals. The labels are "
        "readings of short clips, not clinical evaluations of the people in them.\n"
        "- Deploying a model as an autonomous therapist or as a substitute for one because it scores well here.\n"
        "- Identifying, profiling or contacting the people who appear in the clips.\n\n"
    )


def _limitations_section(card: CardInputs) -> str:
    corpus = card.stats["corpus"]
    total = corpus[ALL][ALL]["clips"]
    scenario_share = ", ".join(f"{s} {corpus[s][ALL]['clips']} clips ({_share(corpus[s][ALL]['clips'], total)})" for s in _scenarios(card.stats))
    rare = _long_tail(card)
    tasks = card.stats["tasks"]
    text = "## Known limitations\n\n"
    missing = [s for s in ("couple", "family") if s not in corpus]
    if missing:
        text += f"- **One scenario only.** This release has no {' or '.join(missing)} clips ({scenario_share}); its results say nothing about {' or '.join(missing)} therapy.\n"
    else:
        text += (
            f"- **Scenario imbalance.** {scenario_share}. The smaller scenario rests on few clips and few "
            "relationship groups; expect wide confidence intervals and report scenarios separately.\n"
        )
    if rare:
        text += f"- **Long-tailed labels.** These labels make up less than {LONG_TAIL_SHARE:.0%} of their field: " + "; ".join(rare) + ". Macro-averaged scores are dominated by few examples of them.\n"
    else:
        text += f"- **Label imbalance.** No label falls below {LONG_TAIL_SHARE:.0%} of its field, but the distributions above are far from uniform; accuracy alone hides that.\n"
    text += (
        f"- **RPP is narrow by construction.** It uses the `relation_cycle_state` key only (see the rules): "
        f"{tasks['rpp']['counts'][ALL][ALL]['instances']} instances, against "
        f"{tasks[RPP_ANY_SPEAKER]['counts'][ALL][ALL]['instances']} in the any-speaker variant.\n"
        "- **Sampled ER and VP.** At most a few rows per clip are instances, and their judge-based scores are not "
        "computed here; the rule-based parts (intensity, source/target) are a partial view of those tasks.\n"
        + _vp_note(card)
        + "- **Small units of analysis.** Splits are by couple or family, so the test split holds few relationship "
        "groups; differences between systems smaller than the confidence intervals are not evidence.\n"
        + _text_only_note(card)
        + "- **Row segmentation is an annotation decision**, and relation patterns are judged over short clips "
        "without knowledge of the rest of a session.\n\n"
    )
    return text


def _text_only_note(card: CardInputs) -> str:
    """What the release leaves out of what the coders could perceive: as far as the platform records it."""
    prov = card.stats["provenance"]
    with_media, clips = prov.get("clips_with_media", 0), prov["clips"]
    text = "- **Text only.** The release holds transcripts and annotations, no recordings. "
    if with_media:
        return text + (
            f"{with_media:,} of its {clips:,} clips had a recording on the platform, so their nonverbal cues may rest on "
            "what a text-only model cannot see.\n"
        )
    return text + (
        "No recording of its clips is on the platform, so how their nonverbal cues were perceived (a recording seen "
        "elsewhere, or the words alone) is not recorded here.\n"
    )


def _vp_note(card: CardInputs) -> str:
    """Say so when VP's rule-based part is nearly solved by a trivial rule."""
    vp = card.stats["baselines"].get("vp")
    cell = vp["splits"]["test"][ALL] if vp else {"instances": 0}
    if not cell["instances"] or cell["scores"][cell["best_rule"]]["pair_recovery"] < 0.8:
        return ""
    return (
        f"- **VP recovery is nearly trivial.** The source of a gold viewpoint is the speaker by construction, and the "
        f"trivial rule *{cell['best_rule']}* already recovers {cell['scores'][cell['best_rule']]['pair_recovery']:.0%} of the "
        "(source, target) pairs on the test split: compare systems on the viewpoint text (judge score), not on recovery alone.\n"
    )


def _splits_section(card: CardInputs) -> str:
    ratios = card.inputs["split_ratios"]
    mapped = card.inputs.get("group_map") or {}
    text = (
        "## Splits\n\n"
        "Splits are made by **relationship group**, never by row or clip: every clip of a couple or family is in "
        "the same split, so no person appears in two splits. A clip's group is its `sample_id` without the last "
        "path segment (`alan_and_evelyn/003_s01e02_ct81_segment02` → `alan_and_evelyn`; "
        "`family_therapy/014/merged` → `family_therapy/014`, each number a different family); clips of one scenario "
        "whose participants overlap are joined into one group whatever their ids say"
        + (f", and the lead placed {len(mapped)} clips in groups of their own choosing (recorded in `manifest.json`)" if mapped else "")
        + ". Groups are assigned within each scenario (stratified), in an order fixed by the seed, each to the split "
        "furthest below its share of the scenario's rows. Ratios (train / validation / test): "
        f"{ratios['train']} / {ratios['validation']} / {ratios['test']} of rows; seed {card.inputs['seed']}. The "
        "same clips, seed, ratios and grouping always give the same splits; the manifest lists every clip with its "
        "group and split.\n\n"
    )
    return text


def _closing_section(card: CardInputs) -> str:
    return (
        "## Licence\n\n"
        f"{LICENCE_TEXT}\n\n"
        "## Reproducibility and integrity\n\n"
        f"`manifest.json` records the inputs of this release (project `{card.project_slug}`, version "
        f"`{card.version}`, seed {card.inputs['seed']}, taxonomy version {card.inputs['taxonomy_version']}, task "
        f"rule version {card.inputs['rule_version']}, data as of {card.inputs['data_as_of']}), every clip with its "
        "split and the SHA-256 of its line, and the SHA-256 and size of every other file. Check a copy with\n\n"
        "```sh\n"
        "python manage.py verify_release path/to/this/folder\n"
        "```\n\n"
        "or with any SHA-256 tool against `manifest.json`. A release is never changed after it is frozen; "
        "corrections come as a new version, and `manage.py diff_releases OLD NEW` lists what changed.\n"
    )


def render_card(card: CardInputs) -> str:
    return "".join(
        [
            front_matter(card),
            "\n",
            _intro(card),
            _files_section(card),
            _data_section(card),
            _task_section(card),
            _evaluation_section(card),
            _baseline_section(card),
            _splits_section(card),
            _labels_section(card),
            _provenance_section(card),
            _guidelines_section(card),
            _agreement_section(card),
            _uses_section(card),
            _limitations_section(card),
            _closing_section(card),
        ]
    )
