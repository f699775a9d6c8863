"""Rolling auto-captions: recognise them and collapse them into their distinct lines.

Video sites caption speech automatically and show it rolling up, two lines
at a time. In the WebVTT file this gives cues that each repeat the line the
cue before ended with and add the words just spoken, every word after the
first carrying its time as an inline timestamp tag
(``so<00:00:00.480><c> what</c>``), with a short "hold" cue (about 10 ms)
between them showing the finished line alone. Read as ordinary cues, three
spoken lines become five cues and every sentence appears two or three times.

webvtt-py reads such files cue by cue and does nothing about the repetition,
and its plain text drops the word timings, so both are handled here, on the
payload lines the WebVTT reader has already split off (tags still in them).

A file is rolling when at least two cues, and at least a third of the cues
after the first, begin with the line the cue before ended with and go on
with a new line. (Cues that only repeat the line before are not enough: a
transcript may hold the same short answer twice in a row.) Collapsing
keeps each line once: it starts when the cue that first shows it starts and
ends when the last cue in which it is the newest line ends (through the hold
cue, up to where the next line starts). The word timings go to the ingest
report, since a cue holds only its times and words.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field

from webvtt.errors import MalformedCaptionError
from webvtt.models import Timestamp

from ..report import IngestNotes

# An inline timestamp tag: <00:00:01.520> or <01:02.500>.
_TIMESTAMP = re.compile(r"<((?:\d+:)?\d{2}:\d{2}\.\d{3})>")
_TAG = re.compile(r"<[^>]*>")
MIN_ROLLS = 2


@dataclass
class CaptionCue:
    """One cue as the WebVTT reader found it: times, the line of its timing, and its payload lines.

    Each payload line is ``(voice, text, raw)``: the ``<v>`` voice naming it (or None), its plain
    text (tags stripped, entities decoded) and the raw line with its tags (for word timings).
    """

    start: float
    end: float
    line: int | None
    lines: list[tuple[str | None, str, str]]


@dataclass
class _Spoken:
    """A distinct line of a rolling caption while collapsing."""

    start: float
    end: float
    line: int | None
    voice: str | None
    text: str
    raw: str
    words: list[list] = field(default_factory=list)


def _key(voice: str | None, text: str) -> tuple[str | None, str]:
    return voice, " ".join(text.split())


def _shown(cue: CaptionCue) -> list[tuple[str | None, str, str]]:
    """The cue's lines that show words (YouTube pads cues with a line of one space)."""
    return [entry for entry in cue.lines if entry[1].strip()]


def is_rolling(cues: list[CaptionCue]) -> bool:
    """Two or more cues, and a third of those after the first, carry the line before on and add a line."""
    shown = [[_key(v, t) for v, t, _ in _shown(c)] for c in cues]
    rolls = sum(1 for before, after in zip(shown, shown[1:]) if before and len(after) > 1 and after[0] == before[-1])
    return rolls >= MIN_ROLLS and rolls * 3 >= len(cues) - 1


def _overlap(before: list, after: list) -> int:
    """How many leading lines of ``after`` repeat the trailing lines of ``before``."""
    for k in range(min(len(before), len(after)), 0, -1):
        if after[:k] == before[-k:]:
            return k
    return 0


def word_times(raw: str, start: float) -> list[list]:
    """``[[seconds, word], ...]`` from a line with inline timestamps; words before the first tag start at ``start``.

    A line without timestamp tags gives ``[]`` (no word timings to keep).
    """
    parts = _TIMESTAMP.split(raw)
    if len(parts) == 1:
        return []
    words: list[list] = []
    at = start
    for k, part in enumerate(parts):
        if k % 2:  # a timestamp
            try:
                at = Timestamp.from_string(part).in_milliseconds() / 1000
            except MalformedCaptionError:
                pass  # not a time after all (minutes past 59): the words keep the time before it
            continue
        for word in html.unescape(_TAG.sub("", part)).split():
            words.append([at, word])
    return words


def collapse(cues: list[CaptionCue], notes: IngestNotes) -> list[CaptionCue] | None:
    """The distinct lines of a rolling caption as cues of one line each, or None when ``cues`` do not roll.

    Records the collapse in ``notes`` (a headline normalisation) and the word
    timings of every line in the report section ``rolling_captions``.
    """
    if not is_rolling(cues):
        return None
    spoken: list[_Spoken] = []
    before: list = []
    for cue in cues:
        shown = _shown(cue)
        keys = [_key(v, t) for v, t, _ in shown]
        carried = _overlap(before, keys)
        for voice, text, raw in shown[carried:]:
            spoken.append(_Spoken(cue.start, cue.end, cue.line, voice, text, raw, word_times(raw, cue.start)))
        if carried == len(shown) and shown and spoken and keys[-1] == _key(spoken[-1].voice, spoken[-1].text):
            # A hold cue: the newest line stays on screen until the next one starts.
            spoken[-1].end = max(spoken[-1].end, cue.end)
        before = keys
    timed = sum(len(s.words) for s in spoken)
    notes.headline(
        "rolling_captions",
        f"rolling auto-captions: {len(cues)} cues, each repeating the line before it, collapsed into "
        f"{len(spoken)} lines ({'word timings kept in this report' if timed else 'the file has no word timings'})",
    )
    notes.section(
        "rolling_captions",
        {
            "cues_read": len(cues),
            "lines": len(spoken),
            "words_timed": timed,
            "word_timings": [
                {"line": s.line, "start": s.start, "end": s.end, "text": " ".join(s.text.split()), "words": s.words}
                for s in spoken
            ],
        },
    )
    return [CaptionCue(s.start, s.end, s.line, [(s.voice, s.text, s.raw)]) for s in spoken]
