"""Train/validation/test splits by relationship group, stratified by scenario.

All clips of one relationship group (``groups``: same couple or family, or
sharing a participant, or joined by the lead's map) go to the same split, so
nobody appears in two splits. Within each scenario, groups are visited in an
order fixed by the seed (SHA-256 of ``<seed>:<group>``) and each goes to the
split furthest below its target share of the scenario's rows; while there are
only as many groups left as splits still empty, the next group fills an empty
split (largest ratio first), so that a scenario reaches every split whenever
it has at least as many groups as there are splits with a share above 0.
The result depends only on the groups, their row counts, the seed and the ratios.

A scenario with fewer groups than that cannot reach every split. ``SplitPlan``
says which (``incomplete``), and ``refusal`` turns that into the message a
freeze stops with, unless the lead accepted those scenarios.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from dataclasses import dataclass

from ..groups import ClipInfo, Group, relationship_groups

__all__ = [
    "SPLITS",
    "DEFAULT_RATIOS",
    "ClipInfo",
    "SplitError",
    "SplitPlan",
    "parse_ratios",
    "plan_splits",
    "assign_splits",
    "assign_groups",
    "decision_digest",
]

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
        raise SplitError(
            "split ratios must be three numbers ≥ 0 for train, validation and test that sum to 1 (got "
            f"{text_or_values!r})"
        )
    if values[0] == 0 or values[2] == 0:
        raise SplitError("train and test ratios must be above 0")
    return tuple(round(v, 6) for v in values)  # type: ignore[return-value]


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


@dataclass
class SplitPlan:
    ratios: tuple[float, float, float]
    groups: dict[str, Group]  # by name, each with its split
    group_of: dict[str, str]  # sample_id -> group name
    splits: dict[str, str]  # sample_id -> split

    @property
    def wanted(self) -> list[str]:
        """The splits with a share above 0."""
        return [s for s, r in zip(SPLITS, self.ratios) if r > 0]

    def groups_by_scenario(self) -> dict[str, list[Group]]:
        out: dict[str, list[Group]] = defaultdict(list)
        for group in self.groups.values():
            out[group.scenario].append(group)
        return dict(sorted(out.items()))

    @property
    def incomplete(self) -> dict[str, list[str]]:
        """{scenario: the wanted splits none of its groups reached}, for scenarios that miss one."""
        out = {}
        for scenario, groups in self.groups_by_scenario().items():
            reached = {g.split for g in groups}
            missing = [s for s in self.wanted if s not in reached]
            if missing:
                out[scenario] = missing
        return out

    def refusal(self, accepted=(), *, page: bool = False) -> str:
        """Why a freeze of this plan must stop ("" when it may go ahead): every incomplete
        scenario the lead did not accept, named, with what to do about it (``page``: in the freeze
        page's own controls, not the command's flags)."""
        problems = {s: m for s, m in self.incomplete.items() if s not in set(accepted)}
        if not problems:
            return ""
        by_scenario = self.groups_by_scenario()
        lines = []
        for scenario, missing in problems.items():
            groups = by_scenario[scenario]
            names = ", ".join(g.name for g in groups[:6]) + (", …" if len(groups) > 6 else "")
            lines.append(
                f"scenario {scenario} has {len(groups)} relationship group{'s' if len(groups) != 1 else ''} ({names}) "
                f"for {len(self.wanted)} splits: it would have no {' and no '.join(missing)} split"
            )
        # Only validation may be given a ratio of 0 (parse_ratios keeps train and test above 0).
        zero_ratio = (
            (
                "set the validation ratio to 0 in the form (e.g. 0.8, 0, 0.2), "
                if page
                else "give the validation split a ratio of 0 (e.g. --splits 0.8,0,0.2), "
            )
            if all(set(m) == {"validation"} for m in problems.values())
            else ""
        )
        return (
            "; ".join(lines)
            + f". Add clips of more couples or families to that scenario, {zero_ratio}correct the grouping with a "
            "clip → group map if clips were joined wrongly, "
            + (
                "or accept it explicitly: "
                + "; ".join(f"tick “Freeze anyway … for {sc}”" for sc in problems)
                + " under the inputs and press “Update the preview”: "
                if page
                else (
                    f"or accept it explicitly (--accept-incomplete {','.join(problems)}, or tick it on the freeze "
                    "page): "
                )
            )
            + "the dataset card then says so in its first lines."
        )


def plan_splits(
    clips: list[ClipInfo], *, seed: int, ratios=DEFAULT_RATIOS, group_map: dict[str, str] | None = None
) -> SplitPlan:
    """Group ``clips`` (``groups.relationship_groups``) and split the groups, stratified by scenario."""
    ratios = parse_ratios(ratios)
    groups, group_of = relationship_groups(clips, group_map)
    by_scenario: dict[str, dict[str, int]] = defaultdict(dict)
    for group in groups.values():
        by_scenario[group.scenario][group.name] = group.rows
    for scenario in sorted(by_scenario):
        for name, split in assign_groups(by_scenario[scenario], seed=seed, ratios=ratios).items():
            groups[name].split = split
    return SplitPlan(ratios, groups, group_of, {sid: groups[name].split for sid, name in sorted(group_of.items())})


def assign_splits(
    clips: list[ClipInfo], *, seed: int, ratios=DEFAULT_RATIOS, group_map: dict[str, str] | None = None
) -> dict[str, str]:
    """{sample_id: split} for every clip: grouped, stratified by scenario."""
    return plan_splits(clips, seed=seed, ratios=ratios, group_map=group_map).splits


def decision_digest(plan: SplitPlan, *, seed: int, group_map: dict[str, str], accepted) -> str:
    """A short fingerprint of what a lead confirms: the clips, their groups and splits, and the inputs."""
    decided = {
        "seed": seed,
        "ratios": list(plan.ratios),
        "group_map": dict(sorted(group_map.items())),
        "accepted": sorted(set(plan.incomplete) & set(accepted)),
        "clips": [[sid, plan.group_of[sid], split] for sid, split in sorted(plan.splits.items())],
    }
    return hashlib.sha256(json.dumps(decided, sort_keys=True).encode()).hexdigest()[:16]
