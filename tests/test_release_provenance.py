"""The dataset card states only what the database records about how the data was made.

Three projects made three ways: gold imported and nothing else; gold imported with the
revisions of two coders; the platform's own flow (transcripts ingested, LLM drafts
through the real SDK against the fake Gemini server, blind assignments, adjudication).
Each card's provenance section is compared sentence by sentence with sentences written
here from facts this test counts itself, straight from the database and the files.
"""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command

from annotation.adjudication.fields import field_value
from annotation.adjudication.selectors import row_states
from annotation.adjudication.services import accept_unanimous, decide, mark_adjudicated
from annotation.assignment.services import assign_clips
from annotation.ingest.services import IngestOptions, Upload, accept_suggested_speakers, ingest_files
from annotation.models import (
    Assignment,
    AssignmentMode,
    ClipState,
    Draft,
    DraftSource,
    Gold,
    ImportRecord,
    Revision,
    Row,
)
from annotation.releases.freeze import freeze
from annotation.rescue_format.importer import import_rescue
from annotation.services import create_project, transition
from annotation.taxonomy import DEFAULT_VERSION, load_taxonomy
from annotation.workspace.services import save_revision, submit_assignment

from .builders.card import section
from .builders.documents import couple_clip, mutate, write_jsonl
from .fakes import gemini_server as g
from .fakes.clips import make_clip

pytestmark = pytest.mark.django_db

GROUPS = ("maya_and_tobias", "ana_and_ben", "lea_and_sam")
RULE = (
    "Only clips in an adjudicated (or previously released) state, not discarded, with gold on every row, are released."
)


def three_clips() -> list[dict]:
    return [couple_clip(f"{group}/001_opening") for group in GROUPS]


def released(project, tmp_path, version="1.0.0") -> Path:
    out = tmp_path / f"{project.slug}-{version}"
    freeze(
        project, version=version, seed=1, out_dir=out, accept_incomplete=("couple",)
    )  # three couples may not fill three splits
    return out


def paragraphs(folder: Path, heading: str, until: str) -> list[str]:
    """The card section under ``heading`` as its paragraphs (the first, an introduction, left out
    for the provenance section)."""
    card = (folder / "README.md").read_text(encoding="utf-8")
    section = card.split(f"## {heading}\n\n", 1)[1].split(f"## {until}", 1)[0].split("\n## ", 1)[0]
    found = [p for p in section.strip().split("\n\n") if p]
    return found[1:] if heading == "How the data was made" else found


def file_ref(record: ImportRecord, path: Path) -> str:
    """How the card names an imported file, from the record's date and the file's own bytes."""
    return (
        f"`{path.name}` (imported {record.created_at.date().isoformat()}, SHA-256 "
        f"`{hashlib.sha256(path.read_bytes()).hexdigest()[:12]}…`)"
    )


def taxonomy_sentence() -> str:
    # New projects start on the current taxonomy version; the sentence names the one the project uses.
    tax = load_taxonomy("couple", DEFAULT_VERSION)
    return (
        f"Labels follow taxonomy version {DEFAULT_VERSION} (couple: {len(tax.relation_patterns)} relation patterns, "
        f"{len(tax.support_strategies)} support strategies, {len(tax.utterance_types)} utterance types)."
    )


def test_gold_imported_and_nothing_else(tmp_path, lead):
    project = create_project("imported-gold")
    path = write_jsonl(tmp_path / "gold.jsonl", three_clips())
    import_rescue(path, project, actor=lead)  # a lead imports: the gold names them, and still nobody adjudicated
    out = released(project, tmp_path)
    rows = Row.objects.filter(clip__project=project).count()
    ref = file_ref(ImportRecord.objects.get(project=project), path)
    assert paragraphs(out, "How the data was made", "Annotation guidelines") == [
        f"**Clips and rows.** This release holds 3 clips and {rows} rows. 3 clips came into the platform, with their "
        f"rows, by import from {ref}.",
        f"**Drafts.** No draft annotation is recorded for any of the {rows} rows.",
        "**Coders.** No coder's work is recorded for these clips: nobody was assigned to them on this platform, and no "
        "revisions were imported.",
        f"**Gold.** The gold of {rows} rows (3 clips) was imported as gold, from {ref}; how it was decided is not "
        f"recorded on this platform. {RULE}",
        taxonomy_sentence(),
    ]
    assert paragraphs(out, "Annotator agreement", "Intended uses") == [
        "Reliability cannot be computed from this release: no coder's work is recorded for its clips (see how the data "
        "was "
        "made), so there are no independent codings to compare. A reliability figure for these labels needs a second, "
        "independent coding of at least part of the clips."
    ]
    # Nobody coded on the platform: the rules are stated as documentation, not as what the coders saw.
    assert paragraphs(out, "Annotation guidelines", "###")[0] == (
        f"These are the rules of taxonomy version {DEFAULT_VERSION} as the platform shows them next to each choice. No "
        "coder of this release worked on this platform, so they document the labels, not how the gold was decided."
    )
    croissant = json.loads((out / "croissant.json").read_text(encoding="utf-8"))
    assert (
        "blind" not in croissant["rai:dataAnnotationProtocol"]
        and "by adjudication" not in croissant["rai:dataAnnotationProtocol"]
    )


