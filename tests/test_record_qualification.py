"""Qualification rounds: scored against the gold with the project's measures, feedback row by row,
pass rules that refuse production work (service, API, CLI, assign page), waivers and send-backs."""

from __future__ import annotations

import json

import krippendorff
import numpy as np
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from nltk.metrics.distance import masi_distance

from annotation.agreement.extract import extract, scope_clips
from annotation.assignment.services import assign_clips
from annotation.codebook.services import write_guidance
from annotation.models import Assignment, AssignmentPurpose, Revision
from annotation.record import selectors, services
from annotation.record.models import QualificationAttempt
from annotation.rescue_format.importer import import_rescue
from annotation.services import ServiceError, create_user

from .builders.documents import couple_clip
from .builders.record import UTTERANCES, code_like_gold, import_gold_clip, training_rows

pytestmark = pytest.mark.django_db


def _world(project, lead, tmp_path, rows=None):
    trainee = create_user("newbie", "annotator", password="newbie-pass-123")[0]
    clip = import_gold_clip(
        project, tmp_path, "train_group/001_training", rows, note="Watch who is pressed and who retreats."
    )
    services.mark_training(project, clip, actor=lead, note="the opening")
    write_guidance(
        project,
        lead,
        scenario="couple",
        field="relation_pattern",
        labels=["attack_attack", "pursue_withdraw"],
        text="Escalation on both sides is attack_attack.",
        why="qualification test",
    )
    services.set_rule(
        project,
        "couple",
        fields=["utterance_type", "relation_pattern"],
        min_score=0.8,
        min_rows=10,
        max_attempts=2,
        actor=lead,
    )
    # An open production clip to assign.
    path = tmp_path / "prod.jsonl"
    path.write_text(json.dumps(couple_clip("prod_group/001_open")) + "\n", encoding="utf-8")
    import_rescue(path, project, as_source="draft")
    return {
        "project": project,
        "lead": lead,
        "trainee": trainee,
        "clip": clip,
        "open": project.clips.get(sample_id="prod_group/001_open"),
    }


@pytest.fixture
def world(project, lead, tmp_path):
    return _world(project, lead, tmp_path)


def _wrong_every_third(index, doc):
    if index % 3 == 0 and doc.get("utterance_type"):
        doc["utterance_type"] = UTTERANCES[(UTTERANCES.index(doc["utterance_type"]) + 1) % len(UTTERANCES)]
    if index % 5 == 0 and doc.get("relation_pattern") == "pursue_withdraw":
        doc["relation_pattern"] = "attack_attack"
    return doc


def test_round_scores_match_krippendorff_and_a_hand_count(world):
    project, trainee, clip = world["project"], world["trainee"], world["clip"]
    attempt = services.start_round(project, "couple", trainee, actor=world["lead"])
    assert attempt.sample_ids == [clip.sample_id]
    assignment = Assignment.every.get(clip=clip, annotator=trainee)
    assert assignment.purpose == AssignmentPurpose.QUALIFICATION and assignment.mode == "from_empty"
    assert not Assignment.objects.filter(clip=clip, annotator=trainee).exists()  # invisible to production readers
    code_like_gold(clip, trainee, _wrong_every_third)
    attempt = services.submit_round(attempt, trainee)

    # The documents as stored (the workspace mirrors the relation keys on save), read directly.
    mine = {
        r.row.row_index: r.content
        for r in Revision.objects.filter(row__clip=clip, annotator=trainee).select_related("row")
    }
    gold = {r.row_index: r.gold.content for r in clip.rows.select_related("gold")}
    speaker = {r.row_index: r.primary_speaker for r in clip.rows.all()}
    client = [i for i in sorted(gold) if speaker[i] != "Therapist"]
    labels = sorted({gold[i]["utterance_type"] for i in client} | {mine[i]["utterance_type"] for i in client})
    matrix = np.array(
        [
            [labels.index(mine[i]["utterance_type"]) for i in client],
            [labels.index(gold[i]["utterance_type"]) for i in client],
        ],
        dtype=float,
    )
    expected = krippendorff.alpha(reliability_data=matrix, level_of_measurement="nominal")
    by_hand = sum(mine[i]["utterance_type"] == gold[i]["utterance_type"] for i in client)
    figure = attempt.scores["utterance_type"]
    assert figure["alpha"] == pytest.approx(expected, abs=1e-4)
    assert figure["matching"] == {
        "rows": len(client),
        "same": by_hand,
        "share": pytest.approx(by_hand / len(client), abs=1e-4),
    }
    assert figure["interval"][0] <= figure["alpha"] <= figure["interval"][1]

    rows = sorted(gold)  # the relation pattern is coded on every row (the therapist rows carry the cycle key)

    def pattern(doc, speaker):
        from annotation.schema import relation_label

        value = relation_label({**doc, "primary_speaker": speaker})
        return None if value is None else (value or "(no clear pattern)")

    pairs = [(pattern(mine[i], speaker[i]), pattern(gold[i], speaker[i])) for i in rows]
    domain = sorted({v for p in pairs for v in p if v is not None})
    data = np.array(
        [
            [np.nan if a is None else domain.index(a) for a, _ in pairs],
            [np.nan if b is None else domain.index(b) for _, b in pairs],
        ]
    )
    assert attempt.scores["relation_pattern"]["alpha"] == pytest.approx(
        krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"), abs=1e-4
    )
    assert attempt.passed is False and attempt.rule["why_not"]
    assert attempt.rows == len(gold)


