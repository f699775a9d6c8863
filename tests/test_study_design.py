"""The study design a lead sets, and the share of clips it reserves to be coded from empty.

A lab relies on it: the share holds however the clips are assigned (in one go or in batches), it is drawn
per scenario with the seed and recorded on every assignment, a lead's own choice overrides it, bad settings are
refused with a message naming the setting, and the page, the API and the command all change the same thing.
"""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from rest_framework.test import APIClient

from annotation.assignment.services import assign_clips
from annotation.models import Assignment, AssignmentMode
from annotation.rescue_format.importer import import_rescue
from annotation.services import ServiceError, create_user
from annotation.study.services import update_design

from .builders.documents import couple_clip, family_clip

pytestmark = pytest.mark.django_db


def import_clips(project, tmp_path, couples: int, families: int = 0) -> None:
    docs = [couple_clip(f"couple_{k:02d}/001_clip") for k in range(couples)]
    docs += [family_clip(f"family_{k:02d}/001_clip") for k in range(families)]
    path = tmp_path / "drafts.jsonl"
    path.write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    import_rescue(path, project, as_source="draft")


@pytest.fixture
def team(db):
    return [create_user(f"ann{n}", "annotator", password=f"pw-ann{n}-123456")[0] for n in range(1, 4)]


def empty_clips(project) -> set[str]:
    return set(
        Assignment.objects.filter(clip__project=project, mode=AssignmentMode.FROM_EMPTY).values_list(
            "clip__sample_id", flat=True
        )
    )


def test_the_from_empty_share_is_drawn_per_scenario_with_the_seed_and_recorded(project, tmp_path, team, lead):
    import_clips(project, tmp_path, couples=10, families=5)
    plan = assign_clips(project, users=team, seed=7, actor=lead)
    reserved = empty_clips(project)
    # 20% of 10 couple clips and 20% of 5 family clips, every coder of a reserved clip from empty.
    assert sum(s.startswith("couple") for s in reserved) == 2 and sum(s.startswith("family") for s in reserved) == 1
    assert plan.from_empty == 3 * 3
    assert {tuple(sorted(a.design.items())) for a in plan.created} == {(("by", "design"), ("seed", 7), ("share", 0.2))}
    for sample_id in reserved:
        assert set(Assignment.objects.filter(clip__sample_id=sample_id).values_list("mode", flat=True)) == {
            AssignmentMode.FROM_EMPTY
        }


def test_the_same_seed_reserves_the_same_clips(tmp_path, team, lead):
    from annotation.services import create_project

    chosen = []
    for name in ("a", "b"):
        project = create_project(f"seeded-{name}")
        folder = tmp_path / name
        folder.mkdir()
        import_clips(project, folder, couples=10)
        assign_clips(project, users=team, seed=11, actor=lead)
        chosen.append(empty_clips(project))
    assert chosen[0] == chosen[1] and len(chosen[0]) == 2


def test_a_realistic_assignment_reserves_the_share_in_whole_clips_the_same_for_every_annotator(tmp_path, team, lead):
    """20 clips (15 couples, 5 families) x 3 annotators at the default 20%, in two projects with the same seed.

    What the design promises (``annotation.assignment``): the share is of clips, per scenario; a reserved clip is
    reserved whole (every coder of it codes from empty), so with every annotator on every clip each one codes
    exactly the reserved clips from empty: the same share for each. Each assignment records the mode's reason
    (share and seed), and the same seed over the same clips chooses the same clips."""
    from annotation.services import create_project

    chosen = []
    for name in ("first", "again"):
        project = create_project(f"study-{name}")
        assert float(project.from_empty_share) == 0.2
        folder = tmp_path / name
        folder.mkdir()
        import_clips(project, folder, couples=15, families=5)
        plan = assign_clips(project, users=team, seed=2024, actor=lead)
        assignments = list(Assignment.objects.filter(clip__project=project).select_related("clip", "annotator"))
        assert len(assignments) == 60 and len(plan.created) == 60
        by_clip: dict[str, set[str]] = {}
        for a in assignments:
            by_clip.setdefault(a.clip.sample_id, set()).add(a.mode)
            assert a.design == {"by": "design", "share": 0.2, "seed": 2024}
        assert all(len(modes) == 1 for modes in by_clip.values()), "a clip's coders share one mode"
        reserved = {s for s, modes in by_clip.items() if modes == {AssignmentMode.FROM_EMPTY}}
        # Hand count: 20% of 15 couple clips is 3, of 5 family clips 1; 4 of 20 clips, 12 of 60 assignments.
        assert sum(s.startswith("couple") for s in reserved) == 3
        assert sum(s.startswith("family") for s in reserved) == 1
        assert plan.from_empty == 12 and "12 of them start empty" in plan.summary
        per_annotator = {u.username: 0 for u in team}
        for a in assignments:
            per_annotator[a.annotator.username] += a.mode == AssignmentMode.FROM_EMPTY
        assert per_annotator == {"ann1": 4, "ann2": 4, "ann3": 4}
        chosen.append(reserved)
    assert chosen[0] == chosen[1]


