"""WebVTT (.vtt), read with ``webvtt-py``. Speakers come from ``<v Name>`` voice
tags or, failing that, ``Name:`` labels; all cue tags are stripped to plain text.

webvtt-py silently skips blocks it cannot read. So that nothing is lost
quietly, the blocks are also walked here (only for line numbers and to find
what was skipped): a timing line it could not read is refused, and text
separated from its cue by a blank line is kept with the cue above it.
Rolling auto-captions (each cue repeating the line before) are collapsed into
their distinct lines by ``rolling``.
"""

from __future__ import annotations

import html
import re

import webvtt
from webvtt.errors import MalformedCaptionError, MalformedFileError
from webvtt.vtt import WebVTTCueBlock

from ..errors import IngestError
from ..report import IngestNotes
from . import rolling
from .base import RawCue, cues_from_lines

_VOICE = re.compile(r"<v(?:\.[^\s>]+)*\s+([^>]+)>")
_TAG = re.compile(r"<[^>]*>")
_VOICE_TAGS = re.compile(r"<v(?:\.[^\s>]+)*\s+[^>]+>|</v>")
_NON_CUE_BLOCKS = ("NOTE", "STYLE", "REGION")


def _blocks(lines: list[str]) -> list[tuple[int, list[str]]]:
    """Blank-line separated blocks as (first line number, lines); a second timing line starts a new block."""
    blocks: list[tuple[int, list[str]]] = []
    current: list[str] = []
    first = 0
    for number, line in enumerate(lines, start=1):
        # As webvtt-py does: in the header any timing line, later a second one, starts a new block.
        starts_new = current and "-->" in line and (not blocks or any("-->" in x for x in current))
        if not line or starts_new:
            if current:
                blocks.append((first, current))
            current = []
        if line:
            if not current:
                first = number
            current.append(line)
    if current:
        blocks.append((first, current))
    return blocks


def _voice_lines(raw_lines: list[str]) -> list[tuple[str | None, str, str]]:
    """Each payload line as (voice named at its start or None, text with tags stripped and entities decoded, raw
    line)."""
    out = []
    for raw in raw_lines:
        match = _VOICE.match(raw.strip())
        voice = match.group(1).strip() if match else None
        out.append((voice, html.unescape(_TAG.sub("", raw)), raw))
    return out


def parse(name: str, text: str, notes: IngestNotes) -> list[RawCue]:
    try:
        document = webvtt.from_string(text)
    except MalformedFileError:
        raise IngestError(name, "not a WebVTT file: the first line must start with WEBVTT", 1) from None
    except (MalformedCaptionError, ValueError, OverflowError) as exc:
        raise IngestError(name, f"unreadable WebVTT cue ({exc})", None) from None

    captions = list(document.captions)
    cue_blocks: list[tuple[int, list[str]]] = []  # (timing line number, payload lines)
    for first, block in _blocks(text.split("\n"))[1:]:  # the first block is the header
        if block[0].startswith(_NON_CUE_BLOCKS):
            continue
        timing_at = next((k for k, line in enumerate(block) if "-->" in line), None)
        if timing_at is None:
            if not cue_blocks:
                notes.tolerated("text_before_cues", "text before the first cue ignored", first)
                continue
            notes.tolerated("blank_line_in_cue", "blank line inside a cue; the text after it kept with the cue", first)
            cue_blocks[-1][1].extend(block)
            continue
        if timing_at > 1 or not WebVTTCueBlock.CUE_TIMINGS_PATTERN.match(block[timing_at]):
            raise IngestError(name, f"timing line not understood: {block[timing_at].strip()[:80]!r}", first + timing_at)
        cue_blocks.append((first + timing_at, block[timing_at + 1 :]))

    if len(cue_blocks) != len(captions):
        raise IngestError(
            name, f"read {len(captions)} cues but found {len(cue_blocks)} timing lines; the file is malformed", None
        )

    read: list[rolling.CaptionCue] = []
    for caption, (line, payload) in zip(captions, cue_blocks):
        raw_lines = payload or list(caption.lines)
        if any(_TAG.search(_VOICE_TAGS.sub("", x)) for x in raw_lines):
            notes.normalised("styling_removed", "styling tags removed (plain text kept)")
        start = caption.start_time.in_milliseconds() / 1000
        end = caption.end_time.in_milliseconds() / 1000
        read.append(rolling.CaptionCue(start, end, line, _voice_lines(raw_lines)))
    read = rolling.collapse(read, notes) or read

    cues: list[RawCue] = []
    for cue in read:
        cues.extend(
            cues_from_lines(name, cue.start, cue.end, [(voice, text) for voice, text, _ in cue.lines], cue.line, notes)
        )
    return cues