def _varied_gold_rows() -> list[dict]:
    """The training rows with target sets of one or two people and intensities from 1 to 10 (the factory's
    rows all have one target and intensity 6, which would leave the gold constant on those fields)."""
    rows = training_rows()
    for row in rows:
        i = row["row_index"]
        if row["primary_speaker"] == "Therapist":
            people = ["Maya", "Tobias"] if i % 8 == 0 else ["Maya"]
            row["target"] = list(people)
            row["support_strategy"][0]["target"] = list(people)
        else:
            if i % 3 == 0:
                row["target"] = [*row["target"], "Therapist"]
            row["internal_emotion"][0]["intensity"] = (i * 3) % 10 + 1
    return rows


def _other_targets_and_intensities(index, doc):
    """The trainee's coding: nested and disjoint target sets, other support targets, intensities off by 1 to 3."""
    if index % 4 == 0:  # the therapist's rows
        strategy = dict(doc["support_strategy"][0])
        if index == 4:
            strategy["target"] = ["Maya", "Tobias"]  # gold: Maya alone (nested)
        elif index == 16:
            strategy["target"] = ["Tobias"]  # gold: Maya + Tobias (nested the other way)
        doc["support_strategy"] = [strategy, *doc["support_strategy"][1:]]
        if index == 8:
            doc["target"] = ["Tobias"]
        return doc
    if index % 4 == 1:
        # A second person where the gold has one, one where it has two.
        doc["target"] = [doc["target"][0]] if len(doc["target"]) > 1 else [*doc["target"], "Therapist"]
    elif index == 7:
        doc["target"] = ["Therapist"]  # gold: Tobias (disjoint)
    if index % 3 == 2:
        emotion = dict(doc["internal_emotion"][0])
        emotion["intensity"] = max(0, emotion["intensity"] - 3) if index == 11 else min(10, emotion["intensity"] + 1)
        doc["internal_emotion"] = [emotion]
    return doc


def _masi_metric(domain: list[frozenset]):
    """A distance for ``krippendorff.alpha``: nltk's MASI distance between the sets the codes stand for."""
    table = np.array([[masi_distance(set(a), set(b)) for b in domain] for a in domain])

    def metric(v1, v2, i1, i2, n_v, dtype=np.float64):
        return table[np.asarray(i1, dtype=int), np.asarray(i2, dtype=int)].astype(dtype)

    return metric


def _set_alpha(pairs: list[tuple]) -> float:
    """Krippendorff's alpha with MASI of (trainee, gold) set pairs, None missing, by the krippendorff package."""
    domain = sorted({v for p in pairs for v in p if v is not None}, key=sorted)
    data = np.array(
        [
            [np.nan if a is None else domain.index(a) for a, _ in pairs],
            [np.nan if b is None else domain.index(b) for _, b in pairs],
        ]
    )
    return krippendorff.alpha(
        reliability_data=data, value_domain=list(range(len(domain))), level_of_measurement=_masi_metric(domain)
    )


