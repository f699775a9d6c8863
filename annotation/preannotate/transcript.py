"""What the model is given for one clip: the transcript with speakers mapped to the clip's entities.

``clip_input`` reads a clip once (cues, people, media) into an immutable
:class:`ClipInput`; everything after that (prompting, validation, the offline
skeleton) works on it without touching the database. ``input_hash`` is the
idempotency fingerprint of that input.
"""

from __future__ import annotations

import hashlib
import json
import mimetypes
from dataclasses import dataclass, field

from ..ingest.speakers import SpeakerMapNotConfirmed, mapped_cues  # noqa: F401 (re-exported)
from ..models import Clip
from ..taxonomy import THERAPIST, load_taxonomy


@dataclass(frozen=True)
class TranscriptCue:
    number: int  # 1-based, in time order: how the prompt and the warnings name the cue
    start: float
    end: float
    speaker: str  # a clip entity once mapped; the raw tag if the map does not know it; "" if none
    text: str

    @property
    def has_words(self) -> bool:
        return any(ch.isalnum() for ch in self.text)


@dataclass(frozen=True)
class ClipInput:
    clip_id: int
    sample_id: str
    scenario: str
    participants: tuple[str, ...]
    taxonomy_version: str
    cues: tuple[TranscriptCue, ...]
    # Personal names the transcript used for the therapist (raw tags mapped to Therapist).
    therapist_names: tuple[str, ...] = ()
    # Raw speaker tags of the transcript (subtitle labels the model might copy into dialogue).
    speaker_tags: tuple[str, ...] = ()
    duration: float | None = None
    media_path: str = ""
    media_mime: str = ""
    media_fingerprint: str = ""
    taxonomy: object = field(default=None, compare=False, repr=False)

    @property
    def group_label(self) -> str:
        return self.taxonomy.group_label

    @property
    def entities(self) -> tuple[str, ...]:
        return self.taxonomy.entities(self.participants)

    @property
    def end_of_clip(self) -> float:
        ends = [c.end for c in self.cues]
        return self.duration if self.duration else (max(ends) if ends else 0.0)

    @property
    def has_video(self) -> bool:
        return bool(self.media_path) and self.media_mime.startswith("video/")

    def input_hash(self) -> str:
        """SHA-256 of everything the model sees about the clip (not the prompt: that has its version)."""
        canonical = {
            "scenario": self.scenario,
            "participants": list(self.participants),
            "taxonomy_version": self.taxonomy_version,
            "cues": [[c.start, c.end, c.speaker, c.text] for c in self.cues],
            "media": self.media_fingerprint if self.has_video else "",
        }
        data = json.dumps(canonical, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(data.encode("utf-8")).hexdigest()


def clip_input(clip: Clip) -> ClipInput:
    """Everything the model is given about ``clip``.

    Cues come from ``ingest.speakers.mapped_cues`` (the one way the platform
    reads cues: speakers as entities, leading speaker labels removed); it raises
    ``SpeakerMapNotConfirmed`` for a clip whose speaker map a lead has not confirmed.
    """
    taxonomy = load_taxonomy(clip.scenario, clip.project.taxonomy_version)
    raw = sorted(mapped_cues(clip), key=lambda c: (c["start"], c["position"]))
    cues = tuple(
        TranscriptCue(
            number=i,
            start=float(c["start"]),
            end=float(c["end"]),
            speaker=(c["speaker"] or "").strip(),
            text=c["text"] or "",
        )
        for i, c in enumerate(raw, start=1)
    )
    speaker_map = clip.speaker_map or {}
    therapist_names = tuple(
        sorted(tag for tag, entity in speaker_map.items() if entity == THERAPIST and tag and tag != THERAPIST)
    )
    media_path = media_mime = fingerprint = ""
    if clip.media:
        try:
            media_path = clip.media.path
        except NotImplementedError:  # remote storage: no local file to upload
            media_path = ""
        if media_path:
            media_mime = mimetypes.guess_type(media_path)[0] or ""
            try:
                fingerprint = f"{clip.media.name}:{clip.media.size}"
            except OSError:
                media_path = media_mime = ""
    return ClipInput(
        clip_id=clip.pk,
        sample_id=clip.sample_id,
        scenario=clip.scenario,
        participants=tuple(clip.participants),
        taxonomy_version=clip.project.taxonomy_version,
        cues=cues,
        therapist_names=therapist_names,
        speaker_tags=tuple(sorted(t for t in speaker_map if t)),
        duration=clip.duration,
        media_path=media_path,
        media_mime=media_mime,
        media_fingerprint=fingerprint,
        taxonomy=taxonomy,
    )


def render_transcript(inp: ClipInput, first: int, stop: int, part: int, parts: int) -> str:
    """The user message for cues ``first``..``stop - 1`` (0-based positions in ``inp.cues``)."""
    shown = inp.cues[first:stop]
    lines = [
        f"Scenario: {inp.scenario}",
        f"On-screen participants: {', '.join(inp.participants)}",
        f"Allowed person labels: {', '.join(inp.entities)}",
        f"Clip length: {inp.end_of_clip:.2f} seconds",
    ]
    if parts > 1:
        lines.append(
            f"This is part {part} of {parts} of a long clip: cues {shown[0].number}-{shown[-1].number} of {len(inp.cues)}. "
            "Annotate every cue shown here as if it were the whole clip; number your rows from 1."
        )
    lines += [
        "",
        "Transcript, one cue per line: [cue number] start-end (seconds) | speaker | words",
    ]
    for c in shown:
        lines.append(
            f"[{c.number}] {c.start:.2f}-{c.end:.2f} | {c.speaker or '(speaker unknown)'} | {' '.join(c.text.split())}"
        )
    return "\n".join(lines)
