"""Reading a dataset card back: its tables and counted nouns, for tests that recompute what it states."""

from __future__ import annotations

import re

# Every "<number> <noun>" the card may state, singular and plural: the number decides which.
NOUNS = {
    "clip": "clips",
    "row": "rows",
    "couple or family": "couples or families",
    "relationship group": "relationship groups",
    "group": "groups",
    "instance": "instances",
    "coded revision": "coded revisions",
    "annotator": "annotators",
    "gold value": "gold values",
    "coder": "coders",
    "unit": "units",
    "assignment": "assignments",
}


def section(card: str, heading: str) -> str:
    """The text under ``heading`` (any level) up to the next heading of the same or a higher level."""
    level = heading.split(" ", 1)[0]
    start = card.index(heading + "\n")
    rest = card[start + len(heading) + 1 :]
    stop = re.search(rf"^#{{1,{len(level)}}} ", rest, re.MULTILINE)
    return rest[: stop.start()] if stop else rest


def table(text: str) -> list[dict[str, str]]:
    """The first Markdown table of ``text`` as dicts keyed by its header."""
    lines = [line for line in text.splitlines() if line.startswith("|")]
    header = [c.strip() for c in lines[0].strip("|").split(" | ")]
    return [dict(zip(header, [c.strip() for c in re.split(r"(?<!\\) \| ", line.strip()[2:-2])])) for line in lines[2:]]


def wrong_plurals(card: str) -> list[str]:
    """Counted nouns whose number disagrees with them ("1 clips", "2 clip")."""
    found = []
    for singular, plural in NOUNS.items():
        for m in re.finditer(rf"(?<![\d.,])(\d[\d,]*) ({re.escape(plural)}|{re.escape(singular)})\b", card):
            n = int(m.group(1).replace(",", ""))
            word = m.group(2)
            if (word == plural) == (n == 1):
                found.append(m.group(0))
    return found


def duration_seconds(text: str) -> float:
    """Seconds from the card's "1 min 36 s", "36 s" or "1.5 h"."""
    m = re.fullmatch(r"(?:(\d+) min )?(\d+) s", text)
    if m:
        return int(m.group(1) or 0) * 60 + int(m.group(2))
    m = re.fullmatch(r"(\d+\.\d) h", text)
    assert m, f"not a duration: {text!r}"
    return float(m.group(1)) * 3600
