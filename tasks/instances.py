"""Task instances built from released clips, by a task profile's rules (docs/tasks.md).

Input: clips in the release format (the dicts of ``data/all.jsonl``). Output:
per task, a list of :class:`Instance` in clip order then row order. Every
instance carries a stable id (``<task>:<sample_id>:<row_index>``), its clip id,
row index, scenario, split, the context rows before its decision point (never
a later row; see ``rules.CONTEXT_INCLUDES_ROW``), task inputs and the gold.

Which builders run, and which rows an instance's context holds, is the task
profile's choice (``tasks.profiles``): ``rescue-v1`` (the public benchmark's
code, ``tasks.profiles.rescue_v1``) or ``platform-v1`` (this platform's earlier
rules, ``tasks.profiles.platform_v1``). A builder's random picks draw from a
``random.Random`` seeded with ``<seed>/<task>/<sample_id>``: the same clip
gives the same instances whatever else the release holds.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from annotation.taxonomy import THERAPIST, Taxonomy, load_taxonomy

from .profiles import TaskProfile, get_profile
from .rules import ALL_TASKS, CONTEXT_KEYS


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
