"""The ``rescue-v1`` task profile reproduces the public RESCUE-BENCH evaluation code (its ``task/*.py``).

Three kinds of check:

- hand-built clips, one per rule, with the instances worked out by hand from the public code's rules
  (even picks at round(k·(n−1)/(m−1)), the 30% early cut-off, the word regex, the group label, STP = SSP's rows,
  the context windows, the scorer's padding and taxonomy-wide macro-F1);
- the 14 real sample clips, whose instance counts per task must be those of a direct re-implementation of the
  rules written here, in the test, and the counts the issue measured with the public scripts themselves;
- a release of those clips frozen under ``rescue-v1`` (PostgreSQL or SQLite, whichever the run uses): its instance
  files hold exactly the re-implementation's instances, and ``evaluate`` scores predictions to the figures the
  public scorer's rules give, computed here independently.
"""

import io
import json
import math
import re
from pathlib import Path

import pytest
from django.core.management import call_command

from annotation.releases.freeze import freeze, reproduce
from annotation.rescue_format.importer import import_rescue
from annotation.schema import check_clip
from annotation.taxonomy import load_taxonomy
from tasks.instances import ClipView, build_instances, instances_for_clip
from tasks.metrics import scorer_for
from tasks.profiles import PLATFORM_V1, RESCUE_V1
from tasks.profiles.rescue_v1 import early_cutoff, even_sample, pick_evenly, word_count

from .builders.documents import client_row, couple_clip, family_clip, maya, therapist, therapist_row, tobias

SID = "maya_and_tobias/001_opening"
approx = pytest.approx
COUPLE_RELATIONS = [
    "pursue_withdraw",
    "attack_attack",
    "withdraw_withdraw",
    "repair_softening",
    "constructive_alignment",
    "mixed_transition",
]


def clip_of(rows, sample_id=SID, scenario="couple", valid=True):
    """A release clip; ``valid=False``: rows the schema refuses (a release never holds them), to check that
    the builders still read them as the public code does."""
    doc = couple_clip(sample_id, rows) if scenario == "couple" else {**family_clip(sample_id), "rows": rows}
    _, report = check_clip(doc)
    assert report.ok == valid, [str(i) for i in report.errors]
    return doc


def built(task, doc, profile=RESCUE_V1, seed=0):
    return instances_for_clip(task, ClipView.of(doc, "1"), split="test", seed=seed, profile=profile)


def rows_of(task, doc, **kw):
    return [(i.row_index, i.gold) for i in built(task, doc, **kw)]


# --- the pickers ---------------------------------------------------------------------------------


def test_the_even_pickers_take_positions_round_k_n_minus_1_over_m_minus_1_with_pythons_rounding():
    # n = 6, m = 5: positions 0, 1.25, 2.5, 3.75, 5 -> 0, 1, 2 (2.5 rounds to even), 4, 5
    assert even_sample(list("abcdef"), 5) == list("abcef")
    # n = 8, m = 5: 0, 1.75, 3.5, 5.25, 7 -> 0, 2, 4, 5, 7
    assert pick_evenly(list(range(8)), 5) == [0, 2, 4, 5, 7]
    # one item: even_sample (ITP) takes the middle one, pick_evenly (ER, VP) the first
    assert even_sample(list("abcde"), 1) == ["c"] and pick_evenly(list("abcde"), 1) == ["a"]
    assert even_sample(list("ab"), 5) == list("ab") and even_sample(list("ab"), 0) == list("ab")


def test_word_count_and_the_early_cutoff_follow_the_public_arithmetic():
    assert word_count("I can't do this") == 4 and word_count("I can't do this anymore.") == 5
    assert word_count("well-known — fine") == 3  # hyphens and dashes split words; the dash is no word
    # min(rows - 1, ceil(rows * 0.3)): one row is never cut; 406 rows lose their first 122
    assert [early_cutoff(n) for n in (1, 2, 3, 10, 11, 20, 406)] == [0, 1, 1, 3, 4, 6, 122]


