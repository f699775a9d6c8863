"""Task instances built from released clips, by the rules of spec/TASKS.md.

Input: clips in the release format (the dicts of ``data/all.jsonl``). Output:
per task, a list of :class:`Instance` in clip order then row order. Every
instance carries a stable id (``<task>:<sample_id>:<row_index>``), its clip id,
row index, scenario, split, the context rows before its decision point (never
a later row; see ``rules.CONTEXT_INCLUDES_ROW``), task inputs and the gold.

Which builders run, and which rows an instance's context holds, is the task
profile's choice (``tasks.profiles``): ``rescue-v1`` (the public benchmark's
code, ``tasks.profiles.rescue_v1``) or ``platform-v1``, whose builders are the
functions below. Sampling in ``platform-v1`` (ITP balancing, ER and VP caps)
draws from a ``random.Random`` seeded with ``<seed>/<task>/<sample_id>``: the
same clip gives the same instances whatever else the release holds.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from annotation.schema import relation_label, relation_label_key
from annotation.taxonomy import THERAPIST, Taxonomy, load_taxonomy

from .profiles import PLATFORM_V1, PROFILES, TaskProfile, get_profile
from .rules import (
    ALL_TASKS,
    CONTEXT_KEYS,
    NO,
    RPP_ANY_SPEAKER,
    YES,
    RuleParameters,
)


@dataclass
class Instance:
    id: str
    task: str
    clip_id: str
    row_index: int
    scenario: str
    split: str
    participants: list[str]
    context_end: int  # the context is the clip's rows context_start+1..context_end
    inputs: dict = field(default_factory=dict)  # task inputs besides the context (candidates, target, speaker)
    gold: Any = None
    context_start: int = 0  # rows before it are outside the profile's context window

    def head(self) -> dict:
        return {
            "id": self.id,
            "task": self.task,
            "clip_id": self.clip_id,
            "row_index": self.row_index,
            "scenario": self.scenario,
            "split": self.split,
            "participants": self.participants,
        }

    def tail(self) -> dict:
        return {**self.inputs, "gold": self.gold}

    def as_dict(self, clip: dict, context_keys: tuple[str, ...] = CONTEXT_KEYS) -> dict:
        """The instance as its JSONL line holds it (``clip`` is its release clip)."""
        rows = clip["rows"][: self.context_end][self.context_start :]
        return {**self.head(), "context": [context_row(r, context_keys) for r in rows], **self.tail()}


# What a context key holds when a row lacks it (rows annotated on the platform may have no background dialogue).
CONTEXT_DEFAULTS = {"background_dialogue": []}


def context_row(row: dict, keys: tuple[str, ...] = CONTEXT_KEYS) -> dict:
    return {k: row[k] if k in row else CONTEXT_DEFAULTS.get(k) for k in keys}


@dataclass(frozen=True)
class ClipView:
    """What the builders need of a clip."""

    sample_id: str
    scenario: str
    participants: list[str]
    rows: list[dict]
    taxonomy: Taxonomy

    @classmethod
    def of(cls, clip: dict, taxonomy_version: str) -> ClipView:
        return cls(
            clip["sample_id"],
            clip["scenario"],
            list(clip["participants"]),
            clip["rows"],
            load_taxonomy(clip["scenario"], taxonomy_version),
        )

    @property
    def group_label(self) -> str:
        return self.taxonomy.group_label

    def is_client(self, row: dict) -> bool:
        """Spoken by a person in the room other than the therapist (not the group label)."""
        return row["primary_speaker"] not in (THERAPIST, self.group_label)


# A builder yields (row_index, inputs, gold) for one clip.
Builder = Callable[[ClipView, random.Random, RuleParameters], Iterator[tuple[int, dict, Any]]]


def _sample(rng: random.Random, items: list, k: int) -> list:
    """At most ``k`` of ``items``, uniformly, kept in their original (row) order."""
    if len(items) <= k:
        return items
    return [items[i] for i in sorted(rng.sample(range(len(items)), k))]


def build_itp(clip: ClipView, rng: random.Random, params: RuleParameters):
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


def build_rpp(clip: ClipView, rng: random.Random, params: RuleParameters):
    """Rows whose ``relation_cycle_state`` is a label of the scenario (the public
    release's therapist rows; "" = no clear pattern is left out)."""
    labels = clip.taxonomy.relation_labels
    candidates = [x.label for x in clip.taxonomy.relation_patterns]
    for row in clip.rows:
        label = row.get("relation_cycle_state")
        if isinstance(label, str) and label in labels:
            yield row["row_index"], {"candidates": candidates}, label


def build_rpp_any_speaker(clip: ClipView, rng: random.Random, params: RuleParameters):
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


def support_target(row: dict, clip: ClipView) -> str | None:
    """The first strategy's target, else the row's own target; resolved or None."""
    strategies = row.get("support_strategy") or []
    first = strategies[0] if strategies else None
    targets = first["target"] if first and first.get("target") else row.get("target")
    return resolve_target(targets, clip.participants, clip.group_label)


def build_stp(clip: ClipView, rng: random.Random, params: RuleParameters):
    """Therapist rows whose first support strategy has a type (the rows of SSP, as the public code
    builds them) and whose support target resolves to a participant or the group."""
    candidates = [*clip.participants, clip.group_label]
    for row in clip.rows:
        if row["primary_speaker"] != THERAPIST or first_strategy_type(row) is None:
            continue
        target = support_target(row, clip)
        if target is not None:
            yield row["row_index"], {"candidates": candidates}, target


def build_ssp(clip: ClipView, rng: random.Random, params: RuleParameters):
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


def build_er(clip: ClipView, rng: random.Random, params: RuleParameters):
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


def build_vp(clip: ClipView, rng: random.Random, params: RuleParameters):
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


BUILDERS: dict[str, Builder] = {
    "itp": build_itp,
    "rpp": build_rpp,
    "stp": build_stp,
    "ssp": build_ssp,
    "er": build_er,
    "vp": build_vp,
    RPP_ANY_SPEAKER: build_rpp_any_speaker,
}


PROFILES[PLATFORM_V1].builders.update(BUILDERS)


def instances_for_clip(
    task: str, clip: ClipView, *, split: str, seed: int, params=None, profile: TaskProfile | str | None = None
) -> list[Instance]:
    """``task``'s instances of one clip by ``profile``'s rules (the default profile when None) and
    ``params`` (the profile's defaults when None)."""
    profile = profile if isinstance(profile, TaskProfile) else get_profile(profile)
    params = profile.parameters if params is None else params
    rng = random.Random(f"{seed}/{task}/{clip.sample_id}")
    out = []
    for index, inputs, gold in profile.builders[task](clip, rng, params):
        start, end = profile.context_span(task, index, params)
        out.append(
            Instance(
                id=f"{task}:{clip.sample_id}:{index}",
                task=task,
                clip_id=clip.sample_id,
                row_index=index,
                scenario=clip.scenario,
                split=split,
                participants=clip.participants,
                context_end=end,
                inputs=inputs,
                gold=gold,
                context_start=start,
            )
        )
    return out


def build_instances(
    clips: Iterable[dict],
    splits: dict[str, str],
    *,
    seed: int,
    taxonomy_version: str = "1",
    params=None,
    tasks: Iterable[str] = ALL_TASKS,
    profile: TaskProfile | str | None = None,
) -> dict[str, list[Instance]]:
    """Every task's instances over ``clips`` (release dicts), split by ``splits`` (sample id -> split),
    by ``profile``'s rules (``tasks.profiles``; the default profile when None)."""
    profile = profile if isinstance(profile, TaskProfile) else get_profile(profile)
    views = [ClipView.of(c, taxonomy_version) for c in clips]
    return {
        task: [
            inst
            for view in views
            for inst in instances_for_clip(
                task, view, split=splits[view.sample_id], seed=seed, params=params, profile=profile
            )
        ]
        for task in tasks
    }


def _compact_encoder() -> Callable[[Any], str]:
    """``json.dumps(value, ensure_ascii=False)`` for acyclic values, without building
    an encoder per call: the C encoder that ``json.dumps`` itself uses, made once
    with the same settings (only the check for cycles is left out)."""
    reference = json.JSONEncoder(ensure_ascii=False)
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # an interpreter without the C accelerator
        return reference.encode
    encoder = make(
        None,
        reference.default,
        json.encoder.encode_basestring,
        None,
        reference.key_separator,
        reference.item_separator,
        False,
        False,
        True,
    )
    return lambda value: "".join(encoder(value, 0))


_encode = _compact_encoder()
_ITEM_SEPARATOR = b", "
_CONTEXT_OPEN = b', "context": ['
_CONTEXT_CLOSE = b"], "


class InstanceWriter:
    """Serialises instances to JSONL, each clip's context rows encoded once.

    A line is exactly ``json.dumps(instance.as_dict(clip), ensure_ascii=False)``.
    The same rows recur in many instances of a clip (an instance's context is
    every row before it), so each clip's context rows are encoded to UTF-8 once,
    joined with the list separator, and an instance's context is a slice of
    that buffer (a view, not a copy) spliced between its encoded head and tail;
    a whole file is then one ``bytes.join``.
    """

    def __init__(self, clips_by_id: dict[str, dict], context_keys: tuple[str, ...] = CONTEXT_KEYS):
        self.clips = clips_by_id
        self.context_keys = context_keys
        self._contexts: dict[str, tuple[memoryview, list[int]]] = {}

    def _context(self, clip_id: str) -> tuple[memoryview, list[int]]:
        """(the clip's context rows as one ``, ``-joined UTF-8 buffer, where its first k rows end)."""
        found = self._contexts.get(clip_id)
        if found is None:
            encoded = [_encode(context_row(r, self.context_keys)).encode("utf-8") for r in self.clips[clip_id]["rows"]]
            ends, end = [0], -len(_ITEM_SEPARATOR)
            for row in encoded:
                end += len(_ITEM_SEPARATOR) + len(row)
                ends.append(end)
            found = self._contexts[clip_id] = (memoryview(_ITEM_SEPARATOR.join(encoded)), ends)
        return found

    def _parts(self, inst: Instance, out: list) -> None:
        """Append the pieces of ``inst``'s line (newline included) to ``out``."""
        joined, ends = self._context(inst.clip_id)
        positions = range(len(ends) - 1)[: inst.context_end][inst.context_start :]  # what ``as_dict`` keeps
        out.append(_encode(inst.head())[:-1].encode("utf-8") + _CONTEXT_OPEN)
        if positions:
            first = positions[0]
            out.append(joined[ends[first] + (len(_ITEM_SEPARATOR) if first else 0) : ends[positions[-1] + 1]])
        out.append(_CONTEXT_CLOSE + _encode(inst.tail())[1:].encode("utf-8") + b"\n")

    def line(self, inst: Instance) -> str:
        parts: list = []
        self._parts(inst, parts)
        return b"".join(parts)[:-1].decode("utf-8")

    def jsonl(self, instances: Iterable[Instance]) -> bytes:
        """The UTF-8 bytes of a JSONL file holding ``instances``, one line each."""
        parts: list = []
        for inst in instances:
            self._parts(inst, parts)
        return b"".join(parts)
