"""Task instances are built by the rules of spec/TASKS.md: one hand-built clip per rule,
with the instances it must give written out. These are the rules of the platform's own
profile, ``platform-v1`` (seeded picks, the whole history as context); the public
benchmark's, ``rescue-v1``, are checked in test_task_profile_rescue_v1.py."""

import json

import pytest

from annotation.schema import check_clip
from annotation.synthetic import build_clips
from tasks.instances import ClipView, InstanceWriter, build_instances, context_row, instances_for_clip
from tasks.profiles.platform_v1 import resolve_target
from tasks.rules import CONTEXT_KEYS, RuleParameters

from .builders.documents import client_row, couple_clip, family_clip, maya, therapist, therapist_row, tobias

SID = "maya_and_tobias/001_opening"
PLATFORM = "platform-v1"


def clip_of(rows, sample_id=SID, scenario="couple"):
    doc = couple_clip(sample_id, rows) if scenario == "couple" else {**family_clip(sample_id), "rows": rows}
    _, report = check_clip(doc)
    assert report.ok, [str(i) for i in report.errors]  # hand-built clips are valid release clips
    return doc


def built(task, doc, seed=0, **params):
    view = ClipView.of(doc, "1")
    return [
        (i.id, i.row_index, i.context_end, i.inputs, i.gold)
        for i in instances_for_clip(
            task, view, split="test", seed=seed, params=RuleParameters(**params), profile=PLATFORM
        )
    ]


# --- ITP ------------------------------------------------------------------------


def test_itp_boundaries_after_client_rows_are_yes_when_the_therapist_speaks_next():
    doc = clip_of([maya(1), tobias(2), therapist(3), maya(4), therapist(5), tobias(6), maya(7)])
    # Candidates: after 1 (next is Tobias) no, after 2 yes, after 4 yes, after 6 (next is Maya) no;
    # row 7 is last, and rows 3 and 5 are the therapist's. Two of each: nothing is sampled away.
    assert built("itp", doc) == [
        (f"itp:{SID}:1", 1, 1, {}, "no"),
        (f"itp:{SID}:2", 2, 2, {}, "yes"),
        (f"itp:{SID}:4", 4, 4, {}, "yes"),
        (f"itp:{SID}:6", 6, 6, {}, "no"),
    ]


def test_itp_balances_the_classes_within_a_clip_by_seeded_sampling():
    # Positives after 2, 4 and 7; negatives after 1 and 6: one positive must go.
    doc = clip_of([maya(1), tobias(2), therapist(3), maya(4), therapist(5), tobias(6), maya(7), therapist(8)])
    kept = built("itp", doc, seed=5)
    assert [g for *_, g in kept].count("yes") == [g for *_, g in kept].count("no") == 2
    assert {r for _, r, _, _, g in kept if g == "no"} == {1, 6}
    assert {r for _, r, _, _, g in kept if g == "yes"} < {2, 4, 7}
    assert built("itp", doc, seed=5) == kept  # same seed, same instances
    assert len({tuple(r for _, r, *_ in built("itp", doc, seed=s)) for s in range(20)}) > 1  # the seed decides


def test_itp_drops_a_clip_without_a_candidate_of_either_class():
    only_negatives = clip_of([maya(1), tobias(2), maya(3), therapist(4, strategy=None)][:3])
    assert built("itp", only_negatives) == []
    only_positives = clip_of([maya(1), therapist(2), tobias(3), therapist(4)])
    assert built("itp", only_positives) == []


# --- RPP ------------------------------------------------------------------------


def test_rpp_takes_rows_whose_relation_cycle_state_is_a_label_and_the_variant_takes_either_key():
    doc = clip_of(
        [
            maya(
                1,
                relation_pattern="pursue_withdraw",
                relation_pattern_reason="she presses",
                relation_pattern_evidence_rows=[1],
            ),
            therapist(2, relation_cycle_state="attack_attack"),
            therapist(3, relation_cycle_state=""),  # "no clear pattern" is not an instance
            therapist(4, relation_cycle_state=None),
            maya(5, relation_pattern=""),
            tobias(6, relation_cycle_state="withdraw_withdraw"),  # a client row carrying the older key
        ]
    )
    labels = [
        "pursue_withdraw",
        "attack_attack",
        "withdraw_withdraw",
        "repair_softening",
        "constructive_alignment",
        "mixed_transition",
    ]
    assert built("rpp", doc) == [
        (f"rpp:{SID}:2", 2, 2, {"candidates": labels}, "attack_attack"),
        (f"rpp:{SID}:6", 6, 6, {"candidates": labels}, "withdraw_withdraw"),
    ]
    assert [(r, g) for _, r, _, _, g in built("rpp_any_speaker", doc)] == [
        (1, "pursue_withdraw"),
        (2, "attack_attack"),
        (6, "withdraw_withdraw"),
    ]


