"""A full-scale synthetic benchmark, shaped like the real RESCUE-BENCH release.

``build_clips`` is pure: from a seed it builds clips (skeleton rows, an LLM-like
draft, one revision per annotator with seeded disagreement, and the gold that a
per-field majority of those revisions gives), without touching the database.
``generate`` writes them into a project in one transaction, the way an
adjudicated project would look: Clip + Cues + Rows, Draft / Revision / Gold per
row, a submitted Assignment per (clip, annotator).

Shape (from the real release and its sample in ``shared/data``): 191 clips,
7,079 rows, 174 couple and 17 family clips; couple clips about 34 rows with two
participants, family clips about 71 rows with four or more. Clips are named
as the release names them (spec/TASKS.md, Splits): ``<couple>/<clip>``, several
clips per couple, and ``family_therapy/<NNN>/merged``, one clip per family,
each ``<NNN>`` a different family. Nobody appears in two couples or two
families (the splits join groups that share a participant). Everything is drawn
from ``random.Random`` instances derived from the seed, so the same seed gives
the same documents (the draft does not depend on the number of annotators).
Dialogue is assembled from the small word lists below: clearly synthetic.

Every generated document follows the platform's regular convention
(ROW_SCHEMA.md, last section) and passes ``schema.check_clip`` with no errors
and no warnings; ``generate`` checks that before it writes anything.
"""
from __future__ import annotations

import hashlib
import json
import random
import time
from collections import Counter
from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone
from simple_history.utils import bulk_create_with_history

from .models import (
    Assignment,
    AssignmentMode,
    AssignmentState,
    Clip,
    ClipState,
    Cue,
    Draft,
    DraftSource,
    Gold,
    Project,
    Revision,
    RevisionStatus,
    Row,
)
from .releases.groups import path_group
from .roles import ANNOTATOR
from .schema import ANNOTATION_KEYS, CLIP_KEYS, CONVENTION_ROW_KEYS, RELATION_KEYS, SKELETON_KEYS, check_clip
from .taxonomy import THERAPIST, Taxonomy, load_taxonomy

# --- shape of the real release ---------------------------------------------------

RELEASE_CLIPS = 191
RELEASE_ROWS = 7079
RELEASE_FAMILY_CLIPS = 17
COUPLE_ROWS = (33.75, 8.0, 12, 60)  # mean, sd, min, max: (7079 - 17 * 71) / 174 rows per couple clip
FAMILY_ROWS = (71.0, 14.0, 45, 110)
COUPLE_GROUP_SIZE = (3, 10)  # clips per couple (grouped splits need several per group)
# Small projects still get three couples and three families where they can: a
# scenario needs as many relationship groups as splits to reach every split.
MIN_GROUPS_PER_SCENARIO = 3
FAMILY_SIZE_WEIGHTS = {4: 0.65, 5: 0.25, 6: 0.10}  # participants per family ("4 speakers on average")
THERAPIST_SHARE = 0.35
SAME_SPEAKER_AGAIN = 0.45  # runs of turns by one speaker, as in the sample

# --- label frequencies -----------------------------------------------------------
# Computed once from shared/data/rescue_bench_sample.jsonl (14 couple clips, 406
# rows of the public release) and rounded. Relation pattern, per row key
# ``relation_pattern``: null 66%, "" 7%, labels 27%; null on 85% of therapist
# rows and 55% of client rows. Utterance types over client rows. Support
# strategies: 53% of therapist rows carry exactly one; types over those. The
# family weights are our own choice (the sample has no family clip): shared
# labels keep their couple weight, family-only labels get plausible ones.
# This table is the only place label names appear in this module; the label
# sets themselves come from the taxonomy (a label missing here gets _UNLISTED).
WEIGHTS = {
    "couple": {
        "relation": {
            "pursue_withdraw": 0.49,
            "repair_softening": 0.24,
            "constructive_alignment": 0.11,
            "withdraw_withdraw": 0.08,
            "mixed_transition": 0.05,
            "attack_attack": 0.04,
        },
        "strategy": {
            "reframe": 0.22,
            "evoke": 0.195,
            "track": 0.18,
            "goal_align": 0.145,
            "counterbalance": 0.105,
            "detach": 0.05,
            "join": 0.05,
            "enact": 0.04,
            "safeguard": 0.015,
            "repair": 0.01,
        },
    },
    "family": {
        "relation": {
            "escalation_conflict": 0.22,
            "boundary_hierarchy_strain": 0.16,
            "pursue_withdraw": 0.15,
            "cross_generational_coalition": 0.14,
            "repair_softening": 0.12,
            "mutual_disengagement": 0.08,
            "cooperative_family_alliance": 0.08,
            "mixed_transition": 0.05,
        },
        "strategy": {
            "track": 0.20,
            "reframe": 0.18,
            "join": 0.15,
            "boundary": 0.14,
            "counterbalance": 0.12,
            "enact": 0.10,
            "repair": 0.06,
            "safeguard": 0.05,
        },
    },
    # Same label set in both scenarios.
    "utterance": {
        "disclosure": 0.405,
        "reflection": 0.149,
        "recollection": 0.134,
        "defense": 0.118,
        "accusation": 0.065,
        "validation": 0.065,
        "request": 0.034,
        "withdrawal": 0.015,
        "other": 0.008,
        "repair": 0.008,
    },
}
_UNLISTED = 0.01
RELATION_STATE = {  # (P(null), P("")) by speaker kind; the rest is a label
    "therapist": (0.85, 0.03),
    "client": (0.55, 0.09),
}
RELATION_KEEP_SEGMENT = 0.75  # a labelled row keeps the running label (patterns come in stretches)
STRATEGY_SHARE = 0.53
# Share of rows whose list is non-empty, and of those with a second entry.
SPARSE_RATES = {
    "background_dialogue": (0.12, 0.08),
    "body_posture": (0.28, 0.01),
    "facial_expressions": (0.46, 0.01),
    "self_directed_behavior": (0.13, 0.01),
    "interaction_behavior": (0.19, 0.0),
    "internal_emotion": (0.52, 0.01),
    "viewpoints_attitudes": (0.21, 0.0),
}
INTENSITY_WEIGHTS = {4: 9, 5: 29, 6: 63, 7: 54, 8: 38, 9: 17, 10: 2}

