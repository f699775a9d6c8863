"""Reads for the ingest pages and endpoints."""

from __future__ import annotations

from django.db.models import Count, Min

from ..models import Clip, ClipState
from . import speakers


def speaker_rows(clip: Clip) -> list[dict]:
    """One entry per raw speaker tag of the clip, in order of first appearance.

    ``tag``, ``cues`` (how many), ``example`` (the first cue's words, to tell
    anonymous labels apart), ``suggested`` (the automatic match for the
    clip's current participants) and ``mapped`` (the stored map's entry).
    """
    stats = clip.cues.values("speaker").annotate(n=Count("id"), first=Min("position")).order_by("first")
    first_positions = [s["first"] for s in stats]
    examples = dict(clip.cues.filter(position__in=first_positions).values_list("speaker", "text"))
    tags = [s["speaker"] for s in stats]
    suggested = speakers.suggest(tags, clip.participants, clip.scenario)
    return [
        {
            "tag": s["speaker"],
            "cues": s["n"],
            "example": examples.get(s["speaker"], "")[:160],
            "suggested": suggested[s["speaker"]],
            "mapped": clip.speaker_map.get(s["speaker"], suggested[s["speaker"]]),
        }
        for s in stats
    ]


def clips_waiting_for_speakers(project) -> list[tuple[Clip, bool]]:
    """Ingested clips whose speaker map is not confirmed yet, each with whether the suggestion is complete."""
    clips = (
        project.clips.filter(speaker_map_confirmed=False, rows__isnull=True, cues__isnull=False)
        .exclude(state=ClipState.PREANNOTATING)
        .distinct()
        .order_by("sample_id")
    )
    return [(clip, speakers.is_complete(clip.speaker_map)) for clip in clips]