def test_the_rest_of_the_card_claims_nothing_the_database_does_not_record(tmp_path, lead):
    """Review of §3: sentences outside the provenance section stated agreement figures, drafts, recordings and
    mojibake whether or not the release had any."""
    project = create_project("imported-gold-claims")
    import_rescue(write_jsonl(tmp_path / "gold.jsonl", three_clips()), project, actor=lead)
    card = (released(project, tmp_path) / "README.md").read_text(encoding="utf-8")
    for claim in (
        "agreement figures are all in this folder",
        "the effect of a pre-annotation draft",
        "Studying annotation itself: disagreement",
        "annotated from the recordings",
        "annotators' readings",
    ):
        assert claim not in card, claim
    assert (
        "an agreement report (which says why this release carries no reliability figure) are all in this folder" in card
    )
    assert "- Studying annotation itself: label ambiguity." in card
    assert project.clips.exclude(media="").count() == project.clips.exclude(media_url="").count() == 0
    assert "No recording of its clips is on the platform, so how their nonverbal cues were perceived" in card
    assert "mojibake" in card, "imported clips may carry the public release's mojibake"
    # Clips with a recording on the platform are counted, from the clips themselves.
    project.clips.filter(pk__in=list(project.clips.values_list("pk", flat=True))[:2]).update(
        media_url="https://video.example.org/x.mp4"
    )
    card = (released(project, tmp_path, version="1.0.1") / "README.md").read_text(encoding="utf-8")
    assert "2 of its 3 clips had a recording on the platform" in card


def test_a_generated_release_states_neither_mojibake_nor_a_drafts_effect(tmp_path):
    from annotation.synthetic import generate

    project = create_project("generated-claims")
    generate(project, clips=12, annotators=2, seed=3)
    card = (released(project, tmp_path) / "README.md").read_text(encoding="utf-8")
    assert (
        "mojibake" not in card
        and "the effect of a pre-annotation draft" not in card
        and "annotators' readings" not in card
    )