def test_round_scores_of_target_sets_with_masi_and_of_intensity_match_krippendorff(project, lead, tmp_path):
    world = _world(project, lead, tmp_path, rows=_varied_gold_rows())
    trainee, clip = world["trainee"], world["clip"]
    attempt = services.start_round(project, "couple", trainee, actor=lead)
    code_like_gold(clip, trainee, _other_targets_and_intensities)
    attempt = services.submit_round(attempt, trainee)

    mine = {
        r.row.row_index: r.content
        for r in Revision.objects.filter(row__clip=clip, annotator=trainee).select_related("row")
    }
    gold = {r.row_index: r.gold.content for r in clip.rows.select_related("gold")}
    speaker = {r.row_index: r.primary_speaker for r in clip.rows.all()}
    rows = sorted(gold)
    therapist = [i for i in rows if speaker[i] == "Therapist"]
    client = [i for i in rows if speaker[i] != "Therapist"]

    def row_target(doc):
        return frozenset(doc["target"]) if doc.get("target") else None

    def support_target(doc):
        strategies = doc.get("support_strategy") or []
        return frozenset(strategies[0]["target"]) if strategies and strategies[0].get("target") else None

    def intensity(doc, person):
        return next((e["intensity"] for e in doc.get("internal_emotion") or [] if e["person"] == person), None)

    for key, nominal_key, value, units in (
        ("target_masi", "target", row_target, rows),
        ("support_target_masi", "support_target", support_target, therapist),
    ):
        pairs = [(value(mine[i]), value(gold[i])) for i in units]
        differing = sum(a != b for a, b in pairs)
        assert differing and differing < len(pairs), f"{key}: the trainee differs from the gold on some rows only"
        figure = attempt.scores[key]
        assert figure["level"] == "masi"
        assert figure["alpha"] == pytest.approx(_set_alpha(pairs), abs=1e-4)
        assert figure["matching"] == {
            "rows": len(pairs),
            "same": len(pairs) - differing,
            "share": pytest.approx((len(pairs) - differing) / len(pairs), abs=1e-4),
        }
        assert figure["interval"][0] <= figure["alpha"] <= figure["interval"][1]
        # The same sets as labels (nominal) agree less: a partial overlap counts as a full disagreement there.
        assert attempt.scores[nominal_key]["alpha"] < figure["alpha"]

    pairs = [(intensity(mine[i], speaker[i]), intensity(gold[i], speaker[i])) for i in client]
    assert all(a is not None and b is not None for a, b in pairs)  # every client row has an intensity in both
    differing = sum(a != b for a, b in pairs)
    assert 0 < differing < len(pairs)
    expected = krippendorff.alpha(reliability_data=np.array(pairs, dtype=float).T, level_of_measurement="interval")
    figure = attempt.scores["emotion_intensity"]
    assert figure["level"] == "interval"
    assert figure["alpha"] == pytest.approx(expected, abs=1e-4)
    assert figure["matching"]["rows"] == len(client) and figure["matching"]["same"] == len(client) - differing
    assert figure["interval"][0] <= figure["alpha"] <= figure["interval"][1]

    # The feedback names each differing row of these fields, with the gold's value and the trainee's.
    listed = {(row["row_index"], f["field"]): f for row in attempt.feedback for f in row["fields"]}
    assert listed[(7, "target")] == {**listed[(7, "target")], "gold": "Tobias", "mine": "Therapist"}
    assert listed[(16, "support_target")]["gold"] == "Maya + Tobias"
    assert listed[(11, "emotion_intensity")]["mine"] == str(intensity(gold[11], "Maya") - 3)


def test_feedback_gives_gold_note_boundary_rule_and_guidance_for_the_pair(world):
    project, trainee, clip = world["project"], world["trainee"], world["clip"]
    attempt = services.start_round(project, "couple", trainee)
    code_like_gold(clip, trainee, _wrong_every_third)
    attempt = services.submit_round(attempt, trainee)
    wrong_pattern = [f for row in attempt.feedback for f in row["fields"] if f["field"] == "relation_pattern"]
    assert wrong_pattern, "a relation pattern differs from the gold"
    item = next(f for f in wrong_pattern if f["mine"] == "attack_attack")
    assert item["gold"] == "pursue_withdraw"
    assert item["rules"] and all(
        r["text"] for r in item["rules"]
    )  # the taxonomy's rule for attack_attack vs pursue_withdraw
    assert item["guidance"]["text"] == "Escalation on both sides is attack_attack."
    row = next(r for r in attempt.feedback if item in r["fields"])
    assert row["note"] == "Watch who is pressed and who retreats."
    # Client rows coded like the gold are not in the feedback (therapist rows: the workspace mirrors the factory
    # gold's two relation keys on save, so they may differ).
    client_rows = {r["row_index"] for r in attempt.feedback if r["speaker"] != "Therapist"}
    assert client_rows and client_rows <= {i for i in range(1, 25) if i % 3 == 0 or i % 5 == 0}


def test_training_work_never_enters_production_agreement(world):
    project, trainee, clip = world["project"], world["trainee"], world["clip"]
    attempt = services.start_round(project, "couple", trainee)
    code_like_gold(clip, trainee, _wrong_every_third)
    services.submit_round(attempt, trainee)
    ex = extract(scope_clips(project))
    assert "newbie" not in ex.coders
    assert ex.stats["revisions"] == 0 and ex.stats["revisions_left_out"]["not_submitted"] == 0


