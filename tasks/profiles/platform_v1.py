"""Instance builders of the ``platform-v1`` task profile: this platform's earlier, seeded rules (docs/tasks.md).

Each builder takes a clip (``tasks.instances.ClipView``), a ``random.Random``
and the profile's parameters (``tasks.rules.RuleParameters``), and yields
``(row_index, inputs, gold)`` for the clip. Sampling (ITP balancing, ER and VP
caps) draws from that ``random.Random``, which ``tasks.instances`` seeds with
``<seed>/<task>/<sample_id>``: the same clip gives the same instances whatever
else the release holds.
"""

from __future__ import annotations

import random

from annotation.schema import relation_label, relation_label_key
from annotation.taxonomy import THERAPIST

from ..rules import CONTEXT_INCLUDES_ROW, NO, RPP_ANY_SPEAKER, YES, RuleParameters


def _sample(rng: random.Random, items: list, k: int) -> list:
    """At most ``k`` of ``items``, uniformly, kept in their original (row) order."""
    if len(items) <= k:
        return items
    return [items[i] for i in sorted(rng.sample(range(len(items)), k))]


def build_itp(clip, rng: random.Random, params: RuleParameters):
    """Boundaries after a non-therapist row: ``yes`` if the therapist speaks next,
    ``no`` if another non-therapist row follows; balanced per clip by sampling
    the larger class down; clips lacking either class give nothing."""
    positives, negatives = [], []
    for current, following in zip(clip.rows, clip.rows[1:]):
        if current["primary_speaker"] == THERAPIST:
            continue
        (positives if following["primary_speaker"] == THERAPIST else negatives).append(current["row_index"])
    k = min(len(positives), len(negatives))
    if k == 0:
        return
    keep = set(_sample(rng, positives, k)) | set(_sample(rng, negatives, k))
    positive_set = set(positives)
    for index in sorted(keep):
        yield index, {}, YES if index in positive_set else NO


def build_rpp(clip, rng: random.Random, params: RuleParameters):
    """Rows whose ``relation_cycle_state`` is a label of the scenario (the public
    release's therapist rows; "" = no clear pattern is left out)."""
    labels = clip.taxonomy.relation_labels
    candidates = [x.label for x in clip.taxonomy.relation_patterns]
    for row in clip.rows:
        label = row.get("relation_cycle_state")
        if isinstance(label, str) and label in labels:
            yield row["row_index"], {"candidates": candidates}, label


def build_rpp_any_speaker(clip, rng: random.Random, params: RuleParameters):
    """Variant: every row with a label under either key (the row's own key first)."""
    labels = clip.taxonomy.relation_labels
    candidates = [x.label for x in clip.taxonomy.relation_patterns]
    for row in clip.rows:
        own = relation_label_key(row)
        other = "relation_pattern" if own == "relation_cycle_state" else "relation_cycle_state"
        label = relation_label(row) or row.get(other)
        if isinstance(label, str) and label in labels:
            yield row["row_index"], {"candidates": candidates}, label


def resolve_target(targets, participants: list[str], group_label: str) -> str | None:
    """One candidate for a target list: a single participant or the group label;
    a list naming two or more participants (all of them, or two of a family's
    three) is the group label, as the public evaluation code maps it. Anything else: None."""
    if not isinstance(targets, list) or not targets:
        return None
    if len(targets) == 1 and (targets[0] in participants or targets[0] == group_label):
        return targets[0]
    if len(targets) > 1 and len(set(targets)) > 1 and set(targets) <= set(participants):
        return group_label
    return None


def first_strategy_type(row: dict) -> str | None:
    """The first support strategy's type, when the row has one."""
    strategies = row.get("support_strategy") or []
    first = strategies[0] if strategies and isinstance(strategies[0], dict) else {}
    return first.get("strategy_type") or None


def support_target(row: dict, clip) -> str | None:
    """The first strategy's target, else the row's own target; resolved or None."""
    strategies = row.get("support_strategy") or []
    first = strategies[0] if strategies else None
    targets = first["target"] if first and first.get("target") else row.get("target")
    return resolve_target(targets, clip.participants, clip.group_label)


def build_stp(clip, rng: random.Random, params: RuleParameters):
    """Therapist rows whose first support strategy has a type (the rows of SSP, as the public code
    builds them) and whose support target resolves to a participant or the group."""
    candidates = [*clip.participants, clip.group_label]
    for row in clip.rows:
        if row["primary_speaker"] != THERAPIST or first_strategy_type(row) is None:
            continue
        target = support_target(row, clip)
        if target is not None:
            yield row["row_index"], {"candidates": candidates}, target


def build_ssp(clip, rng: random.Random, params: RuleParameters):
    """Like STP, and the first strategy's type is in the scenario's set (target given)."""
    labels = clip.taxonomy.strategy_labels
    candidates = [x.label for x in clip.taxonomy.support_strategies]
    for row in clip.rows:
        if row["primary_speaker"] != THERAPIST:
            continue
        strategy = first_strategy_type(row)
        target = support_target(row, clip)
        if target is not None and strategy in labels:
            yield row["row_index"], {"target": target, "candidates": candidates}, strategy


def _valid_intensity(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 10


def build_er(clip, rng: random.Random, params: RuleParameters):
    """Client rows with the speaker's own emotion entry (valid intensity) and
    enough words; the earliest candidates of the clip are skipped, then at most
    ``er_max_per_clip`` are sampled."""
    found = []
    for row in clip.rows:
        if not clip.is_client(row) or len(row["dialogue_cleaned"].split()) < params.er_min_words:
            continue
        speaker = row["primary_speaker"]
        entry = next(
            (
                e
                for e in row.get("internal_emotion") or []
                if e.get("person") == speaker and _valid_intensity(e.get("intensity"))
            ),
            None,
        )
        if entry is not None:
            found.append((row["row_index"], speaker, entry))
    for index, speaker, entry in _sample(rng, found[params.er_skip_earliest :], params.er_max_per_clip):
        yield (
            index,
            {"speaker": speaker},
            {"emotion_description": entry["emotion_description"], "intensity": entry["intensity"]},
        )


def build_vp(clip, rng: random.Random, params: RuleParameters):
    """Client rows with at least one viewpoint held by the speaker, with a
    target and a text; at most ``vp_max_per_clip`` sampled per clip."""
    found = []
    for row in clip.rows:
        if not clip.is_client(row):
            continue
        speaker = row["primary_speaker"]
        views = [
            {"source": v["source"], "target": v["target"], "viewpoint": v["viewpoint"]}
            for v in row.get("viewpoints_attitudes") or []
            if v.get("source") == speaker and (v.get("target") or "").strip() and (v.get("viewpoint") or "").strip()
        ]
        if views:
            found.append((row["row_index"], speaker, views))
    everyone = [*clip.participants, THERAPIST, clip.group_label]
    for index, speaker, views in _sample(rng, found, params.vp_max_per_clip):
        yield index, {"speaker": speaker, "candidates": [p for p in everyone if p != speaker]}, views


BUILDERS = {
    "itp": build_itp,
    "rpp": build_rpp,
    "stp": build_stp,
    "ssp": build_ssp,
    "er": build_er,
    "vp": build_vp,
    RPP_ANY_SPEAKER: build_rpp_any_speaker,
}


def context_span(task: str, index: int, params: RuleParameters) -> tuple[int, int]:
    """The whole history before the decision point (the labelled row included where the task reads it)."""
    return 0, index - (0 if CONTEXT_INCLUDES_ROW[task] else 1)
