"""Checksums, the manifest, and writing a release folder that stays as written.

``manifest.json`` lists the SHA-256 and size of every other file of the
release. A folder is written under a temporary name beside its final place,
made read-only, then renamed in one step: a reader never sees half a
release, and a failed freeze leaves nothing behind. ``verify`` re-hashes a
folder against its manifest and names every changed, missing or extra file.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import shutil
import stat
from dataclasses import dataclass, field
from pathlib import Path

MANIFEST = "manifest.json"
FORMAT = "rescue-release/1"
_READ_ONLY_FILE = stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH
_READ_ONLY_DIR = _READ_ONLY_FILE | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH


def dumps_json(value, *, sort_keys: bool = False) -> bytes:
    """The release's JSON spelling: UTF-8, 2-space indent, a final newline.

    ``sort_keys`` for a document whose key order could depend on where it came from (e.g. jsonb).
    """
    return (json.dumps(value, indent=2, ensure_ascii=False, sort_keys=sort_keys) + "\n").encode("utf-8")


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class Digests(dict):
    """{path: SHA-256} of ``files``, each file hashed once, when first asked for.

    The croissant metadata, the manifest and ``reproduce`` all need the same
    digests: 60 MB of task instances are hashed once, not three times. Files
    are only ever added to a release being built, never replaced.
    """

    def __init__(self, files: dict[str, bytes]):
        super().__init__()
        self.files = files

    def __missing__(self, path: str) -> str:
        digest = self[path] = sha256(self.files[path])
        return digest


def file_entries(files: dict[str, bytes], digests: dict[str, str] | None = None) -> dict[str, dict]:
    """{path: {sha256, bytes}} in path order, the manifest itself excluded."""
    digests = Digests(files) if digests is None else digests
    return {path: {"sha256": digests[path], "bytes": len(files[path])} for path in sorted(files) if path != MANIFEST}


class ReleaseDirExists(FileExistsError):
    pass


def write_tree(files: dict[str, bytes], target: Path) -> Path:
    """Write ``files`` ({relative path: bytes}) as the read-only folder ``target``.

    Refuses when ``target`` exists (a frozen release is never overwritten).
    """
    target = Path(target)
    if target.exists():
        raise ReleaseDirExists(f"{target} already exists; a release folder is never overwritten")
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = target.parent / f".{target.name}.partial-{secrets.token_hex(4)}"
    try:
        for rel in sorted(files):
            path = staging / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(files[rel])
            os.chmod(path, _READ_ONLY_FILE)
        for folder in sorted(
            {p.parent for p in staging.rglob("*")} | {staging}, key=lambda p: len(p.parts), reverse=True
        ):
            os.chmod(folder, _READ_ONLY_DIR)
        os.rename(staging, target)
    except BaseException:
        remove_tree(staging)
        raise
    return target


def remove_tree(path: Path) -> None:
    """Delete a (read-only) folder we wrote ourselves, e.g. after a failed freeze."""
    path = Path(path)
    if not path.exists():
        return
    for folder in [path, *(p for p in path.rglob("*") if p.is_dir())]:
        os.chmod(folder, stat.S_IRWXU)
    shutil.rmtree(path)


@dataclass
class Verification:
    path: Path
    changed: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # the manifest itself cannot be used
    # Files rewritten by a newer card template on reproduction (README.md, croissant.json): said, not a mismatch.
    regenerated: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    checked: int = 0

    @property
    def ok(self) -> bool:
        return not (self.changed or self.missing or self.extra or self.problems)

    def lines(self) -> list[str]:
        out = [f"manifest: {p}" for p in self.problems]
        out += [f"changed: {p}" for p in self.changed]
        out += [f"missing: {p}" for p in self.missing]
        out += [f"extra:   {p}" for p in self.extra]
        out += [f"note:    {n}" for n in self.notes]
        return out

    def as_dict(self) -> dict:
        return {
            "ok": self.ok,
            "checked": self.checked,
            "changed": self.changed,
            "missing": self.missing,
            "extra": self.extra,
            "problems": self.problems,
            "regenerated": self.regenerated,
            "notes": self.notes,
        }


def read_manifest(folder: Path) -> dict:
    return json.loads((Path(folder) / MANIFEST).read_text(encoding="utf-8"))


def verify(folder: str | Path, expected_manifest: dict | None = None) -> Verification:
    """Re-hash every file of ``folder`` against its manifest.

    With ``expected_manifest`` (the database record), the manifest file must
    also say exactly what the record says, so editing a file *and* its
    manifest entry is caught too.
    """
    folder = Path(folder)
    result = Verification(folder)
    try:
        manifest = read_manifest(folder)
        listed = manifest["files"]
    except FileNotFoundError:
        result.problems.append(f"{MANIFEST} is missing")
        return result
    except (ValueError, KeyError, TypeError) as exc:
        result.problems.append(f"{MANIFEST} cannot be read ({exc})")
        return result
    if expected_manifest is not None and manifest != expected_manifest:
        result.problems.append(f"{MANIFEST} differs from the release's database record")
    on_disk = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()} - {MANIFEST}
    for rel in sorted(listed):
        path = folder / rel
        if rel not in on_disk:
            result.missing.append(rel)
            continue
        digest = hashlib.sha256()
        with open(path, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                digest.update(chunk)
        result.checked += 1
        if digest.hexdigest() != listed[rel].get("sha256") or path.stat().st_size != listed[rel].get("bytes"):
            result.changed.append(rel)
    result.extra = sorted(on_disk - set(listed))
    return result
