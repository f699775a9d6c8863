"""Line numbers for messages: offset -> 1-based line, without rescanning the text each time."""

from __future__ import annotations

import bisect
import re


class LineIndex:
    """Offset -> 1-based line number in ``text``, in O(log n) per lookup."""

    def __init__(self, text: str):
        self._starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def line(self, offset: int) -> int:
        return bisect.bisect_right(self._starts, offset)