def test_gold_imported_with_the_revisions_of_two_coders(tmp_path, annotator, other_annotator):
    project = create_project("imported-revisions")
    docs = three_clips()
    first = write_jsonl(tmp_path / "ann1.jsonl", docs)
    # The second coder heard row 1 differently: a disagreement for the agreement figures.
    second = write_jsonl(
        tmp_path / "ann2.jsonl", [mutate(d, lambda d: d["rows"][0].update(tone_of_voice="flat")) for d in docs]
    )
    gold = write_jsonl(tmp_path / "gold.jsonl", docs)
    # The gold as released elsewhere, then the two coders' revisions it was adjudicated from.
    call_command("import_rescue", str(gold), project=project.slug, stdout=io.StringIO())
    call_command(
        "import_rescue",
        str(first),
        project=project.slug,
        as_source="revision",
        annotator=annotator.username,
        stdout=io.StringIO(),
    )
    call_command(
        "import_rescue",
        str(second),
        project=project.slug,
        as_source="revision",
        annotator=other_annotator.username,
        stdout=io.StringIO(),
    )
    out = released(project, tmp_path)

    records = {r.file_name: r for r in ImportRecord.objects.filter(project=project)}
    assert (
        records["ann1.jsonl"].kind,
        records["ann1.jsonl"].annotator,
        records["ann2.jsonl"].annotator,
        records["gold.jsonl"].kind,
    ) == ("revision", annotator, other_annotator, "gold")
    rows = Row.objects.filter(clip__project=project).count()
    assert paragraphs(out, "How the data was made", "Annotation guidelines") == [
        f"**Clips and rows.** This release holds 3 clips and {rows} rows. 3 clips came into the platform, with their "
        f"rows, by import from {file_ref(records['gold.jsonl'], gold)}.",
        f"**Drafts.** No draft annotation is recorded for any of the {rows} rows.",
        "**Coders.** Revisions of 2 coders on 3 clips were made elsewhere and imported from "
        f"{file_ref(records['ann1.jsonl'], first)} and "
        f"{file_ref(records['ann2.jsonl'], second)}. The platform did not assign these coders, so whether they worked "
        "blind to and "
        "independently of each other is not recorded.",
        f"**Gold.** The gold of {rows} rows (3 clips) was imported as gold, from "
        f"{file_ref(records['gold.jsonl'], gold)}; how it was decided is not recorded on this platform. {RULE}",
        taxonomy_sentence(),
    ]
    agreement = paragraphs(out, "Annotator agreement", "Intended uses")
    assert agreement[0] == (
        "The figures compare the finished work of two or more coders on 3 clips: imported revisions (whether those "
        "coders worked independently is not recorded)."
    )
    summary = json.loads((out / "agreement.json").read_text())["report"]["summary"]
    assert any(entry["units"] for entry in summary) and any(p.startswith("| field | alpha |") for p in agreement)


def _platform_transcript(group: str) -> bytes:
    name = group.split("_and_")[0].capitalize()
    return (
        f"1\n00:00:00,000 --> 00:00:03,200\nTherapist: What brings you both in today?\n\n"
        f"2\n00:00:03,500 --> 00:00:07,900\n{name}: He works every evening about {group}. I wait, and he does not "
        "notice.\n\n"
        f"3\n00:00:08,100 --> 00:00:10,000\nPartner: That is not fair to say.\n\n"
        f"4\n00:00:10,400 --> 00:00:14,250\nTherapist: What happens for you when {name} says that?\n"
    ).encode()