# --- ITP -----------------------------------------------------------------------------------------


def itp_clip():
    # Decision rows after a client row: positives (therapist next) 2, 4, 6, 9, 11; negatives (client next) 1, 8.
    speakers = ["Maya", "Tobias", "T", "Maya", "T", "Maya", "T", "Maya", "Tobias", "T", "Maya", "T"]
    return clip_of(
        [therapist(i) if s == "T" else (maya(i) if s == "Maya" else tobias(i)) for i, s in enumerate(speakers, start=1)]
    )


def test_itp_balances_each_class_with_the_even_pick_where_a_seeded_pick_differs():
    doc = itp_clip()
    # 2 negatives; the 5 positives picked evenly down to 2: positions 0 and 4 -> rows 2 and 11.
    assert rows_of("itp", doc) == [(1, "no"), (2, "yes"), (8, "no"), (11, "yes")]
    assert all(rows_of("itp", doc, seed=s) == rows_of("itp", doc) for s in range(5))  # no seed involved
    seeded = {tuple(rows_of("itp", doc, profile=PLATFORM_V1, seed=s)) for s in range(6)}
    assert any(pick != tuple(rows_of("itp", doc)) for pick in seeded)  # the platform's seeded pick differs
    # Context: the 3 rows up to and including the decision row, background dialogue included.
    inst = {i.row_index: i for i in built("itp", doc)}[8]
    assert [r["row_index"] for r in inst.as_dict(doc, ("row_index", "background_dialogue"))["context"]] == [6, 7, 8]


# --- STP and SSP ---------------------------------------------------------------------------------


def test_stp_takes_only_rows_with_a_strategy_type_the_rows_ssp_takes():
    doc = clip_of(
        [
            maya(1),
            therapist(2, target=("Maya",), strategy="track"),
            tobias(3),
            therapist(4, target=("Tobias",), strategy=None),  # no strategy: neither task
            therapist(5, target=("Maya", "Tobias"), strategy="evoke"),  # two people: the group label
            therapist(6, target=("Tobias", "Therapist"), strategy="join"),  # the therapist is left out of a target
            therapist(
                7,
                target=("Maya",),
                strategy="reframe",
                support_strategy=[
                    {"provider": "Therapist", "target": [], "strategy_type": "reframe", "strategy_content": "x"}
                ],
            ),
        ],
        valid=False,  # rows 6 and 7 are refused by the schema; the public code reads them all the same
    )
    assert rows_of("stp", doc) == [
        (2, "Maya"),
        (5, "Couple"),
        (6, "Tobias"),
        (7, "Maya"),
    ]  # row 7: the row's own target
    assert [(i.row_index, i.inputs["target"], i.gold) for i in built("ssp", doc)] == [
        (2, "Maya", "track"),
        (5, "Couple", "evoke"),
        (6, "Tobias", "join"),
        (7, "Maya", "reframe"),
    ]
    assert built("stp", doc)[0].inputs["candidates"] == ["Maya", "Tobias", "Couple"]
    # Context: the 3 rows before the therapist row, not the row itself.
    assert [(i.context_start, i.context_end) for i in built("stp", doc)] == [(0, 1), (1, 4), (2, 5), (3, 6)]
    # The platform's profile, corrected: the same rows for STP and SSP.
    assert [r for r, _ in rows_of("stp", doc, profile=PLATFORM_V1)] == [
        r for r, _ in rows_of("ssp", doc, profile=PLATFORM_V1)
    ]


def test_a_family_target_naming_two_of_three_is_the_group_label_in_both_profiles():
    sid = "family_therapy/014/merged"
    rows = [
        client_row(1, speaker="Ada"),
        therapist_row(2, target=("Ada", "Ben"), strategy="boundary", relation_cycle_state=None),
        therapist_row(3, target=("Chidi",), strategy=None, relation_cycle_state=None),
    ]
    doc = clip_of(rows, sample_id=sid, scenario="family")
    for profile in (RESCUE_V1, PLATFORM_V1):
        assert rows_of("stp", doc, profile=profile) == [(2, "Family")], profile
        assert [(i.inputs["target"], i.gold) for i in built("ssp", doc, profile=profile)] == [("Family", "boundary")], (
            profile
        )


