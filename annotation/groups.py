"""Relationship groups: which clips show the same people, so that a split never separates them.

The public release names clips ``<couple>/<clip>`` and
``family_therapy/<NNN>/merged`` (docs/releases.md, on splits): a clip's group is
its ``sample_id`` without the last path segment (``alan_and_evelyn``,
``family_therapy/014``); a sample id without a slash is a group of its own.
Two more rules join groups:

- clips of one scenario whose participant sets overlap are one group, whatever
  their ids say (the same people filed under two folder names); names are
  compared without regard to case or surrounding spaces;
- a lead's clip → group map replaces the id rule for the clips it names, and
  two clips the map names are joined only when the map says so (it is how a
  lead separates two couples who happen to share a first name). A clip the
  map does not name still joins every clip, named or not, it shares a
  participant with: the guard stays conservative.

``relationship_groups`` is the only place groups are computed; ``Clip.group``
and the splits read ``path_group`` and this.
"""

from __future__ import annotations

import csv
import io
import json
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field


def path_group(sample_id: str) -> str:
    """The group a sample id names: the id without its last path segment (itself when it has none)."""
    head, slash, _ = sample_id.rpartition("/")
    return head if slash and head else sample_id


@dataclass(frozen=True)
class ClipInfo:
    """What grouping and splitting need of a clip."""

    sample_id: str
    scenario: str
    rows: int
    participants: tuple[str, ...] = ()


@dataclass
class Group:
    name: str
    scenario: str  # the scenario most of its rows belong to (ties: alphabetical)
    clips: list[str]  # sample ids, sorted
    rows: int
    folders: list[str]  # the id-rule (or mapped) groups it joins, sorted
    joined_by: list[str] = field(default_factory=list)  # why folders were joined, one sentence each
    split: str = ""


class GroupMapError(ValueError):
    """A clip → group map that cannot be read (message names the line)."""


def read_group_map(text: str) -> dict[str, str]:
    """A clip → group map from a file's text: a JSON object ``{"<sample_id>": "<group>"}``,
    or lines ``<sample_id>,<group>`` (CSV; a tab works too; ``#`` starts a comment;
    a header line ``sample_id,group`` is allowed)."""
    stripped = text.strip()
    if not stripped:
        return {}
    if stripped.startswith("{"):
        from .api import parsers as bounded_json  # here, not at the top: models import this module

        try:
            value = bounded_json.loads(stripped)
        except bounded_json.TooDeep as exc:
            raise GroupMapError(f"the group map is not a flat map of clips to groups: {exc}") from None
        except json.JSONDecodeError as exc:
            raise GroupMapError(f"the group map is not valid JSON: {exc.msg} (line {exc.lineno})") from None
        pairs = [(f"key {k!r}", k, v) for k, v in value.items()]
    else:
        pairs = []
        for n, line in enumerate(stripped.splitlines(), start=1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            cells = next(csv.reader(io.StringIO(line), delimiter="\t" if "\t" in line else ","))
            if len(cells) != 2:
                raise GroupMapError(f"group map line {n}: expected '<sample_id>,<group>', got {line!r}")
            if n == 1 and [c.strip().lower() for c in cells] == ["sample_id", "group"]:
                continue
            pairs.append((f"line {n}", cells[0], cells[1]))
    out: dict[str, str] = {}
    for where, clip, group in pairs:
        if not isinstance(clip, str) or not isinstance(group, str) or not clip.strip() or not group.strip():
            raise GroupMapError(f"group map {where}: the sample id and the group must both be non-empty text")
        clip, group = clip.strip(), group.strip()
        if out.get(clip, group) != group:
            raise GroupMapError(f"group map {where}: {clip} is given two groups ({out[clip]!r} and {group!r})")
        out[clip] = group
    return out


def dump_group_map(mapping: dict[str, str]) -> str:
    """The map as the CSV lines ``read_group_map`` reads (sorted), for forms and records."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    for clip in sorted(mapping):
        writer.writerow([clip, mapping[clip]])
    return buffer.getvalue()


class _Joins:
    """Union-find over clip positions."""

    def __init__(self, n: int):
        self.parent = list(range(n))

    def find(self, i: int) -> int:
        while self.parent[i] != i:
            self.parent[i] = self.parent[self.parent[i]]
            i = self.parent[i]
        return i

    def join(self, a: int, b: int) -> bool:
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return False
        self.parent[max(ra, rb)] = min(ra, rb)
        return True


def relationship_groups(
    clips: Iterable[ClipInfo], group_map: dict[str, str] | None = None
) -> tuple[dict[str, Group], dict[str, str]]:
    """({group name: Group}, {sample_id: group name}) for ``clips``.

    A group is named after the first (sorted) of the folders it joins, so a
    group nobody joined keeps its folder's name.
    """
    clips = sorted(clips, key=lambda c: c.sample_id)
    group_map = group_map or {}
    folder = [group_map.get(c.sample_id) or path_group(c.sample_id) for c in clips]
    mapped = [c.sample_id in group_map for c in clips]
    joins = _Joins(len(clips))
    first_of_folder: dict[str, int] = {}
    for i, name in enumerate(folder):
        joins.join(first_of_folder.setdefault(name, i), i)
    # Shared participants, per scenario; (folder, folder) -> the names they share, for the reasons.
    people = [{p.strip().casefold(): p.strip() for p in c.participants if p.strip()} for c in clips]
    by_name: dict[tuple[str, str], list[int]] = defaultdict(list)
    for i, c in enumerate(clips):
        for key in people[i]:
            by_name[c.scenario, key].append(i)
    shared: dict[tuple[str, str], set[str]] = defaultdict(set)
    for (_, key), members in sorted(by_name.items()):
        unnamed = [i for i in members if not mapped[i]]
        if not unnamed:
            continue  # only clips the lead's map places: the map decides
        anchor = unnamed[0]
        for i in members:
            if folder[i] != folder[anchor]:
                shared[tuple(sorted((folder[i], folder[anchor])))].add(people[i][key])
            joins.join(anchor, i)
    members_of: dict[int, list[int]] = defaultdict(list)
    for i in range(len(clips)):
        members_of[joins.find(i)].append(i)
    groups: dict[str, Group] = {}
    clip_group: dict[str, str] = {}
    for members in members_of.values():
        folders = sorted({folder[i] for i in members})
        rows_by_scenario: dict[str, int] = defaultdict(int)
        for i in members:
            rows_by_scenario[clips[i].scenario] += clips[i].rows
        reasons = [
            f"{a} and {b} share {', '.join(sorted(names))}"
            for (a, b), names in sorted(shared.items())
            if a in folders and b in folders
        ]
        mapped_folders = sorted({folder[i] for i in members if mapped[i]})
        if mapped_folders:
            reasons.insert(0, f"placed by the lead's map: {', '.join(mapped_folders)}")
        group = Group(
            name=folders[0],
            scenario=min(rows_by_scenario, key=lambda s: (-rows_by_scenario[s], s)),
            clips=sorted(clips[i].sample_id for i in members),
            rows=sum(rows_by_scenario.values()),
            folders=folders,
            joined_by=reasons,
        )
        groups[group.name] = group
        clip_group.update((sid, group.name) for sid in group.clips)
    return dict(sorted(groups.items())), clip_group
