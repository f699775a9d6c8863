"""What the model is given for one clip: the transcript with speakers mapped to the clip's entities.

``clip_input`` reads a clip once (cues, people, media) into an immutable
:class:`ClipInput`; everything after that (prompting, validation, the offline
skeleton) works on it without touching the database. ``input_hash`` is the
idempotency fingerprint of that input.

The *modality* is what the model can perceive of the clip: ``video`` (a video
file or URL, sent with its sound), ``audio`` (a sound file or URL) or
``transcript`` (nothing attached). The transcript message states it, the
system prompt's instructions for the nonverbal fields and the tone depend on
it, and every draft records it.

Every cue has a stable id (``c12``: its clip-wide number) printed in front of
it. The model cites evidence by copying these ids, never by counting rows, so
a window that starts at cue 61 cannot be misread (see ``windows``).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from urllib.parse import urlsplit

from ..ingest.speakers import mapped_cues
from ..models import Clip, Modality
from ..taxonomy import THERAPIST, load_taxonomy

# Media Gemini reads, by file suffix: (modality, the MIME type sent with it). The API's
# documented audio types are wav, mp3, aiff, aac, ogg and flac; an .m4a file is AAC audio
# in an MPEG-4 container, registered as audio/mp4. Suffixes missing here (.mkv, .ogv) are
# not sent: the clip is then drafted from its transcript only, and the draft says why.
MEDIA_TYPES: dict[str, tuple[str, str]] = {
    ".mp4": (Modality.VIDEO, "video/mp4"),
    ".m4v": (Modality.VIDEO, "video/mp4"),
    ".mov": (Modality.VIDEO, "video/mov"),
    ".webm": (Modality.VIDEO, "video/webm"),
    ".mpeg": (Modality.VIDEO, "video/mpeg"),
    ".mpg": (Modality.VIDEO, "video/mpg"),
    ".avi": (Modality.VIDEO, "video/avi"),
    ".wmv": (Modality.VIDEO, "video/wmv"),
    ".flv": (Modality.VIDEO, "video/x-flv"),
    ".3gp": (Modality.VIDEO, "video/3gpp"),
    ".mp3": (Modality.AUDIO, "audio/mp3"),
    ".wav": (Modality.AUDIO, "audio/wav"),
    ".m4a": (Modality.AUDIO, "audio/mp4"),
    ".aac": (Modality.AUDIO, "audio/aac"),
    ".ogg": (Modality.AUDIO, "audio/ogg"),
    ".oga": (Modality.AUDIO, "audio/ogg"),
    ".flac": (Modality.AUDIO, "audio/flac"),
    ".aif": (Modality.AUDIO, "audio/aiff"),
    ".aiff": (Modality.AUDIO, "audio/aiff"),
}
# Video pages the API fetches itself from their URL (no file suffix to read the type from).
VIDEO_HOSTS = {"youtube.com", "www.youtube.com", "m.youtube.com", "youtu.be"}
# What the transcript message says is attached, per modality.
MODALITY_LINES = {
    Modality.VIDEO: "Modality: video with audio. The clip's video, with its sound, is attached.",
    Modality.AUDIO: "Modality: audio only. The clip's sound is attached; there is no picture.",
    Modality.TRANSCRIPT: "Modality: transcript only. Nothing is attached: no picture and no sound.",
}
_CUE_ID = re.compile(r"^\[?\s*c?\s*(?P<n>\d+)\s*\]?$", re.IGNORECASE)


def cue_id(number: int) -> str:
    """The handle the transcript prints for cue ``number`` and the model copies as evidence."""
    return f"c{number}"


def cue_number(handle) -> int | None:
    """The cue number a handle names (``"c12"``; a bare ``12`` is read as a cue number too), or None."""
    if isinstance(handle, bool):
        return None
    if isinstance(handle, int):
        return handle
    m = _CUE_ID.match(str(handle).strip()) if isinstance(handle, str) else None
    return int(m["n"]) if m else None


def media_type(name: str) -> tuple[str, str] | None:
    """(modality, MIME type) of a media file name or URL, or None if Gemini cannot read it."""
    parts = urlsplit(name)
    if parts.scheme in ("http", "https") and parts.hostname in VIDEO_HOSTS:
        return Modality.VIDEO, ""
    return MEDIA_TYPES.get(PurePosixPath(parts.path if parts.scheme else name).suffix.lower())


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
    media_path: str = ""  # a local file to upload
    media_url: str = ""  # or a URL the API fetches itself
    media_mime: str = ""
    media_modality: str = ""  # video | audio when media is sent
    media_fingerprint: str = ""
    # Why the clip's media is not sent (a format Gemini does not read), for the draft's provenance.
    media_skipped: str = ""
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
    def has_media(self) -> bool:
        return bool(self.media_modality)

    @property
    def modality(self) -> str:
        return self.media_modality or Modality.TRANSCRIPT

    def input_hash(self) -> str:
        """SHA-256 of everything the model sees about the clip (not the prompt: that has its version)."""
        canonical = {
            "scenario": self.scenario,
            "participants": list(self.participants),
            "taxonomy_version": self.taxonomy_version,
            "cues": [[c.start, c.end, c.speaker, c.text] for c in self.cues],
            "media": self.media_fingerprint if self.has_media else "",
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
    media = _media(clip)
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
        taxonomy=taxonomy,
        **media,
    )


def _media(clip: Clip) -> dict:
    """The ClipInput fields that say what media is sent: the stored file first, else the URL."""
    name = path = ""
    if clip.media:
        try:
            path = clip.media.path
            name = f"{clip.media.name}:{clip.media.size}"
        except (NotImplementedError, OSError):  # remote storage, or the file is gone: nothing to upload
            path = ""
    source = path or clip.media_url
    if not source:
        return {}
    found = media_type(source)
    if found is None:
        suffix = PurePosixPath(urlsplit(source).path if not path else path).suffix or "(no suffix)"
        return {
            "media_skipped": (
                f"the clip's media ({suffix}) is not a format Gemini reads; drafted from the transcript only"
            )
        }
    modality, mime = found
    if path:
        return {"media_path": path, "media_mime": mime, "media_modality": modality, "media_fingerprint": name}
    return {
        "media_url": clip.media_url,
        "media_mime": mime,
        "media_modality": modality,
        "media_fingerprint": f"url:{clip.media_url}",
    }


def render_transcript(inp: ClipInput, first: int, stop: int, part: str = "1", parts: int = 1) -> str:
    """The user message for cues ``first``..``stop - 1`` (0-based positions in ``inp.cues``)."""
    shown = inp.cues[first:stop]
    lines = [
        f"Scenario: {inp.scenario}",
        f"On-screen participants: {', '.join(inp.participants)}",
        f"Allowed person labels: {', '.join(inp.entities)}",
        f"Clip length: {inp.end_of_clip:.2f} seconds",
        MODALITY_LINES[inp.modality],
    ]
    if parts > 1 or part != "1":
        lines.append(
            f"This is part {part} of {parts} of a long clip: cues {cue_id(shown[0].number)}-{cue_id(shown[-1].number)} "
            f"of {cue_id(1)}-{cue_id(len(inp.cues))}. Annotate every cue shown here as if it were the whole clip; "
            "cite evidence by the cue ids shown here."
        )
    lines += [
        "",
        "Transcript, one cue per line: [cue id] start-end (seconds) | speaker | words",
    ]
    for c in shown:
        lines.append(
            f"[{cue_id(c.number)}] {c.start:.2f}-{c.end:.2f} | {c.speaker or '(speaker unknown)'} | "
            f"{' '.join(c.text.split())}"
        )
    return "\n".join(lines)
