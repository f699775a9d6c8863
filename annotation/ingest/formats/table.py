"""CSV and TSV with ``start, end, speaker, text`` columns, read with the ``csv`` module.

A header row names the columns (common synonyms accepted, any order; the
speaker column is optional). Without a header the columns are positional:
``start,end,speaker,text`` or ``start,end,text``. Times are seconds
(``12.5``) or clock times (``00:01:02,500``, ``01:02.5``).
"""

from __future__ import annotations

import csv
import io
import re

from ..errors import IngestError
from ..report import IngestNotes
from .base import RawCue, cues_from_lines, seconds

_COLUMNS = {
    "start": {"start", "start_time", "starttime", "start_s", "start_seconds", "begin", "from", "in"},
    "end": {"end", "end_time", "endtime", "end_s", "end_seconds", "stop", "to", "out"},
    "speaker": {"speaker", "speaker_label", "speaker_name", "name", "who", "primary_speaker", "spk"},
    "text": {"text", "transcript", "utterance", "dialogue", "dialogue_cleaned", "content", "sentence", "words", "line"},
}
_CLOCK = re.compile(r"^(?:(\d+):)?(\d{1,2}):(\d{1,2}(?:[.,]\d+)?)$")
_SECONDS = re.compile(r"^\d+(?:[.,]\d+)?$")


def parse_time(value: str) -> float | None:
    """Seconds from ``12.5``, ``12,5``, ``01:02.5`` or ``00:01:02,500``; None if it is not a time."""
    value = value.strip()
    if _SECONDS.match(value):
        return float(value.replace(",", "."))
    match = _CLOCK.match(value)
    if match:
        hours, minutes, secs = match.groups()
        return int(hours or 0) * 3600 + int(minutes) * 60 + float(secs.replace(",", "."))
    return None


def _column_key(header: str) -> str:
    return re.sub(r"[\s\-()]+", "_", header.strip().lstrip("\ufeff").casefold()).strip("_")


def _header_map(name: str, header: list[str]) -> dict[str, int]:
    found: dict[str, int] = {}
    for position, cell in enumerate(header):
        key = _column_key(cell)
        for column, synonyms in _COLUMNS.items():
            if key in synonyms and column not in found:
                found[column] = position
    missing = [c for c in ("start", "end", "text") if c not in found]
    if missing:
        raise IngestError(
            name, f"the header names no {', '.join(missing)} column (columns found: {', '.join(header)})", 1
        )
    return found


def _dialect(name: str, text: str) -> type[csv.Dialect] | csv.Dialect:
    if name.lower().endswith((".tsv", ".tab")):
        return csv.excel_tab
    try:
        return csv.Sniffer().sniff(text[:8192], delimiters=",;\t|")
    except csv.Error:
        return csv.excel


def parse(name: str, text: str, notes: IngestNotes) -> list[RawCue]:
    reader = csv.reader(io.StringIO(text, newline=""), _dialect(name, text))
    rows: list[tuple[int, list[str]]] = []
    line_after = 0
    try:
        for row in reader:
            start_line, line_after = line_after + 1, reader.line_num
            if any(cell.strip() for cell in row):
                rows.append((start_line, row))
    except csv.Error as exc:
        raise IngestError(name, f"not readable as CSV: {exc}", reader.line_num) from None
    if not rows:
        raise IngestError(name, "no cues with words found in the file", 1)

    first_line, first = rows[0]
    if parse_time(first[0]) is None:
        columns = _header_map(name, first)
        body = rows[1:]
    else:
        if len(first) not in (3, 4):
            raise IngestError(
                name,
                f"no header row, and {len(first)} columns; expected start,end,speaker,text or start,end,text",
                first_line,
            )
        columns = (
            {"start": 0, "end": 1, "speaker": 2, "text": 3} if len(first) == 4 else {"start": 0, "end": 1, "text": 2}
        )
        notes.normalised("no_header", f"no header row; columns read as {','.join(columns)}")
        body = rows

    width = max(columns.values()) + 1
    cues: list[RawCue] = []
    for line, row in body:
        if len(row) < width:
            row = row + [""] * (width - len(row))
            notes.tolerated("short_row", "row has fewer columns than the header; the missing ones read as empty", line)
        start = _time(name, row[columns["start"]], "start time", line)
        end = _time(name, row[columns["end"]], "end time", line)
        speaker = row[columns["speaker"]].strip() if "speaker" in columns else ""
        lines = [(speaker or None, part) for part in row[columns["text"]].split("\n")]
        cues.extend(cues_from_lines(name, start, end, lines, line, notes))
    return cues


def _time(name: str, value: str, what: str, line: int) -> float:
    parsed = parse_time(value)
    if parsed is None:
        raise IngestError(name, f"{what} {value.strip()[:40]!r} is not a time (seconds or HH:MM:SS,mmm)", line)
    return seconds(name, parsed, what, line)