# --- ER and VP -----------------------------------------------------------------------------------

FIVE = "I can't do this anymore."
FOUR = "I can't do this"


def test_er_needs_five_words_and_skips_the_first_ceil_30_percent_of_the_rows():
    # 10 rows: the first ceil(10 * 0.3) = 3 positions give no checkpoint (rows 1 and 3 here).
    rows = [maya(i, dialogue_cleaned=FIVE) if i % 2 else therapist(i) for i in range(1, 11)]
    rows[3] = tobias(
        4,
        dialogue_cleaned=FIVE,
        internal_emotion=[{"person": "Tobias", "emotion_description": "feels blamed", "intensity": 5}],
    )
    rows[4] = maya(5, dialogue_cleaned=FOUR)  # 4 words: too short
    rows[6] = maya(
        7,
        dialogue_cleaned=FIVE,
        internal_emotion=[{"person": "Maya", "emotion_description": "feels cornered", "intensity": 6.6}],
    )
    doc = clip_of(rows, valid=False)  # 6.6 is refused by the schema; the public code rounds it to 7
    unseen = {"emotion_description": "feels unseen", "intensity": 6}
    assert rows_of("er", doc) == [
        (4, {"emotion_description": "feels blamed", "intensity": 5}),
        (7, {"emotion_description": "feels cornered", "intensity": 7}),
        (9, unseen),
    ]
    # The platform's rules: 4 words by split() suffice and the first 2 candidates (rows 1, 3) are skipped, so row 5 is
    # in.
    assert 5 in [r for r, _ in rows_of("er", doc, profile=PLATFORM_V1)]
    # Context: the 3 rows before, then the row itself.
    assert [(i.context_start, i.context_end) for i in built("er", doc)] == [(0, 4), (3, 7), (5, 9)]


def test_er_picks_five_evenly_among_the_late_candidates():
    rows = [maya(i, dialogue_cleaned=FIVE) for i in range(1, 21)]  # 20 rows: positions 1..6 cut off
    doc = clip_of(rows)
    # candidates rows 7..20 (n = 14), m = 5: 0, 3.25, 6.5, 9.75, 13 -> 0, 3, 6, 10, 13 -> rows 7, 10, 13, 17, 20
    assert [r for r, _ in rows_of("er", doc)] == [7, 10, 13, 17, 20]


def test_vp_picks_evenly_and_the_gold_keeps_each_viewpoints_attitude():
    def view(i):
        return [
            {"source": "Maya", "target": "Tobias", "viewpoint": f"view {i}", "attitude": "negative"},
            {"source": "Tobias", "target": "Maya", "viewpoint": "not hers", "attitude": ""},
        ]

    rows = [maya(i, viewpoints_attitudes=view(i)) for i in range(1, 8)]  # 7 candidates, no early cut-off for VP
    doc = clip_of(rows)
    # n = 7, m = 5: 0, 1.5, 3, 4.5, 6 -> 0, 2, 3, 4, 6 (1.5 -> 2, 4.5 -> 4: halves to even)
    assert [r for r, _ in rows_of("vp", doc)] == [1, 3, 4, 5, 7]
    assert rows_of("vp", doc)[0][1] == [
        {"source": "Maya", "target": "Tobias", "viewpoint": "view 1", "attitude": "negative"}
    ]


# --- RPP inputs ----------------------------------------------------------------------------------


