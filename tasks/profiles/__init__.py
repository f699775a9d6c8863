"""Task profiles: which rules turn a release's rows into task instances and how they are scored.

A profile bundles the instance builders, the context each instance shows,
the parameters (recorded in the manifest) and the scoring details the
metrics follow. Two exist:

- ``rescue-v1`` (the default): the public RESCUE-BENCH evaluation code's own
  rules (``tasks.profiles.rescue_v1``), so that results stand beside the
  paper's tables;
- ``platform-v1``: this platform's earlier, seeded rules (``tasks.profiles.platform_v1``):
  seeded random picks, the whole history as context, macro-F1 over the labels
  that occur.

A release records its profile (``manifest.json``: ``task_profile``, and
``inputs.task_profile``) and ``reproduce`` rebuilds it with the same one;
releases frozen before profiles existed were built by ``platform-v1``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from ..rules import CONTEXT_KEYS, DEFAULT_PARAMETERS, RuleParameters
from . import platform_v1, rescue_v1

RESCUE_V1 = "rescue-v1"
PLATFORM_V1 = "platform-v1"
DEFAULT_PROFILE = RESCUE_V1
UNCAPPED = 10**9


@dataclass(frozen=True)
class TaskProfile:
    name: str
    title: str
    comparable_with_paper: bool
    notes: tuple[str, ...]
    builders: dict[str, Callable]
    parameters: Any  # the default parameters (a dataclass with ``as_dict``)
    parameters_type: type
    context_keys: tuple[str, ...]
    context_span: Callable[[str, int, Any], tuple[int, int]]
    uncap: Callable[
        [Any], Any
    ]  # the parameters with every sampling lifted (the drafting model is asked about every row)
    # Scoring details (tasks.metrics): RPP rankings padded with taxonomy labels, macro-F1 over the whole taxonomy,
    # rankings de-duplicated and kept to the candidates, intensities rounded to whole numbers.
    rescue_scoring: bool

    def read_parameters(self, recorded: dict | None):
        return self.parameters_type(**recorded) if recorded is not None else self.parameters

    def manifest_entry(self) -> dict:
        """The manifest's ``task_profile`` (contract C1 of the dataset card)."""
        return {
            "name": self.name,
            "title": self.title,
            "comparable_with_paper": self.comparable_with_paper,
            "notes": list(self.notes),
        }


def _platform_uncap(params: RuleParameters) -> RuleParameters:
    return replace(params, er_skip_earliest=0, er_max_per_clip=UNCAPPED, vp_max_per_clip=UNCAPPED)


def _rescue_uncap(params: rescue_v1.RescueParameters) -> rescue_v1.RescueParameters:
    return replace(params, er_skip_ratio=0.0, er_max_per_clip=UNCAPPED, vp_max_per_clip=UNCAPPED)


RESCUE_NOTES = (
    (
        "Instances, inputs and metrics follow the public RESCUE-BENCH evaluation code (task/*.py of the benchmark's "
        "repository) with its command-line defaults, text (dialogue) mode."
    ),
    (
        "The public RPP scorer pads a ranking with the scenario's relation labels in taxonomy order; that order comes "
        "from a module the public repository does not include (annotate.annotate_relation_cycle_states), so this "
        "platform's taxonomy order is used: a ranking of fewer than three valid labels may be padded differently."
    ),
    (
        "RPP reads the relation label under relation_cycle_state only, as the public code does: rows that carry it "
        "under relation_pattern give no RPP instance."
    ),
    (
        "The public scripts run one scenario at a time; macro-F1 over several scenarios here averages over every "
        "label of their taxonomies (per scenario it is exactly the public figure)."
    ),
    (
        "ER and VP are scored by an LLM judge (and ER also by BERTScore) in the public code; this tooling computes "
        "only the rule-based parts (the intensity match, source and target recovery)."
    ),
)

PLATFORM_NOTES = (
    (
        "Instances were built by this platform's own rules (seeded random picks, the whole history as context, "
        "macro-F1 over the labels that occur), not by the public benchmark's code: the figures are not comparable "
        "with the paper's tables."
    ),
)

PROFILES: dict[str, TaskProfile] = {
    RESCUE_V1: TaskProfile(
        name=RESCUE_V1,
        title="The public RESCUE-BENCH evaluation code's instances and metrics (comparable with the paper's tables)",
        comparable_with_paper=True,
        notes=RESCUE_NOTES,
        builders=rescue_v1.BUILDERS,
        parameters=rescue_v1.DEFAULTS,
        parameters_type=rescue_v1.RescueParameters,
        context_keys=(*CONTEXT_KEYS, "background_dialogue"),
        context_span=rescue_v1.context_span,
        uncap=_rescue_uncap,
        rescue_scoring=True,
    ),
    PLATFORM_V1: TaskProfile(
        name=PLATFORM_V1,
        title="This platform's own seeded rules (not comparable with the paper's tables)",
        comparable_with_paper=False,
        notes=PLATFORM_NOTES,
        builders=platform_v1.BUILDERS,
        parameters=DEFAULT_PARAMETERS,
        parameters_type=RuleParameters,
        context_keys=CONTEXT_KEYS,
        context_span=platform_v1.context_span,
        uncap=_platform_uncap,
        rescue_scoring=False,
    ),
}


class UnknownProfile(ValueError):
    pass


def get_profile(name: str | None = None) -> TaskProfile:
    name = name or DEFAULT_PROFILE
    if name not in PROFILES:
        raise UnknownProfile(f"unknown task profile {name!r} (choose from {', '.join(PROFILES)})")
    return PROFILES[name]


def recorded_profile(manifest: dict) -> TaskProfile:
    """The profile a release was built with (releases frozen before profiles existed: ``platform-v1``)."""
    entry = manifest.get("task_profile") or {}
    return get_profile(entry.get("name") or manifest.get("inputs", {}).get("task_profile") or PLATFORM_V1)
