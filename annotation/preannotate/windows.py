"""Long clips in overlapping windows, stitched back without duplicated or dropped rows.

A family session can run to 150 rows, more than one answer can hold. The cues
are cut into consecutive *cores* of at most ``size - 2 * overlap`` cues; each
request shows its core plus ``overlap`` context cues on either side, so the
model sees how the exchange around the edges goes.

Stitching keeps, from each window, exactly the rows whose *home cue* (the cue
the row overlaps most in time) lies in that window's core. Cores partition the
cues and every row has one home cue, so each stretch of the transcript comes
from exactly one answer: nothing is kept twice, and coverage of the whole clip
is checked afterwards like for any answer. Evidence row numbers, which the
model gives within its own answer, are translated to the stitched numbering.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .transcript import TranscriptCue
from .validate import DraftRow


@dataclass(frozen=True)
class Window:
    number: int  # 1-based
    first: int  # first cue shown (0-based position, inclusive)
    stop: int  # end of the cues shown (exclusive)
    core_first: int
    core_stop: int


def plan(cue_count: int, size: int, overlap: int) -> list[Window]:
    """Windows over ``cue_count`` cues, each showing at most ``size`` cues."""
    if cue_count <= size:
        return [Window(1, 0, cue_count, 0, cue_count)]
    overlap = max(0, min(overlap, (size - 1) // 2))
    core = size - 2 * overlap
    count = math.ceil(cue_count / core)
    bounds = [round(i * cue_count / count) for i in range(count + 1)]  # balanced cores
    return [
        Window(i + 1, max(0, bounds[i] - overlap), min(cue_count, bounds[i + 1] + overlap), bounds[i], bounds[i + 1])
        for i in range(count)
    ]


def home_cue(row: DraftRow, cues: tuple[TranscriptCue, ...], window: Window) -> int:
    """The cue (0-based position, among those the window shows) that the row overlaps most."""
    best, best_overlap = None, 0.0
    for i in range(window.first, window.stop):
        c = cues[i]
        overlap = min(row.end_time, c.end) - max(row.start_time, c.start)
        if overlap > best_overlap:
            best, best_overlap = i, overlap
    if best is not None:
        return best
    middle = (row.start_time + row.end_time) / 2
    return min(range(window.first, window.stop), key=lambda i: max(cues[i].start - middle, middle - cues[i].end, 0.0))


def _same_words(a: DraftRow, b: DraftRow) -> bool:
    return a.primary_speaker == b.primary_speaker and " ".join(a.dialogue_cleaned.casefold().split()) == " ".join(
        b.dialogue_cleaned.casefold().split()
    )


def stitch(windows: list[Window], answers: list[list[DraftRow]], cues: tuple[TranscriptCue, ...]) -> list[DraftRow]:
    """One list of rows from the answers of ``windows`` (same order)."""
    kept: list[DraftRow] = []
    dropped: list[DraftRow] = []
    for window, rows in zip(windows, answers):
        for row in rows:
            row.home_cue = home_cue(row, cues, window)
            if window.core_first <= row.home_cue < window.core_stop:
                if (
                    kept
                    and kept[-1].window != row.window
                    and kept[-1].home_cue == row.home_cue
                    and _same_words(kept[-1], row)
                ):
                    # The same row from both sides of a window edge.
                    dropped.append(row)
                    continue
                kept.append(row)
            else:
                dropped.append(row)
    _renumber_evidence(kept, dropped)
    return kept


def _renumber_evidence(kept: list[DraftRow], dropped: list[DraftRow]) -> None:
    final = {id(r): i for i, r in enumerate(kept, start=1)}
    first_on_cue: dict[int, int] = {}
    for i, r in enumerate(kept, start=1):
        first_on_cue.setdefault(r.home_cue, i)
    # (window, index in that window's answer) -> index in the stitched clip
    where: dict[tuple[int, int], int] = {}
    for r in dropped:
        if r.home_cue in first_on_cue:
            where.setdefault((r.window, r.local_index), first_on_cue[r.home_cue])
    for r in kept:
        where[(r.window, r.local_index)] = final[id(r)]
    for r in kept:
        evidence = r.content.get("relation_pattern_evidence_rows") or []
        mapped = []
        for n in evidence:
            if (r.window, n) in where:
                mapped.append(where[(r.window, n)])
            else:
                r.warn(
                    "relation_pattern_evidence_rows",
                    f"evidence row {n} does not exist in the model's answer (part {r.window}); it was left out",
                    "evidence_row_missing",
                )
        r.content["relation_pattern_evidence_rows"] = list(dict.fromkeys(mapped))
