"""The project's living codebook: leads write guidance on labels, every change is a new version,
every saved revision and gold row records the version in force, and every member of the project
reads it (editor, guide page, API), while only leads write it (page, API, command)."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse

from annotation.adjudication import services as adjudication
from annotation.codebook import selectors
from annotation.codebook.services import GuidanceConflict, GuidanceError, withdraw_guidance, write_guidance
from annotation.models import AssignmentMode, Draft, Gold, GuidanceImmutable, GuidanceVersion, Revision
from annotation.starting import start_assignment

from .builders.adjudication import reviewed_clip
from .builders.api import api_for
from .builders.documents import family_clip

pytestmark = pytest.mark.django_db

PAIR = ["accusation", "disclosure"]


def write(project, lead, text="A complaint that faults the other is an accusation.", labels=PAIR, **kw):
    return write_guidance(
        project, lead, field="utterance_type", labels=labels, text=text, why=kw.pop("why", "coders split"), **kw
    )


# --- versions ----------------------------------------------------------------------------


def test_every_change_makes_a_new_immutable_version_with_who_when_and_why(project, lead):
    first = write(project, lead)
    second = write_guidance(
        project,
        lead,
        field="support_strategy",
        labels=["join", ""],
        scenario="couple",
        text="Praise alone is not join.",
        why="empty vs join",
    )
    third = write(project, lead, text="Rewritten.", why="clearer")
    fourth = withdraw_guidance(
        project, lead, field="support_strategy", labels=["", "join"], scenario="couple", why="taxonomy rule suffices"
    )
    assert [v.number for v in (first, second, third, fourth)] == [1, 2, 3, 4]
    assert [v.change["action"] for v in (first, second, third, fourth)] == ["wrote", "wrote", "rewrote", "withdrew"]
    # Each version holds every entry in force; labels are kept in the taxonomy's order ("" last).
    assert [(e["field"], e["labels"]) for e in second.entries] == [
        ("utterance_type", PAIR),
        ("support_strategy", ["join", ""]),
    ]
    assert [e["text"] for e in third.entries] == ["Rewritten.", "Praise alone is not join."]
    assert third.entries[0]["version"] == 3 and third.entries[1]["version"] == 2
    assert fourth.entries == [third.entries[0]]
    assert (fourth.created_by, fourth.reason, fourth.taxonomy_version) == (lead, "taxonomy rule suffices", "2")
    with pytest.raises(GuidanceImmutable):
        first.save()
    with pytest.raises(GuidanceImmutable):
        GuidanceVersion.objects.filter(pk=first.pk).update(reason="x")
    with pytest.raises(GuidanceImmutable):
        first.delete()
    assert GuidanceVersion.objects.count() == 4


@pytest.mark.parametrize(
    "change, message",
    [
        ({"labels": ["accusation", "hug"]}, "'hug' is not a label of utterance type for every scenario"),
        ({"labels": ["accusation", ""]}, "utterance type has no empty choice"),
        ({"labels": []}, "name at least one label"),
        ({"labels": ["accusation", "accusation"]}, "each label may be named once"),
        ({"field": "tone_of_voice"}, "field must be one of utterance_type, support_strategy, relation_pattern"),
        ({"scenario": "triad"}, "scenario must be one of couple, family"),
        ({"text": "   "}, "the guidance text is empty"),
        ({"text": "x" * 4001}, "limited to 4,000 characters"),
        ({"why": ""}, "why is required"),
        (
            {"field": "support_strategy", "labels": ["evoke", "boundary"]},
            "'evoke', 'boundary' are not labels of support strategy for every scenario",
        ),
    ],
)
def test_bad_guidance_is_refused_with_a_message_and_nothing_is_written(project, lead, change, message):
    args = {"field": "utterance_type", "labels": PAIR, "text": "Some guidance.", "why": "because", **change}
    with pytest.raises(GuidanceError, match=message.replace("(", r"\(").replace(")", r"\)")):
        write_guidance(project, lead, **args)
    assert not GuidanceVersion.objects.exists()


def test_only_leads_write_and_a_stale_edit_of_the_same_entry_conflicts(project, lead, annotator):
    with pytest.raises(GuidanceError, match="only leads write guidance"):
        write(project, annotator)
    write(project, lead)  # v1
    write_guidance(
        project, lead, field="relation_pattern", labels=["pursue_withdraw"], text="x", why="y", based_on=1
    )  # v2
    # Based on v1, another entry changed since: no conflict.
    write_guidance(
        project,
        lead,
        field="relation_pattern",
        labels=["attack_attack"],
        scenario="couple",
        text="z",
        why="y",
        based_on=1,
    )  # v3
    write(project, lead, text="Changed at v4.", based_on=3)
    with pytest.raises(GuidanceConflict, match="changed since version 3") as caught:
        write(project, lead, text="Mine, from v3.", based_on=3)
    assert caught.value.current.number == 4
    with pytest.raises(GuidanceError, match="already says exactly this"):
        write(project, lead, text="Changed at v4.")


# --- recorded on revisions and gold -------------------------------------------------------


def test_a_revision_records_the_guidance_version_in_force_at_every_save(project, lead, annotator, draft_clip):
    start_assignment(draft_clip, annotator)
    revision = Revision.objects.get(row__clip=draft_clip, row__row_index=1, annotator=annotator)
    client = api_for(annotator)
    url = f"/api/v1/revisions/{revision.pk}/"

    def put(**change):
        current = client.get(url).json()
        response = client.put(
            url, {"content": {**current["content"], **change}, "version": current["version"]}, format="json"
        )
        assert response.status_code == 200, response.json()
        return response.json()

    assert client.get(url).json()["guidance_version"] is None
    assert put(tone_of_voice="flat")["guidance_version"] is None  # saved before any guidance
    write(project, lead)
    assert put(tone_of_voice="flat, tired")["guidance_version"] == 1
    write(project, lead, text="Second wording.")
    reviewed = client.post(f"{url}review/", {"version": client.get(url).json()["version"]}, format="json")
    assert reviewed.status_code == 200 and reviewed.json()["guidance_version"] == 2  # marking reviewed is a save too
    revision.refresh_from_db()
    assert revision.guidance_version.number == 2
    # The audit trail keeps the version of every save.
    assert [
        h.guidance_version.number if h.guidance_version_id else None for h in revision.history.order_by("history_id")
    ] == [None, None, 1, 2]
    # Guidance of another project never counts.
    from annotation.services import create_project

    write_guidance(create_project("other"), lead, field="utterance_type", labels=PAIR, text="elsewhere", why="w")
    assert put(tone_of_voice="quiet")["guidance_version"] == 2


def test_gold_records_the_guidance_version_of_each_write(project, tmp_path, lead, annotator, other_annotator):
    clip = reviewed_clip(project, tmp_path, [annotator, other_annotator])
    row = clip.rows.get(row_index=1)
    first = adjudication.decide(row.pk, lead, "utterance_type", "ann1", 0)
    assert first.guidance_version_id is None
    write(project, lead)
    second = adjudication.save_gold(row.pk, lead, {**first.content, "tone_of_voice": "sharp"}, first.version)
    assert second.guidance_version.number == 1
    write(project, lead, text="v2")
    result = adjudication.accept_unanimous(clip, lead)
    assert result.accepted and {
        g.guidance_version.number for g in Gold.objects.filter(row__clip=clip, row__row_index__in=result.accepted)
    } == {2}
    assert [h.guidance_version_id is not None for h in Gold.objects.get(row=row).history.order_by("history_id")] == [
        False,
        True,
    ]


# --- reading: editor, guide page, API -----------------------------------------------------


def test_the_editor_gets_the_guidance_of_its_scenario_and_the_drafts_modality(project, lead, annotator, draft_clip):
    write(project, lead)
    write_guidance(
        project, lead, field="support_strategy", labels=["boundary"], scenario="family", text="Family only.", why="w"
    )
    start_assignment(draft_clip, annotator)
    Draft.objects.filter(row__clip=draft_clip).update(modality="transcript")
    payload = api_for(annotator).get(f"/api/v1/clips/{draft_clip.pk}/workspace/").json()
    guidance = payload["config"]["guidance"]
    assert guidance["version"] == 2 and [e["title"] for e in guidance["entries"]] == ["accusation vs disclosure"]
    assert guidance["entries"][0]["written_by"] == "lead1"
    assert payload["config"]["guide_url"] == f"/projects/{project.slug}/guide/?scenario=couple"
    assert {r["draft"]["modality_note"] for r in payload["rows"]} == {"drafted from the transcript only"}


def test_a_calibration_coder_sees_the_guidance_but_no_draft_modality(project, lead, annotator, draft_clip):
    write(project, lead)
    Draft.objects.filter(row__clip=draft_clip).update(modality="transcript")
    start_assignment(draft_clip, annotator, mode=AssignmentMode.FROM_EMPTY)
    payload = api_for(annotator).get(f"/api/v1/clips/{draft_clip.pk}/workspace/").json()
    assert payload["config"]["guidance"]["version"] == 1
    assert all(r["draft"] is None for r in payload["rows"])


def test_guide_page_shows_labels_rules_and_guidance_to_members_only(
    client, project, lead, annotator, other_annotator, draft_clip
):
    write(project, lead, text="Blame first, feeling second.")
    start_assignment(draft_clip, annotator)
    url = reverse("codebook-guide", args=[project.slug])
    client.force_login(annotator)
    page = client.get(url).content.decode()
    assert 'id="couple-utterance_type-accusation"' in page and "Places blame on another person." in page
    assert "Project guidance</span> <b>accusation vs disclosure</b>" in page and "Blame first, feeling second." in page
    assert 'id="couple-rule-track-vs-reframe"' in page  # the taxonomy's boundary rules
    assert 'id="couple-support_strategy-empty"' in page  # the empty choice, which rules name
    assert 'id="family-' not in page  # only the scenarios of the coder's clips
    assert "Write guidance" not in page
    client.force_login(other_annotator)
    assert client.get(url).status_code == 404
    client.force_login(lead)
    family = client.get(url + "?scenario=family").content.decode()
    assert 'id="family-support_strategy-boundary"' in family and "Write guidance" in family


def test_api_reads_for_members_writes_for_leads(project, lead, annotator, other_annotator, draft_clip):
    start_assignment(draft_clip, annotator)
    url = f"/api/v1/projects/{project.slug}/guidance/"
    body = {"field": "utterance_type", "labels": PAIR, "text": "Blame vs feeling.", "why": "split", "based_on": 0}
    assert api_for(annotator).post(url, body, format="json").status_code == 403
    assert api_for(other_annotator).get(url).status_code == 404
    created = api_for(lead).post(url, body, format="json")
    assert created.status_code == 201 and created.json()["version"] == 1
    assert created.json()["entries"][0]["id"] == "utterance_type:all:accusation+disclosure"
    read = api_for(annotator).get(url).json()
    assert (
        read["current"]["entries"][0]["text"] == "Blame vs feeling."
        and read["history"][0]["change"]["action"] == "wrote"
    )
    assert api_for(annotator).get(f"{url}versions/1/").json()["reason"] == "split"
    stale = api_for(lead).post(url, {**body, "text": "Other words.", "based_on": 0}, format="json")
    assert stale.status_code == 409 and stale.json()["current"]["version"] == 1
    bad = api_for(lead).post(url, {**body, "labels": ["accusation", "hug"], "based_on": 1}, format="json")
    assert bad.status_code == 400 and "'hug' is not a label" in bad.json()["detail"]
    gone = api_for(lead).post(
        url,
        {"action": "withdraw", "field": "utterance_type", "labels": PAIR, "why": "done", "based_on": 1},
        format="json",
    )
    assert gone.status_code == 201 and gone.json()["entries"] == []
    assert GuidanceVersion.objects.count() == 2


def test_lead_page_writes_rewrites_and_withdraws(client, project, lead, annotator, draft_clip):
    start_assignment(draft_clip, annotator)
    url = reverse("codebook-guidance", args=[project.slug])
    client.force_login(annotator)
    assert client.get(url).status_code == 403
    client.force_login(lead)
    form = {
        "action": "write",
        "based_on": "0",
        "field": "utterance_type",
        "scenario": "",
        "labels_utterance_type": PAIR,
        "text": "First.",
        "why": "split",
    }
    assert client.post(url, form).status_code == 302
    page = client.get(url).content.decode()
    assert "Guidance version 1: wrote accusation vs disclosure" in page and "First." in page
    refused = client.post(url, {**form, "based_on": "1", "text": ""})
    assert refused.status_code == 400 and "the guidance text is empty" in refused.content.decode()
    assert client.post(url, {**form, "based_on": "1", "text": "Second."}).status_code == 302
    withdraw = {
        "action": "withdraw",
        "based_on": "2",
        "field": "utterance_type",
        "scenario": "",
        "labels_utterance_type": PAIR,
        "why": "merged into the rule",
    }
    assert client.post(url, withdraw).status_code == 302
    assert [v["change"]["action"] for v in selectors.history(project)] == ["withdrew", "rewrote", "wrote"]


def test_command_writes_lists_and_withdraws(project, lead, annotator, tmp_path, capsys):
    text = tmp_path / "g.txt"
    text.write_text("Warmth alone is not join.\nName the feeling first.", encoding="utf-8")
    call_command(
        "guidance",
        "--project",
        project.slug,
        "--write",
        "--field",
        "support_strategy",
        "--labels",
        "join,",
        "--scenario",
        "couple",
        "--text-file",
        str(text),
        "--why",
        "empty vs join",
        "--by",
        "lead1",
    )
    assert "guidance version 1: wrote join vs no strategy (support strategy, couple clips)" in capsys.readouterr().out
    call_command("guidance", "--project", project.slug)
    listed = capsys.readouterr().out
    assert (
        "* join vs no strategy (support strategy, couple clips; lead1" in listed
        and "  Name the feeling first." in listed
    )
    call_command("guidance", "--project", project.slug, "--json")
    assert json.loads(capsys.readouterr().out)["current"]["entries"][0]["labels"] == ["join", ""]
    with pytest.raises(CommandError, match="only leads write guidance"):
        call_command(
            "guidance",
            "--project",
            project.slug,
            "--write",
            "--field",
            "utterance_type",
            "--labels",
            "request",
            "--text",
            "x",
            "--why",
            "y",
            "--by",
            "ann1",
        )
    with pytest.raises(CommandError, match="--why and --by are required"):
        call_command(
            "guidance", "--project", project.slug, "--withdraw", "--field", "support_strategy", "--labels", "join,"
        )
    call_command(
        "guidance",
        "--project",
        project.slug,
        "--withdraw",
        "--field",
        "support_strategy",
        "--labels",
        "join,",
        "--scenario",
        "couple",
        "--why",
        "rule enough",
        "--by",
        "lead1",
    )
    assert GuidanceVersion.objects.get(number=2).entries == []


def test_the_demo_project_has_guidance_for_the_labels_its_annotators_split_on(db):
    call_command("load_demo", stdout=open("/dev/null", "w"))
    from annotation.models import Project

    demo = Project.objects.get(slug="demo")
    version = selectors.current_version(demo)
    assert version.number == 1 and version.created_by.username == "lead"
    entry = version.entries[0]
    assert (entry["field"], entry["labels"], entry["scenario"]) == (
        "utterance_type",
        ["accusation", "disclosure", "request"],
        "",
    )
    call_command("load_demo", stdout=open("/dev/null", "w"))  # idempotent
    assert demo.guidance_versions.count() == 1


def test_family_labels_are_checked_against_the_family_taxonomy(project, lead, tmp_path):
    from annotation.rescue_format.importer import import_rescue

    path = tmp_path / "f.jsonl"
    path.write_text(json.dumps(family_clip()) + "\n", encoding="utf-8")
    import_rescue(path, project, as_source="draft")
    version = write_guidance(
        project, lead, field="support_strategy", labels=["track", "boundary"], scenario="family", text="t", why="w"
    )
    assert version.entries[0]["labels"] == ["track", "boundary"]
    with pytest.raises(GuidanceError, match="'boundary' is not a label of support strategy for couple clips"):
        write_guidance(
            project, lead, field="support_strategy", labels=["track", "boundary"], scenario="couple", text="t", why="w"
        )


# --- guidance names no coder ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, why",
    [
        ("ann2 chose request here; a request asks for a change.", "coders split"),
        ("A request asks for a change (see @ANN1: row 4).", "coders split"),
        ("A request asks for a change.", "ann1 and ann2 split on it"),
    ],
)
def test_guidance_that_names_a_coder_is_refused_with_a_request_to_write_the_rule_without_names(
    client,
    project,
    lead,
    annotator,
    other_annotator,
    draft_clip,
    text,
    why,
):
    start_assignment(draft_clip, annotator)  # ann2 codes nothing yet: an annotator all the same
    url = f"/api/v1/projects/{project.slug}/guidance/"
    body = {"field": "utterance_type", "labels": ["accusation", "request"], "text": text, "why": why, "based_on": 0}
    refused = api_for(lead).post(url, body, format="json")
    assert refused.status_code == 400, refused.content
    assert "write the rule without coders' names" in refused.json()["detail"]
    client.force_login(lead)
    form = {
        "action": "write",
        "based_on": "0",
        "field": "utterance_type",
        "scenario": "",
        "labels_utterance_type": ["accusation", "request"],
        "text": text,
        "why": why,
    }
    page = client.post(reverse("codebook-guidance", args=[project.slug]), form)
    assert page.status_code == 400 and "write the rule without coders&#x27; names" in page.content.decode()
    with pytest.raises(GuidanceError, match="without coders' names"):
        write_guidance(project, lead, field="utterance_type", labels=["accusation", "request"], text=text, why=why)
    assert GuidanceVersion.objects.count() == 0
    assert (
        api_for(lead)
        .post(url, {**body, "text": "A request asks for a change.", "why": "coders split"}, format="json")
        .status_code
        == 201
    )


def test_guidance_written_before_names_were_refused_is_withheld_wherever_annotators_read_it(
    project, lead, annotator, other_annotator, draft_clip
):
    """Guidance saved before writing it was refused for naming a coder: nobody reads the name (guide page, API,
    the editor's payload, the history), and the lead's editing form still gets the words to rewrite."""
    from annotation.codebook.selectors import WITHHELD, WITHHELD_REASON

    from .builders.codebook import guidance_saved_before_names_were_refused

    start_assignment(draft_clip, annotator)
    guidance_saved_before_names_were_refused(
        project,
        lead,
        f"As {other_annotator.username} did on row 4: a plea is a request.",
        reason=f"{other_annotator.username} kept choosing request",
    )
    name = other_annotator.username
    reader = api_for(annotator)
    page = Client()
    page.force_login(annotator)
    guide = page.get(f"/projects/{project.slug}/guide/").content.decode()
    api = reader.get(f"/api/v1/projects/{project.slug}/guidance/").json()
    editor = reader.get(f"/api/v1/clips/{draft_clip.pk}/workspace/").json()
    for text in (guide, json.dumps(api), json.dumps(editor)):
        assert name not in text
    assert WITHHELD in guide and api["current"]["entries"][0]["text"] == WITHHELD
    assert api["current"]["reason"] == WITHHELD_REASON and api["history"][0]["reason"] == WITHHELD_REASON
    assert editor["config"]["guidance"]["entries"][0]["withheld"] is True