def test_the_platform_flow_drafts_blind_assignments_and_adjudication(
    fake, preannotate, project, tmp_path, lead, annotator, other_annotator
):  # noqa: F811
    uploads = [
        Upload(name=f"{group}/001_opening.srt", size=len(raw), read=lambda raw=raw: raw)
        for group in GROUPS
        for raw in [_platform_transcript(group)]
    ]
    ingest_files(project, uploads, IngestOptions(scenario="couple"), actor=lead)
    accept_suggested_speakers(project.clips.all(), actor=lead)
    preannotate(user=lead)
    calibration = f"{GROUPS[0]}/001_opening"
    assign_clips(project, users=[annotator, other_annotator], per_clip=2, calibration=[calibration], actor=lead)
    for assignment in Assignment.objects.filter(clip__project=project).select_related("clip"):
        user = assignment.annotator
        for revision in (
            Revision.objects.filter(row__clip=assignment.clip, annotator=user)
            .select_related("row")
            .order_by("row__row_index")
        ):
            content = dict(Draft.objects.get(row=revision.row).content)  # both coders agree with the draft...
            if user == annotator and revision.row.row_index == 1:
                content["tone_of_voice"] = "hesitant"  # ...except here
            save_revision(revision.pk, user, content, revision.version, reviewed=True)
        submit_assignment(assignment, user)
    for clip in project.clips.all():
        accept_unanimous(clip, lead)
        for state in row_states(clip):
            for name in state.disputes:
                decide(state.row.pk, lead, name, annotator.username, state.gold.version if state.gold else 0)
        mark_adjudicated(clip, lead)
    out = released(project, tmp_path)

    rows = Row.objects.filter(clip__project=project).count()
    assignments = list(Assignment.objects.filter(clip__project=project))
    anchored = sum(a.mode == AssignmentMode.FROM_DRAFT for a in assignments)
    decisions = [d for g_ in Gold.objects.filter(row__clip__project=project) for d in g_.decisions.values()]
    unanimous = sum(d["source"] == "unanimous" for d in decisions)
    assert {d["by"] for d in decisions} == {lead.username} and len(assignments) == 6 and anchored == 4
    provenance = Draft.objects.filter(row__clip__project=project).first().provenance
    assert paragraphs(out, "How the data was made", "Annotation guidelines") == [
        f"**Clips and rows.** This release holds 3 clips and {rows} rows. 3 clips were ingested from transcript files "
        "on this platform, and their rows were made there.",
        f"**Drafts.** A draft annotation is recorded for {rows} of the {rows} rows: {rows} rows from the LLM "
        "pre-annotation "
        f"(provider gemini, model gemini-2.5-flash, model version {g.MODEL_VERSION}, prompt version "
        f"{provenance['prompt_version']}).",
        "**Coders.** The platform assigned 3 clips to 2 annotators in 6 assignments: 4 anchored (starting from the "
        "clip's draft) "
        "and 2 calibration (starting empty). 6 of these assignments were submitted. The platform assigned them blind: "
        "it shows "
        "an annotator only their own assignments and revisions, and a clip's rows are locked once it is assigned, so "
        "every coder of a clip annotated the same rows.",
        f"**Gold.** The gold of {rows} rows (3 clips) was decided on this platform by adjudication: {len(decisions)} "
        "field "
        f"decisions recorded by 1 lead, {unanimous} of them accepting a value every coder had given. {RULE}",
        taxonomy_sentence(),
    ]
    assert provenance["prompt_version"] == "couple-v2" and 0 < unanimous < len(decisions)
    # The platform shows the rules; nothing records what a coder looked at, so the card does not say they were in view.
    assert paragraphs(out, "Annotation guidelines", "###")[0] == (
        f"The platform shows these rules of taxonomy version {DEFAULT_VERSION} next to each choice its coders make; "
        "what a "
        "coder looked at is not recorded."
    )
    assert "in view" not in (out / "README.md").read_text(encoding="utf-8")
    agreement = paragraphs(out, "Annotator agreement", "Intended uses")
    assert agreement[0] == (
        "The figures compare the finished work of two or more coders on 3 clips: coders the platform assigned, "
        "blind to each other."
    )
    # The gold decided for the disputed field is the coder's value the lead chose.
    disputed = Gold.objects.get(row__clip__sample_id=f"{GROUPS[1]}/001_opening", row__row_index=1)
    assert (
        field_value(disputed.content, "tone_of_voice") == "hesitant"
        and disputed.decisions["tone_of_voice"]["source"] == annotator.username
    )


def test_a_release_drafted_by_the_llm_pre_annotation_names_its_model_provider_and_prompt_version(
    fake, preannotate, project, tmp_path, lead, annotator, other_annotator
):
    """Two clips drafted through the real pre-annotation path (the SDK against the fake Gemini server), coded,
    adjudicated and frozen: the drafting model's section of the card, and stats.json whose digest the manifest
    records, name the model, provider and prompt version the drafts recorded."""
    for group in GROUPS[:2]:
        make_clip(project, f"{group}/001_opening")
    batch = preannotate(user=lead)
    assert batch.state == "succeeded", batch.error
    assign_clips(project, users=[annotator, other_annotator], per_clip=2, calibration=0, actor=lead)
    for assignment in Assignment.objects.filter(clip__project=project):
        user = assignment.annotator
        for revision in Revision.objects.filter(row__clip=assignment.clip, annotator=user).select_related("row"):
            content = dict(revision.content)
            if user == annotator and revision.row.row_index == 1:
                content["tone_of_voice"] = "hesitant"
            save_revision(revision.pk, user, content, revision.version, reviewed=True)
        submit_assignment(assignment, user)
    for clip in project.clips.all():
        accept_unanimous(clip, lead)
        for state in row_states(clip):
            for name in state.disputes:
                decide(state.row.pk, lead, name, annotator.username, state.gold.version if state.gold else 0)
        mark_adjudicated(clip, lead)
    out = released(project, tmp_path)

    drafts = Draft.objects.filter(row__clip__project=project)
    recorded = {
        (d.source, d.provenance["provider"], d.provenance["model"], d.provenance["prompt_version"]) for d in drafts
    }
    assert len(recorded) == 1, recorded  # one run drafted every row
    source, provider, model, prompt_version = recorded.pop()
    assert source == DraftSource.LLM and provider == "gemini" and model and prompt_version == "couple-v2"
    rows = drafts.count()
    assert rows == Row.objects.filter(clip__project=project).count() == 12

    card = (out / "README.md").read_text(encoding="utf-8")
    baseline = section(card, "### The drafting model as a baseline")
    assert (
        "The stored drafts of the released rows, read as one more system's predictions "
        f"(model {model}, provider {provider}, prompt version {prompt_version}; {rows} rows drafted)"
    ) in baseline
    assert "no model recorded" not in card
    stats_bytes = (out / "stats.json").read_bytes()
    system = json.loads(stats_bytes)["drafting_model"]["system"]
    assert (system["source"], system["llm"], system["provider"], system["model"], system["prompt_version"]) == (
        source,
        True,
        provider,
        model,
        prompt_version,
    )
    assert system["model_version"] == g.MODEL_VERSION and system["rows_drafted"] == rows
    assert system["runs"] == [
        {
            "source": source,
            "provider": provider,
            "model": model,
            "model_version": g.MODEL_VERSION,
            "prompt_version": prompt_version,
            "rows": rows,
        }
    ]
    # The manifest itself names no model: it fixes stats.json (which does) and the drafting model's predictions.
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["files"]["stats.json"]["sha256"] == hashlib.sha256(stats_bytes).hexdigest()
    predictions = sorted(p for p in manifest["files"] if p.startswith("predictions/drafting_model/"))
    assert predictions and all((out / p).is_file() for p in predictions)


