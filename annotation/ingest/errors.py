"""The one error type of ingest: a file that cannot be read, and where."""

from __future__ import annotations


class IngestError(Exception):
    """A transcript was refused. ``str()`` names the file and, when known, the line."""

    def __init__(self, file: str, message: str, line: int | None = None):
        self.file, self.message, self.line = file, message, line
        super().__init__(str(self))

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}, line {self.line}"
        return f"{where}: {self.message}"
