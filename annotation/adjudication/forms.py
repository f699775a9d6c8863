"""Forms of the lead's assignment page and clip-level adjudication actions."""

from __future__ import annotations

from django import forms


class RereviewForm(forms.Form):
    annotator = forms.CharField(max_length=150)
    message = forms.CharField(required=False, max_length=10_000, widget=forms.Textarea(attrs={"rows": 2}))
