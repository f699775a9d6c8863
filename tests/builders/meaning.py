"""The fake judge of meaning: verdicts for the hard pairs from a fixture, a rule for any other pair."""

from __future__ import annotations

import re

from annotation.meaning.models import pair_sha256

from . import meaning_hard_pairs as hard

FIXTURE = {pair_sha256(f, a, b): "same" for f, a, b in hard.SAME} | {
    pair_sha256(f, a, b): "different" for f, a, b in hard.DIFFERENT
}
_PROMPT = re.compile(r"Aspect: (?P<label>.*)\n\nAnnotation A: (?P<a>.*)\n\nAnnotation B: (?P<b>.*)$", re.DOTALL)


def fixture_responder(body, prompt):
    """The fake judge: the fixture's verdict for the hard pairs; for any other pair, "same" when the two texts
    share their first word, else "partly" (deterministic, so a direct computation can repeat it)."""
    from annotation.agreement.textfields import TEXT_FIELDS

    m = _PROMPT.search(prompt)
    field = next(f.key for f in TEXT_FIELDS if f.label == m["label"])
    verdict = FIXTURE.get(pair_sha256(field, m["a"], m["b"]))
    if verdict is None:
        verdict = "same" if m["a"].split()[:1] == m["b"].split()[:1] else "partly"
    return {"verdict": verdict, "reason": f"fixture verdict for {field}"}
