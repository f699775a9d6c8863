"""Which users a text names: the one matcher for comments, re-review requests and guidance.

Blinding depends on it: a lead's message that names a coder is for that coder
alone, and guidance every annotator reads names nobody. So a username counts
as named wherever it stands apart from letters and digits, in any case:
``ann1``, ``@ann1``, ``ann1:``, ``(ann1)``, ``ann1.``, ``ann1's``,
``ann1/ann2``, ``ann1@clinic.org``. Only a longer word does not name it
(``ann10``, ``xann1``, ``ann1_old``). Where in doubt it counts a name: a text
wrongly taken to name a coder is refused with a message and written again; one
wrongly taken to name nobody is shown to every coder.
"""

from __future__ import annotations

import re
from collections.abc import Iterable


def _pattern(usernames: list[str]) -> re.Pattern:
    # Longest first: of two usernames where one begins the other ("ann1", "ann1.b"), the longer is the one named.
    names = "|".join(re.escape(name) for name in sorted(usernames, key=len, reverse=True))
    return re.compile(rf"(?<![\w+])(?:{names})(?![\w+])", re.IGNORECASE)


def names_in(text: str, usernames: Iterable[str]) -> list[str]:
    """The ``usernames`` that ``text`` names, sorted, each once (as spelled in ``usernames``)."""
    usernames = [u for u in dict.fromkeys(usernames) if u]
    if not usernames or not text:
        return []
    by_folded: dict[str, list[str]] = {}
    for name in usernames:
        by_folded.setdefault(name.casefold(), []).append(name)
    found: set[str] = set()
    for match in _pattern(usernames).finditer(text):
        found.update(by_folded.get(match.group().casefold(), ()))
    return sorted(found)
