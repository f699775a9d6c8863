"""What every format parser produces, and the checks all formats share."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..errors import IngestError
from ..report import IngestNotes
from .text import MAX_LABEL, by_speaker, plain


@dataclass
class RawCue:
    """One timed piece of transcript as read: times in seconds, the raw speaker tag ("" if none), plain text."""

    start: float
    end: float
    speaker: str
    text: str
    line: int | None  # 1-based line where the cue starts in the file


@dataclass
class Transcript:
    """A parsed file: cues in time order plus how they were read."""

    format: str
    cues: list[RawCue]
    notes: IngestNotes
    # Clip metadata carried by the file itself (the RESCUE clip JSON): sample_id, scenario, participants.
    metadata: dict = field(default_factory=dict)
    encoding: dict = field(default_factory=dict)  # how the bytes were decoded (see decoding.py)

    @property
    def speaker_tags(self) -> list[str]:
        """Distinct raw speaker tags in order of first appearance ("" for cues without one)."""
        return list(dict.fromkeys(c.speaker for c in self.cues))


def seconds(name: str, value, what: str, line: int | None) -> float:
    """A finite, non-negative number of seconds, or a refusal naming the line."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise IngestError(name, f"{what} {value!r} is not a number of seconds", line)
    if not math.isfinite(value) or value < 0:
        raise IngestError(name, f"{what} {value!r} is not a time (it must be zero or more seconds)", line)
    return round(float(value), 3)


def cues_from_lines(
    name: str,
    start: float,
    end: float,
    lines: list[tuple[str | None, str]],
    line: int | None,
    notes: IngestNotes,
    *,
    detect_labels: bool = True,
) -> list[RawCue]:
    """Turn one timed block of text lines into cues, one per speaker turn inside it."""
    turns = by_speaker(lines, detect_labels=detect_labels)
    cues = []
    for speaker, text_lines in turns:
        if len(speaker) > MAX_LABEL:
            raise IngestError(name, f"speaker label of {len(speaker)} characters is too long to be a name", line)
        cues.append(RawCue(start, end, speaker.strip(), plain(text_lines, notes), line))
    if len(cues) > 1:
        notes.tolerated(
            "several_speakers_in_cue",
            f"one cue holds {len(cues)} speakers; split into {len(cues)} cues sharing its times",
            line,
        )
    return cues


def finish(name: str, fmt: str, cues: list[RawCue], notes: IngestNotes, metadata: dict | None = None) -> Transcript:
    """The checks every format shares: empty cues, times, order, overlaps.

    Refused: no cue with words; a cue that ends before it starts; a cue that
    starts earlier than the cue before it by more than the clip's length
    (the end time of the file's last cue), which means the times are not
    one clip's times (a typed hour, two files glued together). Smaller
    steps back are put into time order and recorded; overlaps are recorded.
    """
    kept = []
    for cue in cues:
        if not cue.text:
            notes.tolerated("empty_cue", "cue without words dropped", cue.line)
            continue
        kept.append(cue)
    if not kept:
        raise IngestError(name, "no cues with words found in the file", 1)

    for cue in kept:
        if cue.end < cue.start:
            raise IngestError(name, f"cue ends ({cue.end} s) before it starts ({cue.start} s)", cue.line)
        if cue.end == cue.start:
            notes.tolerated("zero_length_cue", f"cue has no duration (starts and ends at {cue.start} s)", cue.line)

    clip_length = kept[-1].end
    for before, cue in zip(kept, kept[1:]):
        step_back = before.start - cue.start
        if step_back > clip_length:
            raise IngestError(
                name,
                f"time goes backwards from {before.start} s to {cue.start} s, by more than the clip's length "
                f"({clip_length} s)",
                cue.line,
            )
        if step_back > 0:
            notes.tolerated(
                "out_of_order",
                f"cue starts {round(step_back, 3)} s before the cue above it; put in time order",
                cue.line,
            )

    ordered = sorted(kept, key=lambda c: c.start)  # stable: same start keeps file order
    if any(a is not b for a, b in zip(ordered, kept)):
        notes.normalised("reordered", "cues put in time order")
    latest_end = None
    for cue in ordered:
        if latest_end is not None and cue.start < latest_end:
            notes.tolerated(
                "overlap", f"cue overlaps the speech before it by {round(latest_end - cue.start, 3)} s", cue.line
            )
        latest_end = cue.end if latest_end is None else max(latest_end, cue.end)
    without_speaker = [c for c in ordered if not c.speaker]
    if len(without_speaker) == len(ordered):
        notes.normalised("no_speakers", "no cue names its speaker; speakers are assigned in the mapping step")
    else:
        for cue in without_speaker:
            notes.tolerated("no_speaker", "cue has no speaker label", cue.line)
    return Transcript(format=fmt, cues=ordered, notes=notes, metadata=metadata or {})
