"""Clips with transcript cues and no rows yet: what pre-annotation starts from."""

from __future__ import annotations

from annotation.models import Clip, ClipState, Cue

OBJECTS = ("the blue sofa", "the spare room", "the car keys", "the phone bill", "the late dinners", "the garden shed")


def cue_texts(speaker: str, i: int) -> str:
    if speaker == "Therapist":
        return f"What happens for you when we talk about {OBJECTS[i % len(OBJECTS)]}, number {i}?"
    return f"I keep thinking about {OBJECTS[i % len(OBJECTS)]} and it wears me down, time {i}."


def make_clip(
    project,
    sample_id: str = "maya_and_tobias/001_opening",
    *,
    scenario: str = "couple",
    participants=("Maya", "Tobias"),
    n: int = 6,
    cues=None,
    speaker_map=None,
    state=ClipState.IMPORTED,
    **fields,
) -> Clip:
    """A clip with ``n`` cues (client, therapist, other client, ...), 4 s each with 1 s gaps.

    ``cues`` (a list of (start, end, raw speaker, text)) replaces the generated ones.
    """
    if cues is None:
        order = [participants[0], "Therapist", *participants[1:]]
        cues = []
        for i in range(n):
            speaker = order[i % len(order)]
            cues.append((i * 5.0, i * 5.0 + 4.0, speaker, cue_texts(speaker, i)))
    clip = Clip.objects.create(
        project=project,
        sample_id=sample_id,
        scenario=scenario,
        participants=list(participants),
        duration=max(end for _, end, _, _ in cues) if cues else None,
        speaker_map=speaker_map or {},
        speaker_map_confirmed=bool(speaker_map),
        state=state,
        **fields,
    )
    Cue.objects.bulk_create(
        [
            Cue(clip=clip, position=i, start_time=s, end_time=e, speaker=sp, text=t)
            for i, (s, e, sp, t) in enumerate(cues, start=1)
        ]
    )
    return clip


FAMILY = ("Ada", "Ben", "Chidi", "Dora")


def make_family_clip(project, sample_id: str = "okafor_family/001_dinner", n: int = 150, **kwargs) -> Clip:
    return make_clip(project, sample_id, scenario="family", participants=FAMILY, n=n, **kwargs)
