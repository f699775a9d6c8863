"""Instance builders of the ``rescue-v1`` task profile: the public benchmark's own evaluation code, rule by rule.

The reference is the RESCUE-BENCH repository's ``task/`` folder (read, not
copied). Each function names the public function whose behaviour it
reproduces; ``docs/tasks.md`` lists the rules, the caveats and the tests
that check each one (``tests/test_task_profile_rescue_v1.py``).

Row positions: the public scripts number rows by their position in the clip
(``enumerate(rows, start=1)``); release rows carry the same number as
``row_index``, which is what instances are keyed by.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from itertools import pairwise
from typing import Any

from annotation.taxonomy import THERAPIST

# Labels the public code never treats as a client (``valid_client_speaker``).
GROUP_LABELS = frozenset({"Couple", "Family"})
# ``evaluate_user_understanding.CHECKPOINT_SAMPLING_START_RATIO``
EARLY_RATIO = 0.3
# ``evaluate_user_understanding.word_count``: runs of ASCII letters, digits and apostrophes.
WORD = re.compile(r"[A-Za-z0-9']+")


@dataclass(frozen=True)
class RescueParameters:
    """The public scripts' command-line defaults, recorded in the manifest as the profile's parameters."""

    context_rows: int = 3  # --context-size of ITP, STP, SSP, ER and VP (RPP: every previous row)
    itp_max_per_class: int = 0  # --max-candidates-per-class-per-sample (0: no cap before balancing)
    er_min_words: int = 5  # --min-dialogue-words
    er_skip_ratio: float = EARLY_RATIO  # rows in the first ceil(ratio * rows) positions are never ER checkpoints
    er_max_per_clip: int = 5  # --checkpoints-per-sample
    vp_max_per_clip: int = 5  # --checkpoints-per-sample

    def as_dict(self) -> dict:
        return asdict(self)


DEFAULTS = RescueParameters()


def clean(value: Any) -> str:
    """``eval_common.clean_text``: the value as text, stripped (None and "" are "")."""
    return str(value or "").strip()


def is_therapist(label: Any) -> bool:
    return clean(label) == THERAPIST


def is_client(label: Any) -> bool:
    """``valid_client_speaker``: a non-empty speaker that is neither the therapist nor a group label."""
    speaker = clean(label)
    return bool(speaker) and speaker != THERAPIST and speaker not in GROUP_LABELS


def word_count(text: Any) -> int:
    return len(WORD.findall(clean(text)))


def parse_intensity(value: Any) -> int | None:
    """``parse_intensity``: the value rounded to a whole number (Python's rounding), if it lies in 0..10."""
    try:
        intensity = round(float(value))
    except (TypeError, ValueError, OverflowError):
        return None
    return intensity if 0 <= intensity <= 10 else None


def _evenly(items: Sequence, limit: int, single: int) -> list:
    """The shared body of ``even_sample`` and ``pick_evenly``: the items at positions
    ``round(k·(n−1)/(limit−1))`` for k = 0..limit−1 (Python's rounding, halves to even), repeats
    dropped and made up from the start of the list; ``single`` is the position taken when limit is 1."""
    if limit <= 0 or len(items) <= limit:
        return list(items)
    if limit == 1:
        return [items[single]]
    chosen: list = []
    for rank in range(limit):
        item = items[round(rank * (len(items) - 1) / (limit - 1))]
        if item not in chosen:
            chosen.append(item)
    for item in items:
        if len(chosen) >= limit:
            break
        if item not in chosen:
            chosen.append(item)
    return chosen[:limit]


def even_sample(items: Sequence, limit: int) -> list:
    """``evaluate_intervention_timing_multimodal.even_sample`` (one item: the middle one)."""
    return _evenly(items, limit, len(items) // 2)


def pick_evenly(items: Sequence, limit: int) -> list:
    """``evaluate_user_understanding.pick_evenly`` / ``evaluate_user_viewpoints.pick_evenly`` (one item: the first)."""
    return _evenly(items, limit, 0)


def canonical_target(values) -> tuple[str, ...]:
    """``eval_common.canonical_target``: the named labels, the therapist left out (not de-duplicated)."""
    return tuple(label for label in (clean(v) for v in values or []) if label and label != THERAPIST)


def target_label(target: tuple[str, ...], group_label: str) -> str:
    """``eval_common.target_label``: one name stays itself; two or more become the group label."""
    if not target:
        return ""
    return target[0] if len(target) == 1 else group_label


def infer_participants(rows: Sequence[dict]) -> list[str]:
    """``eval_common.infer_participants``: speakers and targets in order of first mention, therapist and group labels
    left out."""
    out: list[str] = []

    def add(label) -> None:
        name = clean(label)
        if name and name != THERAPIST and name not in GROUP_LABELS and name not in out:
            out.append(name)

    for row in rows:
        add(row.get("primary_speaker"))
        for target in row.get("target") or []:
            add(target)
        for item in row.get("support_strategy") or []:
            if isinstance(item, dict):
                for target in item.get("target") or []:
                    add(target)
    return out


def candidate_targets(rows: Sequence[dict], group_label: str) -> list[str]:
    """``eval_common.build_candidate_target_labels``: the participants, the group label, then the label
    of every other target a therapist row or its strategies name, once each, in order."""
    seen: list[tuple[str, ...]] = []

    def add(values) -> None:
        target = canonical_target(values)
        if target and target not in seen:
            seen.append(target)

    for name in infer_participants(rows):
        add([name])
    add([group_label])
    for row in rows:
        if is_therapist(row.get("primary_speaker")):
            add(row.get("target") or [])
            for item in row.get("support_strategy") or []:
                if isinstance(item, dict):
                    add(item.get("target") or [])
    labels = [target_label(t, group_label) for t in seen]
    return [label for label in dict.fromkeys(labels) if label]


def first_strategy(row: dict) -> tuple[str, tuple[str, ...]]:
    """(the first support strategy's type, its target, else the row's target) as
    ``current_row_support_target`` / ``current_row_strategy`` read them."""
    items = row.get("support_strategy") or []
    if not items:
        return "", ()
    first = items[0] if isinstance(items[0], dict) else {}
    return clean(first.get("strategy_type")), canonical_target(first.get("target") or []) or canonical_target(
        row.get("target") or []
    )


def build_itp(clip, rng: random.Random, params: RescueParameters):
    """``evaluate_intervention_timing_multimodal.build_targets``: boundaries after a non-therapist row,
    ``yes`` when the therapist speaks next, ``no`` when another non-therapist row follows; each class
    picked evenly (``even_sample``) down to the smaller one's size; a clip lacking either gives nothing."""
    rows = clip.rows
    positives, negatives = [], []
    for current, following in pairwise(rows):
        if is_therapist(current.get("primary_speaker")):
            continue
        (positives if is_therapist(following.get("primary_speaker")) else negatives).append(current["row_index"])
    if params.itp_max_per_class > 0:
        positives, negatives = (
            even_sample(positives, params.itp_max_per_class),
            even_sample(negatives, params.itp_max_per_class),
        )
    k = min(len(positives), len(negatives))
    if k <= 0:
        return
    chosen = {index: "yes" for index in even_sample(positives, k)} | {
        index: "no" for index in even_sample(negatives, k)
    }
    for index in sorted(chosen):
        yield index, {}, chosen[index]


def build_rpp(clip, rng: random.Random, params: RescueParameters):
    """``evaluate_relation_cycle_prediction_multimodal``: therapist rows (``--target-speaker-filter``'s
    default) whose ``relation_cycle_state`` is non-empty, read from the rows (``load_embedded_relation_gold_map``)."""
    candidates = [x.label for x in clip.taxonomy.relation_patterns]
    for row in clip.rows:
        label = clean(row.get("relation_cycle_state"))
        if label and is_therapist(row.get("primary_speaker")):
            yield row["row_index"], {"candidates": candidates}, label


def build_rpp_any_speaker(clip, rng: random.Random, params: RescueParameters):
    """The same with ``--target-speaker-filter any``: every row with a non-empty ``relation_cycle_state``."""
    candidates = [x.label for x in clip.taxonomy.relation_patterns]
    for row in clip.rows:
        label = clean(row.get("relation_cycle_state"))
        if label:
            yield row["row_index"], {"candidates": candidates}, label


def build_stp(clip, rng: random.Random, params: RescueParameters):
    """``evaluate_support_target_prediction_multimodal.build_targets``: therapist rows whose first support
    strategy has a type; gold = its target, else the row's, as one name or the group label."""
    candidates = candidate_targets(clip.rows, clip.group_label)
    for row in clip.rows:
        if not is_therapist(row.get("primary_speaker")):
            continue
        strategy, target = first_strategy(row)
        gold = target_label(target, clip.group_label) if strategy else ""
        if gold:
            yield row["row_index"], {"candidates": candidates if gold in candidates else [*candidates, gold]}, gold


def build_ssp(clip, rng: random.Random, params: RescueParameters):
    """``evaluate_strategy_prediction_multimodal.build_targets``: as STP, and the type is one of the
    scenario's strategies; the target is given as input."""
    labels = [x.label for x in clip.taxonomy.support_strategies]
    for row in clip.rows:
        if not is_therapist(row.get("primary_speaker")):
            continue
        strategy, target = first_strategy(row)
        if strategy not in labels:
            continue
        gold_target = target_label(target, clip.group_label)
        if gold_target:
            yield row["row_index"], {"target": gold_target, "candidates": labels}, strategy


def _emotion(row: dict, speaker: str) -> tuple[str, int] | None:
    """``select_gold_internal_emotion``: the first entry of the speaker with a description and a valid intensity."""
    for item in row.get("internal_emotion") or []:
        if not isinstance(item, dict) or clean(item.get("person")) != speaker:
            continue
        emotion, intensity = clean(item.get("emotion_description")), parse_intensity(item.get("intensity"))
        if emotion and intensity is not None:
            return emotion, intensity
    return None


def early_cutoff(total_rows: int, ratio: float = EARLY_RATIO) -> int:
    """``split_candidates_by_early_cutoff``: how many leading row positions give no checkpoint,
    ``min(rows − 1, ceil(rows × ratio))``, computed in floating point as there (for 0.3 and clips of
    fewer than 500 rows it is the exact ceiling)."""
    if total_rows <= 1:
        return 0
    return min(total_rows - 1, math.ceil(total_rows * ratio))


def build_er(clip, rng: random.Random, params: RescueParameters):
    """``evaluate_user_understanding.select_checkpoints``: client rows with at least ``er_min_words``
    words and the speaker's emotion; rows in the first ``early_cutoff`` positions dropped; then
    ``er_max_per_clip`` picked evenly."""
    cutoff = early_cutoff(len(clip.rows), params.er_skip_ratio)
    found = []
    for position, row in enumerate(clip.rows, start=1):
        speaker = clean(row.get("primary_speaker"))
        if not is_client(speaker):
            continue
        emotion = _emotion(row, speaker)
        if emotion is None or word_count(row.get("dialogue_cleaned")) < max(0, params.er_min_words):
            continue
        if position > cutoff:
            found.append((row["row_index"], speaker, emotion))
    for index, speaker, (description, intensity) in sorted(pick_evenly(found, params.er_max_per_clip)):
        yield index, {"speaker": speaker}, {"emotion_description": description, "intensity": intensity}


def viewpoints(row: dict, speaker: str) -> list[dict]:
    """``normalize_gold_viewpoints``: the speaker's viewpoints with a target and a text, attitude kept."""
    out = []
    for item in row.get("viewpoints_attitudes") or []:
        if not isinstance(item, dict):
            continue
        source, target, text = clean(item.get("source")), clean(item.get("target")), clean(item.get("viewpoint"))
        if source == speaker and target and text:
            out.append({"source": source, "target": target, "viewpoint": text, "attitude": clean(item.get("attitude"))})
    return out


def build_vp(clip, rng: random.Random, params: RescueParameters):
    """``evaluate_user_viewpoints.select_checkpoints``: client rows with a viewpoint of the speaker's,
    ``vp_max_per_clip`` picked evenly."""
    found = []
    for row in clip.rows:
        speaker = clean(row.get("primary_speaker"))
        if is_client(speaker):
            views = viewpoints(row, speaker)
            if views:
                found.append((row["row_index"], speaker, views))
    everyone = [*clip.participants, THERAPIST, clip.group_label]
    for index, speaker, views in sorted(pick_evenly(found, params.vp_max_per_clip), key=lambda item: item[0]):
        yield index, {"speaker": speaker, "candidates": [p for p in everyone if p != speaker]}, views


def context_span(task: str, index: int, params: RescueParameters) -> tuple[int, int]:
    """(first, end) of an instance's context as positions in the clip's rows (``rows[first:end]``).

    ``multimodal_eval_common.build_prior_context_rows``: the ``context_rows`` rows before the point the
    model predicts. ITP predicts the row after the decision row, so its window ends with the decision
    row; STP and SSP predict the therapist row itself, which is not shown; ER and VP show the labelled
    row after the rows before it; RPP's default (``--context-size -1``, no ``--include-current-turn``)
    is every row before the labelled one, without it.
    """
    window = params.context_rows
    if task == "itp":
        end = index
    elif task in ("er", "vp"):
        end, window_end = index, index - 1
        return (max(0, window_end - window) if window > 0 else window_end), end
    else:
        end = index - 1
    if task.startswith("rpp") or window < 0:
        return 0, end
    return max(0, end - window), end


BUILDERS = {
    "itp": build_itp,
    "rpp": build_rpp,
    "stp": build_stp,
    "ssp": build_ssp,
    "er": build_er,
    "vp": build_vp,
    "rpp_any_speaker": build_rpp_any_speaker,
}


# One sentence per task saying how ``rescue-v1`` builds its instances (for the dataset card), with the
# parameters' names as format fields.
RULES_TEXT = {
    "itp": (
        "boundaries after a non-therapist row: `yes` when the therapist speaks next, `no` when another non-therapist "
        "row follows; per clip both classes are picked evenly (the candidates at positions round(k·(n−1)/(m−1))) down "
        "to the smaller class's size m; clips lacking either class give none. Context: the {context_rows} rows up to "
        "and including the decision row."
    ),
    "rpp": (
        "therapist rows whose `relation_cycle_state` is non-empty. Context: every row before the labelled one, "
        "without it."
    ),
    "stp": (
        "therapist rows whose first support strategy has a type (the rows of SSP); gold: that strategy's target, else "
        "the row's, the therapist left out; two or more people are the group label. Context: the {context_rows} rows "
        "before the therapist row."
    ),
    "ssp": "as STP, and the strategy is one of the scenario's; the support target is given. Context as STP.",
    "er": (
        "client rows of at least {er_min_words} words (runs of letters, digits and apostrophes) with the speaker's "
        "emotion and an intensity 0–10; rows in the first ceil({er_skip_ratio}·rows) positions of the clip are "
        "skipped; at most {er_max_per_clip} per clip, picked evenly. Context: the {context_rows} rows before the row, "
        "then the row."
    ),
    "vp": (
        "client rows with a viewpoint of the speaker's with a target and a text (the gold keeps each viewpoint's "
        "attitude); at most {vp_max_per_clip} per clip, picked evenly. Context as ER."
    ),
    "rpp_any_speaker": (
        "every row with a non-empty `relation_cycle_state` (the public code's `--target-speaker-filter "
        "any`). Context as RPP."
    ),
}
