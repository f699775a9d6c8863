"""The rules that turn released rows into task instances, with their version.

``RULE_VERSION`` changes whenever a rule below (or a parameter default)
changes in a way that changes which instances exist or what they hold; a
release records it in its manifest, so that instance files from two releases
are only compared when they were built by the same rules. Which rules: the
task profile's (``tasks.profiles``, recorded beside it). Version 2: STP makes
instances only of therapist rows whose first strategy has a type (SSP's rows)
and a target naming two or more participants is the group label.

The parameters below are those of the platform's own profile, ``platform-v1``;
``rescue-v1`` has its own (``tasks.profiles.rescue_v1.RescueParameters``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

RULE_VERSION = "2"

# The six tasks of the benchmark, in the order the paper lists them.
TASKS = ("itp", "rpp", "stp", "ssp", "er", "vp")
# An optional, clearly named variant of RPP over every speaker (the benchmark's task description allows it).
RPP_ANY_SPEAKER = "rpp_any_speaker"
ALL_TASKS = (*TASKS, RPP_ANY_SPEAKER)

TITLES = {
    "itp": "Intervention timing prediction",
    "rpp": "Relation pattern prediction",
    "stp": "Support target prediction",
    "ssp": "Support strategy prediction",
    "er": "Emotion recognition",
    "vp": "Viewpoint prediction",
    RPP_ANY_SPEAKER: "Relation pattern prediction, any speaker (variant)",
}

# The prediction field each task reads (the names of the public evaluation code).
PREDICTION_FIELDS = {
    "itp": "should_speak",
    "rpp": "relation_top3",
    RPP_ANY_SPEAKER: "relation_top3",
    "stp": "target_top3",
    "ssp": "strategy_top3",
    "er": "predicted_intensity_score",
    "vp": "predicted_viewpoints",
}

# The observable part of a row that goes into an instance's context: who
# speaks to whom, when, and what is said. Annotations of earlier rows are left
# out on purpose (they would hand the model other rows' gold); researchers who
# want them join back to data/ through clip_id and row_index.
CONTEXT_KEYS = ("row_index", "start_time", "end_time", "primary_speaker", "target", "dialogue_cleaned")

# Where each task's decision point sits, i.e. whether the instance's own row is
# part of its input. ITP decides after the current row; STP and SSP predict
# what the therapist's row will do, so that row is not shown; RPP, ER and VP
# read the row they label.
CONTEXT_INCLUDES_ROW = {
    "itp": True,
    "rpp": True,
    RPP_ANY_SPEAKER: True,
    "stp": False,
    "ssp": False,
    "er": True,
    "vp": True,
}

YES, NO = "yes", "no"


@dataclass(frozen=True)
class RuleParameters:
    """Tunable parts of the rules; recorded in the manifest next to RULE_VERSION."""

    er_min_words: int = 4  # a candidate ER row needs at least this many words of dialogue
    er_skip_earliest: int = 2  # skip this many of a clip's first ER candidates (too little context)
    er_max_per_clip: int = 5
    vp_max_per_clip: int = 5

    def as_dict(self) -> dict:
        return asdict(self)


DEFAULT_PARAMETERS = RuleParameters()
