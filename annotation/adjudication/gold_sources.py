"""Where the gold's values came from: how much of the gold is human, counted from the values themselves.

For every released row and adjudication field (``fields.FIELDS``), the gold
value is compared with the values of the coders whose work counts (the
project's work scope, ``agreement.scope``: the rule of the agreement report
and of the adjudication page) and with the LLM draft's:

- ``every_coder``: two or more coders' work counts and every one gave it;
- ``only_coder``: one coder's work counts, and the gold is their value;
- ``majority``: a strict majority of the coders gave it, not all;
- ``lead_chose``: the coders split with no majority and the lead took one coder's value;
- ``lead_wrote``: no coder gave it (an edit, or a value taken from the draft that no coder kept);
- ``no_coded_work``: nobody's work counts on the row (gold imported, or generated, or decided before any coder
submitted).

These six partition the values. Beside them, ``equal_draft`` counts the gold
values equal to the draft's (rows with a draft); among those,
``equal_draft_coder_changed`` the ones where at least one coder had changed
the draft's value, and ``equal_draft_no_coder`` the ones no coder gave
(the draft restored against every coder).

Counted from the documents, not from the recorded decisions: gold imported
from elsewhere has none, and a decision's source names one coder when
several gave the value.
"""

from __future__ import annotations

from collections import Counter
from itertools import groupby

import orjson

from ..agreement.scope import LEFT_OUT_FIELD, with_left_out
from ..models import Draft, Gold, Revision
from .fields import FIELDS, comparable, field_value

SOURCES = ("every_coder", "only_coder", "majority", "lead_chose", "lead_wrote", "no_coded_work")
DRAFT_COUNTS = ("equal_draft", "equal_draft_coder_changed", "equal_draft_no_coder")
WORDS = {
    "every_coder": "every coder gave it",
    "only_coder": "the only coder whose work counts gave it",
    "majority": "a majority of the coders gave it",
    "lead_chose": "the lead chose it among coders who split",
    "lead_wrote": "the lead wrote it (no coder gave it)",
    "no_coded_work": "no coder's work counts on the row",
    "equal_draft": "equal to the LLM draft's value",
    "equal_draft_coder_changed": "equal to the draft's value although a coder had changed it",
    "equal_draft_no_coder": "equal to the draft's value, which no coder kept",
}


def _loads(value):
    return orjson.loads(value) if isinstance(value, (str, bytes)) else value


def _key(name: str, value) -> bytes:
    # A hashable, order-stable spelling of a field's value (target lists compare as sets, as on the page).
    return orjson.dumps(comparable(name, value), option=orjson.OPT_SORT_KEYS)


def classify(
    name: str, gold_value, coder_values: list, draft_value=None, has_draft: bool = False
) -> tuple[str, list[str]]:
    """(the source of one gold value, the draft counts it adds): the rule of the module's docstring, for one field."""
    gold = _key(name, gold_value)
    coders = [_key(name, v) for v in coder_values]
    given = sum(1 for c in coders if c == gold)
    if not coders:
        source = "no_coded_work"
    elif given == len(coders):
        source = "every_coder" if len(coders) > 1 else "only_coder"
    elif given * 2 > len(coders):
        source = "majority"
    elif given:
        source = "lead_chose"
    else:
        source = "lead_wrote"
    draft = []
    if has_draft:
        d = _key(name, draft_value)
        if d == gold:
            draft.append("equal_draft")
            if any(c != d for c in coders):
                draft.append("equal_draft_coder_changed")
            if coders and not given:
                draft.append("equal_draft_no_coder")
    return source, draft


def gold_sources(clip_pks: list[int], work_scope: str) -> dict:
    """Per field and overall, how many released gold values came from where (counts and shares), JSON-ready."""
    per_field = {name: Counter() for name in FIELDS}
    golds = dict(Gold.objects.filter(row__clip_id__in=clip_pks).values_list("row_id", "content"))
    drafts = dict(
        Draft.objects.filter(row__clip_id__in=clip_pks, row_id__in=list(golds)).values_list("row_id", "content")
    )
    coded = (
        with_left_out(Revision.objects.filter(row__clip_id__in=clip_pks), work_scope)
        .filter(**{f"{LEFT_OUT_FIELD}__isnull": True})
        .order_by("row_id", "annotator_id")
        .values_list("row_id", "content")
    )
    by_row = {
        row_id: [_loads(c) for _, c in group]
        for row_id, group in groupby(coded.iterator(chunk_size=2000), key=lambda r: r[0])
    }
    for row_id, gold in golds.items():
        gold = _loads(gold)
        coders = by_row.get(row_id, [])
        draft = _loads(drafts[row_id]) if row_id in drafts else None
        for name in FIELDS:
            value = field_value(gold, name)
            source, draft_counts = classify(
                name,
                value,
                [field_value(c, name) for c in coders],
                field_value(draft, name) if draft is not None else None,
                draft is not None,
            )
            counts = per_field[name]
            counts[source] += 1
            counts["with_draft"] += draft is not None
            counts.update(draft_counts)
    overall = Counter()
    for counts in per_field.values():
        overall.update(counts)
    return {
        "rule": (
            "Each gold value (one per released row and adjudication field) compared with the values of the coders "
            "whose "
            f"work counts ({work_scope} work) and with the LLM draft's value; the sources partition the values."
        ),
        "work_scope": work_scope,
        "overall": _shares(overall, len(golds) * len(FIELDS)),
        "fields": {name: _shares(per_field[name], len(golds)) for name in FIELDS},
    }


def _shares(counts: Counter, total: int) -> dict:
    share = lambda n: round(n / total, 6) if total else None  # noqa: E731
    return {
        "values": total,
        "values_with_draft": counts["with_draft"],
        "counts": {k: counts[k] for k in (*SOURCES, *DRAFT_COUNTS)},
        "shares": {k: share(counts[k]) for k in (*SOURCES, *DRAFT_COUNTS)},
    }
