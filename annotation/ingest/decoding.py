"""Bytes to text: byte-order marks, UTF-16/32, legacy 8-bit encodings, line ends.

The contract: ``decode`` returns the text with ``\\n`` line ends and a record
of how it was read, or raises ``IngestError`` for data that is not text.
Valid UTF-8 is taken as UTF-8 without guessing. Anything else goes to
charset-normalizer; among the encodings it ranks as equally likely,
Windows-1252 is preferred, because short English transcripts are often
ranked under a Central-European code page that decodes the same bytes into
different letters (``ï`` would become ``ď``).
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass, field

from charset_normalizer import from_bytes

from .errors import IngestError
from .lines import LineIndex
from .report import IngestNotes

_BOMS = (
    # UTF-32 first: its little-endian BOM starts with the UTF-16 one.
    (codecs.BOM_UTF32_LE, "utf-32", "UTF-32"),
    (codecs.BOM_UTF32_BE, "utf-32", "UTF-32"),
    (codecs.BOM_UTF8, "utf-8-sig", "UTF-8"),
    (codecs.BOM_UTF16_LE, "utf-16", "UTF-16"),
    (codecs.BOM_UTF16_BE, "utf-16", "UTF-16"),
)
_PREFERRED_LEGACY = "cp1252"
_LABELS = {
    "cp1252": "Windows-1252",
    "utf_8": "UTF-8",
    "utf_16": "UTF-16",
    "utf_16_le": "UTF-16LE",
    "utf_16_be": "UTF-16BE",
}
# C0 control characters other than tab, line feed, vertical tab, form feed and carriage return.
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f]")
# Above this share of control characters the file is binary data, not a transcript with a stray byte.
_BINARY_SHARE = 0.01


@dataclass
class Decoded:
    text: str
    encoding: dict
    notes: IngestNotes = field(default_factory=IngestNotes)


def _line_of(raw: bytes, offset: int) -> int:
    return raw[:offset].count(b"\n") + 1


def _from_bom(raw: bytes) -> tuple[str, str, str] | None:
    for bom, codec, label in _BOMS:
        if raw.startswith(bom):
            return bom, codec, label
    return None


def _guess(name: str, raw: bytes) -> tuple[str, dict]:
    """Ask charset-normalizer; returns (python codec, detection record)."""
    matches = from_bytes(raw)
    best = matches.best()
    if best is None:
        offset = raw.find(b"\x00")
        raise IngestError(
            name,
            "binary data, not a text transcript (no text encoding fits these bytes)",
            _line_of(raw, max(offset, 0)) if offset >= 0 else None,
        )
    # Matches that read the bytes as plausibly as the best one.
    equally_likely = [m for m in matches if m.chaos <= best.chaos + 0.01 and m.coherence >= best.coherence - 0.01]
    codec = best.encoding
    if any(_PREFERRED_LEGACY in m.could_be_from_charset for m in equally_likely) and not codec.startswith("utf"):
        codec = _PREFERRED_LEGACY
    record = {
        "method": "charset-normalizer",
        "detected": best.encoding,
        "equally_likely": sorted({m.encoding for m in equally_likely}),
        "language": best.language,
        "chaos": round(best.chaos, 4),
    }
    return codec, record


def decode(name: str, raw: bytes) -> Decoded:
    """Decode ``raw`` (the bytes of file ``name``) into text with ``\\n`` line ends."""
    notes = IngestNotes()
    if not raw.strip():
        raise IngestError(name, "the file is empty: no cues to read", 1)

    bom = _from_bom(raw)
    if bom is not None:
        marker, codec, label = bom
        record = {"method": "byte-order mark", "bom": True}
        notes.normalised("bom_removed", f"{label} byte-order mark removed")
    elif b"\x00" in raw:
        # NUL bytes: UTF-16/32 without a BOM, or binary data.
        codec, record = _guess(name, raw)
        if not codec.startswith(("utf_16", "utf_32")):
            offset = raw.find(b"\x00")
            raise IngestError(name, "binary data, not a text transcript (NUL byte)", _line_of(raw, offset))
    else:
        try:
            raw.decode("utf-8")
            codec, record = "utf-8", {"method": "valid UTF-8", "bom": False}
        except UnicodeDecodeError:
            codec, record = _guess(name, raw)
            record["bom"] = False
    try:
        text = raw.decode(codec)
    except (UnicodeDecodeError, LookupError) as exc:
        start = getattr(exc, "start", 0)
        raise IngestError(name, f"cannot be decoded as {codec}: {exc}", _line_of(raw, start)) from None
    text = text.lstrip("\ufeff")

    label = _LABELS.get(codec.replace("-", "_").removesuffix("_sig"), codec)
    if bom is not None:
        label = bom[2]
    record["encoding"] = label
    record["codec"] = codec
    if record["method"] == "charset-normalizer":
        notes.normalised("encoding_converted", f"decoded from {label} (detected by charset-normalizer) to Unicode")

    if "\r" in text:
        notes.normalised("line_ends", "CRLF/CR line ends converted to LF")
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = _drop_stray_controls(name, text, notes)
    return Decoded(text=text, encoding=record, notes=notes)


def _drop_stray_controls(name: str, text: str, notes: IngestNotes) -> str:
    """Refuse binary data; drop a few stray control bytes (a DOS end-of-file mark, say)."""
    found = list(_CONTROL.finditer(text))
    if not found:
        return text
    if "\x00" in text or len(found) > max(3, _BINARY_SHARE * len(text)):
        first = found[0].start()
        raise IngestError(
            name,
            f"binary data, not a text transcript ({len(found)} control characters)",
            text.count("\n", 0, first) + 1,
        )
    lines_of = LineIndex(text)
    for match in found:
        line = lines_of.line(match.start())
        notes.tolerated("control_character", f"control character U+{ord(match.group()):04X} removed", line)
    return _CONTROL.sub("", text)