def test_rpp_takes_therapist_rows_with_a_relation_cycle_state_and_every_row_before_without_it():
    doc = clip_of(
        [
            maya(1, relation_pattern="pursue_withdraw"),  # a client row's label (other key): not an instance
            therapist(2, relation_cycle_state="attack_attack"),
            tobias(3),
            therapist(4, relation_cycle_state=""),  # no clear pattern
            therapist(
                5,
                relation_cycle_state="pursue_withdraw",
                background_dialogue=[{"speaker": "Maya", "target": ["Tobias"], "content": "mm"}],
            ),
        ]
    )
    assert rows_of("rpp", doc) == [(2, "attack_attack"), (5, "pursue_withdraw")]
    assert [(i.context_start, i.context_end) for i in built("rpp", doc)] == [(0, 1), (0, 4)]
    assert built("rpp", doc)[0].inputs["candidates"] == COUPLE_RELATIONS


# --- metrics -------------------------------------------------------------------------------------


def test_rpp_rankings_are_padded_with_taxonomy_labels_and_macro_f1_spans_the_whole_taxonomy():
    def inst(gold):
        return {"gold": gold, "scenario": "couple", "candidates": COUPLE_RELATIONS}

    instances = [inst("attack_attack"), inst("attack_attack"), inst("pursue_withdraw"), inst("pursue_withdraw")]
    predictions = [
        ["repair_softening"],  # padded: repair_softening, pursue_withdraw, attack_attack -> gold 3rd
        ["bogus", "attack_attack", "attack_attack"],  # bogus dropped, repeat dropped: attack_attack first
        [],  # all padding: pursue_withdraw, attack_attack, withdraw_withdraw -> gold 1st
        None,  # no prediction: the same padding
    ]
    rescue = scorer_for("rpp", "1", RESCUE_V1)
    got = rescue.values(rescue.matrix(instances, predictions))
    # top-1: repair_softening, attack_attack, pursue_withdraw, pursue_withdraw -> 3 of 4 right
    # per label: attack_attack P 1 R 1/2 F1 2/3; pursue_withdraw P 1 R 1 F1 1; repair_softening F1 0; three more never
    # seen: 0
    assert got == approx(
        {"accuracy": 3 / 4, "recall@3": 1.0, "mrr": (1 / 3 + 1 + 1 + 1) / 4, "macro_f1": (2 / 3 + 1) / 6}
    )
    platform = scorer_for("rpp", "1", PLATFORM_V1)
    theirs = platform.values(platform.matrix(instances, predictions))
    # The platform's rules: no padding ("bogus" stays the second ranking's top-1), macro-F1 over the 3 labels that
    # occur.
    assert theirs == approx({"accuracy": 0.0, "recall@3": 1 / 4, "macro_f1": 0.0})


def test_stp_rankings_keep_distinct_candidates_only():
    instances = [{"gold": "Tobias", "scenario": "couple", "candidates": ["Maya", "Tobias", "Couple"]}]
    rescue, platform = scorer_for("stp", "1", RESCUE_V1), scorer_for("stp", "1", PLATFORM_V1)
    pred = [["Maya", "Maya", "Nobody", "Tobias"]]
    assert rescue.values(rescue.matrix(instances, pred))["mrr"] == approx(1 / 2)  # Maya, Tobias, ""
    assert platform.values(platform.matrix(instances, pred))["mrr"] == approx(0.0)


# --- the real sample: an independent re-implementation of the public rules -----------------------

SAMPLE = Path(__file__).resolve().parents[2] / "shared" / "data" / "rescue_bench_sample.jsonl"
# Measured by the issue with the public scripts on these 14 couple clips ("theirs").
PUBLIC_COUNTS = {"itp": 192, "rpp": 114, "stp": 77, "ssp": 77, "er": 67, "vp": 64}
COUPLE_STRATEGIES = {
    "counterbalance",
    "safeguard",
    "goal_align",
    "track",
    "reframe",
    "evoke",
    "enact",
    "join",
    "detach",
    "repair",
}
FAMILY_STRATEGIES = {"safeguard", "join", "track", "counterbalance", "enact", "boundary", "reframe", "repair"}


def _t(v):
    return str(v or "").strip()


def _spread(items, m, one):
    if m <= 0 or len(items) <= m:
        return list(items)
    if m == 1:
        return [items[one(len(items))]]
    picked = []
    for k in range(m):
        x = items[round(k * (len(items) - 1) / (m - 1))]
        if x not in picked:
            picked.append(x)
    picked += [x for x in items if x not in picked][: m - len(picked)]
    return picked


