"""A qualification round's scores per field and its feedback, row by row and field by field.

The trainee and the gold are two coders of the round's rows; each field is scored with the measure
and level the agreement report uses for it (``agreement.fields``: nominal labels, MASI for target
sets, interval for the speaker's emotion intensity), as Krippendorff's alpha with its bootstrap
interval, beside the plain share of rows where the trainee's value is the gold's (the hand count).
"""

from __future__ import annotations

from ..agreement.fields import MEASURES, MEASURES_BY_KEY, value_label
from ..codebook.selectors import EMPTY_VALUES, MEASURE_FIELDS, confused_pair_links
from ..models import Project
from ..taxonomy import load_taxonomy
from .measures import alpha_figure, encode, matching

# The measures an attempt is scored on (every label measure of the agreement report, not the presence flags).
SCORED = tuple(m for m in MEASURES if not m.key.startswith("presence_") and m.key != "relation_pattern_presence")
# The fields feedback lists differences for (one entry per document part; MASI repeats the target sets).
FEEDBACK = ("utterance_type", "relation_pattern", "strategy_type", "support_target", "target", "emotion_intensity")


def measure_label(key: str) -> str:
    return MEASURES_BY_KEY[key].label


def score(units: list[dict], *, seed: int = 0) -> dict:
    """Per measure key: alpha (with interval) and the matching count of the trainee against the gold.

    ``units``: one per row of the round, {"speaker", "gold": content, "coder": content}.
    """
    out = {}
    for measure in SCORED:
        rows = [u for u in units if measure.applies_to(u["speaker"])]
        values = [
            [measure.value(u["coder"], u["speaker"]) for u in rows],
            [measure.value(u["gold"], u["speaker"]) for u in rows],
        ]
        codes, domain = encode(values, measure)
        figure = alpha_figure(codes, domain, measure.level, seed=seed)
        out[measure.key] = {**figure, "matching": matching(codes), "label": measure.label, "level": measure.level}
    return out


def passes(scores: dict, rule: dict) -> tuple[bool, list[str]]:
    """Whether ``scores`` meet ``rule`` ({"fields", "min_score", "min_rows"}), and why not."""
    why = []
    for key in rule["fields"]:
        figure = scores.get(key) or {}
        rows = (figure.get("matching") or {}).get("rows", 0)
        if rows < rule["min_rows"]:
            why.append(f"{measure_label(key)}: {rows} rows compared, the rule needs at least {rule['min_rows']}")
        elif figure.get("alpha") is None:
            why.append(f"{measure_label(key)}: alpha undefined ({figure.get('reason')})")
        elif figure["alpha"] < rule["min_score"]:
            why.append(
                f"{measure_label(key)}: alpha {figure['alpha']:.2f}, the rule needs at least {rule['min_score']:.2f}"
            )
    return not why, why


def _rules_for_pair(taxonomy, field: str, labels: list[str]) -> list[dict]:
    return [
        {"title": r.title, "text": r.text} for r in taxonomy.rules if r.field == field and set(labels) <= set(r.labels)
    ]


def feedback(project: Project, scenario: str, units: list[dict]) -> list[dict]:
    """Per row where the trainee's coding differs from the gold: each differing field with the gold value,
    the trainee's, the lead's note, the taxonomy's boundary rule and the project's guidance for that pair."""
    taxonomy = load_taxonomy(scenario, project.taxonomy_version)
    out = []
    pair_cache: dict[tuple, dict] = {}
    for u in units:
        fields = []
        for key in FEEDBACK:
            measure = MEASURES_BY_KEY[key]
            if not measure.applies_to(u["speaker"]):
                continue
            mine, gold = measure.value(u["coder"], u["speaker"]), measure.value(u["gold"], u["speaker"])
            if mine == gold:
                continue
            entry = {
                "field": key,
                "label": measure.label,
                "gold": "(not coded)" if gold is None else value_label(gold),
                "mine": "(not coded)" if mine is None else value_label(mine),
                "rules": [],
                "guidance": None,
            }
            if key in MEASURE_FIELDS and mine is not None and gold is not None:
                pair = tuple(sorted((mine, gold)))
                if (key, pair) not in pair_cache:
                    field = MEASURE_FIELDS[key]
                    labels = [EMPTY_VALUES.get(v, v) for v in pair]
                    link = confused_pair_links(
                        project, key, [{"values": list(pair)}], scenario, "qualification feedback"
                    )[0]
                    existing = link.get("existing")
                    pair_cache[(key, pair)] = {
                        "rules": _rules_for_pair(taxonomy, field, labels),
                        "guidance": existing and {"title": existing["title"], "text": existing["text"]},
                    }
                entry.update(pair_cache[(key, pair)])
            fields.append(entry)
        if fields:
            out.append(
                {
                    "sample_id": u["sample_id"],
                    "row_index": u["row_index"],
                    "speaker": u["speaker"],
                    "dialogue": u["dialogue"],
                    "note": u["note"],
                    "fields": fields,
                }
            )
    return out
