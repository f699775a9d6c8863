"""The card's fixed wording: licence, the task table and the instance rules (what every release of this rule version
says)."""

from __future__ import annotations

from tasks.rules import RPP_ANY_SPEAKER

LICENCE_NAME = "research-only"
LICENCE_TEXT = (
    "Research use only. The transcripts and annotations may be used for non-commercial research and "
    "teaching; they may not be redistributed outside this release, used to identify or contact the "
    "people in the clips, or used for clinical decisions."
)

TASK_TABLE = {
    "itp": (
        "support",
        "After a client's row: does the therapist speak next?",
        "`yes` / `no`",
        "precision, recall, **F1** on `yes`",
    ),
    "rpp": (
        "understanding",
        "Which relation pattern organises this moment?",
        "a relation-pattern label",
        "**accuracy** (top-1), macro-F1",
    ),
    "stp": (
        "support",
        "Whom will the therapist address with support?",
        "a participant or the group label",
        "Recall@1..3, **MRR**",
    ),
    "ssp": (
        "support",
        "Which support strategy will the therapist use (target given)?",
        "a strategy label",
        "Recall@1..3, **MRR**",
    ),
    "er": (
        "understanding",
        "What does the speaker feel, and how strongly?",
        "emotion description + intensity 0–10",
        "judge score 1–5 (LLM); **intensity match** (rule-based)",
    ),
    "vp": (
        "understanding",
        "What viewpoints does the speaker hold about others?",
        "list of (source, target, viewpoint)",
        "**judge score** (LLM, not computed here); source/target recovery (rule-based; saturated by a trivial rule)",
    ),
    RPP_ANY_SPEAKER: (
        "understanding",
        "RPP over every row that carries a label (variant)",
        "a relation-pattern label",
        "**accuracy**, macro-F1",
    ),
}

RULES_TEXT = {
    "itp": (
        "A decision point is the boundary after a row not spoken by the therapist. It is positive (`yes`) "
        "when the next row is the therapist's, negative (`no`) when the next row is another non-therapist "
        "row. Within each clip the larger class is sampled down (seeded) so that both classes have the same "
        "size; clips without a candidate of either class contribute nothing. Context: the rows up to and "
        "including the current one."
    ),
    "rpp": (
        "Rows whose `relation_cycle_state` holds a relation-pattern label of the clip's scenario. In the "
        "public RESCUE-BENCH release this key is carried by therapist rows (client rows leave it empty or "
        "omit it), and the public evaluation code reads it; this rule therefore reproduces the instance "
        "counts the original paper reports, even though the paper's prose describes RPP as not restricted "
        'to therapist turns. Rows labelled `""` ("no clear pattern") are left out. Clips annotated on this '
        "platform mirror the relation pattern of therapist rows into `relation_cycle_state`, so the same rule "
        "applies to them. Context: the rows up to and including the labelled row. The candidate labels "
        "(the scenario's set) are given with each instance."
    ),
    RPP_ANY_SPEAKER: (
        "The any-speaker variant allowed by the task definition: every row with a relation-pattern label of "
        "its scenario under either key (the key the row itself uses first, then the other). It is a separate "
        "config (`rpp_any_speaker`) and not one of the six headline tasks."
    ),
    "stp": (
        "Therapist rows whose first support strategy has a type (the rows SSP uses). The gold target is that "
        "strategy's target, or the row's own target when the strategy names none. A single participant or the "
        "group label (`Couple`/`Family`) is taken as is; a list naming two or more participants (all of them, "
        "or two of a family's three) counts as the group label; anything else cannot be resolved and the row "
        "is dropped. Candidates: the clip's participants, then the group label. Context: the rows before the "
        "therapist's row (the row itself would give the answer away)."
    ),
    "ssp": (
        "Like STP, and the first strategy's type must be a label of the scenario's strategy set. The "
        "resolved target is given as input; the candidate strategies are the scenario's set. Context: the "
        "rows before the therapist's row."
    ),
    "er": (
        "Rows not spoken by the therapist or the group label, that carry an `internal_emotion` entry for "
        "the speaker with an integer intensity 0–10, and whose dialogue has at least {er_min_words} words. "
        "The first {er_skip_earliest} such rows of each clip are skipped (they have little context), then at "
        "most {er_max_per_clip} per clip are sampled uniformly (seeded). Context: the rows up to and including "
        "the row."
    ),
    "vp": (
        "Rows not spoken by the therapist or the group label with at least one viewpoint whose source is the "
        "speaker and whose target and text are non-empty; at most {vp_max_per_clip} per clip, sampled "
        "uniformly (seeded). The gold is every such viewpoint of the row. Context: the rows up to and "
        "including the row."
    ),
}

ROW_FIELDS = (
    (
        "timing & entities",
        "`start_time`, `end_time` (seconds), `primary_speaker`, `target` (list; never the speaker), `row_index` "
        "(1-based)",
    ),
    (
        "verbal content",
        '`dialogue_cleaned` (faithful transcript, not paraphrased), `utterance_type` (`""` on therapist rows), '
        "`background_dialogue` (overlapping speech)",
    ),
    (
        "individual cues",
        "`tone_of_voice`, `body_posture`, `facial_expressions`, `self_directed_behavior` (lists of `{person, "
        "description}`), `internal_emotion` (`{person, emotion_description, intensity 0–10}`)",
    ),
    (
        "relational stance",
        "`interaction_behavior` (`{initiator, target[], description}`), `viewpoints_attitudes` (`{source, target, "
        "viewpoint, attitude}`)",
    ),
    (
        "therapist strategy",
        '`support_strategy` (`{provider: "Therapist", target[], strategy_type, strategy_content}`; therapist rows '
        "only)",
    ),
    (
        "relation pattern",
        '`relation_pattern` / `relation_cycle_state` (label, `""` = no clear pattern, `null` = not annotated), with '
        "`*_reason` and `*_evidence_rows` (see below)",
    ),
)

FILE_ROWS = (
    (
        "`data/{train,validation,test}.jsonl`",
        "the benchmark rows: one clip per line, in the RESCUE-BENCH release format, sorted by sample id (a split this "
        "release does not fill is an empty file)",
    ),
    ("`data/all.jsonl`", "every clip of the release in one file (the union of the three splits)"),
    (
        "`data/row_records/{train,validation,test}.jsonl`",
        "the same rows, one per line, each with its clip's `sample_id` and `scenario`",
    ),
    (
        "`tasks/<task>/{train,validation,test}.jsonl`",
        "task instances (`itp`, `rpp`, `stp`, `ssp`, `er`, `vp`, and the `rpp_any_speaker` variant)",
    ),
    (
        "`stats.json`",
        "clip, row and duration counts per scenario and split; label distributions; instance counts; baseline scores; "
        "the gold's sources; transition matrices",
    ),
    (
        "`agreement.json`",
        "inter-annotator agreement for the released clips (or why it is not available), with the draft's pull",
    ),
    ("`figures/`", "label distributions per scenario and split; relation-pattern transition matrices"),
    ("`croissant.json`", "MLCommons Croissant 1.0 metadata for the same files"),
    (
        "`manifest.json`",
        "how the release was made (project, seed, split ratios, taxonomy and rule versions, clip list) and the SHA-256 "
        "and size of every other file",
    ),
)

# The card's template version, recorded in the manifest (``inputs.card_template``): ``reproduce`` compares
# README.md and croissant.json (which holds README.md's digest) byte for byte only under the same version.
# Releases that record none were written by the string-built card before the templates (version 1); version 3 words
# the instance rules of a rescue-v1 release as that profile builds them (its context keys, its even picks).
CARD_TEMPLATE = 3
