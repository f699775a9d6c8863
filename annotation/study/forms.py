"""The study-design form of the lead's page."""

from __future__ import annotations

from django import forms

from ..models import WorkScope
from .services import MAX_MIN_CODERS, MAX_QUICK_SECONDS


class StudyDesignForm(forms.Form):
    work_scope = forms.ChoiceField(
        choices=WorkScope.choices,
        label="Coded work",
        help_text="Which coders' values count in adjudication, agreement, edit rates and the card.",
    )
    adjudication_min_coders = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=MAX_MIN_CODERS,
        label="Coders who must submit before adjudication",
        help_text="Empty: every coder assigned to the clip.",
    )
    from_empty_share = forms.IntegerField(
        min_value=0,
        max_value=100,
        label="Clips coded from empty (%)",
        help_text="Reserved at assignment by the seed, spread over scenarios; measures the draft's pull on the coders.",
    )
    quick_confirm_seconds = forms.IntegerField(
        min_value=1,
        max_value=MAX_QUICK_SECONDS,
        label="Quick confirmation (seconds)",
        help_text="A draft row confirmed unchanged faster than this counts as a quick confirmation.",
    )
    reason = forms.CharField(required=False, max_length=200, label="Why (kept in the project's history)")

    @classmethod
    def for_project(cls, project, data=None):
        initial = {
            "work_scope": project.work_scope,
            "adjudication_min_coders": project.adjudication_min_coders,
            "from_empty_share": round(float(project.from_empty_share) * 100),
            "quick_confirm_seconds": project.quick_confirm_seconds,
        }
        return cls(data, initial=initial)
