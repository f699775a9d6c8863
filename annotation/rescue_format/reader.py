"""Read release-format files: a ``.json`` clip (or a JSON list of clips), a
``.jsonl`` of clips (one per line), or a folder of them."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Problem:
    """Something wrong with the input, located as precisely as we can."""

    file: str
    message: str
    line: int | None = None
    sample_id: str | None = None
    row: int | None = None  # 1-based row_index
    field: str | None = None  # path inside the clip, e.g. rows[3].target[0]

    def __str__(self) -> str:
        where = self.file
        if self.line is not None:
            where += f", line {self.line}"
        if self.sample_id:
            where += f", sample {self.sample_id}"
        if self.row is not None:
            where += f", row {self.row}"
        if self.field:
            where += f", field {self.field}"
        return f"{where}: {self.message}"


class ReadError(Exception):
    def __init__(self, problems: list[Problem]):
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


@dataclass(frozen=True)
class SourceClip:
    file: str
    line: int  # 1-based line where the clip's JSON starts
    data: object
    content_hash: str
    file_sha256: str = ""  # of the whole file's bytes, as read (what an import record names)


SUFFIXES = (".json", ".jsonl")
_TOO_DEEP = "JSON nested far too deeply to be a clip"


def list_files(path: Path) -> list[Path]:
    if path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in SUFFIXES)
        if not files:
            raise ReadError([Problem(str(path), "folder holds no .json or .jsonl files")])
        return files
    if not path.exists():
        raise ReadError([Problem(str(path), "no such file or folder")])
    if path.suffix not in SUFFIXES:
        raise ReadError([Problem(str(path), f"unsupported file type {path.suffix!r}: expected .json or .jsonl")])
    return [path]


def _decode(path: Path, raw: bytes) -> str:
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ReadError(
            [
                Problem(
                    str(path),
                    f"not valid UTF-8 (byte 0x{raw[exc.start]:02x} at offset {exc.start}); the release format is UTF-8",
                    line=line,
                )
            ]
        ) from None


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def read_file(path: Path) -> list[SourceClip]:
    raw = path.read_bytes()
    if not raw.strip():
        raise ReadError([Problem(str(path), "file is empty")])
    text = _decode(path, raw)
    file_sha256 = hashlib.sha256(raw).hexdigest()
    clips: list[SourceClip] = []
    if path.suffix == ".jsonl":
        for lineno, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                data = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ReadError(
                    [Problem(str(path), f"invalid JSON at column {exc.colno}: {exc.msg}", line=lineno)]
                ) from None
            except RecursionError:
                raise ReadError([Problem(str(path), _TOO_DEEP, line=lineno)]) from None
            clips.append(SourceClip(str(path), lineno, data, _hash(line), file_sha256))
        return clips
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ReadError(
            [Problem(str(path), f"invalid JSON at column {exc.colno}: {exc.msg}", line=exc.lineno)]
        ) from None
    except RecursionError:
        raise ReadError([Problem(str(path), _TOO_DEEP, line=1)]) from None
    items = data if isinstance(data, list) else [data]
    return [SourceClip(str(path), 1, item, _hash(json.dumps(item, ensure_ascii=False)), file_sha256) for item in items]


def read_path(path: str | Path) -> list[SourceClip]:
    """All clips under ``path``; raises ReadError naming the file and line."""
    clips: list[SourceClip] = []
    for file in list_files(Path(path)):
        clips.extend(read_file(file))
    return clips
