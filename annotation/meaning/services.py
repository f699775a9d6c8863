"""Writes of the meaning capability: a person's judgement of a pair, judgements imported from a file."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass

from django.db import IntegrityError, transaction

from ..agreement.textfields import TEXT_FIELDS_BY_KEY, normalise
from ..models import Project
from . import selectors
from .models import JudgedPair, Judgement, pair_sha256

JUDGEMENT_ALIASES = {
    "same": Judgement.SAME,
    "same meaning": Judgement.SAME,
    "s": Judgement.SAME,
    "different": Judgement.DIFFERENT,
    "different meaning": Judgement.DIFFERENT,
    "d": Judgement.DIFFERENT,
    "cant_tell": Judgement.CANT_TELL,
    "can't tell": Judgement.CANT_TELL,
    "cant tell": Judgement.CANT_TELL,
    "c": Judgement.CANT_TELL,
    "unsure": Judgement.CANT_TELL,
}


class JudgementRefused(ValueError):
    """The judgement cannot be recorded (message for the user)."""


def record_judgement(user, project: Project, sha: str, judgement: str, *, source: str = "page") -> JudgedPair:
    """Record ``user``'s reading of the pool's pair ``sha``: checked against what they may judge, once per pair."""
    if judgement not in Judgement.values:
        raise JudgementRefused(f"the judgement must be one of {', '.join(Judgement.values)}")
    candidate = selectors.find_candidate(user, project, sha)
    if candidate is None:
        raise JudgementRefused(
            "this pair is not one you may judge (it may include your own texts, or the data changed)"
        )
    from ..agreement.services import _semantic_provider

    model_id = _semantic_provider().id
    (distance,) = selectors.embedding_distances([(candidate.text_a, candidate.text_b)], model_id)
    try:
        with transaction.atomic():
            return JudgedPair.objects.create(
                project=project,
                field=candidate.field,
                text_a=candidate.text_a,
                text_b=candidate.text_b,
                pair_sha256=sha,
                judgement=judgement,
                judge=user,
                source=source,
                clip_id=candidate.clip_id,
                embedding_model=model_id if distance is not None else "",
                embedding_distance=distance,
                stratum=selectors.stratum_of(distance),
            )
    except IntegrityError:
        raise JudgementRefused("you have already judged this pair") from None


@dataclass
class FileRow:
    field: str
    text_a: str
    text_b: str
    judgement: str


def read_judgements(data: str, name: str = "") -> list[FileRow]:
    """Rows of a CSV (with a header) or JSONL file of ``field, text_a, text_b, judgement``; errors name the line."""
    rows: list[FileRow] = []
    stripped = data.lstrip()
    if name.endswith((".jsonl", ".ndjson")) or stripped.startswith("{"):
        records = []
        for number, line in enumerate(data.splitlines(), start=1):
            if line.strip():
                try:
                    records.append((number, json.loads(line)))
                except json.JSONDecodeError as exc:
                    raise ValueError(f"line {number}: not JSON ({exc.msg})") from None
    else:
        records = list(enumerate(csv.DictReader(io.StringIO(data)), start=2))
    for number, record in records:
        if not isinstance(record, dict):
            raise ValueError(f"line {number}: not an object with field, text_a, text_b, judgement")
        missing = [k for k in ("field", "text_a", "text_b", "judgement") if not str(record.get(k) or "").strip()]
        if missing:
            raise ValueError(f"line {number}: {', '.join(missing)} missing")
        field = str(record["field"]).strip()
        if field not in TEXT_FIELDS_BY_KEY:
            raise ValueError(f"line {number}: unknown field {field!r} (one of {', '.join(TEXT_FIELDS_BY_KEY)})")
        judgement = JUDGEMENT_ALIASES.get(str(record["judgement"]).strip().lower())
        if judgement is None:
            raise ValueError(f"line {number}: judgement {record['judgement']!r} is not same, different or cant_tell")
        rows.append(FileRow(field, normalise(str(record["text_a"])), normalise(str(record["text_b"])), str(judgement)))
    return rows


def import_judgements(project: Project, rows: list[FileRow], *, source: str) -> int:
    """Store judgements read from a file (no judge recorded: ``source`` names the file)."""
    objs = [
        JudgedPair(
            project=project,
            field=r.field,
            text_a=r.text_a,
            text_b=r.text_b,
            pair_sha256=pair_sha256(r.field, r.text_a, r.text_b),
            judgement=r.judgement,
            source=source,
        )
        for r in rows
    ]
    JudgedPair.objects.bulk_create(objs)
    return len(objs)
