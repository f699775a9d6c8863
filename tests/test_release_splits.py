"""Relationship groups and splits: grouped as the real release names its clips, stratified by
scenario, reproducible from (contents, seed, ratios, grouping), and never a silently empty split."""

from collections import defaultdict

import pytest

from annotation.groups import (
    ClipInfo,
    GroupMapError,
    dump_group_map,
    path_group,
    read_group_map,
    relationship_groups,
)
from annotation.models import Clip
from annotation.releases.splits import SplitError, assign_groups, assign_splits, parse_ratios, plan_splits
from annotation.synthetic import build_clips

# Clips named as the public release names them: couples <couple>/<clip>, several clips each;
# families family_therapy/<NNN>/merged, one clip per family, each a different family.
COUPLES = {
    "alan_and_evelyn": ("Alan", "Evelyn"),
    "alexes_and_casimar": ("Alexes", "Casimar"),
    "maya_and_tobias": ("Maya", "Tobias"),
    "nora_and_sam": ("Nora", "Sam"),
    "ruth_and_omar": ("Ruth", "Omar"),
}
FAMILIES = {
    "014": ("Bill", "Jane", "Joe"),
    "015": ("Ada", "Ben", "Chidi", "Dora"),
    "016": ("Lou", "Pat", "Kim"),
    "017": ("Ivy", "Rex", "Tom", "Una"),
    "018": ("Vic", "Wes", "Zoe"),
}


def release_shaped() -> list[ClipInfo]:
    clips = []
    for n, (couple, people) in enumerate(COUPLES.items()):
        for k in range(1, 4 + n % 3):
            clips.append(ClipInfo(f"{couple}/{k:03d}_s01e0{k}_ct1{k}_segment0{k}", "couple", 30 + k, people))
    for number, people in FAMILIES.items():
        clips.append(ClipInfo(f"family_therapy/{number}/merged", "family", 70, people))
    return clips


def test_the_group_is_the_sample_id_without_its_last_segment():
    assert path_group("alan_and_evelyn/003_s01e02_ct81_segment02") == "alan_and_evelyn"
    assert path_group("family_therapy/014/merged") == "family_therapy/014"
    assert path_group("lonely_clip") == "lonely_clip"
    assert Clip(sample_id="family_therapy/014/merged").group == "family_therapy/014"  # one rule, everywhere


@pytest.mark.parametrize("seed", range(6))
def test_release_shaped_clips_keep_every_group_in_one_split_and_every_scenario_in_test(seed):
    clips = release_shaped()
    plan = plan_splits(clips, seed=seed)
    per_group = defaultdict(set)
    for c in clips:
        per_group[plan.group_of[c.sample_id]].add(plan.splits[c.sample_id])
    assert all(len(splits) == 1 for splits in per_group.values())
    # Each family is its own group: five families, not one "family_therapy".
    assert {g.name for g in plan.groups.values() if g.scenario == "family"} == {f"family_therapy/{n}" for n in FAMILIES}
    for scenario in ("couple", "family"):
        assert {plan.splits[c.sample_id] for c in clips if c.scenario == scenario} == {"train", "validation", "test"}, (
            scenario
        )
    assert not plan.incomplete and plan.refusal() == ""


def test_clips_of_one_scenario_sharing_a_participant_are_one_group():
    clips = [
        ClipInfo("family_therapy/014/merged", "family", 70, ("Bill", "Jane", "Joe")),
        ClipInfo("family_therapy/022/merged", "family", 60, ("joe ", "Kate")),  # Joe again, spelled otherwise
        ClipInfo("family_therapy/023/merged", "family", 50, ("Kate", "Liam")),  # joins through Kate
        ClipInfo("family_therapy/030/merged", "family", 40, ("Mia", "Ned")),
        ClipInfo("joe_and_rita/001_a", "couple", 30, ("Joe", "Rita")),  # another scenario: not joined
    ]
    groups, group_of = relationship_groups(clips)
    joined = groups["family_therapy/014"]
    assert joined.clips == ["family_therapy/014/merged", "family_therapy/022/merged", "family_therapy/023/merged"]
    assert joined.rows == 180 and joined.folders == ["family_therapy/014", "family_therapy/022", "family_therapy/023"]
    assert joined.joined_by == [
        "family_therapy/014 and family_therapy/022 share joe",
        "family_therapy/022 and family_therapy/023 share Kate",
    ]
    assert (
        group_of["family_therapy/030/merged"] == "family_therapy/030" and groups["family_therapy/030"].joined_by == []
    )
    assert group_of["joe_and_rita/001_a"] == "joe_and_rita"


def test_the_leads_map_overrides_the_ids_and_separates_namesakes():
    clips = [
        ClipInfo("sam_and_ann/001", "couple", 30, ("Sam", "Ann")),
        ClipInfo("sam_and_ann/002", "couple", 30, ("Sam", "Ann")),
        ClipInfo("sam_and_bea/001", "couple", 30, ("Sam", "Bea")),  # another Sam
        ClipInfo("old_folder/009", "couple", 30, ("Cy", "Di")),
    ]
    groups, group_of = relationship_groups(clips)
    assert len({group_of[c.sample_id] for c in clips[:3]}) == 1  # the guard joins the two Sams
    separated = {
        "sam_and_ann/001": "sam_and_ann",
        "sam_and_ann/002": "sam_and_ann",
        "sam_and_bea/001": "sam_and_bea",
        "old_folder/009": "sam_and_ann",
    }
    groups, group_of = relationship_groups(clips, separated)
    assert group_of == {
        "old_folder/009": "sam_and_ann",
        "sam_and_ann/001": "sam_and_ann",
        "sam_and_ann/002": "sam_and_ann",
        "sam_and_bea/001": "sam_and_bea",
    }
    assert groups["sam_and_ann"].joined_by == ["placed by the lead's map: sam_and_ann"]
    # A clip the map does not name still joins every clip it shares a participant with.
    partial = {"sam_and_ann/001": "sam_and_ann", "sam_and_ann/002": "sam_and_ann"}
    _, group_of = relationship_groups(clips, partial)
    assert group_of["sam_and_bea/001"] == group_of["sam_and_ann/001"]