# --- STP and SSP ----------------------------------------------------------------


def test_stp_resolves_the_support_target_to_a_participant_or_the_group():
    doc = clip_of(
        [
            maya(1),
            therapist(2, target=("Maya",), strategy="track"),
            tobias(3),
            therapist(4, target=("Couple",), strategy="reframe"),
            therapist(5, target=("Maya", "Tobias"), strategy="evoke"),  # both partners = the couple
            therapist(6, target=("Tobias",), strategy=None),  # no strategy: no instance (STP has SSP's rows)
        ]
    )
    candidates = {"candidates": ["Maya", "Tobias", "Couple"]}
    assert built("stp", doc) == [
        (f"stp:{SID}:2", 2, 1, candidates, "Maya"),
        (f"stp:{SID}:4", 4, 3, candidates, "Couple"),
        (f"stp:{SID}:5", 5, 4, candidates, "Couple"),
    ]
    assert [i[1] for i in built("stp", doc)] == [i[1] for i in built("ssp", doc)]


def test_ssp_needs_a_strategy_and_gives_the_resolved_target_as_input():
    doc = clip_of(
        [
            maya(1),
            therapist(2, target=("Maya",), strategy="track"),
            therapist(3, target=("Maya", "Tobias"), strategy="evoke"),
            therapist(4, target=("Tobias",), strategy=None),
        ]
    )
    strategies = [
        "track",
        "reframe",
        "evoke",
        "enact",
        "join",
        "detach",
        "repair",
        "counterbalance",
        "safeguard",
        "goal_align",
    ]
    assert built("ssp", doc) == [
        (f"ssp:{SID}:2", 2, 1, {"target": "Maya", "candidates": strategies}, "track"),
        (f"ssp:{SID}:3", 3, 2, {"target": "Couple", "candidates": strategies}, "evoke"),
    ]


def test_support_targets_naming_two_of_a_family_are_the_group_label():
    sid = "okafor_family/002_kitchen"
    rows = [
        client_row(1, speaker="Ada"),
        therapist_row(2, target=("Ada", "Ben"), strategy="boundary", relation_cycle_state=None),
        therapist_row(3, target=("Chidi",), strategy=None, relation_cycle_state=None),
        therapist_row(4, target=("Family",), strategy="join", relation_cycle_state=None),
    ]
    doc = clip_of(rows, sample_id=sid, scenario="family")
    # Two of three people are the group label, as the public code maps them; row 3 has no strategy: no instance.
    assert [(r, g) for _, r, _, _, g in built("stp", doc)] == [(2, "Family"), (4, "Family")]
    assert [(r, i["target"], g) for _, r, _, i, g in built("ssp", doc)] == [
        (2, "Family", "boundary"),
        (4, "Family", "join"),
    ]
    assert resolve_target(["Ada", "Ben", "Chidi", "Dora"], ["Ada", "Ben", "Chidi", "Dora"], "Family") == "Family"
    assert resolve_target(["Therapist"], ["Ada"], "Family") is None


# --- ER -------------------------------------------------------------------------


def emotion(person, intensity, text="feels unheard"):
    return [{"person": person, "emotion_description": text, "intensity": intensity}]


def test_er_takes_client_rows_with_the_speakers_emotion_and_skips_the_earliest():
    doc = clip_of(
        [
            maya(1, internal_emotion=emotion("Maya", 5)),  # candidate 1: skipped
            tobias(2, internal_emotion=emotion("Maya", 7)),  # the emotion is not the speaker's
            therapist(3, internal_emotion=emotion("Maya", 4)),  # therapist row
            tobias(4, dialogue_cleaned="Fine.", internal_emotion=emotion("Tobias", 4)),  # too few words
            tobias(5, internal_emotion=emotion("Tobias", 8)),  # candidate 2: skipped
            maya(6, internal_emotion=emotion("Maya", 9, "feels alone")),
            tobias(7, internal_emotion=emotion("Tobias", 3, "feels blamed")),
        ]
    )
    assert built("er", doc) == [
        (f"er:{SID}:6", 6, 6, {"speaker": "Maya"}, {"emotion_description": "feels alone", "intensity": 9}),
        (f"er:{SID}:7", 7, 7, {"speaker": "Tobias"}, {"emotion_description": "feels blamed", "intensity": 3}),
    ]
    assert len(built("er", doc, er_skip_earliest=0)) == 4
    assert len(built("er", doc, er_min_words=1, er_skip_earliest=0)) == 5


def test_er_samples_at_most_five_per_clip_in_row_order():
    doc = clip_of(
        [
            (maya if i % 2 else tobias)(i, internal_emotion=emotion("Maya" if i % 2 else "Tobias", 6))
            for i in range(1, 13)
        ]
    )
    rows = [r for _, r, *_ in built("er", doc, seed=3)]
    assert len(rows) == 5 and rows == sorted(rows) and set(rows) <= set(range(3, 13))
    assert rows == [r for _, r, *_ in built("er", doc, seed=3)]


