"""What a freeze would produce, without freezing: the dry run behind the freeze page and
``freeze_release --dry-run``.

``preview_freeze`` takes the same inputs as a freeze (seed, ratios, the lead's
clip → group map, the scenarios accepted without every split) and reports the
eligible clips, what keeps the project's other clips out, the relationship
groups of each scenario with their splits (and why groups were joined), rows
and task instances per scenario × split, and whether the freeze would be
refused and why. It reads the gold and builds the task instances exactly as
the freeze does (``freeze.plan_release``, ``tasks.instances``), and writes
nothing.

``digest`` fingerprints the decision the lead confirms (which clips, in which
group and split, under which inputs): the freeze page sends it with the
confirmation, and a freeze whose plan no longer has that digest is refused.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field

from django.db.models import Count, Q

from tasks.instances import build_instances
from tasks.rules import ALL_TASKS

from ..labels import state_label
from ..models import ClipState, Project
from .freeze import RELEASABLE_STATES, NothingToRelease, plan_release, profile_named, read_gold
from .splits import SPLITS, SplitPlan, decision_digest, parse_ratios

ALL = "all"
EXAMPLES = 5  # sample ids shown per reason a clip is left out
REASONS = 3  # joins shown per group in the text preview
# Why a clip in each state is not released (states that are released are not listed).
STATE_REASONS = {
    ClipState.IMPORTED: "not pre-annotated or reviewed yet",
    ClipState.PREANNOTATING: "pre-annotation running",
    ClipState.PREANNOTATED: "not reviewed yet",
    ClipState.PREANNOTATION_FAILED: "pre-annotation failed",
    ClipState.IN_REVIEW: "still in review",
    ClipState.REVIEWED: "reviewed, not adjudicated yet",
    ClipState.DISCARDED: "discarded",
}


@dataclass
class FreezePreview:
    project: str
    seed: int
    ratios: tuple[float, float, float]
    group_map: dict[str, str]
    accepted: list[str]  # incomplete scenarios the lead accepts
    plan: SplitPlan
    clips: int
    rows: int
    moves: int  # clips that would move from adjudicated to released
    left_out: list[dict] = field(default_factory=list)  # {reason, clips, examples}
    table: dict = field(
        default_factory=dict
    )  # {scenario | all: {split | all: {groups, clips, rows, <task>: instances}}}
    refusal: str = ""
    task_profile: str = ""  # the rules the instance counts follow (tasks.profiles)

    @property
    def scenarios(self) -> list[str]:
        return [s for s in self.table if s != ALL]

    @property
    def incomplete(self) -> dict[str, list[str]]:
        return self.plan.incomplete

    @property
    def instances(self) -> int:
        return sum(self.table[ALL][ALL][task] for task in ALL_TASKS)

    @property
    def totals(self) -> dict:
        """{split | all: {groups, clips, rows, <task>: instances}} over every scenario."""
        return self.table[ALL]

    def table_rows(self) -> list[dict]:
        """The scenario × split table as rows: scenario, split, the cell, its instances per task, whether the split is
        empty."""
        return [
            {
                "scenario": scenario,
                "split": split,
                "cell": cells[split],
                "instances": [cells[split][t] for t in ALL_TASKS],
                "empty": split != ALL and not cells[split]["clips"],
            }
            for scenario, cells in self.table.items()
            for split in (*SPLITS, ALL)
        ]

    def group_summary(self) -> list[dict]:
        """Per scenario: its groups and how many went to each split."""
        return [
            {
                "scenario": scenario,
                "groups": groups,
                "per_split": {s: sum(g.split == s for g in groups) for s in SPLITS},
            }
            for scenario, groups in self.plan.groups_by_scenario().items()
        ]

    @property
    def digest(self) -> str:
        return decision_digest(self.plan, seed=self.seed, group_map=self.group_map, accepted=self.accepted)

    def as_dict(self) -> dict:
        by_scenario = self.plan.groups_by_scenario()
        return {
            "project": self.project,
            "seed": self.seed,
            "split_ratios": dict(zip(SPLITS, self.ratios)),
            "group_map": self.group_map,
            "accept_incomplete": self.accepted,
            "task_profile": self.task_profile,
            "eligible": {"clips": self.clips, "rows": self.rows, "groups": len(self.plan.groups)},
            "moves_to_released": self.moves,
            "left_out": self.left_out,
            "groups": {
                scenario: [
                    {
                        "group": g.name,
                        "split": g.split,
                        "clips": g.clips,
                        "rows": g.rows,
                        "joined": g.folders if len(g.folders) > 1 else [],
                        "why": g.joined_by,
                    }
                    for g in groups
                ]
                for scenario, groups in by_scenario.items()
            },
            "counts": self.table,
            "incomplete": self.incomplete,
            "refusal": self.refusal,
            "digest": self.digest,
        }

    def lines(self, *, every_group: bool = False) -> list[str]:
        """The preview as text, for the command line: every group with ``every_group``,
        otherwise only the groups joined from several folders."""
        out = [
            f"would release {self.clips} clips ({self.rows:,} rows) in {len(self.plan.groups)} relationship groups of "
            f"project {self.project}, "
            f"seed {self.seed}, splits {'/'.join(str(r) for r in self.ratios)}; {self.moves} clips would move from "
            "adjudicated to released",
            f"task instances built and scored by the task profile {self.task_profile}",
        ]
        if self.left_out:
            out.append(f"left out: {sum(entry['clips'] for entry in self.left_out)} clips of the project")
            for entry in self.left_out:
                out.append(
                    f"  {entry['reason']}: {entry['clips']} "
                    f"({', '.join(entry['examples'])}{', …' if entry['clips'] > len(entry['examples']) else ''})"
                )
        else:
            out.append("left out: none")
        out.append("relationship groups per scenario:")
        for scenario, groups in self.plan.groups_by_scenario().items():
            per_split = Counter(g.split for g in groups)
            out.append(f"  {scenario}: {len(groups)} groups (" + ", ".join(f"{s} {per_split[s]}" for s in SPLITS) + ")")
            for g in groups:
                if every_group or g.joined_by:
                    out.append(
                        f"    {g.name}: {g.split}, {len(g.clips)} clips, {g.rows} rows"
                        + "".join(f"; {why}" for why in g.joined_by[:REASONS])
                    )
                    if len(g.joined_by) > REASONS:
                        out.append(f"      … and {len(g.joined_by) - REASONS} more joins (--json lists them all)")
        header = ["scenario", "split", "groups", "clips", "rows", *ALL_TASKS]
        rows = [
            [scenario, split, *(self.table[scenario][split][k] for k in header[2:])]
            for scenario in self.table
            for split in (*SPLITS, ALL)
        ]
        widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
        out.append("rows and task instances per scenario and split:")
        for r in [header, *rows]:
            out.append(
                "  "
                + "  ".join(str(v).rjust(w) if i > 1 else str(v).ljust(w) for i, (v, w) in enumerate(zip(r, widths)))
            )
        for scenario, missing in self.incomplete.items():
            accepted = " (accepted: the card will say so in its first lines)" if scenario in self.accepted else ""
            out.append(f"scenario {scenario} reaches no {' and no '.join(missing)} split{accepted}")
        out.append(
            f"a freeze with these settings would be refused: {self.refusal}"
            if self.refusal
            else "a freeze with these settings would go ahead"
        )
        return out


def _left_out(project: Project, skipped: list[str]) -> list[dict]:
    """Why the project's clips outside the release are out: by state, and releasable clips lacking gold."""
    out = []
    by_state: dict[str, list[str]] = defaultdict(list)
    for state, sample_id in (
        project.clips.exclude(state__in=RELEASABLE_STATES).order_by("sample_id").values_list("state", "sample_id")
    ):
        by_state[state].append(sample_id)
    for state in ClipState.values:
        if by_state.get(state):
            ids = by_state[state]
            out.append(
                {
                    "reason": f"{state_label(state)}: {STATE_REASONS.get(state, state)}",
                    "clips": len(ids),
                    "examples": ids[:EXAMPLES],
                }
            )
    if skipped:
        lacking = (
            project.clips.filter(sample_id__in=skipped[:EXAMPLES])
            .annotate(
                rows_total=Count("rows", distinct=True),
                without_gold=Count("rows", filter=Q(rows__gold__isnull=True), distinct=True),
            )
            .order_by("sample_id")
        )
        out.append(
            {
                "reason": "adjudicated or released, but some rows have no gold",
                "clips": len(skipped),
                "examples": [
                    f"{c.sample_id} ({c.without_gold} of {c.rows_total} rows lack gold)"
                    if c.rows_total
                    else f"{c.sample_id} (no rows)"
                    for c in lacking
                ],
            }
        )
    return out