def _person_list(values):
    return tuple(x for x in (_t(v) for v in values or []) if x and x != "Therapist")


def reference_instances(clip: dict) -> dict[str, list[int]]:
    """Per task, the row numbers the public code's rules give for ``clip`` (written from the rules, not from tasks/)."""
    rows, n = clip["rows"], len(clip["rows"])
    group = "Family" if clip["scenario"] == "family" else "Couple"
    strategies = FAMILY_STRATEGIES if clip["scenario"] == "family" else COUPLE_STRATEGIES
    speaker = [_t(r.get("primary_speaker")) for r in rows]
    out = {}
    pos = [
        k for k in range(1, n) if speaker[k] == "Therapist" and speaker[k - 1] != "Therapist"
    ]  # next row k+1 (1-based)
    neg = [k for k in range(1, n) if speaker[k] != "Therapist" and speaker[k - 1] != "Therapist"]
    m = min(len(pos), len(neg))

    def middle(size):
        return size // 2

    out["itp"] = sorted(_spread(pos, m, middle) + _spread(neg, m, middle)) if m else []  # decision row = k (1-based)
    out["rpp"] = [
        i for i, r in enumerate(rows, 1) if speaker[i - 1] == "Therapist" and _t(r.get("relation_cycle_state"))
    ]
    stp, ssp = [], []
    for i, r in enumerate(rows, 1):
        items = r.get("support_strategy") or []
        if speaker[i - 1] != "Therapist" or not items:
            continue
        first = items[0] if isinstance(items[0], dict) else {}
        kind = _t(first.get("strategy_type"))
        who = _person_list(first.get("target")) or _person_list(r.get("target"))
        if kind and who:
            stp.append(i)
            if kind in strategies:
                ssp.append(i)
    out["stp"], out["ssp"] = stp, ssp
    cut = 0 if n <= 1 else min(n - 1, math.ceil(n * 0.3))
    er = []
    for i, r in enumerate(rows, 1):
        s = speaker[i - 1]
        if not s or s in ("Therapist", "Couple", "Family") or i <= cut:
            continue
        if len(re.findall(r"[A-Za-z0-9']+", _t(r.get("dialogue_cleaned")))) < 5:
            continue
        for e in r.get("internal_emotion") or []:
            try:
                level = round(float(e.get("intensity")))
            except (TypeError, ValueError):
                continue
            if _t(e.get("person")) == s and _t(e.get("emotion_description")) and 0 <= level <= 10:
                er.append(i)
                break
    out["er"] = sorted(_spread(er, 5, lambda size: 0))
    vp = [
        i
        for i, r in enumerate(rows, 1)
        if speaker[i - 1]
        and speaker[i - 1] not in ("Therapist", "Couple", "Family")
        and any(
            isinstance(v, dict)
            and _t(v.get("source")) == speaker[i - 1]
            and _t(v.get("target"))
            and _t(v.get("viewpoint"))
            for v in r.get("viewpoints_attitudes") or []
        )
    ]
    out["vp"] = sorted(_spread(vp, 5, lambda size: 0))
    assert group  # the group label plays no part in which rows are instances
    return out


@pytest.fixture(scope="module")
def sample_clips():
    if not SAMPLE.is_file():
        pytest.skip(f"real sample not found at {SAMPLE}")
    return [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]


def test_the_sample_clips_give_the_reimplementations_instances_and_the_public_scripts_counts(sample_clips):
    ours = build_instances(sample_clips, {c["sample_id"]: "test" for c in sample_clips}, seed=0, profile=RESCUE_V1)
    expected = {
        task: [f"{task}:{c['sample_id']}:{i}" for c in sample_clips for i in reference_instances(c)[task]]
        for task in PUBLIC_COUNTS
    }
    for task in PUBLIC_COUNTS:
        assert [i.id for i in ours[task]] == expected[task], task
    assert {task: len(ours[task]) for task in PUBLIC_COUNTS} == PUBLIC_COUNTS


