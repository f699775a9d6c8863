"""A release records the guidance versions its rows were made under (manifest inputs, checked
against the database) and ships the text of the version in force in its card's guidelines;
rebuilding it later gives the same bytes, whatever guidance was written since."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from annotation.adjudication.services import accept_unanimous, mark_adjudicated
from annotation.codebook.selectors import NOT_RECORDED
from annotation.codebook.services import write_guidance
from annotation.models import Gold, Revision
from annotation.releases.freeze import build_release, freeze, reproduce

from .builders.adjudication import reviewed_clip
from .builders.documents import couple_clip

pytestmark = pytest.mark.django_db

TEXT = "A complaint that faults the other is an accusation,\neven when it names a feeling."


@pytest.fixture
def adjudicated(project, tmp_path, lead, annotator, other_annotator):
    """Two clips: one coded before the project had guidance, one under version 1; gold under version 2."""
    first = reviewed_clip(project, tmp_path, [annotator, other_annotator], edits={}, doc=couple_clip("g1/001_a"))
    write_guidance(
        project, lead, field="utterance_type", labels=["accusation", "disclosure"], text=TEXT, why="coders split"
    )
    second = reviewed_clip(project, tmp_path, [annotator, other_annotator], edits={}, doc=couple_clip("g2/001_b"))
    write_guidance(
        project,
        lead,
        field="relation_pattern",
        labels=["pursue_withdraw"],
        scenario="couple",
        text="Name who pursues.",
        why="evidence rows",
    )
    for clip in (first, second):
        accept_unanimous(clip, lead)
        mark_adjudicated(clip, lead)
    return project


def by_version(documents) -> dict:
    counts = Counter(d.guidance_version.number if d.guidance_version_id else "none" for d in documents)
    return {str(k): n for k, n in counts.items()}


def test_the_manifest_records_the_guidance_versions_the_database_holds_and_the_card_ships_the_text(
    adjudicated, tmp_path, lead
):
    project = adjudicated
    release, built = freeze(project, version="1.0.0", seed=1, out_dir=tmp_path / "r", accept_incomplete=["couple"])
    recorded = release.manifest["inputs"]["guidance"]
    rows = {"row__clip__in": project.clips.all()}
    assert recorded == {
        "version": 2,
        "revisions": by_version(Revision.objects.filter(**rows).select_related("guidance_version")),
        "gold": by_version(Gold.objects.filter(**rows).select_related("guidance_version")),
    }
    assert recorded["revisions"] == {"1": 6, "none": 6} and recorded["gold"] == {"2": 6}
    on_disk = json.loads((tmp_path / "r" / "manifest.json").read_text())
    assert on_disk["inputs"]["guidance"] == recorded
    card = (tmp_path / "r" / "README.md").read_text()
    section = card[card.index("## Annotation guidelines") : card.index("## Annotator agreement")]
    today = project.guidance_versions.get(number=1).created_at.date().isoformat()
    assert "### Project guidance" in section
    assert f"version 2 (written against taxonomy version 2; last changed by lead1 on {today})" in section
    assert (
        f"- *accusation vs disclosure* (utterance type, every scenario; written by lead1 on {today}, version 1): "
        "A complaint that faults the other is an accusation,\n  even when it names a feeling.\n" in section
    )
    assert (
        f"- *pursue_withdraw* (relation pattern, couple clips; written by lead1 on {today}, version 2): Name who "
        "pursues." in section
    )
    assert "Revisions of the released rows: version 1: 6, none recorded: 6. Gold rows: version 2: 6." in section
    # The boundary rules of the taxonomy stay, before the project's guidance.
    assert section.index("### Boundary rules") < section.index("### Project guidance")

    # Guidance written after the freeze changes nothing in the release: rebuilt, it is byte-identical.
    write_guidance(
        project, lead, field="utterance_type", labels=["request"], text="Asks in so many words.", why="later"
    )
    _, verification = reproduce(release, tmp_path / "again")
    assert verification.ok, verification.lines()


def test_a_release_frozen_before_guidance_was_recorded_is_rebuilt_without_it(adjudicated):
    old = build_release(adjudicated, version="0.9.0", seed=1, accept_incomplete=["couple"], guidance=NOT_RECORDED)
    assert "guidance" not in old.inputs
    card = old.files["README.md"].decode()
    assert "### Boundary rules" in card and "Project guidance" not in card


def test_a_project_without_guidance_says_so(project, tmp_path, lead, annotator, other_annotator):
    clip = reviewed_clip(project, tmp_path, [annotator, other_annotator], edits={})
    accept_unanimous(clip, lead)
    mark_adjudicated(clip, lead)
    built = build_release(project, version="1.0.0", seed=1, accept_incomplete=["couple"])
    assert built.inputs["guidance"] == {"version": None, "revisions": {"none": 6}, "gold": {"none": 3}}
    assert (
        "The project had written no guidance of its own when this release was frozen."
        in built.files["README.md"].decode()
    )


def test_guidance_naming_a_coder_ships_withheld_in_the_public_card(adjudicated, tmp_path, lead, other_annotator):
    """Guidance saved before naming a coder was refused: the card (public) ships the notice every page shows, never
    the name; the release rebuilds to the same bytes."""
    from annotation.codebook.selectors import WITHHELD

    from .builders.codebook import guidance_saved_before_names_were_refused

    project = adjudicated
    name = other_annotator.username
    guidance_saved_before_names_were_refused(project, lead, f"As {name} did on row 4: a plea is a request.")
    release, built = freeze(project, version="1.0.0", seed=1, out_dir=tmp_path / "r", accept_incomplete=["couple"])
    card = (tmp_path / "r" / "README.md").read_text()
    assert WITHHELD in card and name not in card
    assert "Name who pursues." in card  # the guidance that names nobody ships as written
    assert all(name not in (tmp_path / "r" / path).read_text() for path in ("manifest.json", "croissant.json"))
    _, verification = reproduce(release, tmp_path / "again")
    assert verification.ok, verification.lines()
