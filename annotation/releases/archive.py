"""A release folder as a zip file whose bytes depend only on the files.

Entries are sorted, dated 1980-01-01 (the zip epoch), marked read-only and
deflated at a fixed level, under one top folder ``<project>-<version>/``:
the same release always downloads as the same bytes.
"""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import IO

ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)


def archive_name(project_slug: str, version: str) -> str:
    return f"{project_slug}-{version}"


def write_zip(folder: str | Path, out: IO[bytes], top: str) -> None:
    folder = Path(folder)
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=6) as zf:
        for path in sorted(
            (p for p in folder.rglob("*") if p.is_file()), key=lambda p: p.relative_to(folder).as_posix()
        ):
            info = zipfile.ZipInfo(f"{top}/{path.relative_to(folder).as_posix()}", date_time=ZIP_EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = 3  # Unix, so the permission bits below are read
            info.external_attr = (0o100444 & 0xFFFF) << 16
            zf.writestr(info, path.read_bytes(), compresslevel=6)
