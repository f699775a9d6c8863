"""The drafting model as one more system: its stored drafts read as predictions on the gold's instances.

A release's gold was made by people starting from an LLM's draft, and the
benchmark then evaluates LLMs against that gold. How close the gold stayed to
the drafting model is therefore a figure every release must show: a system of
the drafting model's family may be favoured by it.

For each gold instance, the draft's answer is what the task's own builder
reads from the draft's version of the same row: the builder runs over the
clip with each row's annotation replaced by its draft, with the sampling
caps lifted (the gold's instances were sampled; the draft is asked about the
same rows), and its gold for the instance's row is the draft's prediction.
A row the draft leaves without an answer (no strategy, no emotion for the
speaker, no relation label) gets no prediction, which the scorers count as
wrong, as for any system. The prediction is a one-item ranking where the task
asks for a top 3: the draft gives one answer.

ITP is not applicable: whether the therapist speaks next is not part of a
row's annotation (the draft annotates rows that exist), so the builder on the
draft clip would read the gold's own next speaker.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .instances import ClipView, Instance, instances_for_clip
from .profiles import TaskProfile, get_profile
from .rules import PREDICTION_FIELDS, RPP_ANY_SPEAKER

SYSTEM = "drafting_model"
NOT_APPLICABLE = {
    "itp": "whether the therapist speaks next is not part of a row's annotation: the draft gives no answer to it"
}


def _as_prediction(task: str, gold: Any) -> Any:
    """A gold value of the task, as a prediction in the public format's field."""
    if task in ("rpp", RPP_ANY_SPEAKER, "stp", "ssp"):
        return [gold]
    if task == "er":
        return gold["intensity"]
    if task == "vp":
        return [
            {"source": v["source"], "target": v["target"], "viewpoint": v["viewpoint"]} for v in gold
        ]  # attitude left out
    raise ValueError(f"the draft gives no answer to task {task!r}")


def draft_predictions(
    task: str,
    instances: Iterable[Instance],
    draft_clips: Mapping[str, dict],
    *,
    taxonomy_version: str,
    seed: int,
    params=None,
    profile: TaskProfile | str | None = None,
) -> dict[str, Any]:
    """{instance id: the draft's prediction} for the instances whose row the draft answers.

    ``draft_clips``: per sample id, the release clip with each row's annotation replaced by its draft (rows
    without a draft keep nothing to read: they are absent from ``rows``' annotation keys).
    """
    if task in NOT_APPLICABLE:
        return {}
    wanted: dict[str, set[int]] = {}
    for inst in instances:
        wanted.setdefault(inst.clip_id, set()).add(inst.row_index)
    out: dict[str, Any] = {}
    profile = profile if isinstance(profile, TaskProfile) else get_profile(profile)
    loose = profile.uncap(
        profile.parameters if params is None else params
    )  # every row the rules would consider is asked about
    for clip_id, rows in wanted.items():
        clip = draft_clips.get(clip_id)
        if clip is None:
            continue
        view = ClipView.of(clip, taxonomy_version)
        for answer in instances_for_clip(task, view, split="", seed=seed, params=loose, profile=profile):
            if answer.row_index in rows:
                out[answer.id] = _as_prediction(task, answer.gold)
    return out


def prediction_lines(task: str, instances: Iterable[Instance], predictions: Mapping[str, Any]) -> list[dict]:
    """The predictions as a file of the public format holds them, one per instance the draft answers, in order."""
    name = PREDICTION_FIELDS[task]
    return [{"id": inst.id, name: predictions[inst.id]} for inst in instances if inst.id in predictions]
