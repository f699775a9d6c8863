"""Export a project's clips in the release format, one clip per line.

A clip is written from one source (gold, the LLM draft, or one annotator's
revisions) and only when that source covers every one of its rows.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO

from django.contrib.auth import get_user_model
from django.db.models import Count

from ..models import Clip, Draft, Gold, Project, Revision
from ..schema import CLIP_KEYS
from . import layout


class ExportError(Exception):
    pass


@dataclass(frozen=True)
class ExportSource:
    kind: str  # gold | draft | revision
    annotator: object = None

    @classmethod
    def parse(cls, text: str) -> ExportSource:
        """``gold``, ``draft`` or ``revision:USERNAME``."""
        kind, _, username = text.partition(":")
        if kind in ("gold", "draft") and not username:
            return cls(kind)
        if kind == "revision" and username:
            user = get_user_model().objects.filter(username=username).first()
            if user is None:
                raise ExportError(f"no user named {username!r}")
            return cls(kind, user)
        raise ExportError(f"unknown source {text!r}: use gold, draft or revision:USERNAME")

    def documents(self, clips):
        if self.kind == "gold":
            return Gold.objects.filter(row__clip__in=clips)
        if self.kind == "draft":
            return Draft.objects.filter(row__clip__in=clips)
        return Revision.objects.filter(row__clip__in=clips, annotator=self.annotator)


@dataclass
class ExportResult:
    clips: int = 0
    rows: int = 0
    skipped: list[str] = field(default_factory=list)  # clips the source does not fully cover


# A row's own fields, read beside its gold, draft or revision (``row__`` paths from those tables): the clip's id,
# then what ``row_skeleton`` makes the row's skeleton of.
ROW_FIELDS = (
    "row__clip_id",
    "row__start_time",
    "row__end_time",
    "row__primary_speaker",
    "row__dialogue_cleaned",
    "row__row_index",
)


def row_skeleton(start, end, speaker, dialogue, index) -> dict:
    """A release row's skeleton from the row's fields as ``ROW_FIELDS`` reads them (after the clip id)."""
    return {
        "start_time": start,
        "end_time": end,
        "primary_speaker": speaker,
        "dialogue_cleaned": dialogue,
        "row_index": index,
    }


def release_row(skeleton: dict, content: dict, doc_layout: dict) -> dict:
    return layout.apply({**skeleton, **content}, doc_layout)


def release_clip(clip: Clip, rows: list[dict]) -> dict:
    values = {
        "sample_id": clip.sample_id,
        "scenario": clip.scenario,
        "participants": clip.participants,
        "source_file": clip.source_file,
        "rows": rows,
    }
    return {k: values[k] for k in (clip.release_keys or CLIP_KEYS)}


def iter_release_clips(project: Project, source: ExportSource, result: ExportResult, clips=None) -> Iterator[dict]:
    """Clips of ``project`` as release dicts, sorted by sample id, in two queries."""
    clips = list(
        (clips if clips is not None else project.clips.all()).annotate(row_count=Count("rows")).order_by("sample_id")
    )
    docs = (
        source.documents(clips)
        .select_related("row")
        .only(
            "content",
            "layout",
            "row__clip_id",
            "row__row_index",
            "row__start_time",
            "row__end_time",
            "row__primary_speaker",
            "row__dialogue_cleaned",
        )
        .order_by("row__clip_id", "row__row_index")
    )
    by_clip: dict[int, list] = {}
    for doc in docs:
        by_clip.setdefault(doc.row.clip_id, []).append(doc)
    for clip in clips:
        clip_docs = by_clip.get(clip.pk, [])
        if not clip_docs or len(clip_docs) != clip.row_count:
            result.skipped.append(clip.sample_id)
            continue
        rows = [release_row(d.row.skeleton(), d.content, d.layout) for d in clip_docs]
        result.clips += 1
        result.rows += len(rows)
        yield release_clip(clip, rows)


def dumps_row(row: dict) -> str:
    """A row in the release's own JSON spelling: as it appears inside its clip's line."""
    return json.dumps(row, ensure_ascii=False)


def dumps_clip(clip: dict, row_texts: list[str] | None = None) -> str:
    """One line of the release file (the release's own JSON spelling).

    ``row_texts``: the clip's rows already spelt (``dumps_row``), for a caller that writes them elsewhere too;
    the line is the same text ``json.dumps`` gives the whole clip (a nested dict is spelt as it is alone).
    """
    if row_texts is None:
        return json.dumps(clip, ensure_ascii=False)
    rows = "[" + ", ".join(row_texts) + "]"
    items = (
        json.dumps(key, ensure_ascii=False) + ": " + (rows if key == "rows" else json.dumps(value, ensure_ascii=False))
        for key, value in clip.items()
    )
    return "{" + ", ".join(items) + "}"


def export_rescue(project: Project, source: ExportSource, out: IO[str], clips=None) -> ExportResult:
    result = ExportResult()
    for clip in iter_release_clips(project, source, result, clips):
        out.write(dumps_clip(clip) + "\n")
    return result
