"""The shape of the real release the generator imitates: sizes, label frequencies, and the word lists its dialogue
and descriptions are assembled from (clearly synthetic)."""

from __future__ import annotations

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
    "Ada",
    "Bruno",
    "Cleo",
    "Dario",
    "Edie",
    "Felix",
    "Greta",
    "Hugo",
    "Ines",
    "Jonas",
    "Kira",
    "Levi",
    "Mina",
    "Nils",
    "Opal",
    "Pavel",
    "Quinn",
    "Rosa",
    "Silas",
    "Tilda",
    "Umar",
    "Vera",
    "Wren",
    "Xavi",
    "Yara",
    "Zeno",
    "Alma",
    "Boris",
    "Carla",
    "Dev",
    "Elsa",
    "Finn",
    "Gil",
    "Hana",
    "Ivo",
    "Juno",
    "Kai",
    "Lena",
    "Milo",
    "Nora",
)
OPENERS = ("", "", "", "Honestly,", "Look,", "I mean,", "Okay, so", "Well,", "The thing is,", "And")
SUBJECTS = ("I", "we", "you", "we both", "they")
VERBS = (
    "keep thinking about",
    "never really talk about",
    "always end up fighting over",
    "want to sort out",
    "feel tired of",
    "try to explain",
    "worry about",
    "can't stop bringing up",
    "avoid talking about",
    "finally want to fix",
)
OBJECTS = (
    "the weekend plans",
    "the laundry rota",
    "the car keys",
    "the grocery list",
    "the holiday budget",
    "the spare room",
    "the late dinners",
    "the phone bill",
    "the garden shed",
    "the school run",
    "the shared calendar",
    "the blue sofa",
)
TAILS = (
    ".",
    ".",
    ", you know?",
    ", every single time.",
    ", I guess.",
    " and it wears me down.",
    " and nobody listens.",
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
    "feels unheard",
    "feels anxious about {obj}",
    "feels relieved",
    "feels blamed",
    "feels hopeful",
    "feels embarrassed",
    "feels lonely",
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
