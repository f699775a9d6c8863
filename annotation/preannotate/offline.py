"""The offline provider: a row skeleton from the transcript, with no model at all.

For ``make demo`` and for users without a Gemini key. One row per cue with
words; the speaker is the cue's speaker and the target the person the exchange
is with (the nearest other speaker before, else after; failing that the
therapist for a client and the group label for the therapist). Every
annotation field is empty and the relation pattern is "not annotated" (null).
Drafts are stored with ``DraftSource.OFFLINE`` and say ``provider: offline``
in their provenance: nothing here pretends to be an LLM.
"""

from __future__ import annotations

from ..models import DraftSource, Modality
from ..schema import ANNOTATION_KEYS
from ..taxonomy import THERAPIST
from .transcript import ClipInput, TranscriptCue
from .validate import DraftRow, Outcome, finalise

PROVIDER = "offline"
VERSION = "offline-v1"
# An empty skeleton is expected to lack these; flagging every row would only hide real problems.
EXPECTED_GAPS = frozenset({"utterance_type_missing"})


def _empty_content() -> dict:
    content = {k: [] for k in ANNOTATION_KEYS}
    content.update(utterance_type="", tone_of_voice="", relation_pattern=None, relation_pattern_reason=None)
    return content


def _target(cues: list[TranscriptCue], i: int, group_label: str) -> list[str]:
    speaker = cues[i].speaker
    for j in list(range(i - 1, -1, -1)) + list(range(i + 1, len(cues))):
        other = cues[j].speaker
        if other and other != speaker:
            return [other]
    return [group_label] if speaker == THERAPIST else [THERAPIST]


def annotate(inp: ClipInput) -> Outcome:
    cues = [c for c in inp.cues if c.has_words]
    rows = []
    for i, cue in enumerate(cues):
        content = _empty_content()
        content["target"] = _target(cues, i, inp.group_label)
        rows.append(
            DraftRow(
                start_time=cue.start,
                end_time=cue.end,
                primary_speaker=cue.speaker,
                dialogue_cleaned=" ".join(cue.text.split()),
                content=content,
                home_cue=cue.number - 1,
            )
        )
    summary = finalise(rows, inp, ignore_codes=EXPECTED_GAPS)
    summary["skipped_cues_without_words"] = len(inp.cues) - len(cues)
    provenance = {
        "provider": PROVIDER,
        "model": None,
        "model_version": None,
        "prompt_version": VERSION,
        "taxonomy_version": inp.taxonomy_version,
        "input_hash": inp.input_hash(),
        "modality": Modality.TRANSCRIPT.value,
        "note": "row skeleton from the transcript; no model was called and every annotation field is empty",
    }
    return Outcome(rows=rows, source=DraftSource.OFFLINE, provenance=provenance, summary=summary)
