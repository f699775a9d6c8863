"""The draft's pull: the group-bootstrap alphas and the time spent on a row, each against a second computation.

A resample of relationship groups is the data with each group's units repeated as often as the group was drawn,
so its alpha must be the ``krippendorff`` package's alpha on that repeated data; the seconds on a row are the
gaps between a coder's own saves, without breaks and without a sitting's first save.
"""

from __future__ import annotations

import datetime as dt
import json

import krippendorff
import numpy as np
import pytest
from django.utils import timezone

from annotation.agreement.alpha import distance_matrix
from annotation.agreement.draft_pull import _alphas, _Groups
from annotation.agreement.extract import BREAK_SECONDS, candidate_clips, extract
from annotation.models import Revision
from annotation.rescue_format.importer import import_rescue
from annotation.starting import start_assignment
from annotation.workspace.services import save_revision, set_reviewed

from .builders.documents import couple_clip


@pytest.mark.parametrize("level", ["nominal", "interval"])
def test_a_resampled_alpha_is_the_packages_alpha_on_the_groups_units_repeated(level):
    rng = np.random.default_rng(5)
    coders, units, values, groups = 3, 60, 5, 8
    codes = rng.integers(0, values, size=(coders, units))
    codes[rng.random((coders, units)) < 0.15] = -1  # some values missing
    group = rng.integers(0, groups, size=units)
    domain = list(range(values))
    delta = distance_matrix(level, domain)
    data = _Groups(codes, group, groups, delta)
    for weights in (
        np.ones(groups),
        rng.integers(0, 3, size=groups).astype(float),
        np.eye(groups)[2] * 4 + np.eye(groups)[5],
    ):
        mine = _alphas(data, delta, weights[None, :])[0]
        repeated = np.concatenate(
            [codes[:, group == g].repeat(int(w), axis=1) for g, w in enumerate(weights) if w], axis=1
        )
        reference = krippendorff.alpha(
            reliability_data=np.where(repeated >= 0, repeated, np.nan).astype(float),
            level_of_measurement=level,
            value_domain=domain,
        )
        assert mine == pytest.approx(reference, abs=1e-9)


def test_a_resample_with_one_value_only_is_undefined_not_perfect():
    codes = np.array([[0, 0, 1], [0, 0, 1]])
    data = _Groups(codes, np.array([0, 0, 1]), 2, distance_matrix("nominal", [0, 1]))
    assert np.isnan(_alphas(data, distance_matrix("nominal", [0, 1]), np.array([[2.0, 0.0]]))[0])


@pytest.mark.django_db
def test_seconds_on_a_row_are_the_gaps_between_a_coders_own_saves_without_breaks(
    project, annotator, tmp_path, monkeypatch
):
    path = tmp_path / "clip.jsonl"
    path.write_text(json.dumps(couple_clip()) + "\n", encoding="utf-8")
    import_rescue(path, project, as_source="draft")
    clip = project.clips.get()
    start_assignment(clip, annotator)
    moments = iter(
        [0, 12, 30, 30 + BREAK_SECONDS + 1, 30 + BREAK_SECONDS + 6]
    )  # row 1, row 2, row 3, (break) row 3 again, row 1 again
    base = dt.datetime(2026, 11, 2, 9, 0, tzinfo=dt.UTC)
    clock = {"now": base}
    monkeypatch.setattr(timezone, "now", lambda: clock["now"])
    revisions = {r.row.row_index: r for r in Revision.objects.filter(row__clip=clip).select_related("row")}

    def act(index, edit=None):
        clock["now"] = base + dt.timedelta(seconds=next(moments))
        revision = Revision.objects.get(pk=revisions[index].pk)
        if edit is None:
            set_reviewed(revision.pk, annotator, revision.version)
        else:
            save_revision(revision.pk, annotator, {**revision.content, **edit}, revision.version)

    act(1)  # the sitting's first save: no gap to measure
    act(2)  # 12 s
    act(3)  # 18 s
    act(3, {"tone_of_voice": "flat"})  # after a break: counts nothing
    act(1, {"tone_of_voice": "hushed"})  # 5 s more on row 1
    ex = extract(candidate_clips(project), "reviewed")
    seconds = {ex.unit_row_ids[u]: s for u, s in zip(ex.pace.unit.tolist(), ex.pace.seconds.tolist())}
    by_index = {revisions[i].row_id: i for i in revisions}
    measured = {by_index[row]: s for row, s in seconds.items()}
    assert measured[2] == 12.0 and measured[3] == 18.0 and measured[1] == 5.0
    unchanged = {
        by_index[ex.unit_row_ids[u]]: bool(x) for u, x in zip(ex.pace.unit.tolist(), ex.pace.unchanged.tolist())
    }
    assert unchanged == {1: False, 2: True, 3: False}