def _table(plan: SplitPlan, clips: list[dict], instances: dict) -> dict:
    cells: dict[tuple[str, str], dict] = defaultdict(
        lambda: {"groups": set(), "clips": 0, "rows": 0, **dict.fromkeys(ALL_TASKS, 0)}
    )
    for clip in clips:
        sid, scenario = clip["sample_id"], clip["scenario"]
        for s in (scenario, ALL):
            for split in (plan.splits[sid], ALL):
                cell = cells[s, split]
                cell["groups"].add(plan.group_of[sid])
                cell["clips"] += 1
                cell["rows"] += len(clip["rows"])
    for task, items in instances.items():
        for inst in items:
            for s in (inst.scenario, ALL):
                for split in (inst.split, ALL):
                    cells[s, split][task] += 1
    scenarios = sorted({c["scenario"] for c in clips})
    return {
        s: {split: {**cells[s, split], "groups": len(cells[s, split]["groups"])} for split in (*SPLITS, ALL)}
        for s in [*scenarios, ALL]
    }


def preview_freeze(
    project: Project,
    *,
    seed: int,
    ratios=(0.7, 0.1, 0.2),
    group_map: dict[str, str] | None = None,
    accept_incomplete=(),
    task_profile: str | None = None,
) -> FreezePreview:
    """What ``freeze`` would release with these inputs (``FreezeError`` if there is nothing to release);
    the task instances are counted by ``task_profile``'s rules (``tasks.profiles``, the default when None)."""
    profile = profile_named(task_profile)
    ratios = parse_ratios(ratios)
    group_map = dict(sorted((group_map or {}).items()))
    try:
        complete, skipped, plan = plan_release(project, seed=seed, ratios=ratios, group_map=group_map)
    except NothingToRelease as exc:
        # Say why each clip is out, as the preview does when something is eligible.
        why = "; ".join(
            f"{e['clips']} {e['reason']} (e.g. {', '.join(e['examples'][:3])})" for e in _left_out(project, exc.skipped)
        )
        raise NothingToRelease(
            f"{exc}. Why the clips are out: {why or 'the project has no clips'}", exc.skipped
        ) from None
    clips = read_gold(complete)
    instances = build_instances(
        clips, plan.splits, seed=seed, taxonomy_version=project.taxonomy_version, profile=profile
    )
    accepted = sorted(set(plan.incomplete) & set(accept_incomplete))
    return FreezePreview(
        project=project.slug,
        seed=seed,
        ratios=ratios,
        group_map=group_map,
        accepted=accepted,
        plan=plan,
        clips=len(complete),
        rows=sum(c.row_count for c in complete),
        moves=sum(c.state == ClipState.ADJUDICATED for c in complete),
        left_out=_left_out(project, skipped),
        table=_table(plan, clips, instances),
        refusal=plan.refusal(accept_incomplete, page=True),
        task_profile=profile.name,
    )
