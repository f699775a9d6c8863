"""The assign page's forms: assigning in bulk, and handing an assignment to another annotator."""

from __future__ import annotations

from django import forms

from ..selectors import annotators


class AssignForm(forms.Form):
    """The assign page: the ticked clips, who may get them, and the calibration subset.

    Clips are ticked in the page's clip table (checkboxes named ``clips`` and
    ``calibration_clips``, one per clip); the calibration subset is either
    ticked clip by clip or a number of the ticked clips drawn with the seed.
    """

    per_clip = forms.IntegerField(label="Annotators per clip", min_value=1, max_value=50)
    annotators = forms.ModelMultipleChoiceField(
        queryset=annotators(),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="None ticked: every active annotator.",
    )
    clips = forms.MultipleChoiceField(
        label="Clips",
        error_messages={"required": "Tick the clips to assign (“Select all shown” ticks every clip the filter shows)."},
    )
    calibration_clips = forms.MultipleChoiceField(label="Start empty (calibration)", required=False)
    calibration = forms.IntegerField(
        label="Calibration draw",
        required=False,
        min_value=1,
        help_text=(
            "Or draw this many of the ticked clips with the seed. Calibration assignments start empty instead of "
            "from the LLM draft."
        ),
    )
    seed = forms.IntegerField(initial=0, help_text="Makes the calibration draw reproducible.")

    def __init__(self, *args, project=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.project = project
        ids = (
            list(project.clips.order_by("sample_id").values_list("sample_id", flat=True)) if project is not None else []
        )
        self.fields["clips"].choices = self.fields["calibration_clips"].choices = [(i, i) for i in ids]
        if project is not None and not self.is_bound:
            self.fields["per_clip"].initial = project.annotators_per_clip
        if project is not None:
            self.fields["calibration"].help_text = (
                "Or draw this many of the ticked clips with the seed. Calibration assignments start empty instead of "
                "from the "
                f"LLM draft. With neither, the study design reserves {float(project.from_empty_share):.0%} of the "
                "clips of each "
                "scenario (counted over every clip assigned so far) to start empty, drawn with the seed."
            )

    def clean(self):
        data = super().clean()
        ticked, calibration = set(data.get("clips") or ()), data.get("calibration_clips") or []
        outside = [c for c in calibration if c not in ticked]
        if outside:
            self.add_error(
                "calibration_clips", f"Calibration clips must be ticked for assignment too: {', '.join(outside[:10])}"
            )
        if calibration and data.get("calibration"):
            self.add_error("calibration", "Tick calibration clips or give a number to draw, not both.")
        return data

    def calibration_subset(self) -> int | list[str] | None:
        """What ``assign_clips`` takes as ``calibration``: ticked sample ids, a number to draw, or nothing."""
        return self.cleaned_data["calibration_clips"] or self.cleaned_data["calibration"]

    def ticked(self, field: str) -> set[str]:
        """The sample ids ticked in ``clips`` or ``calibration_clips`` as submitted (for redisplay)."""
        return set(self.data.getlist(field)) if self.is_bound else set()


class ReassignForm(forms.Form):
    annotator = forms.ModelChoiceField(queryset=annotators(), to_field_name="username")
    discard_edits = forms.BooleanField(required=False, label="Throw away the previous annotator's edits")