def test_group_map_files_are_read_as_csv_or_json_and_bad_ones_are_named():
    text = "sample_id,group\n# a comment\nfamily_therapy/014/merged,fam14\nx/1\tfam14\n\n"
    assert read_group_map(text) == {"family_therapy/014/merged": "fam14", "x/1": "fam14"}
    assert read_group_map('{"a/1": "g"}') == {"a/1": "g"}
    assert read_group_map(dump_group_map({"b/2": "g,2", "a/1": "g"})) == {"a/1": "g", "b/2": "g,2"}
    for bad, message in (
        ("a/1\n", "line 1"),
        ("a/1,g\na/1,h\n", "two groups"),
        ("a/1, \n", "non-empty"),
        ('{"a/1": 3}', "non-empty text"),
        ("{nope", "not valid JSON"),
    ):
        with pytest.raises(GroupMapError, match=message):
            read_group_map(bad)


def test_a_scenario_that_cannot_reach_every_split_is_refused_by_name_unless_accepted():
    clips = [c for c in release_shaped() if c.scenario == "couple"]
    clips += [
        ClipInfo("family_therapy/014/merged", "family", 70, ("Bill", "Jane")),
        ClipInfo("family_therapy/015/merged", "family", 60, ("Ada", "Ben")),
    ]
    plan = plan_splits(clips, seed=1)
    assert plan.incomplete == {"family": ["validation"]}  # two families: train and test first
    refusal = plan.refusal()
    assert refusal.startswith(
        "scenario family has 2 relationship groups (family_therapy/014, family_therapy/015) for 3 splits: it would "
        "have no validation split"
    )
    assert "--accept-incomplete family" in refusal and "--splits 0.8,0,0.2" in refusal
    assert plan.refusal(["family"]) == ""
    assert plan_splits(clips, seed=1, ratios="0.8,0,0.2").incomplete == {}  # no validation wanted: two groups suffice


@pytest.fixture(scope="module")
def synthetic_clips():
    # 100 clips: ~91 couple clips in ~14 couples, 9 families of one clip each.
    return [
        ClipInfo(c.sample_id, c.scenario, len(c.skeletons), tuple(c.participants))
        for c in build_clips(clips=100, annotators=1, seed=11)
    ]


def shares(clips, splits, scenario):
    rows = defaultdict(int)
    for c in clips:
        if c.scenario == scenario:
            rows[splits[c.sample_id]] += c.rows
    total = sum(rows.values())
    return {s: rows[s] / total for s in ("train", "validation", "test")}


def test_synthetic_clips_are_named_and_grouped_like_the_release(synthetic_clips):
    families = [c for c in synthetic_clips if c.scenario == "family"]
    assert families and all(c.sample_id == f"family_therapy/{n:03d}/merged" for n, c in enumerate(families, start=1))
    plan = plan_splits(synthetic_clips, seed=0)
    assert not any(g.joined_by for g in plan.groups.values())  # nobody appears in two couples or families
    assert sum(g.scenario == "family" for g in plan.groups.values()) == len(families)


def test_each_scenario_is_split_near_the_ratios(synthetic_clips):
    splits = assign_splits(synthetic_clips, seed=2, ratios=(0.7, 0.1, 0.2))
    couple = shares(synthetic_clips, splits, "couple")
    assert couple["train"] == pytest.approx(0.7, abs=0.1)
    assert couple["validation"] == pytest.approx(0.1, abs=0.1)
    assert couple["test"] == pytest.approx(0.2, abs=0.1)
    family = shares(synthetic_clips, splits, "family")
    assert all(family[s] > 0 for s in family) and family["train"] == max(family.values())


def test_splits_are_reproducible_and_depend_on_the_seed(synthetic_clips):
    first = assign_splits(synthetic_clips, seed=4)
    assert assign_splits(list(reversed(synthetic_clips)), seed=4) == first  # input order does not matter
    assert any(assign_splits(synthetic_clips, seed=s) != first for s in range(5, 10))


def test_a_group_with_few_members_fills_empty_splits_first():
    # Two couples and three splits: train and test each get one (validation has the smallest ratio).
    assert sorted(assign_groups({"a": 30, "b": 32}, seed=0).values()) == ["test", "train"]
    assert assign_groups({"a": 30}, seed=0) == {"a": "train"}


def test_split_ratios_are_checked():
    assert parse_ratios("0.8,0,0.2") == (0.8, 0.0, 0.2)
    for bad in ("0.7,0.2", "0.5,0.5,0.5", "a,b,c", "0,0.5,0.5", (-0.1, 0.6, 0.5)):
        with pytest.raises(SplitError):
            parse_ratios(bad)
