"""Raw speaker tags -> the clip's entities.

A transcript names speakers its own way (``SPEAKER_01``, ``Dr. Weiss``,
``EVELYN``). Rows use the clip's closed entity set: the participants,
``Therapist`` and the scenario's group label (TAXONOMY.md §5). The map from
one to the other lives on the clip (``Clip.speaker_map``); ingest suggests it
where names match, a lead confirms it, and ``mapped_cues`` is the only way
the rest of the platform reads cues, so the therapist's personal name and
diarisation labels never reach a row. A tag mapped to ``""`` is a speaker
nobody could name; pre-annotation or the annotators decide those cues.
"""

from __future__ import annotations

import re

from ..taxonomy import THERAPIST, load_taxonomy
from .formats.text import split_label

# Tags that mean the therapist: a title, or a word for the role.
_THERAPIST_WORDS = frozenset(
    "therapist counselor counsellor clinician interviewer facilitator psychologist psychotherapist "
    "psychiatrist moderator host coach".split()
)
_THERAPIST_TITLES = frozenset({"dr", "doctor", "prof", "professor"})
# Tags that mean everybody at once.
_GROUP_WORDS = frozenset("both all everyone together group unison couple family".split())
NO_SPEAKER = ""
# Labels that diarisation tools invent (SPEAKER_01, Speaker 2, spk0, Unknown): they name nobody yet.
_PLACEHOLDER = re.compile(r"^(?:speaker|spk|spkr|unknown|person|voice|guest|s)[\s_\-]*\d*$", re.IGNORECASE)


def _words(tag: str) -> list[str]:
    return re.findall(r"[^\W_]+", tag.casefold())


def is_therapist_tag(tag: str) -> bool:
    words = _words(tag)
    return bool(words) and (words[0] in _THERAPIST_TITLES or any(w in _THERAPIST_WORDS for w in words))


def is_placeholder_tag(tag: str) -> bool:
    return bool(_PLACEHOLDER.match(tag.strip()))


def is_group_tag(tag: str, group_label: str) -> bool:
    return tag.strip().casefold() in _GROUP_WORDS | {group_label.casefold()}


def display_name(tag: str) -> str:
    """The participant name a tag stands for: ``EVELYN`` -> ``Evelyn``; other tags unchanged."""
    tag = " ".join(tag.split())
    if tag.isupper() and re.fullmatch(r"[^\W\d_]+(?:[ '\-][^\W\d_]+)*", tag):
        return tag.title()
    return tag


def default_participants(tags: list[str], scenario: str, given_map: dict[str, str] | None = None) -> list[str]:
    """Participants when none are given: each tag's entity, skipping the therapist and the group.

    A tag the given map names keeps that name; other tags stand for themselves.
    """
    group = load_taxonomy(scenario).group_label
    given_map = given_map or {}
    names: list[str] = []
    for tag in tags:
        if tag in given_map:
            name = given_map[tag]
            if name in (THERAPIST, group, NO_SPEAKER):
                continue
        elif tag == NO_SPEAKER or is_therapist_tag(tag) or is_group_tag(tag, group):
            continue
        else:
            name = display_name(tag)
        if name not in names:
            names.append(name)
    return names


def suggest(tags: list[str], participants: list[str], scenario: str) -> dict[str, str]:
    """The automatic map: exact or first-name matches (ignoring case), therapist and group tags.

    Tags with no safe match map to ``""`` and wait for the lead.
    """
    group = load_taxonomy(scenario).group_label
    suggestion: dict[str, str] = {}
    for tag in tags:
        suggestion[tag] = _match(tag, participants, group)
    return suggestion


def _match(tag: str, participants: list[str], group: str) -> str:
    if tag == NO_SPEAKER or is_placeholder_tag(tag):
        return NO_SPEAKER
    key = " ".join(_words(tag))
    exact = [p for p in participants if " ".join(_words(p)) == key]
    if len(exact) == 1:
        return exact[0]
    if tag.strip().casefold() == THERAPIST.casefold() or is_therapist_tag(tag):
        return THERAPIST
    if is_group_tag(tag, group):
        return group
    first = _words(tag)[:1]
    by_first_name = [p for p in participants if _words(p)[:1] == first or _words(p) == first]
    if first and len(by_first_name) == 1:
        return by_first_name[0]
    return NO_SPEAKER


