"""The clip life cycle: one rule for single and bulk transitions, each audited."""

import pytest

from annotation.models import Clip, ClipState
from annotation.services import ServiceError, transition, transition_many

from .fakes.clips import make_clip

pytestmark = pytest.mark.django_db


def test_a_bulk_transition_writes_every_clip_and_one_audit_record_each(project, lead):
    clips = [make_clip(project, sample_id=f"group_{i}/001") for i in range(3)]
    for clip in clips:
        transition(clip, ClipState.IN_REVIEW, actor=lead, reason="assigned")
    moved = transition_many(
        Clip.objects.filter(project=project), ClipState.REVIEWED, actor=lead, reason="all submitted"
    )
    assert moved == 3
    for clip in clips:
        clip.refresh_from_db()
        latest = clip.history.latest("history_id")
        assert clip.state == ClipState.REVIEWED
        assert (latest.state, latest.history_user, latest.history_change_reason) == (
            ClipState.REVIEWED,
            lead,
            "all submitted",
        )


def test_a_bulk_transition_the_life_cycle_forbids_changes_nothing(project, lead):
    allowed, forbidden = make_clip(project, sample_id="a/001"), make_clip(project, sample_id="b/001")
    transition(allowed, ClipState.IN_REVIEW, actor=lead, reason="assigned")
    with pytest.raises(ServiceError, match="cannot go from"):
        transition_many(Clip.objects.filter(project=project), ClipState.REVIEWED, actor=lead, reason="bulk")
    assert set(Clip.objects.values_list("state", flat=True)) == {ClipState.IN_REVIEW, forbidden.state}
    with pytest.raises(ServiceError, match="one at a time"):
        transition_many(Clip.objects.filter(pk=allowed.pk), ClipState.DISCARDED, actor=lead, reason="bulk")
