"""What ingest did to a file, kept on the clip as ``Clip.ingest_report``.

Two kinds of notes: *normalisations* (changes applied to the whole file, such
as converting the encoding or the line ends) and *oddities* (things that were
tolerated at a given line, such as an overlapping cue or a numbering gap).
Oddities are capped so that a very messy file cannot bloat the clip row; the
number left out is recorded.
"""
from __future__ import annotations

from dataclasses import dataclass, field

MAX_ODDITIES = 200


@dataclass
class IngestNotes:
    normalisations: list[dict] = field(default_factory=list)
    oddities: list[dict] = field(default_factory=list)
    oddities_left_out: int = 0

    def normalised(self, code: str, message: str) -> None:
        """Record a file-wide change once; repeats only raise its count."""
        for note in self.normalisations:
            if note["code"] == code:
                note["count"] += 1
                return
        self.normalisations.append({"code": code, "message": message, "count": 1})

    def tolerated(self, code: str, message: str, line: int | None) -> None:
        if len(self.oddities) >= MAX_ODDITIES:
            self.oddities_left_out += 1
            return
        self.oddities.append({"line": line, "code": code, "message": message})

    def as_dict(self) -> dict:
        out = {"normalisations": self.normalisations, "oddities": self.oddities}
        if self.oddities_left_out:
            out["oddities_left_out"] = self.oddities_left_out
        return out
