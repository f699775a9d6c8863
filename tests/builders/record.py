"""Builders for the record's tests: a training clip with gold, a trainee's round coded through the workspace."""

from __future__ import annotations

import json

from annotation.models import Gold, Revision
from annotation.rescue_format.importer import import_rescue
from annotation.workspace.services import save_revision

from .documents import client_row, couple_clip, therapist_row

UTTERANCES = [
    "accusation",
    "defense",
    "disclosure",
    "request",
    "recollection",
    "reflection",
    "repair",
    "withdrawal",
    "validation",
    "other",
]
PATTERNS = ["pursue_withdraw", "attack_attack", "withdraw_withdraw", "repair_softening", "constructive_alignment"]


def training_rows(n: int = 24) -> list[dict]:
    """Client rows with varied utterance types and relation patterns, a therapist row every fourth."""
    rows = []
    for i in range(1, n + 1):
        if i % 4 == 0:
            rows.append(therapist_row(i, strategy="track" if i % 8 else "reframe"))
        else:
            speaker = "Maya" if i % 2 else "Tobias"
            rows.append(
                client_row(
                    i,
                    speaker=speaker,
                    target=("Tobias",) if speaker == "Maya" else ("Maya",),
                    utterance_type=UTTERANCES[i % len(UTTERANCES)],
                    relation_pattern=PATTERNS[i % len(PATTERNS)],
                    relation_pattern_reason="why",
                    relation_pattern_evidence_rows=[i],
                )
            )
    return rows


def import_gold_clip(project, tmp_path, sample_id: str, rows=None, *, note: str = ""):
    path = tmp_path / f"{sample_id.replace('/', '_')}.jsonl"
    path.write_text(json.dumps(couple_clip(sample_id, rows=rows or training_rows())) + "\n", encoding="utf-8")
    import_rescue(path, project, as_source="gold")
    clip = project.clips.get(sample_id=sample_id)
    if note:
        Gold.objects.filter(row__clip=clip).update(note=note)
    return clip


def annotation_of(gold_content: dict) -> dict:
    """The gold document as a coder's document (annotation keys only)."""
    return {
        k: v
        for k, v in gold_content.items()
        if k not in ("row_index", "start_time", "end_time", "primary_speaker", "dialogue_cleaned")
    }


def code_like_gold(clip, user, change=None) -> dict[int, dict]:
    """Save, as ``user`` in the workspace, the gold of every row of ``clip`` changed by ``change(row_index, doc)``,
    each marked reviewed; returns the saved documents by row index."""
    saved = {}
    for revision in (
        Revision.objects.filter(row__clip=clip, annotator=user)
        .select_related("row", "row__gold")
        .order_by("row__row_index")
    ):
        doc = annotation_of(dict(revision.row.gold.content))
        if change:
            doc = change(revision.row.row_index, doc) or doc
        save_revision(revision.pk, user, doc, revision.version, reviewed=True)
        saved[revision.row.row_index] = doc
    return saved