# --- disagreement ---------------------------------------------------------------
# An annotator keeps each field of the draft with probability KEEP (0.75-0.85,
# a little different per annotator); a changed field goes, with probability
# SHARED_FIX, to the one alternative drawn per (row, field) — the value the
# draft "should" have had — so annotators agree with each other more than chance.
KEEP_RANGE = (0.75, 0.85)
SHARED_FIX = 0.6

# --- word lists (invented for this generator) -----------------------------------

FIRST_NAMES = (
    "Ada", "Bruno", "Cleo", "Dario", "Edie", "Felix", "Greta", "Hugo", "Ines", "Jonas",
    "Kira", "Levi", "Mina", "Nils", "Opal", "Pavel", "Quinn", "Rosa", "Silas", "Tilda",
    "Umar", "Vera", "Wren", "Xavi", "Yara", "Zeno", "Alma", "Boris", "Carla", "Dev",
    "Elsa", "Finn", "Gil", "Hana", "Ivo", "Juno", "Kai", "Lena", "Milo", "Nora",
)
OPENERS = ("", "", "", "Honestly,", "Look,", "I mean,", "Okay, so", "Well,", "The thing is,", "And")
SUBJECTS = ("I", "we", "you", "we both", "they")
VERBS = (
    "keep thinking about", "never really talk about", "always end up fighting over", "want to sort out",
    "feel tired of", "try to explain", "worry about", "can't stop bringing up", "avoid talking about",
    "finally want to fix",
)
OBJECTS = (
    "the weekend plans", "the laundry rota", "the car keys", "the grocery list", "the holiday budget",
    "the spare room", "the late dinners", "the phone bill", "the garden shed", "the school run",
    "the shared calendar", "the blue sofa",
)
TAILS = (
    ".", ".", ", you know?", ", every single time.", ", I guess.", " and it wears me down.", " and nobody listens.",
    " and that matters to me.",
)
QUESTIONS = (
    "What happens for you when {name} says that?",
    "Can you say that again, slower, to {name}?",
    "So when {name} goes quiet, what do you do next?",
    "Where do you feel that right now?",
    "What is it like to hear {name} talk about {obj}?",
    "Let me slow this down for a moment.",
    "It sounds like you both get stuck around {obj}.",
    "Could you turn to {name} and tell them directly?",
    "Mm-hmm. Keep going.",
    "What did you hope {name} would notice?",
)
TONES = ("calm", "tense", "quiet", "sharp", "hesitant", "warm", "flat", "defensive", "pleading", "measured", "tired")
POSTURES = ("leaning forward", "arms folded", "turned slightly away", "sitting upright", "slumped back", "half turned")
FACES = ("furrowed brow", "eyes downcast", "small tight smile", "raised eyebrows", "jaw clenched", "soft gaze")
SELF_ACTS = ("rubbing hands together", "touching the back of the neck", "tugging at a sleeve", "tapping a foot")
MOVES = ("turns toward {t}", "gestures at {t}", "reaches a hand toward {t}", "looks away from {t}", "nods at {t}")
EMOTIONS = (
    "feels unheard", "feels anxious about {obj}", "feels relieved", "feels blamed", "feels hopeful",
    "feels embarrassed", "feels lonely",
)
VIEWS = ("{t} does not listen", "{t} is trying", "{t} keeps score", "{t} means well", "{t} avoids the hard topics")
ATTITUDES = ("resentful", "hopeful", "guarded", "appreciative", "frustrated", "wary")
BACKGROUND = ("Mm-hmm.", "That's not true.", "Okay.", "No, no.", "Right.", "Here we go.")
STRATEGY_MOVES = (
    "slows the exchange and names what {t} just did",
    "invites {t} to say it directly",
    "asks {t} what sits under the anger",
    "links the argument about {obj} to the wider cycle",
    "gives {t} room to finish",
    "points the conversation back to what {t} wants",
)
REASONS = (
    "{a} presses about {obj} while {b} answers less and less",
    "{a} and {b} trade sharper replies over {obj}",
    "{a} softens and {b} takes it in",
    "{a} and {b} talk about {obj} as a shared problem",
    "{a} pulls {b} into the disagreement over {obj}",
)
NO_PATTERN_REASONS = (
    "the rows move between topics and no single pattern organises them",
    "mostly information about {obj}; no clear relational pattern yet",
)


