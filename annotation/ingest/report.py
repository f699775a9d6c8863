"""What ingest did to a file, kept on the clip as ``Clip.ingest_report``.

Two kinds of notes: *normalisations* (changes applied to the whole file, such
as converting the encoding or the line ends) and *oddities* (things that were
tolerated at a given line, such as an overlapping cue or a numbering gap).
Oddities are capped so that a very messy file cannot bloat the clip row; the
number left out is recorded. A normalisation that changes what the clip
holds (rolling captions collapsed) is also a *headline*, shown with the
file's result on the upload page, in the API and on the command line. A
format may add a *section* of its own (the word timings of rolling captions).
"""

from __future__ import annotations

from dataclasses import dataclass, field

MAX_ODDITIES = 200


@dataclass
class IngestNotes:
    normalisations: list[dict] = field(default_factory=list)
    oddities: list[dict] = field(default_factory=list)
    oddities_left_out: int = 0
    headlines: list[str] = field(default_factory=list)
    sections: dict[str, dict] = field(default_factory=dict)

    def normalised(self, code: str, message: str) -> None:
        """Record a file-wide change once; repeats only raise its count."""
        for note in self.normalisations:
            if note["code"] == code:
                note["count"] += 1
                return
        self.normalisations.append({"code": code, "message": message, "count": 1})

    def headline(self, code: str, message: str) -> None:
        """A normalisation a person should see with the file's result, not only in the report."""
        self.normalised(code, message)
        self.headlines.append(message)

    def section(self, key: str, content: dict) -> None:
        self.sections[key] = content

    def tolerated(self, code: str, message: str, line: int | None) -> None:
        if len(self.oddities) >= MAX_ODDITIES:
            self.oddities_left_out += 1
            return
        self.oddities.append({"line": line, "code": code, "message": message})

    def as_dict(self) -> dict:
        out = {"normalisations": self.normalisations, "oddities": self.oddities}
        if self.oddities_left_out:
            out["oddities_left_out"] = self.oddities_left_out
        out.update(self.sections)
        return out