def is_complete(suggestion: dict[str, str]) -> bool:
    """Every tag found a name: a lead may accept the suggestion as it is."""
    return bool(suggestion) and all(suggestion.values())


def entities(participants: list[str], scenario: str) -> list[str]:
    return list(load_taxonomy(scenario).entities(participants))


def check_participants(participants: list[str], scenario: str) -> list[str]:
    """Problems with a participant list, as sentences (empty when fine)."""
    group = load_taxonomy(scenario).group_label
    problems = []
    if not participants:
        problems.append("a clip needs at least one participant")
    seen = set()
    for name in participants:
        if not name.strip():
            problems.append("a participant name is empty")
        elif name != name.strip():
            problems.append(f"participant {name!r} has leading or trailing spaces")
        elif name in (THERAPIST, group):
            problems.append(f"{name!r} is a reserved entity, not a participant")
        elif name in seen:
            problems.append(f"{name!r} is listed twice")
        elif is_therapist_tag(name):
            problems.append(
                f"{name!r} looks like the therapist; map the therapist to {THERAPIST!r} instead of listing them"
            )
        seen.add(name)
    return problems


def check_map(
    mapping: dict[str, str], tags: list[str], participants: list[str], scenario: str, *, complete: bool
) -> list[str]:
    """Problems with a speaker map for these tags (empty when fine).

    ``complete``: every tag must have an entry (confirming on the mapping page or API).
    """
    allowed = set(entities(participants, scenario)) | {NO_SPEAKER}
    problems = []
    for tag, entity in mapping.items():
        if not isinstance(entity, str):
            problems.append(f"speaker {tag!r} maps to {entity!r}, which is not a name")
        elif entity not in allowed:
            problems.append(
                f"speaker {tag!r} maps to {entity!r}, which is not a person of this clip (choose from: "
                f"{', '.join(sorted(allowed - {NO_SPEAKER}))})"
            )
    if complete:
        for tag in tags:
            if tag not in mapping:
                problems.append(f"speaker {tag or '(none)'!r} has no mapping")
        for tag in mapping:
            if tag not in tags:
                problems.append(f"{tag!r} is not a speaker tag of this clip")
    return problems


def strip_leading_label(text: str, labels: set[str]) -> str:
    """Remove a ``Name:`` label at the start of ``text`` if the name is one of ``labels`` (casefolded) or the
    therapist."""
    label, rest = split_label(text)
    if label is not None and (label.casefold() in labels or is_therapist_tag(label)):
        return rest
    return text


class SpeakerMapNotConfirmed(Exception):
    """Cues were asked for before a lead confirmed the clip's speaker map."""


def mapped_cues(clip) -> list[dict]:
    """The clip's cues in time order with speakers as entities: ``{start, end, speaker, text, position}``.

    ``speaker`` is a participant, ``Therapist``, the group label, or ``""``
    (nobody could name the speaker). ``text`` keeps the words; only a leading
    ``Name:`` label naming a speaker is removed. Clips imported from the
    release format carry entities as tags already and need no map. Any other
    clip raises ``SpeakerMapNotConfirmed`` until a lead has confirmed its map.
    """
    cues = list(clip.cues.order_by("start_time", "position"))
    mapping = clip.speaker_map
    if not clip.speaker_map_confirmed:
        known = set(entities(clip.participants, clip.scenario))
        if mapping or not all(cue.speaker in known for cue in cues):
            raise SpeakerMapNotConfirmed(f"the speaker map of clip {clip.sample_id} is not confirmed yet")
        mapping = {cue.speaker: cue.speaker for cue in cues}
        labels = None  # released dialogue is already clean: keep it exactly
    else:
        labels = {tag.casefold() for tag in mapping if tag} | {e.casefold() for e in mapping.values() if e}
    return [
        {
            "start": cue.start_time,
            "end": cue.end_time,
            "speaker": mapping.get(cue.speaker, NO_SPEAKER),
            "text": cue.text if labels is None else strip_leading_label(cue.text, labels),
            "position": cue.position,
        }
        for cue in cues
    ]