# --- VP -------------------------------------------------------------------------


def view(source, target, text="does not listen", attitude="resentful"):
    return {"source": source, "target": target, "viewpoint": text, "attitude": attitude}


def test_vp_takes_the_speakers_own_viewpoints_with_a_target_and_a_text():
    doc = clip_of(
        [
            maya(1, viewpoints_attitudes=[view("Maya", "Tobias")]),
            tobias(2, viewpoints_attitudes=[view("Maya", "Tobias")]),  # not the speaker's view
            therapist(3, viewpoints_attitudes=[view("Therapist", "Maya")]),  # therapist row
            tobias(4, viewpoints_attitudes=[view("Tobias", "Maya", text="")]),  # no viewpoint text
            maya(
                5,
                viewpoints_attitudes=[
                    view("Maya", "Tobias", "keeps score"),
                    view("Tobias", "Maya"),
                    view("Maya", "Therapist", "is fair"),
                ],
            ),
        ]
    )
    others = {"speaker": "Maya", "candidates": ["Tobias", "Therapist", "Couple"]}
    assert built("vp", doc) == [
        (f"vp:{SID}:1", 1, 1, others, [{"source": "Maya", "target": "Tobias", "viewpoint": "does not listen"}]),
        (
            f"vp:{SID}:5",
            5,
            5,
            others,
            [
                {"source": "Maya", "target": "Tobias", "viewpoint": "keeps score"},
                {"source": "Maya", "target": "Therapist", "viewpoint": "is fair"},
            ],
        ),
    ]


# --- every task -----------------------------------------------------------------


@pytest.fixture(scope="module")
def synthetic_clips():
    return [c.document(c.gold) for c in build_clips(clips=12, annotators=2, seed=4)]


def test_instances_only_look_backwards_and_hold_only_observable_context(synthetic_clips):
    splits = {c["sample_id"]: "test" for c in synthetic_clips}
    by_id = {c["sample_id"]: c for c in synthetic_clips}
    instances = build_instances(synthetic_clips, splits, seed=1, profile=PLATFORM)
    writer = InstanceWriter(by_id)
    assert all(instances[t] for t in instances)
    for task, items in instances.items():
        assert len({i.id for i in items}) == len(items)
        for inst in items:
            line = writer.line(inst)
            record = json.loads(line)
            assert line == json.dumps(
                inst.as_dict(by_id[inst.clip_id]), ensure_ascii=False
            )  # the spliced line is plain JSON
            assert [r["row_index"] for r in record["context"]] == list(range(1, inst.context_end + 1))
            assert inst.context_end <= inst.row_index  # never a row after the decision point
            assert all(tuple(r) == CONTEXT_KEYS for r in record["context"])
            assert record["id"] == f"{task}:{inst.clip_id}:{inst.row_index}" and record["split"] == "test"


def test_instance_files_are_the_plain_json_lines_byte_for_byte():
    # Non-ASCII text, escapes, a first-row instance with an empty context (STP/SSP read the rows before theirs).
    doc = clip_of(
        [
            therapist(1, dialogue_cleaned="Bienvenue — « on commence » ?\tOK"),
            maya(2, dialogue_cleaned='He said "fine", then left.\nAgain. 😞'),
            therapist(3),
            tobias(4, dialogue_cleaned="Ça suffit, Maya."),
            therapist(5),
        ]
    )
    instances = build_instances([doc], {SID: "test"}, seed=3, profile=PLATFORM)
    writer = InstanceWriter({SID: doc})
    assert any(i.context_end == 0 for i in instances["stp"])
    for task, items in instances.items():
        assert writer.jsonl(items) == "".join(
            json.dumps(i.as_dict(doc), ensure_ascii=False) + "\n" for i in items
        ).encode("utf-8"), task
    assert writer.jsonl([]) == b""


def test_a_clips_instances_do_not_depend_on_the_other_clips(synthetic_clips):
    splits = {c["sample_id"]: "train" for c in synthetic_clips}
    alone = build_instances(synthetic_clips[:1], splits, seed=9, profile=PLATFORM)
    together = build_instances(synthetic_clips, splits, seed=9, profile=PLATFORM)
    first = synthetic_clips[0]["sample_id"]
    for task in alone:
        assert [i.id for i in alone[task]] == [i.id for i in together[task] if i.clip_id == first]


def test_context_rows_carry_the_observable_keys_only():
    row = therapist_row(3)
    assert context_row(row) == {
        k: row[k] for k in ("row_index", "start_time", "end_time", "primary_speaker", "target", "dialogue_cleaned")
    }
