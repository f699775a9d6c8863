"""The lead's forms: a scenario's pass rule, training material, a decision about a coder."""

from __future__ import annotations

from django import forms

from ..taxonomy import SCENARIOS
from .models import DecisionKind
from .scoring import SCORED

SCENARIO_CHOICES = [(s, s) for s in SCENARIOS]


class RuleForm(forms.Form):
    scenario = forms.ChoiceField(choices=SCENARIO_CHOICES)
    fields = forms.MultipleChoiceField(
        choices=[(m.key, m.label) for m in SCORED], widget=forms.CheckboxSelectMultiple, label="Fields scored"
    )
    min_score = forms.FloatField(min_value=0.01, max_value=1, initial=0.8, label="Minimum alpha against the gold")
    min_rows = forms.IntegerField(min_value=1, max_value=100000, initial=40, label="Minimum rows per field")
    max_attempts = forms.IntegerField(min_value=1, max_value=20, initial=3, label="Rounds allowed")
    reason = forms.CharField(required=False, max_length=500, label="Why (recorded)")


class TrainingForm(forms.Form):
    sample_id = forms.CharField(max_length=300)
    note = forms.CharField(required=False, max_length=5000, widget=forms.Textarea(attrs={"rows": 2}))
    remove = forms.BooleanField(required=False)


class DecisionForm(forms.Form):
    scenario = forms.ChoiceField(choices=SCENARIO_CHOICES)
    kind = forms.ChoiceField(choices=DecisionKind.choices)
    reason = forms.CharField(max_length=5000, widget=forms.Textarea(attrs={"rows": 2}))


class KnownAnswerForm(forms.Form):
    known_answer_percent = forms.IntegerField(
        min_value=0, max_value=50, label="Known-answer checks (% of each annotator's assignments; 0 is off)"
    )


class StartRoundForm(forms.Form):
    scenario = forms.ChoiceField(choices=SCENARIO_CHOICES)
    annotator = forms.IntegerField(required=False)