# --- a release under rescue-v1, and evaluate ------------------------------------------------------


def test_a_rescue_v1_release_of_the_sample_holds_the_reimplementations_instances_and_scores_by_the_public_rules(
    project, sample_clips, tmp_path, settings
):
    settings.RELEASES_ROOT = tmp_path / "releases"
    import_rescue(SAMPLE, project)
    out = tmp_path / "r"
    release, _ = freeze(project, version="1.0.0", seed=1, out_dir=out, accept_incomplete=("couple",))
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["task_profile"]["name"] == RESCUE_V1 and manifest["task_profile"]["comparable_with_paper"] is True
    assert manifest["task_profile"]["notes"] and manifest["inputs"]["task_profile"] == RESCUE_V1
    files = {
        task: [
            json.loads(line)
            for s in ("train", "validation", "test")
            for line in (out / "tasks" / task / f"{s}.jsonl").read_text().splitlines()
        ]
        for task in PUBLIC_COUNTS
    }
    for task in PUBLIC_COUNTS:
        expected = {f"{task}:{c['sample_id']}:{i}" for c in sample_clips for i in reference_instances(c)[task]}
        assert {i["id"] for i in files[task]} == expected, task
    stats = json.loads((out / "stats.json").read_text())
    assert {task: stats["tasks"][task]["counts"]["all"]["all"]["instances"] for task in PUBLIC_COUNTS} == PUBLIC_COUNTS
    assert stats["tasks"]["itp"]["counts"]["couple"]["all"]["instances"] == PUBLIC_COUNTS["itp"]

    # RPP on the test split: predictions one label long or empty, scored with padding and taxonomy-wide macro-F1.
    test = [json.loads(line) for line in (out / "tasks" / "rpp" / "test.jsonl").read_text().splitlines()]
    labels = load_taxonomy("couple", "1").relation_labels
    order = [x.label for x in load_taxonomy("couple", "1").relation_patterns]
    preds = {i["id"]: ([] if k % 3 == 0 else [order[k % len(order)]]) for k, i in enumerate(test)}
    pred_file = tmp_path / "rpp.jsonl"
    pred_file.write_text("".join(json.dumps({"id": k, "relation_top3": v}) + "\n" for k, v in preds.items()))
    printed = io.StringIO()
    call_command(
        "evaluate",
        str(pred_file),
        "--release",
        str(out),
        "--task",
        "rpp",
        "--json",
        "--resamples",
        "100",
        stdout=printed,
    )
    report = json.loads(printed.getvalue())
    assert report["task_profile"]["name"] == RESCUE_V1

    # The public scorer's rules, here: pad to 3 with taxonomy labels, rank metrics, per-label F1 over every label.
    top1, hits3, rr = [], [], []
    for inst in test:
        ranked = [x for x in dict.fromkeys(preds[inst["id"]]) if x in labels]
        ranked = (ranked + [x for x in order if x not in ranked])[:3]
        top1.append(ranked[0])
        rank = ranked.index(inst["gold"]) + 1 if inst["gold"] in ranked else 0
        hits3.append(1.0 if rank else 0.0)
        rr.append(1 / rank if rank else 0.0)
    f1s = []
    for label in order:
        tp = sum(1 for i, t in zip(test, top1) if i["gold"] == label and t == label)
        fp = sum(1 for i, t in zip(test, top1) if i["gold"] != label and t == label)
        fn = sum(1 for i, t in zip(test, top1) if i["gold"] == label and t != label)
        p = tp / (tp + fp) if tp + fp else 0.0
        r = tp / (tp + fn) if tp + fn else 0.0
        f1s.append(2 * p * r / (p + r) if p + r else 0.0)
    system = report["system"]
    assert system["accuracy"]["value"] == approx(sum(i["gold"] == t for i, t in zip(test, top1)) / len(test))
    assert system["recall@3"]["value"] == approx(sum(hits3) / len(test))
    assert system["mrr"]["value"] == approx(sum(rr) / len(test))
    assert system["macro_f1"]["value"] == approx(sum(f1s) / len(order))
    text = io.StringIO()
    call_command("evaluate", str(pred_file), "--release", str(out), "--task", "rpp", "--resamples", "100", stdout=text)
    assert "task profile: rescue-v1" in text.getvalue()

    # reproduce() rebuilds with the recorded profile: byte-identical.
    _, verification = reproduce(release, tmp_path / "again")
    assert verification.ok, verification.lines()


