"""Read a transcript file of any supported format into a ``Transcript``.

``read_transcript(name, raw)`` is the single entry point: it decodes the
bytes, works out the format (from the content first, the file extension
second), parses, and applies the checks every format shares. It returns a
``Transcript`` or raises ``IngestError``; nothing else escapes for any input.
"""

from __future__ import annotations

from pathlib import PurePosixPath

from ..decoding import decode
from ..errors import IngestError
from ..report import IngestNotes
from . import jsonfiles, subrip, table, vtt
from .base import RawCue, Transcript, finish

__all__ = ["FORMATS", "TRANSCRIPT_SUFFIXES", "RawCue", "Transcript", "read_transcript"]

FORMATS = {
    "srt": "SubRip",
    "vtt": "WebVTT",
    "csv": "CSV",
    "tsv": "TSV",
    "diarisation_json": "diarisation JSON (segments)",
    "rescue_json": "RESCUE clip JSON (rows)",
}
TRANSCRIPT_SUFFIXES = (".srt", ".vtt", ".csv", ".tsv", ".tab", ".json", ".txt")


def _detect(name: str, text: str, notes: IngestNotes) -> str:
    suffix = PurePosixPath(name).suffix.lower()
    head = text.lstrip()
    if head.startswith("WEBVTT"):
        detected = "vtt"
    elif head.startswith(("{", "[")):
        detected = "json"
    elif suffix in (".csv", ".tsv", ".tab"):
        detected = "tsv" if suffix in (".tsv", ".tab") else "csv"
    elif "-->" in text or suffix == ".srt":
        detected = "srt"
    elif suffix in (".txt", ""):
        detected = "csv"
    else:
        raise IngestError(name, f"unsupported file type {suffix!r} (expected {', '.join(TRANSCRIPT_SUFFIXES)})", None)
    expected = {".srt": "srt", ".vtt": "vtt", ".json": "json", ".csv": "csv", ".tsv": "tsv", ".tab": "tsv"}.get(suffix)
    if expected and expected != detected:
        notes.tolerated("format_mismatch", f"named {suffix} but the content is {detected}; read as {detected}", 1)
    return detected


def read_transcript(name: str, raw: bytes) -> Transcript:
    """Parse the bytes of file ``name``; raises ``IngestError`` naming the file and line."""
    decoded = decode(name, raw)
    notes = decoded.notes
    text = decoded.text
    kind = _detect(name, text, notes)
    metadata: dict = {}
    if kind in ("srt", "vtt"):
        # Whitespace-only lines would not end a cue block; trailing spaces carry nothing.
        stripped = "\n".join(line.rstrip() for line in text.split("\n"))
        if stripped != text:
            notes.normalised("trailing_whitespace", "trailing whitespace removed from lines")
        text = stripped
    if kind == "srt" and PurePosixPath(name).suffix.lower() == ".vtt":
        # A .vtt without the WEBVTT header: often a renamed SubRip file.
        try:
            cues = subrip.parse(name, text, notes)
        except IngestError:
            raise IngestError(
                name, "not a WebVTT file: the first line must start with WEBVTT (nor is it SubRip)", 1
            ) from None
    elif kind == "srt":
        cues = subrip.parse(name, text, notes)
    elif kind == "vtt":
        cues = vtt.parse(name, text, notes)
    elif kind in ("csv", "tsv"):
        cues = table.parse(name, text, notes)
    else:
        data = jsonfiles.load(name, text)
        if isinstance(data, dict) and "rows" in data:
            kind = "rescue_json"
            cues, metadata = jsonfiles.parse_rescue(name, text, data, notes)
        elif (isinstance(data, dict) and "segments" in data) or isinstance(data, list):
            kind = "diarisation_json"
            cues = jsonfiles.parse_diarisation(name, text, data, notes)
        else:
            raise IngestError(name, "JSON with neither a 'segments' list (diarisation) nor 'rows' (RESCUE clip)", 1)
    transcript = finish(name, kind, cues, notes, metadata)
    transcript.encoding = decoded.encoding
    return transcript
