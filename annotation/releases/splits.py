"""Train/validation/test splits by relationship group, stratified by scenario.

All clips of one couple or family (the part of ``sample_id`` before the
slash) go to the same split, so nobody appears in two splits. Within each
scenario, groups are visited in an order fixed by the seed (SHA-256 of
``<seed>:<group>``) and each goes to the split furthest below its target
share of the scenario's rows; while there are only as many groups left as
splits still empty, the next group fills an empty split (largest ratio
first), so that small scenarios still reach every split when they can. The
result depends only on the groups, their row counts, the seed and the ratios.
"""
from __future__ import annotations

import hashlib
from collections import defaultdict
from dataclasses import dataclass

SPLITS = ("train", "validation", "test")
DEFAULT_RATIOS = (0.7, 0.1, 0.2)


class SplitError(ValueError):
    pass


def parse_ratios(text_or_values) -> tuple[float, float, float]:
    """``"0.7,0.1,0.2"`` or a sequence of three numbers ≥ 0 that sum to 1."""
    try:
        values = [float(v) for v in (text_or_values.split(",") if isinstance(text_or_values, str) else text_or_values)]
    except (TypeError, ValueError):
        raise SplitError(f"split ratios must be three numbers, e.g. 0.7,0.1,0.2 (got {text_or_values!r})") from None
    if len(values) != 3 or any(v < 0 for v in values) or abs(sum(values) - 1) > 1e-6:
        raise SplitError(f"split ratios must be three numbers ≥ 0 for train, validation and test that sum to 1 (got {text_or_values!r})")
    if values[0] == 0 or values[2] == 0:
        raise SplitError("train and test ratios must be above 0")
    return tuple(round(v, 6) for v in values)  # type: ignore[return-value]


def group_of(sample_id: str) -> str:
    return sample_id.split("/", 1)[0]


@dataclass(frozen=True)
class ClipInfo:
    sample_id: str
    scenario: str
    rows: int


def _order_key(seed: int, group: str) -> str:
    return hashlib.sha256(f"{seed}:{group}".encode()).hexdigest()


def assign_groups(groups: dict[str, int], *, seed: int, ratios=DEFAULT_RATIOS) -> dict[str, str]:
    """Split the groups of one scenario ({group: rows}) -> {group: split}."""
    ratios = parse_ratios(ratios)
    total = sum(groups.values())
    assigned = dict.fromkeys(SPLITS, 0)
    used = dict.fromkeys(SPLITS, 0)
    wanted = [s for s, r in zip(SPLITS, ratios) if r > 0]
    out = {}
    order = sorted(groups, key=lambda g: (_order_key(seed, g), g))
    for position, group in enumerate(order):
        empty = sorted((s for s in wanted if used[s] == 0), key=lambda s: (-ratios[SPLITS.index(s)], SPLITS.index(s)))
        if empty and len(order) - position <= len(empty):
            split = empty[0]
        else:
            deficit = {s: ratios[SPLITS.index(s)] * total - assigned[s] for s in wanted}
            split = max(wanted, key=lambda s: (deficit[s], -SPLITS.index(s)))
        out[group] = split
        assigned[split] += groups[group]
        used[split] += 1
    return out


def assign_splits(clips: list[ClipInfo], *, seed: int, ratios=DEFAULT_RATIOS) -> dict[str, str]:
    """{sample_id: split} for every clip: grouped, stratified by scenario.

    A group whose clips carry more than one scenario is placed with the
    scenario most of its rows belong to (ties: alphabetical).
    """
    rows_by_group: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for c in clips:
        rows_by_group[group_of(c.sample_id)][c.scenario] += c.rows
    by_scenario: dict[str, dict[str, int]] = defaultdict(dict)
    for group, per_scenario in rows_by_group.items():
        scenario = min(per_scenario, key=lambda s: (-per_scenario[s], s))
        by_scenario[scenario][group] = sum(per_scenario.values())
    group_split: dict[str, str] = {}
    for scenario in sorted(by_scenario):
        group_split.update(assign_groups(by_scenario[scenario], seed=seed, ratios=ratios))
    return {c.sample_id: group_split[group_of(c.sample_id)] for c in clips}