class SyntheticError(Exception):
    """The generator cannot carry out the request (message for the user)."""


# --- pure generation -------------------------------------------------------------


@dataclass
class SyntheticClip:
    """One generated clip: skeleton rows and the annotation content per source.

    ``draft``, ``gold`` and each entry of ``revisions`` hold one content dict per
    row (keys in ``schema.ANNOTATION_KEYS`` order). Nested values are shared
    between sources where an annotator kept the draft: treat them as read-only.
    """

    sample_id: str
    scenario: str
    participants: list[str]
    skeletons: list[dict]
    draft: list[dict]
    revisions: list[list[dict]]
    gold: list[dict]

    @property
    def group(self) -> str:
        return path_group(self.sample_id)

    @property
    def source_file(self) -> str:
        return f"synthetic/{self.sample_id}.json"

    @property
    def duration(self) -> float:
        return self.skeletons[-1]["end_time"]

    def document(self, contents: list[dict]) -> dict:
        """The clip in the release format (what export writes), rows in the regular key order."""
        rows = [_ordered({**skel, **content}) for skel, content in zip(self.skeletons, contents)]
        values = {
            "sample_id": self.sample_id,
            "scenario": self.scenario,
            "participants": list(self.participants),
            "source_file": self.source_file,
            "rows": rows,
        }
        return {k: values[k] for k in CLIP_KEYS}

    def documents(self) -> dict[str, dict]:
        """Every source as a release clip: ``draft``, ``gold``, ``revision1`` ..."""
        out = {"draft": self.document(self.draft), "gold": self.document(self.gold)}
        out.update((f"revision{k}", self.document(rev)) for k, rev in enumerate(self.revisions, start=1))
        return out

    @property
    def content_hash(self) -> str:
        """SHA-256 of the canonical JSON of the generated clip (the draft document)."""
        canonical = json.dumps(self.document(self.draft), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _ordered(row: dict) -> dict:
    return {k: row[k] for k in CONVENTION_ROW_KEYS}


def family_clip_count(clips: int) -> int:
    """Family clips among ``clips``: the release's share, at least one from two clips on
    and three (three families) from four times that on."""
    n = round(clips * RELEASE_FAMILY_CLIPS / RELEASE_CLIPS)
    if clips >= 4 * MIN_GROUPS_PER_SCENARIO:
        return max(n, MIN_GROUPS_PER_SCENARIO)
    return max(n, 1) if clips >= 2 else n


class _Names:
    """Participant names, never the same twice within a scenario: first the plain
    first names, then each with an initial ("Ada B."), in an order drawn from ``rng``."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.tiers = [[f"{name} {letter}." for name in FIRST_NAMES] for letter in "ABCDEFGHIJKLMNOPQRSTUVWXYZ"]
        self.free: list[str] = list(FIRST_NAMES)
        rng.shuffle(self.free)

    def take(self, n: int) -> list[str]:
        while len(self.free) < n:
            if not self.tiers:
                raise SyntheticError("too many participants for the generator's name lists")
            tier = self.tiers.pop(0)
            self.rng.shuffle(tier)
            self.free += tier
        taken, self.free = self.free[:n], self.free[n:]
        return taken


def _slug(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch.isalnum())


def label_weights(taxonomy: Taxonomy, kind: str) -> tuple[list[str], list[float]]:
    """Labels of ``taxonomy`` (``relation``, ``strategy`` or ``utterance``) with their weights."""
    labels = {
        "relation": [x.label for x in taxonomy.relation_patterns],
        "strategy": [x.label for x in taxonomy.support_strategies],
        "utterance": [x.label for x in taxonomy.utterance_types],
    }[kind]
    table = WEIGHTS["utterance"] if kind == "utterance" else WEIGHTS[taxonomy.scenario][kind]
    return labels, [table.get(label, _UNLISTED) for label in labels]


def _weighted(rng: random.Random, choices: tuple[list, list]):
    values, weights = choices
    return rng.choices(values, weights)[0]


def _weighted_other(rng: random.Random, choices: tuple[list, list], current):
    pairs = [(v, w) for v, w in zip(*choices) if v != current]
    return rng.choices([p[0] for p in pairs], [p[1] for p in pairs])[0]


def _group_sizes(rng: random.Random, total: int, low: int, high: int) -> list[int]:
    sizes: list[int] = []
    while sum(sizes) < total:
        sizes.append(min(rng.randint(low, high), total - sum(sizes)))
    if len(sizes) > 1 and sizes[-1] < low:
        # Spread a short tail over the other groups rather than leave a tiny one.
        tail = sizes.pop()
        for i in range(tail):
            room = [j for j, n in enumerate(sizes) if n < high]
            if not room:
                sizes.append(tail - i)
                break
            sizes[room[i % len(room)]] += 1
    return sizes


def _row_counts(rng: random.Random, scenarios: list[str]) -> list[int]:
    """Rows per clip; the total is scaled from the release (7,079 rows for 191 clips)."""
    bounds = {"couple": COUPLE_ROWS, "family": FAMILY_ROWS}
    counts = []
    for scenario in scenarios:
        mean, sd, low, high = bounds[scenario]
        counts.append(min(high, max(low, round(rng.gauss(mean, sd)))))
    target = round(len(scenarios) * RELEASE_ROWS / RELEASE_CLIPS)
    order = list(range(len(counts)))
    rng.shuffle(order)
    for _ in range(4 * max(1, abs(target - sum(counts)))):
        diff = target - sum(counts)
        if not diff:
            break
        step = 1 if diff > 0 else -1
        moved = False
        for i in order:
            low, high = bounds[scenarios[i]][2:]
            if low <= counts[i] + step <= high:
                counts[i] += step
                moved = True
                if sum(counts) == target:
                    break
        if not moved:
            break
    return counts


@dataclass
class _Plan:
    sample_id: str
    scenario: str
    participants: list[str]
    rows: int


def _plan(clips: int, seed: int) -> list[_Plan]:
    """Groups, participants and row counts of every clip."""
    rng = random.Random(f"{seed}/plan")
    n_family = family_clip_count(clips)
    n_couple = clips - n_family
    # Clips per couple: the release's spread, narrowed so that a small project still has three couples.
    high = min(COUPLE_GROUP_SIZE[1], max(1, n_couple // MIN_GROUPS_PER_SCENARIO))
    low = min(COUPLE_GROUP_SIZE[0], high)
    plans = []
    couple_names = _Names(rng)
    for g, size in enumerate(_group_sizes(rng, n_couple, low, high) if n_couple else [], start=1):
        members = couple_names.take(2)
        group = f"syn{g:02d}_{_slug(members[0])}_and_{_slug(members[1])}"
        season, episode, segment = rng.randint(1, 4), rng.randint(1, 3), 0
        for j in range(1, size + 1):
            order = list(members)
            rng.shuffle(order)  # the release does not keep participant order within a group
            step = rng.randint(0, 2)
            episode, segment = (episode + step, rng.randint(1, 4)) if step else (episode, segment + rng.randint(1, 3))
            clip_name = f"{j:03d}_syn_s{season:02d}e{episode:02d}_segment{segment:02d}"
            plans.append(_Plan(f"{group}/{clip_name}", "couple", order, 0))
    family_names = _Names(rng)
    size_weights = (list(FAMILY_SIZE_WEIGHTS), list(FAMILY_SIZE_WEIGHTS.values()))
    for g in range(1, n_family + 1):  # one merged clip per family, as in the release
        plans.append(_Plan(f"family_therapy/{g:03d}/merged", "family", family_names.take(_weighted(rng, size_weights)), 0))
    for p, n in zip(plans, _row_counts(rng, [p.scenario for p in plans])):
        p.rows = n
    return plans


# Field units that vary independently between annotators. "relation" is the
# (label, reason, evidence rows) triple; the relation_cycle_* keys mirror it.
UNITS = (*(k for k in ANNOTATION_KEYS if k not in RELATION_KEYS), "relation")


class _ClipWriter:
    """Draws skeleton and field values for one clip."""

    def __init__(self, plan: _Plan, taxonomy: Taxonomy, rng: random.Random):
        self.plan, self.tax, self.rng = plan, taxonomy, rng
        self.people = list(plan.participants)
        self.relations = label_weights(taxonomy, "relation")
        self.strategies = label_weights(taxonomy, "strategy")
        self.utterances = label_weights(taxonomy, "utterance")
        self.segment_label = _weighted(rng, self.relations)
        self.force_one = False  # sparse lists: draw exactly one entry (for alternatives)
        # Some members talk more than others.
        self.speaker_weights = [1.0 / (1 + 0.4 * i) for i in range(len(self.people))]

    # skeleton
    def skeletons(self) -> list[dict]:
        rng, rows, t, speaker = self.rng, [], 0.0, None
        client_share = 1 - THERAPIST_SHARE
        total = sum(self.speaker_weights)
        speakers = [THERAPIST, *self.people]
        weights = [THERAPIST_SHARE, *(client_share * w / total for w in self.speaker_weights)]
        for i in range(1, self.plan.rows + 1):
            if speaker is None or rng.random() >= SAME_SPEAKER_AGAIN:
                speaker = rng.choices(speakers, weights)[0]
            start = round(t, 2)
            end = round(start + rng.uniform(2.0, 6.0), 2)
            gap = 0.0 if rng.random() < 0.35 else min(rng.expovariate(1 / 0.6), 2.5)
            t = end + gap
            rows.append(
                {
                    "start_time": start,
                    "end_time": end,
                    "primary_speaker": speaker,
                    "dialogue_cleaned": self.dialogue(speaker),
                    "row_index": i,
                }
            )
        return rows

    def dialogue(self, speaker: str) -> str:
        rng = self.rng
        if speaker == THERAPIST:
            return rng.choice(QUESTIONS).format(name=rng.choice(self.people), obj=rng.choice(OBJECTS))
        sentences = []
        for _ in range(rng.choice((1, 1, 2))):
            opener = rng.choice(OPENERS)
            words = f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)}"
            sentence = f"{opener} {words}" if opener else words[0].upper() + words[1:]
            sentences.append(sentence + rng.choice(TAILS))
        return " ".join(sentences)

    # helpers
    def others(self, person: str) -> list[str]:
        return [p for p in self.people if p != person]

    def someone_else(self, person: str, *, therapist: bool = True) -> str:
        pool = self.others(person) + ([THERAPIST] if therapist and person != THERAPIST else [])
        return self.rng.choice(pool)

    def present(self, speaker: str) -> str:
        """A person a cue is about: mostly the speaker."""
        return speaker if self.rng.random() < 0.85 else self.someone_else(speaker)

    def sparse(self, name: str, make) -> list:
        rate, second = SPARSE_RATES[name]
        if self.force_one:
            return [make()]
        if self.rng.random() >= rate:
            return []
        return [make(), make()] if self.rng.random() < second else [make()]

    # field values (a fresh draw)
    def value(self, unit: str, skel: dict):
        return getattr(self, f"_v_{unit}")(skel["primary_speaker"], skel["row_index"])

    def _v_target(self, speaker, _):
        rng = self.rng
        if speaker == THERAPIST:
            roll = rng.random()
            if roll < 0.17:
                return [self.tax.group_label]
            if roll < 0.20 and len(self.people) > 1:
                return rng.sample(self.people, 2)
            return [rng.choice(self.people)]
        return [THERAPIST] if rng.random() < 0.8 else [rng.choice(self.others(speaker))]

    def _v_utterance_type(self, speaker, _):
        return "" if speaker == THERAPIST else _weighted(self.rng, self.utterances)

    def _v_background_dialogue(self, speaker, _):
        def make():
            who = self.someone_else(speaker)
            return {"speaker": who, "target": [speaker], "content": self.rng.choice(BACKGROUND)}

        return self.sparse("background_dialogue", make)

    def _v_tone_of_voice(self, *_):
        a, b = self.rng.sample(TONES, 2)
        return a if self.rng.random() < 0.3 else f"{a} and {b}"

    def _describe(self, name, speaker, words):
        return self.sparse(name, lambda: {"person": self.present(speaker), "description": self.rng.choice(words)})

    def _v_body_posture(self, speaker, _):
        return self._describe("body_posture", speaker, POSTURES)

    def _v_facial_expressions(self, speaker, _):
        return self._describe("facial_expressions", speaker, FACES)

    def _v_self_directed_behavior(self, speaker, _):
        return self._describe("self_directed_behavior", speaker, SELF_ACTS)

    def _v_interaction_behavior(self, speaker, _):
        def make():
            who = self.present(speaker)
            to = self.someone_else(who)
            return {"initiator": who, "target": [to], "description": self.rng.choice(MOVES).format(t=to)}

        return self.sparse("interaction_behavior", make)

    def _v_internal_emotion(self, speaker, _):
        def make():
            who = speaker if speaker != THERAPIST else self.rng.choice(self.people)
            text = self.rng.choice(EMOTIONS).format(obj=self.rng.choice(OBJECTS))
            return {"person": who, "emotion_description": text, "intensity": self.intensity()}

        return self.sparse("internal_emotion", make)

    def intensity(self) -> int:
        return _weighted(self.rng, (list(INTENSITY_WEIGHTS), list(INTENSITY_WEIGHTS.values())))

    def _v_viewpoints_attitudes(self, speaker, _):
        def make():
            src = speaker if speaker != THERAPIST else self.rng.choice(self.people)
            to = self.rng.choice(self.others(src) or [THERAPIST])
            view = self.rng.choice(VIEWS).format(t=to)
            return {"source": src, "target": to, "viewpoint": view, "attitude": self.rng.choice(ATTITUDES)}

        return self.sparse("viewpoints_attitudes", make)

    def _v_support_strategy(self, speaker, _):
        if speaker != THERAPIST or self.rng.random() >= STRATEGY_SHARE:
            return []
        return [self.strategy()]

    def strategy(self, strategy_type: str | None = None) -> dict:
        rng = self.rng
        roll = rng.random()
        if roll < 0.2:
            targets = [self.tax.group_label]
        elif roll < 0.23 and len(self.people) > 1:
            targets = rng.sample(self.people, 2)
        else:
            targets = [rng.choice(self.people)]
        who = self.tax.group_label if targets == [self.tax.group_label] else " and ".join(targets)
        return {
            "provider": THERAPIST,
            "target": targets,
            "strategy_type": strategy_type or _weighted(rng, self.strategies),
            "strategy_content": rng.choice(STRATEGY_MOVES).format(t=who, obj=rng.choice(OBJECTS)),
        }

    def _v_relation(self, speaker, row_index):
        p_null, p_blank = RELATION_STATE["therapist" if speaker == THERAPIST else "client"]
        roll = self.rng.random()
        if roll < p_null:
            return (None, None, [])
        if roll < p_null + p_blank:
            return self.relation("", row_index)
        if self.rng.random() >= RELATION_KEEP_SEGMENT:
            self.segment_label = _weighted(self.rng, self.relations)
        return self.relation(self.segment_label, row_index)

    def relation(self, label: str, row_index: int) -> tuple:
        rng = self.rng
        a, b = (rng.sample(self.people, 2) if len(self.people) > 1 else (self.people[0], THERAPIST))
        obj = rng.choice(OBJECTS)
        reason = rng.choice(REASONS if label else NO_PATTERN_REASONS).format(a=a, b=b, obj=obj)
        # Evidence: the row itself and a few rows before it (never past it).
        window = list(range(max(1, row_index - 5), row_index))
        k = min(len(window), rng.randint(1, 4))
        evidence = sorted([*rng.sample(window, k), row_index])
        return (label, reason[0].upper() + reason[1:] + ".", evidence)

    # a plausible different value
    def alternative(self, unit: str, skel: dict, current):
        speaker, row_index = skel["primary_speaker"], skel["row_index"]
        rng = self.rng
        if unit == "utterance_type":
            return current if speaker == THERAPIST else _weighted_other(rng, self.utterances, current)
        if unit == "support_strategy":
            if speaker != THERAPIST:
                return current  # strategies exist on therapist rows only
            if not current:
                return [self.strategy()]
            if rng.random() < 0.35:
                return []
            return [self.strategy(_weighted_other(rng, self.strategies, current[0]["strategy_type"]))]
        if unit == "relation":
            label = current[0]
            options = [None, ""] + [x for x in self.relations[0]]
            weights = [0.3, 0.15] + [0.55 * w for w in self.relations[1]]
            pairs = [(o, w) for o, w in zip(options, weights) if o != label]
            new = rng.choices([p[0] for p in pairs], [p[1] for p in pairs])[0]
            return (None, None, []) if new is None else self.relation(new, row_index)
        if unit == "internal_emotion" and current and rng.random() < 0.6:
            # Most disagreements about emotion are about how strong it is.
            first = dict(current[0])
            first["intensity"] = min(10, max(4, first["intensity"] + rng.choice((-2, -1, 1, 2))))
            if first["intensity"] == current[0]["intensity"]:
                first["intensity"] += -1 if first["intensity"] == 10 else 1
            return [first, *current[1:]]
        if unit in SPARSE_RATES:
            if current and rng.random() < 0.5:
                return []
            for _ in range(10):
                value = self._force_one(unit, skel)
                if value != current:
                    return value
            return [] if current else value
        for _ in range(20):
            value = self.value(unit, skel)
            if value != current:
                return value
        return current  # nothing else is valid here (e.g. a single possible target)

    def _force_one(self, unit: str, skel: dict) -> list:
        self.force_one = True
        try:
            return self.value(unit, skel)
        finally:
            self.force_one = False


def _content(speaker: str, units: dict) -> dict:
    label, reason, evidence = units["relation"]
    therapist = speaker == THERAPIST
    content = {u: units[u] for u in UNITS if u != "relation"}
    content.update(
        relation_pattern=label,
        relation_pattern_reason=reason,
        relation_pattern_evidence_rows=list(evidence),
        # The regular convention: mirrored on therapist rows, blank elsewhere.
        relation_cycle_state=label if therapist else "",
        relation_cycle_reason=reason if therapist else "",
        relation_cycle_evidence_rows=list(evidence) if therapist else [],
    )
    return {k: content[k] for k in ANNOTATION_KEYS}


def _key(value) -> str:
    return json.dumps(value, sort_keys=True)


def keep_probability(annotator: int) -> float:
    """How often annotator ``annotator`` (1-based) keeps a draft field: fixed, in KEEP_RANGE."""
    low, high = KEEP_RANGE
    return round(low + (high - low) * ((annotator * 0.618034) % 1.0), 3)


def build_clips(
    *, clips: int = RELEASE_CLIPS, annotators: int = 3, seed: int = 0, taxonomy_version: str = "1"
) -> list[SyntheticClip]:
    """Generate ``clips`` clips with a draft, ``annotators`` revisions and gold. Pure."""
    if clips < 1:
        raise SyntheticError("generate at least one clip")
    if annotators < 1:
        raise SyntheticError("generate at least one annotator")
    out = []
    keep = [keep_probability(k) for k in range(1, annotators + 1)]
    for n, plan in enumerate(_plan(clips, seed)):
        taxonomy = load_taxonomy(plan.scenario, taxonomy_version)
        writer = _ClipWriter(plan, taxonomy, random.Random(f"{seed}/clip/{n}"))
        skeletons = writer.skeletons()
        draft_units = [{u: writer.value(u, s) for u in UNITS} for s in skeletons]
        # The alternative a careful annotator would pick, one per (row, field).
        writer.rng = random.Random(f"{seed}/fix/{n}")
        fixes = [{u: writer.alternative(u, s, d[u]) for u in UNITS} for s, d in zip(skeletons, draft_units)]
        revision_units = []
        for k in range(annotators):
            rng = random.Random(f"{seed}/annotator/{k + 1}/{n}")
            writer.rng = rng
            units_k = []
            for s, d, fix in zip(skeletons, draft_units, fixes):
                row = {}
                for u in UNITS:
                    if rng.random() < keep[k]:
                        row[u] = d[u]
                    elif rng.random() < SHARED_FIX:
                        row[u] = fix[u]
                    else:
                        row[u] = writer.alternative(u, s, d[u])
                units_k.append(row)
            revision_units.append(units_k)
        gold_units = [_majority([rev[i] for rev in revision_units]) for i in range(len(skeletons))]
        speakers = [s["primary_speaker"] for s in skeletons]
        out.append(
            SyntheticClip(
                sample_id=plan.sample_id,
                scenario=plan.scenario,
                participants=plan.participants,
                skeletons=skeletons,
                draft=[_content(sp, u) for sp, u in zip(speakers, draft_units)],
                revisions=[[_content(sp, u) for sp, u in zip(speakers, rev)] for rev in revision_units],
                gold=[_content(sp, u) for sp, u in zip(speakers, gold_units)],
            )
        )
    return out


def _majority(rows: list[dict]) -> dict:
    """Per field: the value more than half of the annotators gave, else annotator 1's.

    The relation pattern votes on the label alone; its reason and evidence rows
    come from the first annotator who gave the winning label.
    """
    out = {}
    for u in UNITS:
        vote = (lambda r: _key(r[u][0])) if u == "relation" else (lambda r: _key(r[u]))
        top, n = Counter(vote(r) for r in rows).most_common(1)[0]
        out[u] = next(r[u] for r in rows if vote(r) == top) if n * 2 > len(rows) else rows[0][u]
    return out


def check_generated(clips: list[SyntheticClip], taxonomy_version: str = "1") -> list[str]:
    """Every issue (errors and warnings) of every source of every clip, as text."""
    problems = []
    for clip in clips:
        for source, doc in clip.documents().items():
            _, report = check_clip(doc, taxonomy_version=taxonomy_version, duration=clip.duration)
            problems.extend(f"{clip.sample_id} ({source}): {issue} [{issue.severity}]" for issue in report.issues)
    return problems


# --- database --------------------------------------------------------------------

BATCH = 1000


def annotator_usernames(project: Project, annotators: int) -> list[str]:
    return [f"{project.slug}_annotator{k}" for k in range(1, annotators + 1)]


def ensure_annotators(project: Project, annotators: int) -> list:
    """``<slug>_annotator1..N`` with the annotator role: reused when they exist."""
    from django.contrib.auth import get_user_model

    from .services import create_user

    User = get_user_model()
    names = annotator_usernames(project, annotators)
    existing = {u.username: u for u in User.objects.filter(username__in=names)}
    return [existing.get(name) or create_user(name, ANNOTATOR)[0] for name in names]


def generate(project: Project, *, clips: int = RELEASE_CLIPS, annotators: int = 3, seed: int = 0) -> dict:
    """Build and store a synthetic adjudicated benchmark in ``project``; returns the counts.

    Refuses (SyntheticError, nothing written) when a generated sample id already
    exists in the project or a generated document fails ``check_clip``.
    """
    started = time.perf_counter()
    built = build_clips(clips=clips, annotators=annotators, seed=seed, taxonomy_version=project.taxonomy_version)
    problems = check_generated(built, project.taxonomy_version)
    if problems:  # a generator bug, never data to store
        raise SyntheticError("generated documents fail validation:\n" + "\n".join(problems[:20]))
    taken = set(project.clips.filter(sample_id__in=[c.sample_id for c in built]).values_list("sample_id", flat=True))
    if taken:
        raise SyntheticError(
            f"project {project.slug} already has {len(taken)} of these clips (e.g. {sorted(taken)[0]}); "
            "use another seed or project"
        )

    provenance = {"generator": "synthetic", "seed": seed}
    with transaction.atomic():
        users = ensure_annotators(project, annotators)
        clip_objs = [
            Clip(
                project=project,
                sample_id=c.sample_id,
                scenario=c.scenario,
                participants=list(c.participants),
                source_file=c.source_file,
                release_keys=list(CLIP_KEYS),
                duration=c.duration,
                state=ClipState.ADJUDICATED,
                content_hash=c.content_hash,
                # The rows exist, so the speaker tags (already entity names) count as confirmed.
                speaker_map={name: name for name in (*c.participants, THERAPIST)},
                speaker_map_confirmed=True,
            )
            for c in built
        ]
        # bulk_create_with_history returns the objects with their ids, in order, on every backend.
        clip_objs = bulk_create_with_history(clip_objs, Clip, batch_size=BATCH)

        row_objs = [
            Row(clip=obj, **{k: s[k] for k in SKELETON_KEYS}) for obj, c in zip(clip_objs, built) for s in c.skeletons
        ]
        row_objs = bulk_create_with_history(row_objs, Row, batch_size=BATCH)
        Cue.objects.bulk_create(
            [
                Cue(
                    clip_id=r.clip_id,
                    position=r.row_index,
                    start_time=r.start_time,
                    end_time=r.end_time,
                    speaker=r.primary_speaker,
                    text=r.dialogue_cleaned,
                )
                for r in row_objs
            ],
            batch_size=BATCH,
        )

        def paired(attr):
            rows = iter(row_objs)
            for c in built:
                for content in attr(c):
                    yield next(rows), content

        drafts = [
            Draft(row=r, content=content, source=DraftSource.SYNTHETIC, provenance=provenance)
            for r, content in paired(lambda c: c.draft)
        ]
        bulk_create_with_history(drafts, Draft, batch_size=BATCH)
        revisions = [
            Revision(row=r, annotator=user, content=content, status=RevisionStatus.REVIEWED)
            for k, user in enumerate(users)
            for r, content in paired(lambda c, k=k: c.revisions[k])
        ]
        bulk_create_with_history(revisions, Revision, batch_size=BATCH)
        note = f"synthetic: per-field majority of {annotators} annotators, else annotator 1"
        golds = [Gold(row=r, content=content, note=note) for r, content in paired(lambda c: c.gold)]
        bulk_create_with_history(golds, Gold, batch_size=BATCH)
        now = timezone.now()
        assignments = [
            Assignment(
                clip=obj,
                annotator=user,
                mode=AssignmentMode.FROM_DRAFT,
                state=AssignmentState.SUBMITTED,
                submitted_at=now,
            )
            for obj in clip_objs
            for user in users
        ]
        bulk_create_with_history(assignments, Assignment, batch_size=BATCH)

    scenarios = Counter(c.scenario for c in built)
    return {
        "clips": len(built),
        "couple_clips": scenarios["couple"],
        "family_clips": scenarios["family"],
        "rows": len(row_objs),
        "drafts": len(drafts),
        "revisions": len(revisions),
        "gold": len(golds),
        "documents": len(drafts) + len(revisions) + len(golds),
        "assignments": len(assignments),
        "cues": len(row_objs),
        "annotators": [u.username for u in users],
        "seconds": round(time.perf_counter() - started, 2),
    }
