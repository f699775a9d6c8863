"""Splits by relationship group, stratified by scenario, reproducible from (contents, seed, ratios)."""
from collections import defaultdict

import pytest

from annotation.releases.splits import ClipInfo, SplitError, assign_groups, assign_splits, group_of, parse_ratios
from annotation.synthetic import build_clips


@pytest.fixture(scope="module")
def synthetic_clips():
    # 100 clips: ~91 couple clips in ~14 couples, ~9 family clips in ~4 families.
    return [ClipInfo(c.sample_id, c.scenario, len(c.skeletons)) for c in build_clips(clips=100, annotators=1, seed=11)]


def shares(clips, splits, scenario):
    rows = defaultdict(int)
    for c in clips:
        if c.scenario == scenario:
            rows[splits[c.sample_id]] += c.rows
    total = sum(rows.values())
    return {s: rows[s] / total for s in ("train", "validation", "test")}


def test_a_relationship_group_never_spans_two_splits(synthetic_clips):
    for seed in range(5):
        splits = assign_splits(synthetic_clips, seed=seed)
        per_group = defaultdict(set)
        for c in synthetic_clips:
            per_group[group_of(c.sample_id)].add(splits[c.sample_id])
        assert all(len(s) == 1 for s in per_group.values())


def test_each_scenario_is_split_near_the_ratios(synthetic_clips):
    splits = assign_splits(synthetic_clips, seed=2, ratios=(0.7, 0.1, 0.2))
    couple = shares(synthetic_clips, splits, "couple")
    assert couple["train"] == pytest.approx(0.7, abs=0.1)
    assert couple["validation"] == pytest.approx(0.1, abs=0.1)
    assert couple["test"] == pytest.approx(0.2, abs=0.1)
    family = shares(synthetic_clips, splits, "family")
    # Few families: every split still gets one, the largest share goes to train.
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
