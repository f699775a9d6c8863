"""Reads of the study design: the settings as pages, the API and the command show them."""

from __future__ import annotations

from ..models import Project


def design_of(project: Project) -> dict:
    """The settings with what each means, JSON-ready."""
    minimum = project.adjudication_min_coders
    return {
        "work_scope": project.work_scope,
        "work_scope_label": project.get_work_scope_display(),
        "adjudication_min_coders": minimum,
        "adjudication_min_coders_label": "every assigned coder"
        if minimum is None
        else f"{minimum} coder{'s' if minimum != 1 else ''}",
        "from_empty_share": float(project.from_empty_share),
        "quick_confirm_seconds": project.quick_confirm_seconds,
        "annotators_per_clip": project.annotators_per_clip,
    }
