"""SubRip (.srt), read with the ``srt`` package. Speakers come from ``Name:`` labels, if any."""

from __future__ import annotations

import re

import srt

from ..errors import IngestError
from ..lines import LineIndex
from ..report import IngestNotes
from . import rolling
from .base import RawCue, cues_from_lines
from .text import strip_srt_styling

# A line that tries to be a timing line ("00:00:05,000 -> 00:00:06,000", "0:05 --> 0:06").
_TIMING_ATTEMPT = re.compile(r"^\s*\d+[:.,]\d+\S*\s*-+\s*>|-->")


def parse(name: str, text: str, notes: IngestNotes) -> list[RawCue]:
    if not srt.SRT_REGEX.search(text):
        raise IngestError(name, "no timed cues found in the file (no line like 00:00:01,000 --> 00:00:02,000)", 1)
    try:
        subtitles = list(srt.parse(text))
    except srt.SRTParseError as exc:
        raise _unreadable(name, text, exc.expected_start, exc.actual_start) from None
    except (srt.TimestampParseError, ValueError, OverflowError) as exc:
        raise IngestError(name, f"unreadable SubRip timestamp ({exc})", None) from None
    # The same expression srt.parse matched with, for the line number of each cue's timing line.
    lines_of = LineIndex(text)
    timing_lines = [lines_of.line(m.start(2)) for m in srt.SRT_REGEX.finditer(text)]

    read: list[rolling.CaptionCue] = []
    previous_index = None
    for subtitle, line in zip(subtitles, timing_lines):
        _check_numbering(subtitle.index, previous_index, line, notes)
        previous_index = subtitle.index if subtitle.index is not None else previous_index
        content_lines = subtitle.content.split("\n")
        for k, content_line in enumerate(content_lines, start=1):
            if _TIMING_ATTEMPT.search(content_line):
                raise IngestError(name, f"timing line not understood: {content_line.strip()[:80]!r}", line + k)
        if subtitle.content.strip() and any(not part.strip() for part in subtitle.content.strip("\n").split("\n")):
            notes.tolerated("blank_line_in_cue", "blank line inside a cue; the text after it kept with the cue", line)
        content = strip_srt_styling(subtitle.content, notes)
        start, end = subtitle.start.total_seconds(), subtitle.end.total_seconds()
        read.append(
            rolling.CaptionCue(
                round(start, 3), round(end, 3), line, [(None, part, part) for part in content.split("\n")]
            )
        )
    # Auto-captions converted to SubRip keep their rolling lines (without the word timings).
    read = rolling.collapse(read, notes) or read

    cues: list[RawCue] = []
    for cue in read:
        cues.extend(
            cues_from_lines(name, cue.start, cue.end, [(voice, text) for voice, text, _ in cue.lines], cue.line, notes)
        )
    return cues


def _unreadable(name: str, text: str, start: int, end: int) -> IngestError:
    """The refusal for text srt could not match, pointing at a broken timing line if there is one."""
    first_line = LineIndex(text).line(start)
    lines = text[start:end].split("\n")
    for k, line in enumerate(lines):
        if _TIMING_ATTEMPT.search(line):
            return IngestError(name, f"timing line not understood: {line.strip()[:80]!r}", first_line + k)
    k, line = next(((k, line) for k, line in enumerate(lines) if line.strip()), (0, ""))
    return IngestError(name, f"cannot read this as a SubRip cue: {line.strip()[:80]!r}", first_line + k)


def _check_numbering(index: int | None, previous: int | None, line: int, notes: IngestNotes) -> None:
    if index is None:
        notes.tolerated("missing_number", "cue has no number", line)
    elif previous is not None and index != previous + 1:
        notes.tolerated("numbering_gap", f"cue number {index} follows {previous}", line)
