"""Reads of the assignment step: how far each annotator is (who may be assigned is ``selectors.annotators``)."""

from __future__ import annotations

from django.db.models import Count, Q

from ..models import (
    Assignment,
    AssignmentState,
    Project,
    Revision,
    RevisionStatus,
)


def annotator_progress(project: Project) -> list[dict]:
    """Per annotator: clips assigned and submitted, rows reviewed of rows assigned."""
    rows = (
        Revision.objects.filter(row__clip__project=project)
        .values("annotator__username")
        .annotate(
            rows=Count("id"),
            reviewed=Count("id", filter=Q(status=RevisionStatus.REVIEWED)),
            edited=Count("id", filter=Q(status=RevisionStatus.EDITED)),
        )
    )
    clips = (
        Assignment.objects.filter(clip__project=project)
        .values("annotator__username")
        .annotate(clips=Count("id"), submitted=Count("id", filter=Q(state=AssignmentState.SUBMITTED)))
    )
    out = {
        c["annotator__username"]: {
            "annotator": c["annotator__username"],
            "clips": c["clips"],
            "submitted": c["submitted"],
            "rows": 0,
            "reviewed": 0,
            "edited": 0,
        }
        for c in clips
    }
    for r in rows:
        out.setdefault(
            r["annotator__username"], {"annotator": r["annotator__username"], "clips": 0, "submitted": 0}
        ).update(rows=r["rows"], reviewed=r["reviewed"], edited=r["edited"])
    return sorted(out.values(), key=lambda d: d["annotator"])
