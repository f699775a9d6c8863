"""What changed between two releases: clips added, removed and changed (with their rows),
label changes per field, the task instances added, removed or changed, and the
recorded corrections of released gold made between the two.

Works on release folders (what researchers hold), read through their
manifests: a clip whose line has the same SHA-256 in both is unchanged and is
not even parsed, and a task whose files have the same SHA-256 in both is not
read. Rows of a changed clip are matched by ``row_index``, instances by ``id``.
Corrections come from each release's ``stats.json`` (``provenance.corrections``,
from the platform's import records): those the newer release lists and the
older one does not were made between the two.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

from tasks.rules import ALL_TASKS

from ..schema import relation_label
from ..taxonomy import THERAPIST
from .manifest import read_manifest
from .splits import SPLITS

# Fields compared as labels: how each row's value is read (a short text).
LABEL_FIELDS = {
    "relation_pattern": lambda r: _label_text(relation_label(r)),
    "utterance_type": lambda r: r.get("utterance_type") if r.get("primary_speaker") != THERAPIST else None,
    "support_strategy": lambda r: (
        ((r.get("support_strategy") or [{}])[0].get("strategy_type") or "(none)")
        if r.get("primary_speaker") == THERAPIST
        else None
    ),
    "support_target": lambda r: (
        "+".join(sorted((r.get("support_strategy") or [{}])[0].get("target") or [])) or None
        if r.get("primary_speaker") == THERAPIST
        else None
    ),
    "target": lambda r: "+".join(sorted(r.get("target") or [])),
    "primary_speaker": lambda r: r.get("primary_speaker"),
    "speaker_intensity": lambda r: next(
        (
            str(e.get("intensity"))
            for e in r.get("internal_emotion") or []
            if e.get("person") == r.get("primary_speaker")
        ),
        None,
    ),
}
MAX_CHANGES_PER_FIELD = 30  # label transitions listed per field (the rest are counted)
MAX_LISTED = 20  # instance ids (per task and kind of change) and rows printed by format_diff; the JSON has them all
# An instance line starts with its id (tasks.instances.InstanceWriter writes the head first).
_INSTANCE_ID = re.compile(rb'^\{"id": ("(?:[^"\\]|\\.)*")')


def _label_text(value):
    return "(not annotated)" if value is None else "(no clear pattern)" if value == "" else value


@dataclass
class Snapshot:
    folder: Path
    manifest: dict

    @classmethod
    def open(cls, folder: str | Path) -> Snapshot:
        folder = Path(folder)
        try:
            return cls(folder, read_manifest(folder))
        except FileNotFoundError:
            raise ValueError(f"{folder} is not a release folder (no manifest.json)") from None

    @property
    def version(self) -> str:
        return self.manifest["release"]["version"]

    @property
    def clips(self) -> dict[str, dict]:
        return {c["sample_id"]: c for c in self.manifest["clips"]}

    def task_files(self, task: str) -> dict[str, str]:
        """{path: SHA-256} of the task's instance files, from the manifest."""
        files = self.manifest.get("files", {})
        return {p: files[p]["sha256"] for p in (f"tasks/{task}/{s}.jsonl" for s in SPLITS) if p in files}

    def instances(self, task: str) -> dict[str, bytes]:
        """{instance id: SHA-256 of its line} over the task's split files."""
        out = {}
        for path in self.task_files(task):
            with open(self.folder / path, "rb") as fh:
                for line in fh:
                    match = _INSTANCE_ID.match(line)
                    if match:
                        out[json.loads(match.group(1))] = hashlib.sha256(line.rstrip(b"\n")).digest()
        return out

    def corrections(self) -> list[dict]:
        """The recorded corrections of released gold this release lists (none when its stats.json has none)."""
        try:
            stats = json.loads((self.folder / "stats.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return []
        return list((stats.get("provenance") or {}).get("corrections") or [])

    def lines(self) -> dict[str, str]:
        """sample id -> line of data/all.jsonl (in manifest order)."""
        with open(self.folder / "data" / "all.jsonl", encoding="utf-8") as fh:
            lines = [line.rstrip("\n") for line in fh if line.strip()]
        return {c["sample_id"]: line for c, line in zip(self.manifest["clips"], lines)}


def _row_changes(rows_a: list[dict], rows_b: list[dict], fields: Counter, labels: dict) -> list[int]:
    """The row indices that differ; counts each changed key in ``fields`` and label transitions in ``labels``."""
    by_a = {r["row_index"]: r for r in rows_a}
    by_b = {r["row_index"]: r for r in rows_b}
    changed = []
    for index in sorted(set(by_a) | set(by_b)):
        a, b = by_a.get(index), by_b.get(index)
        if a == b:
            continue
        changed.append(index)
        if a is None or b is None:
            fields["(row added)" if a is None else "(row removed)"] += 1
            continue
        for key in sorted(set(a) | set(b)):
            if a.get(key) != b.get(key) or (key in a) != (key in b):
                fields[key] += 1
        for name, read in LABEL_FIELDS.items():
            before, after = read(a), read(b)
            if before != after:
                labels[name][(str(before), str(after))] += 1
    return changed


def diff_releases(a: Snapshot, b: Snapshot) -> dict:
    clips_a, clips_b = a.clips, b.clips
    added = sorted(set(clips_b) - set(clips_a))
    removed = sorted(set(clips_a) - set(clips_b))
    common = sorted(set(clips_a) & set(clips_b))
    differing = [s for s in common if clips_a[s]["sha256"] != clips_b[s]["sha256"]]
    lines_a, lines_b = (a.lines(), b.lines()) if differing else ({}, {})
    fields: Counter = Counter()
    labels: dict[str, Counter] = defaultdict(Counter)
    changed = []
    for sample_id in differing:
        clip_a, clip_b = json.loads(lines_a[sample_id]), json.loads(lines_b[sample_id])
        per_clip: Counter = Counter()
        rows_changed = _row_changes(clip_a["rows"], clip_b["rows"], per_clip, labels)
        clip_fields = [k for k in ("scenario", "participants", "source_file") if clip_a.get(k) != clip_b.get(k)]
        fields.update(per_clip)
        changed.append(
            {
                "sample_id": sample_id,
                "rows_a": len(clip_a["rows"]),
                "rows_b": len(clip_b["rows"]),
                "rows_changed": len(rows_changed),
                "rows": rows_changed,
                "clip_fields_changed": clip_fields,
                "fields": dict(sorted(per_clip.items())),
            }
        )
    moved = [
        {"sample_id": s, "a": clips_a[s]["split"], "b": clips_b[s]["split"]}
        for s in common
        if clips_a[s]["split"] != clips_b[s]["split"]
    ]
    return {
        "a": {"version": a.version, "clips": len(clips_a), "rows": sum(c["rows"] for c in clips_a.values())},
        "b": {"version": b.version, "clips": len(clips_b), "rows": sum(c["rows"] for c in clips_b.values())},
        "clips_added": added,
        "clips_removed": removed,
        "clips_changed": changed,
        "clips_unchanged": len(common) - len(differing),
        "split_changes": moved,
        "rows_changed_per_field": dict(sorted(fields.items(), key=lambda kv: (-kv[1], kv[0]))),
        "label_changes": {
            name: {
                "rows": sum(counts.values()),
                "changes": [
                    {"from": f, "to": t, "rows": n}
                    for (f, t), n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:MAX_CHANGES_PER_FIELD]
                ],
            }
            for name, counts in sorted(labels.items())
        },
        "inputs_changed": {
            k: {"a": a.manifest["inputs"].get(k), "b": b.manifest["inputs"].get(k)}
            for k in sorted(set(a.manifest["inputs"]) | set(b.manifest["inputs"]))
            if a.manifest["inputs"].get(k) != b.manifest["inputs"].get(k)
        },
        "corrections": _new_corrections(a, b),
        "instances_changed": _instance_changes(a, b),
    }


def _new_corrections(a: Snapshot, b: Snapshot) -> list[dict]:
    """The corrections of released gold that ``b`` lists and ``a`` does not: made between the two."""
    known = {json.dumps(c, sort_keys=True) for c in a.corrections()}
    return [c for c in b.corrections() if json.dumps(c, sort_keys=True) not in known]


def _instance_changes(a: Snapshot, b: Snapshot) -> dict[str, dict]:
    """{task: {added, removed, changed: [instance ids]}} for the tasks whose instances differ."""
    out = {}
    for task in ALL_TASKS:
        files_a, files_b = a.task_files(task), b.task_files(task)
        if files_a == files_b:
            continue  # the same files, byte for byte (their paths and SHA-256 in both manifests)
        lines_a, lines_b = a.instances(task), b.instances(task)
        entry = {
            "added": sorted(set(lines_b) - set(lines_a)),
            "removed": sorted(set(lines_a) - set(lines_b)),
            "changed": sorted(i for i in set(lines_a) & set(lines_b) if lines_a[i] != lines_b[i]),
        }
        if any(entry.values()):
            out[task] = entry
    return out


def format_diff(diff: dict) -> str:
    a, b = diff["a"], diff["b"]
    out = [
        f"{a['version']} ({a['clips']} clips, {a['rows']} rows) -> {b['version']} ({b['clips']} clips, {b['rows']} "
        "rows)"
    ]
    for key, change in diff["inputs_changed"].items():
        out.append(f"input {key}: {change['a']!r} -> {change['b']!r}")
    out.append(
        f"clips added: {len(diff['clips_added'])}"
        + (": " + ", ".join(diff["clips_added"]) if diff["clips_added"] else "")
    )
    out.append(
        f"clips removed: {len(diff['clips_removed'])}"
        + (": " + ", ".join(diff["clips_removed"]) if diff["clips_removed"] else "")
    )
    for c in diff["corrections"]:
        clips = ", ".join(
            f"{x['sample_id']} (rows {_some(x['rows'])})" if x["rows"] else x["sample_id"] for x in c["clips"]
        )
        out.append(
            f"corrected gold (recorded {c['date']}{' by ' + c['by'] if c['by'] else ''}, from {c['file']}, sha256 "
            f"{c['sha256']}; "
            f"released in {', '.join(c['releases'])}): {c['rows_changed']} rows in {len(c['clips'])} clips: {clips}"
        )
    out.append(f"clips changed: {len(diff['clips_changed'])} (unchanged: {diff['clips_unchanged']})")
    for clip in diff["clips_changed"]:
        fields = ", ".join(f"{k} {v}" for k, v in clip["fields"].items())
        out.append(
            f"  {clip['sample_id']}: {clip['rows_changed']} row{'s' if clip['rows_changed'] != 1 else ''} changed "
            f"({clip['rows_a']} -> {clip['rows_b']} rows)"
            + (f": rows {_some(clip['rows'])}" if clip["rows"] else "")
            + (f"; {fields}" if fields else "")
        )
    if diff["split_changes"]:
        out.append(f"clips that changed split: {len(diff['split_changes'])}")
        out += [f"  {m['sample_id']}: {m['a']} -> {m['b']}" for m in diff["split_changes"]]
    if diff["instances_changed"]:
        out.append("task instances changed:")
        for task, entry in diff["instances_changed"].items():
            out.append(f"  {task}: " + ", ".join(f"{len(entry[k])} {k}" for k in ("added", "removed", "changed")))
            for kind in ("added", "removed", "changed"):
                if entry[kind]:
                    out.append(f"    {kind}: {_some(entry[kind])}")
    if diff["label_changes"]:
        out.append("label changes per field:")
        for name, entry in diff["label_changes"].items():
            out.append(f"  {name}: {entry['rows']} rows")
            out += [f"    {c['from']} -> {c['to']}: {c['rows']}" for c in entry["changes"]]
    return "\n".join(out)


def _some(items: list) -> str:
    shown = ", ".join(map(str, items[:MAX_LISTED]))
    return shown + (f" ... and {len(items) - MAX_LISTED} more" if len(items) > MAX_LISTED else "")
