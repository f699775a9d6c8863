"""Forms of the ingest pages. They only shape input; the rules live in services."""

from __future__ import annotations

from pathlib import PurePosixPath

from django import forms
from django.core.files.uploadedfile import UploadedFile

from ..api import parsers as bounded_json
from ..taxonomy import SCENARIOS


class MultipleFileInput(forms.FileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.Field):
    """Several files; emptiness and content are judged per file by the service, not here."""

    widget = MultipleFileInput

    def to_python(self, data):
        files = data if isinstance(data, (list, tuple)) else ([data] if data else [])
        return [f for f in files if isinstance(f, UploadedFile)]

    def validate(self, value):
        if self.required and not value:
            raise forms.ValidationError("Choose at least one transcript file.", code="required")


def split_names(value: str) -> list[str] | None:
    """``"Alan, Evelyn"`` -> ``["Alan", "Evelyn"]``; blank -> None (derive them)."""
    names = [n.strip() for n in value.split(",") if n.strip()]
    return names or None


def safe_relative_path(path: str, file_name: str) -> str:
    """The browser's relative path for a file, if it is plausible; otherwise just the file name."""
    parts = [p for p in PurePosixPath(path.replace("\\", "/")).parts if p not in ("", ".", "..", "/")]
    if not parts or parts[-1] != file_name or len("/".join(parts)) > 500:
        return file_name
    return "/".join(parts)


class UploadForm(forms.Form):
    files = MultipleFileField(
        label="Transcripts (and media)",
        help_text=(
            "SubRip, WebVTT, CSV/TSV, diarisation or RESCUE JSON. A video or audio file goes with the transcript "
            "of the same name."
        ),
        widget=MultipleFileInput(attrs={"multiple": True}),
    )
    relative_paths = forms.CharField(required=False, widget=forms.HiddenInput)
    scenario = forms.ChoiceField(choices=[(s, s) for s in SCENARIOS], widget=forms.RadioSelect, initial="couple")
    participants = forms.CharField(
        required=False,
        help_text=(
            "Comma-separated on-screen names. Leave empty to take the speaker labels of each transcript (without "
            "the therapist)."
        ),
    )
    group = forms.CharField(
        required=False,
        max_length=200,
        help_text=(
            "The sample id's first part when the files were picked one by one (with a folder, the folder name is used)."
        ),
    )
    sample_id = forms.CharField(
        required=False, max_length=300, help_text="Only for a single transcript: <group>/<clip>."
    )
    media_url = forms.URLField(
        required=False,
        label="Media URL",
        assume_scheme="https",
        help_text="Only for a single transcript: where its video or audio plays from.",
    )
    replace = forms.BooleanField(
        required=False,
        help_text="Replace clips whose transcript changed, if nobody has worked on them yet.",
    )

    def clean_participants(self):
        return split_names(self.cleaned_data["participants"])

    def clean_relative_paths(self):
        raw = self.cleaned_data["relative_paths"]
        if not raw:
            return []
        try:
            paths = bounded_json.loads(raw)
        except ValueError:  # malformed, or nested too deep (TooDeep): as if no paths were sent
            return []
        return [p for p in paths if isinstance(p, str)] if isinstance(paths, list) else []

    def named_files(self) -> list[tuple[str, UploadedFile]]:
        """Each uploaded file with its relative name (folder path when the browser sent one)."""
        files = self.cleaned_data["files"]
        paths = self.cleaned_data["relative_paths"]
        if len(paths) != len(files):
            paths = [f.name for f in files]
        return [(safe_relative_path(p, f.name), f) for p, f in zip(paths, files)]


NOBODY = ""  # a speaker nobody can name yet: decided during pre-annotation and review


class SpeakerMapForm(forms.Form):
    """Participants plus one choice per raw speaker tag (fields ``speaker_0``, ``speaker_1``, ...).

    Each tag is offered the clip's people: ``entities`` (participants, ``Therapist``,
    the group label) or nobody. A stored mapping outside them (the participants
    changed) stays on offer so that it shows; the service refuses it with a reason.
    """

    participants = forms.CharField(help_text="Comma-separated on-screen names, without the therapist.")

    def __init__(self, *args, rows: list[dict], entities: list[str], **kwargs):
        super().__init__(*args, **kwargs)
        self.rows = rows
        for i, row in enumerate(rows):
            tag = row["tag"] or "(no speaker label)"
            offered = list(entities)
            if row["mapped"] and row["mapped"] not in offered:
                offered.append(row["mapped"])
            self.fields[f"speaker_{i}"] = forms.CharField(
                required=False,
                label=tag,
                initial=row["mapped"],
                widget=forms.Select(
                    choices=[(NOBODY, "— nobody can tell yet"), *((e, e) for e in offered)],
                    attrs={"aria-label": f"{tag} maps to", "data-speaker-choice": ""},
                ),
            )

    def clean_participants(self):
        return split_names(self.cleaned_data["participants"]) or []

    def mapping(self) -> dict[str, str]:
        return {row["tag"]: self.cleaned_data[f"speaker_{i}"].strip() for i, row in enumerate(self.rows)}

    def bound_rows(self):
        """The speaker rows with their form fields, for the template."""
        return [(row, self[f"speaker_{i}"]) for i, row in enumerate(self.rows)]