def test_imported_drafts_and_unsubmitted_assignments_are_stated_as_such(tmp_path, lead, annotator, other_annotator):
    """Drafts imported from a file, the platform's assignments never submitted, gold imported
    over them: the card names the drafts' file, counts the open assignments, and says why
    reliability cannot be computed instead of showing the (empty) report."""
    project = create_project("open-assignments")
    docs = three_clips()
    drafts = write_jsonl(tmp_path / "drafts.jsonl", docs)
    import_rescue(drafts, project, as_source="draft")
    assign_clips(project, users=[annotator, other_annotator], per_clip=2, calibration=0, actor=lead)
    gold = write_jsonl(tmp_path / "gold.jsonl", docs)
    import_rescue(gold, project)
    for clip in project.clips.all():  # a lead closes them although nobody submitted
        transition(transition(clip, ClipState.REVIEWED, actor=lead), ClipState.ADJUDICATED, actor=lead)
    out = released(project, tmp_path)

    rows = Row.objects.filter(clip__project=project).count()
    records = {r.file_name: r for r in ImportRecord.objects.filter(project=project)}
    states = sorted({a.state for a in Assignment.objects.filter(clip__project=project)})
    assert states == ["assigned"]
    assert paragraphs(out, "How the data was made", "Annotation guidelines") == [
        f"**Clips and rows.** This release holds 3 clips and {rows} rows. 3 clips came into the platform, with their "
        f"rows, by import from {file_ref(records['drafts.jsonl'], drafts)}.",
        f"**Drafts.** A draft annotation is recorded for {rows} of the {rows} rows: {rows} rows imported as drafts "
        f"from `drafts.jsonl` (imported {records['drafts.jsonl'].created_at.date().isoformat()}).",
        "**Coders.** The platform assigned 3 clips to 2 annotators in 6 assignments: 6 anchored (starting from the "
        "clip's draft). "
        "0 of these assignments were submitted; not submitted: 6 assigned. The platform assigned them blind: it shows "
        "an "
        "annotator only their own assignments and revisions, and a clip's rows are locked once it is assigned, so "
        "every coder "
        "of a clip annotated the same rows.",
        f"**Gold.** The gold of {rows} rows (3 clips) was imported as gold, from "
        f"{file_ref(records['gold.jsonl'], gold)}; how it was decided is not recorded on this platform. {RULE}",
        taxonomy_sentence(),
    ]
    assert paragraphs(out, "Annotator agreement", "Intended uses") == [
        "Reliability cannot be computed from this release: no clip carries the finished work of two or more coders (6 "
        "assignments on the platform were not submitted, and agreement counts finished work only). A reliability "
        "figure "
        "for these labels needs a second, independent coding of at least part of the clips."
    ]