def test_the_platform_profile_stays_selectable_and_is_recorded(project, tmp_path, settings):
    settings.RELEASES_ROOT = tmp_path / "releases"
    import_rescue(SAMPLE, project) if SAMPLE.is_file() else pytest.skip("real sample not found")
    out = tmp_path / "p"
    release, built_release = freeze(
        project, version="1.0.0", seed=1, out_dir=out, accept_incomplete=("couple",), task_profile=PLATFORM_V1
    )
    assert (
        built_release.manifest["task_profile"]["name"] == PLATFORM_V1
        and built_release.manifest["task_profile"]["comparable_with_paper"] is False
    )
    rpp_any = sum(
        1
        for s in ("train", "validation", "test")
        for _ in (out / "tasks" / "rpp_any_speaker" / f"{s}.jsonl").read_text().splitlines()
    )
    assert rpp_any == 207  # the platform's any-speaker variant reads both label keys
    _, verification = reproduce(release, tmp_path / "again")
    assert verification.ok, verification.lines()


def test_the_profile_is_an_option_of_the_command_and_the_api_and_unknown_names_are_refused(project):
    from annotation.releases.api import FreezeInputsSerializer
    from annotation.releases.freeze import FreezeError
    from annotation.releases.services import start_freeze
    from annotation.synthetic import generate

    generate(project, clips=6, annotators=2, seed=3)
    for name in (RESCUE_V1, PLATFORM_V1):
        printed = io.StringIO()
        call_command(
            "freeze_release",
            "--project",
            project.slug,
            "--seed",
            "1",
            "--dry-run",
            "--accept-incomplete",
            "couple,family",
            "--task-profile",
            name,
            stdout=printed,
        )
        assert f"task instances built and scored by the task profile {name}" in printed.getvalue()
    printed = io.StringIO()
    call_command(
        "freeze_release",
        "--project",
        project.slug,
        "--seed",
        "1",
        "--dry-run",
        "--json",
        "--accept-incomplete",
        "couple,family",
        stdout=printed,
    )
    assert json.loads(printed.getvalue())["task_profile"] == RESCUE_V1  # the default
    body = FreezeInputsSerializer(data={"seed": 1, "task_profile": PLATFORM_V1})
    assert body.is_valid() and body.freeze_inputs()["task_profile"] == PLATFORM_V1
    assert not FreezeInputsSerializer(data={"seed": 1, "task_profile": "rescue-v2"}).is_valid()
    with pytest.raises(FreezeError, match="unknown task profile 'rescue-v2'"):
        start_freeze(project, version="1.0.0", seed=1, task_profile="rescue-v2")


def test_synthetic_couple_and_family_clips_give_the_reimplementations_instances():
    from annotation.synthetic import build_clips

    clips = [c.document(c.gold) for c in build_clips(clips=20, annotators=2, seed=4)]
    assert {c["scenario"] for c in clips} == {"couple", "family"}
    ours = build_instances(clips, {c["sample_id"]: "test" for c in clips}, seed=0, profile=RESCUE_V1)
    for task in PUBLIC_COUNTS:
        assert [i.id for i in ours[task]] == [
            f"{task}:{c['sample_id']}:{i}" for c in clips for i in reference_instances(c)[task]
        ], task
    family_targets = {i.gold for i in ours["stp"] if i.scenario == "family"} - {
        p for c in clips for p in c["participants"]
    }
    assert family_targets <= {"Family"}