def test_assigning_in_batches_keeps_the_share(project, tmp_path, team, lead):
    import_clips(project, tmp_path, couples=10)
    ids = sorted(project.clips.values_list("sample_id", flat=True))
    for start in range(0, 10, 2):  # five batches of two clips: 20% of two rounds to nothing each time
        assign_clips(
            project,
            clips=project.clips.filter(sample_id__in=ids[start : start + 2]),
            users=team,
            seed=start,
            actor=lead,
        )
    assert len(empty_clips(project)) == 2, "counted over every clip assigned so far"


def test_a_leads_choice_overrides_the_design_and_new_coders_follow_the_clip(project, tmp_path, team, lead):
    import_clips(project, tmp_path, couples=5)
    first = sorted(project.clips.values_list("sample_id", flat=True))[0]
    plan = assign_clips(project, users=team[:2], per_clip=2, calibration=[first], actor=lead)
    assert empty_clips(project) == {first} and {a.design["by"] for a in plan.created} == {"lead"}
    assign_clips(project, users=team, per_clip=3, actor=lead)  # a third coder for every clip
    third = Assignment.objects.get(clip__sample_id=first, annotator=team[2])
    assert third.mode == AssignmentMode.FROM_EMPTY and third.design == {"by": "lead"}
    assert assign_clips(project, users=team, per_clip=3, calibration=0).created == []


def test_no_clip_is_reserved_when_the_share_is_zero(project, tmp_path, team, lead):
    project = update_design(project, lead, from_empty_share=0)
    import_clips(project, tmp_path, couples=6)
    assign_clips(project, users=team, actor=lead)
    assert empty_clips(project) == set()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"work_scope": "everything"}, "work scope must be one of submitted, reviewed"),
        ({"adjudication_min_coders": 0}, "whole number from 1"),
        ({"adjudication_min_coders": "two"}, "whole number from 1"),
        ({"adjudication_min_coders": 40_000}, "whole number from 1 to 50"),
        ({"from_empty_share": float("nan")}, "from 0 to 1"),
        ({"from_empty_share": 1.5}, "from 0 to 1"),
        ({"from_empty_share": "lots"}, "must be a number from 0 to 1"),
        ({"quick_confirm_seconds": 0}, "from 1 to 60"),
    ],
)
def test_a_wrong_setting_is_refused_by_name_and_nothing_changes(project, lead, change, message):
    before = (
        project.work_scope,
        project.adjudication_min_coders,
        project.from_empty_share,
        project.quick_confirm_seconds,
    )
    with pytest.raises(ServiceError, match=message):
        update_design(project, lead, **change)
    project.refresh_from_db()
    assert (
        project.work_scope,
        project.adjudication_min_coders,
        project.from_empty_share,
        project.quick_confirm_seconds,
    ) == before


def test_the_page_the_api_and_the_command_change_the_same_design(project, lead, annotator):
    client = Client()
    client.force_login(lead)
    page = client.post(
        f"/projects/{project.slug}/design/",
        {
            "work_scope": "reviewed",
            "adjudication_min_coders": "2",
            "from_empty_share": "25",
            "quick_confirm_seconds": "4",
            "reason": "pilot",
        },
        follow=True,
    )
    assert page.status_code == 200 and "The study design is saved" in page.content.decode()
    project.refresh_from_db()
    assert (
        project.work_scope,
        project.adjudication_min_coders,
        float(project.from_empty_share),
        project.quick_confirm_seconds,
    ) == ("reviewed", 2, 0.25, 4)
    history = project.history.first()
    assert (
        history.history_user == lead
        and "study design" in history.history_change_reason
        and "(pilot)" in history.history_change_reason
    )
    refused = client.post(
        f"/projects/{project.slug}/design/",
        {"work_scope": "reviewed", "from_empty_share": "250", "quick_confirm_seconds": "4"},
    )
    assert refused.status_code == 422

    api = APIClient()
    api.force_authenticate(lead)
    assert api.get(f"/api/v1/projects/{project.slug}/design/").json()["adjudication_min_coders"] == 2
    changed = api.patch(
        f"/api/v1/projects/{project.slug}/design/",
        {"adjudication_min_coders": None, "from_empty_share": 0.1},
        format="json",
    )
    assert (
        changed.status_code == 200
        and changed.json()["adjudication_min_coders"] is None
        and changed.json()["from_empty_share"] == 0.1
    )
    bad = api.patch(f"/api/v1/projects/{project.slug}/design/", {"quick_confirm_seconds": 99}, format="json")
    assert bad.status_code == 400
    annotator_api = APIClient()
    annotator_api.force_authenticate(annotator)
    assert (
        annotator_api.patch(
            f"/api/v1/projects/{project.slug}/design/", {"from_empty_share": 0.9}, format="json"
        ).status_code
        == 403
    )

    out = io.StringIO()
    call_command("study_design", project.slug, "--min-coders", "all", "--work-scope", "submitted", stdout=out)
    assert (
        "every assigned coder must have submitted" in out.getvalue()
        and "10% of clips coded from empty" in out.getvalue()
    )
    out = io.StringIO()
    call_command("study_design", project.slug, "--json", stdout=out)
    assert json.loads(out.getvalue())["work_scope"] == "submitted"
    with pytest.raises(CommandError, match="whole number from 1 or 'all'"):
        call_command("study_design", project.slug, "--min-coders", "some")
    with pytest.raises(CommandError, match="from 0 to 1"):
        call_command("study_design", project.slug, "--from-empty-share", "2")
