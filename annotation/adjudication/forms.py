"""Forms of the lead's assignment page and clip-level adjudication actions."""
from __future__ import annotations

import re

from django import forms

from .. import assignment as assigning

_SPLIT = re.compile(r"[\s,;]+")


def sample_ids(text: str) -> list[str]:
    """Sample ids typed one per line (commas and spaces also separate them)."""
    return [s for s in _SPLIT.split(text or "") if s]


class AssignForm(forms.Form):
    per_clip = forms.IntegerField(label="Annotators per clip", min_value=1, max_value=50)
    annotators = forms.ModelMultipleChoiceField(
        queryset=assigning.annotators(), required=False, widget=forms.CheckboxSelectMultiple, help_text="None ticked: every active annotator."
    )
    clips = forms.CharField(
        label="Clips", required=False, widget=forms.Textarea(attrs={"rows": 3}), help_text="Sample ids, one per line. Empty: every clip that can be assigned."
    )
    calibration = forms.CharField(
        label="Calibration subset",
        required=False,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="A number of clips (drawn with the seed) or sample ids, one per line. Their assignments start empty instead of from the LLM draft.",
    )
    seed = forms.IntegerField(initial=0, help_text="Makes the calibration draw reproducible.")

    def __init__(self, *args, project=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.project = project
        if project is not None and not self.is_bound:
            self.fields["per_clip"].initial = project.annotators_per_clip

    def clean_clips(self):
        ids = sample_ids(self.cleaned_data["clips"])
        if ids and self.project is not None:
            known = set(self.project.clips.filter(sample_id__in=ids).values_list("sample_id", flat=True))
            unknown = [i for i in ids if i not in known]
            if unknown:
                raise forms.ValidationError(f"No such clips in this project: {', '.join(unknown[:10])}")
        return ids

    def clean_calibration(self):
        text = (self.cleaned_data["calibration"] or "").strip()
        if not text:
            return None
        if text.isdigit():
            return int(text)
        return sample_ids(text)


class ReassignForm(forms.Form):
    annotator = forms.ModelChoiceField(queryset=assigning.annotators(), to_field_name="username")
    discard_edits = forms.BooleanField(required=False, label="Throw away the previous annotator's edits")


class RereviewForm(forms.Form):
    annotator = forms.CharField(max_length=150)
    message = forms.CharField(required=False, max_length=10_000, widget=forms.Textarea(attrs={"rows": 2}))
