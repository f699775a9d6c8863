"""Long clips in overlapping windows, stitched back without duplicated or dropped rows.

A family session can run to 150 rows, more than one answer can hold. The cues
are cut into consecutive *cores* of at most ``size - 2 * overlap`` cues; each
request shows its core plus ``overlap`` context cues on either side, so the
model sees how the exchange around the edges goes. A window whose answer is cut
off at the output limit is asked again as two halves (``split``), each with its
own context, down to a single cue.

Stitching keeps, from each window, exactly the rows whose *home cue* (the cue
the row overlaps most in time) lies in that window's core. Cores partition the
cues and every row has one home cue, so each stretch of the transcript comes
from exactly one answer: nothing is kept twice, and coverage of the whole clip
is checked afterwards like for any answer.

Evidence is cited by cue id (``c12``), the clip-wide handle printed in front of
each cue, and mapped to row numbers here, once the rows are numbered: cue ``c12``
stands for the rows whose home cue it is. A cited cue the request did not show
(a row number mistaken for a cue id, say) is left out with a warning.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .response_schema import EVIDENCE_KEY
from .transcript import TranscriptCue, cue_id
from .validate import DraftRow


@dataclass(frozen=True)
class Window:
    number: int  # 1-based, in the clip's plan
    first: int  # first cue shown (0-based position, inclusive)
    stop: int  # end of the cues shown (exclusive)
    core_first: int
    core_stop: int
    part: str = ""  # "2", or "2.1" / "2.2" for the halves of window 2 asked again

    @property
    def label(self) -> str:
        return self.part or str(self.number)

    def shows(self, position: int) -> bool:
        return self.first <= position < self.stop


def plan(cue_count: int, size: int, overlap: int) -> list[Window]:
    """Windows over ``cue_count`` cues, each showing at most ``size`` cues."""
    if cue_count <= size:
        return [Window(1, 0, cue_count, 0, cue_count, "1")]
    overlap = max(0, min(overlap, (size - 1) // 2))
    core = size - 2 * overlap
    count = math.ceil(cue_count / core)
    bounds = [round(i * cue_count / count) for i in range(count + 1)]  # balanced cores
    return [
        Window(
            i + 1,
            max(0, bounds[i] - overlap),
            min(cue_count, bounds[i + 1] + overlap),
            bounds[i],
            bounds[i + 1],
            str(i + 1),
        )
        for i in range(count)
    ]


def split(window: Window, cue_count: int, overlap: int) -> list[Window] | None:
    """The two halves of ``window``'s core, each with ``overlap`` context cues; None for a one-cue core."""
    if window.core_stop - window.core_first < 2:
        return None
    middle = (window.core_first + window.core_stop) // 2
    halves = [(window.core_first, middle), (middle, window.core_stop)]
    return [
        Window(
            window.number,
            max(0, first - overlap),
            min(cue_count, stop + overlap),
            first,
            stop,
            f"{window.label}.{i}",
        )
        for i, (first, stop) in enumerate(halves, start=1)
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
    """One list of rows from the answers of ``windows`` (same order), evidence cues mapped to rows."""
    kept: list[DraftRow] = []
    shown_in: dict[int, Window] = {}
    for window, rows in zip(windows, answers):
        for row in rows:
            row.home_cue = home_cue(row, cues, window)
            if not window.core_first <= row.home_cue < window.core_stop:
                continue
            if kept and kept[-1].part != row.part and kept[-1].home_cue == row.home_cue and _same_words(kept[-1], row):
                continue  # the same row from both sides of a window edge
            kept.append(row)
            shown_in[id(row)] = window
    resolve_evidence(kept, cues, shown_in)
    return kept


def _rows_overlapping(rows: list[DraftRow], cue: TranscriptCue) -> list[int]:
    """The numbers (1-based) of the rows that overlap ``cue`` most in time; none when no row does."""
    overlaps = [
        (min(r.end_time, cue.end) - max(r.start_time, cue.start), index) for index, r in enumerate(rows, start=1)
    ]
    best = max((o for o, _ in overlaps), default=0.0)
    return [index for o, index in overlaps if o > 0 and o == best]


def resolve_evidence(rows: list[DraftRow], cues: tuple[TranscriptCue, ...], shown_in: dict[int, Window]) -> None:
    """Each row's cited cues as the numbers of the rows (1-based, in ``rows`` order) that cover them.

    The one place where evidence handles become row numbers. ``shown_in`` maps a row (by id)
    to the window it was answered in; a cue that window did not show is not evidence the model
    could have read, so it is left out with a warning, like a cue that does not exist.
    """
    rows_of_cue: dict[int, list[int]] = {}
    for index, row in enumerate(rows, start=1):
        rows_of_cue.setdefault(row.home_cue, []).append(index)
    for row in rows:
        window = shown_in.get(id(row))
        found: list[int] = []
        for number in row.evidence_cues:
            handle = cue_id(number)
            if not 1 <= number <= len(cues):
                row.warn(
                    EVIDENCE_KEY,
                    f"evidence cue {handle} is not a cue of this clip; it was left out",
                    "evidence_row_missing",
                )
            elif window is not None and not window.shows(number - 1):
                row.warn(
                    EVIDENCE_KEY,
                    f"evidence cue {handle} was not shown to the model in this part "
                    f"({cue_id(window.first + 1)}-{cue_id(window.stop)}); it was left out",
                    "evidence_row_missing",
                )
            else:
                # A cue the model merged into a neighbour's row is no row's home cue: cite the row that took it.
                covering = rows_of_cue.get(number - 1) or _rows_overlapping(rows, cues[number - 1])
                if covering:
                    found.extend(covering)
                else:
                    row.warn(
                        EVIDENCE_KEY,
                        f"evidence cue {handle} has no row in the draft; it was left out",
                        "evidence_row_missing",
                    )
        row.content[EVIDENCE_KEY] = sorted(set(found))
