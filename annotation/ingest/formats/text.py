"""Cue text helpers shared by every format: speaker labels, styling, whitespace."""

from __future__ import annotations

import re

from ..report import IngestNotes

# A speaker label at the start of a line: "Evelyn: ...", "DR. WEISS: ...",
# "SPEAKER_01: ...", "Speaker 2: ...", ">> ALAN: ...", "- Alan: ...".
# Up to four words, each starting with a capital letter (digits allowed after
# the first), so that ordinary sentences ("so: here's the thing") stay text.
_WORD = r"[^\W\d_][\w.'’\-]*"
_LABEL = re.compile(
    rf"^(?:>>\s*|-\s+)?(?P<label>{_WORD}(?:\s+(?:{_WORD}|\d+|\({_WORD}(?:\s+{_WORD})*\))){{0,3}})\s*:(?:\s+|$)"
)
# SubRip styling: HTML-ish tags and ASS override blocks ({\an8}, {\i1}).
_SRT_TAGS = re.compile(r"</?(?:i|b|u|s|font)(?:\s[^>]*)?>|\{\\[^}]*\}", re.IGNORECASE)
_SPACES = re.compile(r"\s+")
MAX_LABEL = 100


# Sentence openers that a colon can follow ("Look: I'm tired") but that name nobody.
_NOT_NAMES = frozenset(
    "i look listen okay ok so yes no well note and but wait see like because hey right now here there "
    "what why how honestly seriously basically again first second third then also plus example answer question".split()
)


def _looks_like_name(label: str) -> bool:
    words = label.replace("(", " ").replace(")", " ").split()
    return (
        len(label) <= MAX_LABEL
        and all(w[0].isupper() or w.isdigit() for w in words)
        and label.casefold() not in _NOT_NAMES
    )


def split_label(line: str) -> tuple[str | None, str]:
    """``"Evelyn: I know."`` -> ``("Evelyn", "I know.")``; no label -> ``(None, line)``."""
    match = _LABEL.match(line.strip())
    if not match or not _looks_like_name(match.group("label")):
        return None, line
    return match.group("label").strip(), line.strip()[match.end() :]


def strip_srt_styling(text: str, notes: IngestNotes) -> str:
    cleaned = _SRT_TAGS.sub("", text)
    if cleaned != text:
        notes.normalised("styling_removed", "styling tags removed (plain text kept)")
    return cleaned


def plain(lines: list[str], notes: IngestNotes) -> str:
    """Join a cue's lines into one line of plain text, collapsing whitespace."""
    parts = [line.strip() for line in lines if line.strip()]
    if len(parts) > 1:
        notes.normalised("multi_line_joined", "multi-line cues joined into one line")
    joined = " ".join(parts)
    collapsed = _SPACES.sub(" ", joined)
    if collapsed != joined:
        notes.normalised("whitespace_collapsed", "runs of spaces and tabs inside cues collapsed to one space")
    return collapsed


def by_speaker(lines: list[tuple[str | None, str]], *, detect_labels: bool = True) -> list[tuple[str, list[str]]]:
    """Group a cue's lines into (speaker, lines) turns.

    Each line comes with the speaker the format already gave it (a WebVTT
    voice tag) or None. A ``Name:`` label at the start of a line names the
    speaker of that line and the lines after it; a label repeating the
    current speaker is simply removed.
    """
    turns: list[tuple[str, list[str]]] = []
    current: str | None = None
    for given, line in lines:
        speaker, text = given, line
        if detect_labels:
            label, rest = split_label(line)
            if label is not None and (given is None or label.casefold() == given.casefold()):
                speaker, text = (given or label), rest
        if speaker is not None and speaker != current:
            turns.append((speaker, [text]))
            current = speaker
        elif turns:
            turns[-1][1].append(text)
        else:
            turns.append(("", [text]))
            current = ""
    return turns