def test_unqualified_annotator_is_refused_with_the_rule_named(world):
    project, trainee, lead = world["project"], world["trainee"], world["lead"]
    with pytest.raises(
        ServiceError,
        match=(
            r"newbie has not passed the qualification for couple clips .*at least 0.80 on Utterance type and "
            r"Relation pattern"
        ),
    ):
        assign_clips(project, clips=project.clips.filter(pk=world["open"].pk), users=[trainee], per_clip=1)
    # From the whole team the annotator is left out, and the plan says why.
    other = create_user("veteran", "annotator", password="veteran-pass-123")[0]
    services.decide(project, "couple", other, "waived", "coded the pilot with us", actor=lead)
    plan = assign_clips(project, clips=project.clips.filter(pk=world["open"].pk), per_clip=1)
    assert [a.annotator.username for a in plan.created] == ["veteran"]
    assert any("newbie has not passed" in line for line in plan.refused)


def test_refused_in_the_api_the_cli_and_the_assign_page(world):
    project, trainee, lead = world["project"], world["trainee"], world["lead"]
    client = Client()
    client.force_login(lead)
    response = client.post(
        f"/api/v1/projects/{project.slug}/assignments/",
        {"annotators": ["newbie"], "clips": ["prod_group/001_open"], "per_clip": 1},
        content_type="application/json",
    )
    assert response.status_code == 422 and "has not passed the qualification" in response.json()["detail"]
    with pytest.raises(CommandError, match="has not passed the qualification for couple clips"):
        call_command(
            "assign",
            "--project",
            project.slug,
            "--annotators",
            "newbie",
            "--clips",
            "prod_group/001_open",
            "--per-clip",
            "1",
        )
    page = client.post(
        f"/projects/{project.slug}/assignments/",
        {"clips": ["prod_group/001_open"], "annotators": [trainee.pk], "per_clip": 1, "seed": 0},
    )
    assert page.status_code == 422 and "has not passed the qualification for couple clips" in page.content.decode()
    assert not Assignment.objects.filter(annotator=trainee).exists()


def test_pass_waiver_and_send_back(world):
    project, trainee, clip, lead = world["project"], world["trainee"], world["clip"], world["lead"]
    attempt = services.start_round(project, "couple", trainee)
    code_like_gold(clip, trainee)  # exactly the gold
    attempt = services.submit_round(attempt, trainee)
    assert attempt.passed is True
    assert selectors.status(project, "couple", trainee)["status"] == "passed"
    plan = assign_clips(project, clips=project.clips.filter(pk=world["open"].pk), users=[trainee], per_clip=1)
    assert len(plan.created) == 1
    services.decide(project, "couple", trainee, "sent_back", "reads the boundary rule differently", actor=lead)
    state = selectors.status(project, "couple", trainee)
    assert state == {**state, "status": "not passed", "qualified": False, "attempts_left": 2, "rounds": 1}
    # A second round starts from empty again; the first round's answers stay in its attempt.
    second = services.start_round(project, "couple", trainee, actor=lead)
    assert second.number == 2
    assert all(
        r.status == "untouched" and not r.content.get("utterance_type")
        for r in Revision.objects.filter(row__clip=clip, annotator=trainee)
    )
    assert QualificationAttempt.objects.get(pk=attempt.pk).answers
    services.decide(project, "couple", trainee, "waived", "senior clinician", actor=lead)
    assert selectors.status(project, "couple", trainee)["status"] == "waived"
    with pytest.raises(ServiceError, match="say why"):
        services.decide(project, "couple", trainee, "waived", "  ", actor=lead)
    # Every attempt, score and decision is in the audit trail with who did it.
    assert QualificationAttempt.history.filter(history_user=trainee).exists()
    from annotation.record.models import QualificationDecision

    assert QualificationDecision.history.filter(history_user=lead).count() == 2


def test_attempts_are_limited_by_the_rule(world):
    project, trainee, clip = world["project"], world["trainee"], world["clip"]
    for _ in range(2):
        attempt = services.start_round(project, "couple", trainee)
        code_like_gold(clip, trainee, _wrong_every_third)
        services.submit_round(attempt, trainee)
    with pytest.raises(ServiceError, match="has used the 2 rounds the rule allows"):
        services.start_round(project, "couple", trainee)


def test_no_rule_means_nobody_is_refused(project, tmp_path, annotator):
    path = tmp_path / "c.jsonl"
    path.write_text(json.dumps(couple_clip()) + "\n", encoding="utf-8")
    import_rescue(path, project, as_source="draft")
    plan = assign_clips(project, users=[annotator], per_clip=1)
    assert len(plan.created) == 1 and not plan.refused


def test_the_qualification_command(world, capsys):
    project = world["project"]
    call_command("qualification", project.slug, "--status")
    out = capsys.readouterr().out
    assert "couple: alpha against the gold of at least 0.80" in out and "newbie: not passed" in out
    call_command("qualification", project.slug, "--waive", "newbie", "--scenario", "couple", "--reason", "pilot coder")
    assert "newbie: waived" in capsys.readouterr().out
