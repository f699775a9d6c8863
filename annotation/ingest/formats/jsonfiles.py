"""The two JSON shapes: diarisation output (a ``segments`` list of
``{start, end, speaker, text}``, as speech-to-text tools such as WhisperX
write it) and a RESCUE clip (``rows`` with ``start_time``, ``end_time``,
``primary_speaker``, ``dialogue_cleaned``; annotation fields are ignored).
"""

from __future__ import annotations

import json
import re

from ..errors import IngestError
from ..lines import LineIndex
from ..report import IngestNotes
from .base import RawCue, cues_from_lines, seconds
from .table import parse_time

_SKELETON = {"start_time", "end_time", "primary_speaker", "dialogue_cleaned", "row_index"}


def load(name: str, text: str):
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise IngestError(name, f"invalid JSON: {exc.msg}", exc.lineno) from None
    except RecursionError:
        raise IngestError(name, "JSON nested too deeply to be a transcript", None) from None


def item_lines(text: str, key: str, count: int) -> list[int | None]:
    """The line where each item of the top-level list ``key`` starts (None if it cannot be located).

    json gives no positions, so the list is walked again with ``raw_decode``.
    """
    decoder = json.JSONDecoder()
    match = re.search(rf'"{re.escape(key)}"\s*:\s*\[', text) if key else re.match(r"\s*\[", text)
    if match is None:
        return [None] * count
    pos, lines, lines_of = match.end(), [], LineIndex(text)
    try:
        while len(lines) < count:
            while text[pos] in " \t\r\n,":
                pos += 1
            lines.append(lines_of.line(pos))
            _, pos = decoder.raw_decode(text, pos)
    except (ValueError, IndexError, RecursionError):
        return [None] * count
    return lines


def _time(name: str, value, what: str, line: int | None) -> float:
    if isinstance(value, str):
        parsed = parse_time(value)
        if parsed is None:
            raise IngestError(name, f"{what} {value[:40]!r} is not a time", line)
        value = parsed
    return seconds(name, value, what, line)


def _speaker(value) -> str:
    if value is None:
        return ""
    return str(value).strip()


def parse_diarisation(name: str, text: str, data, notes: IngestNotes) -> list[RawCue]:
    segments = data.get("segments") if isinstance(data, dict) else data
    if not isinstance(segments, list):
        raise IngestError(name, "diarisation JSON needs a 'segments' list", 1)
    lines = item_lines(text, "segments" if isinstance(data, dict) else "", len(segments))
    cues: list[RawCue] = []
    for k, (segment, line) in enumerate(zip(segments, lines)):
        if not isinstance(segment, dict):
            raise IngestError(name, f"segment {k + 1} is not an object", line)
        for key in ("start", "end"):
            if key not in segment:
                raise IngestError(name, f"segment {k + 1} has no '{key}' time", line)
        start = _time(name, segment["start"], "start time", line)
        end = _time(name, segment["end"], "end time", line)
        speaker = _speaker(segment.get("speaker"))
        words = segment.get("text", "")
        if not isinstance(words, str):
            raise IngestError(name, f"segment {k + 1} has text that is not a string", line)
        cues.extend(
            cues_from_lines(name, start, end, [(speaker or None, part) for part in words.split("\n")], line, notes)
        )
    return cues


def parse_rescue(name: str, text: str, data: dict, notes: IngestNotes) -> tuple[list[RawCue], dict]:
    rows = data.get("rows")
    if not isinstance(rows, list):
        raise IngestError(name, "a RESCUE clip needs a 'rows' list", 1)
    lines = item_lines(text, "rows", len(rows))
    cues: list[RawCue] = []
    annotated = False
    for k, (row, line) in enumerate(zip(rows, lines)):
        if not isinstance(row, dict):
            raise IngestError(name, f"row {k + 1} is not an object", line)
        for key in ("start_time", "end_time", "primary_speaker", "dialogue_cleaned"):
            if key not in row:
                raise IngestError(name, f"row {k + 1} has no '{key}'", line)
        if not isinstance(row["dialogue_cleaned"], str) or not isinstance(row["primary_speaker"], str):
            raise IngestError(name, f"row {k + 1}: primary_speaker and dialogue_cleaned must be strings", line)
        annotated = annotated or any(v not in (None, "", [], {}) for key, v in row.items() if key not in _SKELETON)
        start = _time(name, row["start_time"], "start_time", line)
        end = _time(name, row["end_time"], "end_time", line)
        speaker = row["primary_speaker"].strip()
        cues.extend(
            cues_from_lines(
                name, start, end, [(speaker or None, row["dialogue_cleaned"])], line, notes, detect_labels=False
            )
        )
    if annotated:
        notes.normalised(
            "annotations_ignored", "annotation fields ignored: only times, speakers and dialogue are ingested"
        )
    metadata = {}
    for key in ("sample_id", "scenario", "source_file"):
        if isinstance(data.get(key), str) and data[key].strip():
            metadata[key] = data[key].strip()
    participants = data.get("participants")
    if isinstance(participants, list) and all(isinstance(p, str) for p in participants) and participants:
        metadata["participants"] = participants
    return cues, metadata
