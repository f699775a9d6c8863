"""A whole study, as a lab runs one, and what every page and file then says about how much of the gold is human.

Thirteen couples, one clip each. The study design reserves a fifth of the
clips to be coded from empty. Three annotators with the habits real teams
have: ``keeper`` confirms every draft row with the one-key pass in a second
and a half, ``editor`` edits from the draft, ``careful`` takes longer and
disagrees with both on some rows (so the coders split three ways). On one
more clip only ``editor`` works; the other two never open it. A lead
adjudicates with the suggestions, decides the split fields by hand (one
coder's value, an own value, and once the draft's with a reason) and freezes.

Every figure is checked against a computation written here: hand counts over
the documents, the ``krippendorff`` package, and the task metrics from the
release's own files.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import os
import re
from collections import Counter

import krippendorff
import numpy as np
import pytest
from django.test import Client
from django.utils import timezone

from annotation.adjudication import selectors as adjudication
from annotation.adjudication import services as gold_services
from annotation.adjudication.fields import FIELDS, comparable, field_value
from annotation.adjudication.gold_sources import WORDS
from annotation.agreement.report import compute_project_report
from annotation.assignment.services import assign_clips
from annotation.models import Assignment, AssignmentMode, ClipState, Draft, Gold, Revision
from annotation.releases.freeze import freeze
from annotation.releases.human_work import FAR_ABOVE
from annotation.rescue_format.importer import import_rescue
from annotation.services import create_project, create_user
from annotation.study.services import update_design
from annotation.workspace.services import save_revision, set_reviewed, submit_assignment

from .builders.card import section, table, wrong_plurals
from .builders.documents import client_row, couple_clip, therapist_row
from .builders.pages import parse_page

pytestmark = pytest.mark.django_db

COUPLES = 12
UTTERANCES = ["disclosure", "accusation", "request", "defense", "recollection", "withdrawal"]
PATTERNS = ["pursue_withdraw", "attack_attack", "withdraw_withdraw", "repair_softening"]
STRATEGIES = ["track", "reframe", "evoke", "join"]
KEEP_SECONDS, EDIT_SECONDS, CAREFUL_SECONDS, EMPTY_SECONDS = 1.5, 20.0, 40.0, 30.0


def study_clip(k: int, sample_id: str | None = None) -> dict:
    """Couple ``k``: six rows, people of its own (so that every couple is its own relationship group)."""
    a, b = f"Ana{k:02d}", f"Ben{k:02d}"
    utterance = UTTERANCES[k % len(UTTERANCES)]
    pattern, strategy = PATTERNS[k % len(PATTERNS)], STRATEGIES[k % len(STRATEGIES)]
    rows = [
        client_row(
            1,
            speaker=a,
            utterance_type=utterance,
            internal_emotion=[{"person": a, "emotion_description": "feels unseen", "intensity": 3 + k % 5}],
            body_posture=[],
        ),
        therapist_row(2, target=(a,), strategy=strategy, relation_cycle_state=pattern, body_posture=[]),
        client_row(
            3,
            speaker=b,
            target=(a,),
            utterance_type="defense",
            internal_emotion=[{"person": b, "emotion_description": "feels blamed", "intensity": 5}],
            body_posture=[],
            viewpoints_attitudes=[
                {"source": b, "target": a, "viewpoint": "she never lets it go", "attitude": "negative"}
            ],
        ),
        therapist_row(4, target=(a, b), strategy="reframe", relation_cycle_state=pattern, body_posture=[]),
        client_row(
            5,
            speaker=a,
            target=(b,),
            utterance_type="request",
            internal_emotion=[{"person": a, "emotion_description": "hopes he hears it", "intensity": 4}],
            body_posture=[],
        ),
        therapist_row(
            6,
            target=(b,),
            strategy="track",
            relation_cycle_state="",
            relation_cycle_reason="no one pattern leads here",
            body_posture=[],
        ),
    ]
    for row in rows:  # the factories' rows name Maya and Tobias
        row["target"] = [a if t == "Maya" else b if t == "Tobias" else t for t in row["target"]]
        for strategy_entry in row.get("support_strategy") or []:
            strategy_entry["target"] = list(row["target"])
    clip = couple_clip(sample_id or f"couple_{k:02d}/001_session", rows)
    clip["participants"] = [a, b]
    return clip


class Clock:
    """The coders' wall clock: every save happens at a time the script sets (the audit trail records it)."""

    def __init__(self):
        self.now = dt.datetime(2026, 11, 2, 9, 0, tzinfo=dt.UTC)

    def advance(self, seconds: float) -> None:
        self.now += dt.timedelta(seconds=seconds)

    def __call__(self):
        return self.now


def revisions_of(clip, user):
    return list(
        Revision.objects.filter(row__clip=clip, annotator=user).select_related("row").order_by("row__row_index")
    )


def code_from_draft(clip, user, clock, seconds, change) -> None:
    """Walk the rows in order; ``change(row_index, content)`` returns the edited content or None to keep the draft."""
    for revision in revisions_of(clip, user):
        clock.advance(seconds)
        edited = change(revision.row.row_index, dict(revision.content))
        if edited is None:
            set_reviewed(revision.pk, user, revision.version)
        else:
            save_revision(revision.pk, user, edited, revision.version, reviewed=True)
    submit_assignment(Assignment.objects.get(clip=clip, annotator=user), user)


def code_from_empty(clip, user, clock, truth: dict[int, dict], change) -> None:
    for revision in revisions_of(clip, user):
        clock.advance(EMPTY_SECONDS)
        content = {k: v for k, v in truth[revision.row.row_index].items() if k in revision.content}
        save_revision(
            revision.pk, user, change(revision.row.row_index, content) or content, revision.version, reviewed=True
        )
    submit_assignment(Assignment.objects.get(clip=clip, annotator=user), user)


def editor_change(k):
    def change(index, content):
        if index == 1 and k % 2 == 0:
            return {**content, "utterance_type": "request"}
        if index == 3:
            # A pattern marked where the draft left it unset: whether a pattern is at work is itself coded.
            return {
                **content,
                "relation_pattern": "pursue_withdraw",
                "relation_pattern_reason": "he pulls back as she presses",
                "relation_pattern_evidence_rows": [1, 3],
            }
        if index == 2 and k % 3 == 0:
            return {**content, "tone_of_voice": "steady, warm"}
        return None

    return change


def careful_change(k):
    def change(index, content):
        if index == 1 and k % 2 == 0:
            return {
                **content,
                "utterance_type": "defense",
            }  # draft, keeper: the clip's; editor: request; careful: defense
        if index == 2 and k % 3 == 0:
            return {**content, "tone_of_voice": "measured"}
        return None

    return change


@pytest.fixture
def study(tmp_path, monkeypatch, settings):
    if os.environ.get("CI", "").lower() == "true":
        assert settings.DATABASES["default"]["ENGINE"].endswith("postgresql"), "the study runs on PostgreSQL in CI"
    clock = Clock()
    monkeypatch.setattr(timezone, "now", clock)
    project = create_project("study", name="Study")
    lead = create_user("lead1", "lead", password="lead-pass-123")[0]
    keeper, editor, careful = (
        create_user(name, "annotator", password=f"pw-{name}-123456")[0] for name in ("keeper", "editor", "careful")
    )
    docs = [study_clip(k) for k in range(COUPLES)]
    path = tmp_path / "drafts.jsonl"
    path.write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    import_rescue(path, project, as_source="draft")
    plan = assign_clips(project, users=[keeper, editor, careful], seed=3, actor=lead)
    lonely_doc = study_clip(COUPLES, "couple_12/001_session")
    lonely_path = tmp_path / "lonely.jsonl"
    lonely_path.write_text(json.dumps(lonely_doc) + "\n", encoding="utf-8")
    import_rescue(lonely_path, project, as_source="draft")
    lonely = project.clips.get(sample_id="couple_12/001_session")
    assign_clips(
        project, clips=project.clips.filter(pk=lonely.pk), users=[keeper, editor, careful], calibration=0, actor=lead
    )

    clips = {c.sample_id: c for c in project.clips.all()}
    for k, doc in enumerate(docs):
        clip = clips[doc["sample_id"]]
        truth = {r["row_index"]: {key: value for key, value in r.items()} for r in doc["rows"]}
        empty = Assignment.objects.filter(clip=clip, mode=AssignmentMode.FROM_EMPTY).exists()
        for user, seconds, change in (
            (keeper, KEEP_SECONDS, lambda i, c: None),
            (editor, EDIT_SECONDS, editor_change(k)),
            (careful, CAREFUL_SECONDS, careful_change(k)),
        ):
            clock.advance(3600)  # each coder's sitting starts after a break
            if empty:
                code_from_empty(clip, user, clock, truth, change)
            else:
                code_from_draft(clip, user, clock, seconds, change)
    clock.advance(3600)
    code_from_draft(lonely, editor, clock, EDIT_SECONDS, editor_change(COUPLES))
    return {
        "project": project,
        "lead": lead,
        "coders": (keeper, editor, careful),
        "plan": plan,
        "lonely": lonely,
        "clock": clock,
        "docs": docs,
        "tmp": tmp_path,
    }


# --- independent computations --------------------------------------------------------------------


def coded_contents(clip) -> dict[int, dict[str, dict]]:
    """Per row id, the documents of the coders whose assignment is submitted (the default rule, by hand)."""
    submitted = set(Assignment.objects.filter(clip=clip, state="submitted").values_list("annotator_id", flat=True))
    out: dict[int, dict[str, dict]] = {}
    for r in Revision.objects.filter(row__clip=clip).select_related("annotator"):
        if r.annotator_id in submitted:
            out.setdefault(r.row_id, {})[r.annotator.username] = r.content
    return out


def hand_gold_sources(project) -> Counter:
    counts = Counter()
    for gold in Gold.objects.filter(row__clip__project=project).select_related("row__clip"):
        coders = list(coded_contents(gold.row.clip).get(gold.row_id, {}).values())
        draft = Draft.objects.get(row=gold.row).content
        for name in FIELDS:
            g = json.dumps(comparable(name, field_value(gold.content, name)), sort_keys=True)
            values = [json.dumps(comparable(name, field_value(c, name)), sort_keys=True) for c in coders]
            d = json.dumps(comparable(name, field_value(draft, name)), sort_keys=True)
            same = values.count(g)
            if not values:
                counts["no_coded_work"] += 1
            elif same == len(values):
                counts["every_coder" if len(values) > 1 else "only_coder"] += 1
            elif 2 * same > len(values):
                counts["majority"] += 1
            elif same:
                counts["lead_chose"] += 1
            else:
                counts["lead_wrote"] += 1
            if g == d:
                counts["equal_draft"] += 1
                counts["equal_draft_coder_changed"] += any(v != d for v in values)
                counts["equal_draft_no_coder"] += bool(values) and not same
    return counts


def utterance_matrix(project, mode: str, against_draft: bool = False) -> np.ndarray:
    """Client rows' utterance types of the coded work of ``mode`` assignments, as the package takes them (by hand)."""
    labels = {u: i for i, u in enumerate(sorted({*UTTERANCES, "defense", "request"}))}
    columns = []
    for clip in project.clips.order_by("sample_id"):
        assignments = Assignment.objects.filter(clip=clip, state="submitted", mode=mode)
        coders = sorted(a.annotator.username for a in assignments)
        if not coders:
            continue
        contents = coded_contents(clip)
        for row in clip.rows.order_by("row_index"):
            if row.primary_speaker == "Therapist":
                continue
            by = {name: labels[c["utterance_type"]] for name, c in contents.get(row.pk, {}).items() if name in coders}
            if against_draft:
                draft = labels[Draft.objects.get(row=row).content["utterance_type"]]
                columns += [[v, draft] for v in by.values()]
            else:
                columns.append([by.get(name, np.nan) for name in ("careful", "editor", "keeper")])
    return np.asarray(columns, dtype=float).T


# --- what the agreement page shows, read by its element ids and classes -------------------------------


def page_counts(page) -> dict[str, int]:
    """The counters at the top of the agreement page."""
    ids = ("coded-clips", "clips", "coded-rows", "rows", "annotators", "revisions", "anchored", "calibration")
    return {name.replace("-", "_"): int(page.by_id(f"count-{name}").text().replace(",", "")) for name in ids}


def figure_shown(text: str) -> float | None:
    return None if text == "–" else float(text)


def assert_figure(shown: float | None, expected: float | None, where) -> None:
    if expected is None:
        assert shown is None, where
    else:
        assert shown == pytest.approx(expected, abs=5e-4), where


def effect_shown(text: str) -> tuple[float | None, list[float] | None]:
    """(difference, [low, high] or None) from a cell such as ``0.123 [0.010, 0.240]`` or ``– no interval``."""
    difference, _, interval = text.partition(" ")
    numbers = re.fullmatch(r"\[(-?[\d.]+), (-?[\d.]+)\]", interval)
    return figure_shown(difference), [float(numbers[1]), float(numbers[2])] if numbers else None


def share_and_count(cell) -> tuple[float | None, int]:
    share = cell.find(class_="share").text()
    return (None if share == "–" else float(share.rstrip("%")) / 100), int(cell.find(class_="count").text())


def page_draft_pull(page) -> dict:
    """The draft-pull section of the agreement page: the anchoring table per measure, the confirming table per
    coder (and the team)."""
    section = page.by_id("draft-pull")
    measures = {}
    for row in section.by_id("anchoring-effect").find_all("tr"):
        if "data-measure" not in row.attrs:
            continue
        shown = {}
        for kind, prefix in (("human_draft", "human-draft"), ("human_human", "human-human")):
            difference, ci95 = effect_shown(row.cell(f"{prefix}-effect"))
            shown[kind] = {
                "anchored": figure_shown(row.cell(f"{prefix}-anchored")),
                "from_empty": figure_shown(row.cell(f"{prefix}-from-empty")),
                "difference": difference,
                "ci95": ci95,
            }
        measures[row.attrs["data-measure"]] = shown
    confirming = {}
    for row in section.by_id("confirming").find_all("tr"):
        if "data-coder" not in row.attrs:
            continue
        unchanged_share, unchanged_rows = share_and_count(row.find(class_="unchanged"))
        quick = row.find(class_="quick")
        quick_share, quick_rows = share_and_count(quick)
        median = row.cell("median-seconds")
        confirming[row.attrs["data-coder"]] = {
            "rows": int(row.cell("rows")),
            "unchanged_share": unchanged_share,
            "unchanged_rows": unchanged_rows,
            "median_seconds": None if median == "–" else float(median),
            "quick_share": quick_share,
            "quick_rows": quick_rows,
            "timed_unchanged_rows": int(quick.find(class_="timed").text()),
        }
    return {"measures": measures, "confirming": confirming}


# The tasks whose drafting-model score is checked against ``direct_score``: the prediction file's field and the
# task's headline metric (ITP: the draft gives no answer to it).
DRAFT_SCORED = {
    "rpp": ("relation_top3", "accuracy"),
    "ssp": ("strategy_top3", "mrr"),
    "stp": ("target_top3", "mrr"),
    "er": ("predicted_intensity_score", "intensity_match"),
    "vp": ("predicted_viewpoints", "pair_recovery"),
}


def direct_score(task: str, gold: list[dict], predictions: dict) -> float:
    """The headline score of ``predictions`` on the instances ``gold``, computed from the files by hand (docs/tasks.md);
    an instance without a prediction scores as wrong."""
    if task == "er":  # intensity match: max(1, 5 - |prediction - gold|), the prediction rounded
        return sum(
            max(1.0, 5.0 - abs(round(predictions[g["id"]]) - g["gold"]["intensity"])) if g["id"] in predictions else 1.0
            for g in gold
        ) / len(gold)
    if task == "vp":  # pair recovery: the gold viewpoints whose (source, target) the prediction names, of all
        found = 0
        for g in gold:
            named = {(p["source"], p["target"]) for p in predictions.get(g["id"], [])}
            found += sum((v["source"], v["target"]) in named for v in g["gold"])
        return found / sum(len(g["gold"]) for g in gold)
    # One answer per instance: accuracy = Recall@1 = MRR.
    return sum(predictions.get(g["id"], [None])[0] == g["gold"] for g in gold) / len(gold)


# --- the study ---------------------------------------------------------------------------------------


def test_a_study_from_assignment_to_release_counts_only_human_work_and_publishes_the_drafts_pull(study):
    project, lead, lonely = study["project"], study["lead"], study["lonely"]
    keeper, editor, careful = study["coders"]
    rows_per_clip = 6

    # The design reserved round(20% of 12) = 2 clips, every coder of each from empty, and recorded why.
    reserved = sorted({a.clip.sample_id for a in study["plan"].created if a.mode == AssignmentMode.FROM_EMPTY})
    assert len(reserved) == 2 and study["plan"].from_empty == 6
    assert all(a.design == {"by": "design", "share": 0.2, "seed": 3} for a in study["plan"].created)

    # --- before adjudication: the clip only one coder worked on ---------------------------------
    payload = adjudication.adjudication_payload(lonely)
    assert payload["readiness"]["ready"] is False and payload["clip"]["editable"] is False
    assert "1 of 3 required coders submitted" in payload["readiness"]["reason"]
    assert [c["username"] for c in payload["coders"] if c["coded"]] == ["editor"]
    assert (
        payload["summary"]["coded_revisions"] == rows_per_clip
        and payload["summary"]["uncoded_revisions"] == 2 * rows_per_clip
    )
    assert all(set(r["uncoded"]) == {"careful", "keeper"} and set(r["coders"]) == {"editor"} for r in payload["rows"])
    progress = adjudication.project_progress(project)
    lonely_progress = next(c for c in progress["per_clip"] if c["id"] == lonely.pk)
    assert (
        lonely_progress["coders"],
        lonely_progress["disputed_rows"],
        lonely_progress["undecided_fields"],
        lonely_progress["ready"],
    ) == (1, 0, 0, False)
    with pytest.raises(gold_services.ServiceError, match="cannot be adjudicated yet"):
        gold_services.accept_unanimous(lonely, lead)

    # The agreement report, its API and page, and the adjudication page count the same work.
    report = compute_project_report(project)
    counted = report["counts"]["revisions"]
    pages = sum(adjudication.adjudication_payload(c)["summary"]["coded_revisions"] for c in project.clips.all())
    assert counted == pages == 12 * 3 * rows_per_clip + rows_per_clip
    assert report["counts"]["revisions_left_out"]["not_submitted"] == 2 * rows_per_clip
    client = Client()
    client.force_login(lead)
    api = client.get(f"/api/v1/projects/{project.slug}/agreement/").json()
    assert api["report"]["counts"]["revisions"] == counted
    # The page shows the report the API stored, and says so: the same counts, the same draft-pull figures.
    page = parse_page(client.get(f"/projects/{project.slug}/agreement/").content.decode())
    assert page.by_id("agreement-freshness").find(class_="fresh") is not None
    assert page_counts(page) == {
        "coded_clips": 13,
        "clips": 13,
        "coded_rows": 13 * rows_per_clip,
        "rows": 13 * rows_per_clip,
        "annotators": 3,
        "revisions": counted,
        "anchored": Assignment.objects.filter(clip__project=project, mode=AssignmentMode.FROM_DRAFT).count(),
        "calibration": study["plan"].from_empty,
    }
    counts = api["report"]["counts"]
    assert page_counts(page) == {
        **{k: counts[k] for k in ("coded_clips", "clips", "coded_rows", "rows", "annotators", "revisions")},
        **{k: counts["assignments"][k] for k in ("anchored", "calibration")},
    }
    assert page.find(id="count-imported") is None, "no imported assignment: the counter says nothing of them"
    page_pull = page_draft_pull(page)
    api_pull = api["report"]["draft_pull"]
    assert page.find(id="anchoring-unmeasured") is None and api_pull["anchoring"]["measurable"]
    assert set(page_pull["measures"]) == set(api_pull["anchoring"]["measures"])
    for key, shown in page_pull["measures"].items():
        entry = api_pull["anchoring"]["measures"][key]
        for kind in ("human_draft", "human_human"):
            for condition in ("anchored", "from_empty"):
                assert_figure(shown[kind][condition], entry[condition][kind]["alpha"], (key, kind, condition))
            assert_figure(shown[kind]["difference"], entry[kind]["difference"], (key, kind))
            ci = entry[kind]["ci95"]
            if ci and ci[0] is not None:
                assert shown[kind]["ci95"] == pytest.approx(ci, abs=5e-4), (key, kind)
            else:
                assert shown[kind]["ci95"] is None, (key, kind)
    confirming_api = api_pull["confirming"]
    assert (
        set(page_pull["confirming"]) == {*confirming_api["coders"], "team"} == {"keeper", "editor", "careful", "team"}
    )
    for name, shown in page_pull["confirming"].items():
        expected = confirming_api["team"] if name == "team" else confirming_api["coders"][name]
        assert shown["rows"] == expected["rows"] and shown["unchanged_rows"] == expected["unchanged_rows"], name
        assert shown["unchanged_share"] == pytest.approx(expected["unchanged_share"], abs=5e-4), name
        assert shown["median_seconds"] == expected["median_seconds"], name
        assert (shown["quick_rows"], shown["timed_unchanged_rows"]) == (
            expected["quick_rows"],
            expected["timed_unchanged_rows"],
        ), name
        assert shown["quick_share"] == pytest.approx(expected["quick_share"], abs=5e-4), name
    # keeper kept every anchored row (10 clips, and the lonely clip's rows do not count: never submitted), at once.
    assert page_pull["confirming"]["keeper"]["unchanged_share"] == 1.0
    assert page_pull["confirming"]["keeper"]["median_seconds"] == KEEP_SECONDS
    lonely_report = compute_project_report(project, clips=[lonely.sample_id])
    assert lonely_report["slices"][0]["revisions"] == payload["summary"]["coded_revisions"]
    assert lonely_report["slices"][0]["left_out"]["not_submitted"] == payload["summary"]["uncoded_revisions"]

    # --- adjudication ------------------------------------------------------------------------------
    update_design(project, lead, adjudication_min_coders=1, reason="the lonely clip's second coders left the study")
    project.refresh_from_db()
    lonely.refresh_from_db()
    assert adjudication.readiness(lonely).ready
    for clip in project.clips.order_by("sample_id"):
        for state in adjudication.row_states(clip):
            for suggestion in state.suggestions().values():
                assert suggestion.source in state.revisions and set(suggestion.agree) <= set(state.revisions), (
                    "only coded work suggests"
                )
                assert suggestion.kind in ("unanimous", "majority", "single")
            for name, dispute in state.disputes.items():
                if not (set(state.revisions) - set(dispute.outliers)):
                    assert name not in state.suggestions(), (
                        "coders split: no suggestion, the draft never breaks the tie"
                    )
        gold_services.accept_unanimous(clip, lead)
    split_rows = []
    for clip in project.clips.order_by("sample_id"):
        for state in adjudication.row_states(clip):
            version = state.gold.version if state.gold else 0
            if state.undecided and state.suggestions():
                version = gold_services.accept_suggestion(state.row.pk, lead, version).version
            state = adjudication.row_state(state.row)
            for name in state.undecided:
                split_rows.append((clip, state.row, name, version))
    assert split_rows, "the coders split three ways somewhere"
    three_way = [s for s in split_rows if s[2] == "utterance_type"]
    assert len(three_way) >= 3
    utterance_splits = 0
    for _clip, row, name, version in split_rows:
        if name == "utterance_type" and utterance_splits == 0:  # the draft's value, which keeper kept: with a reason
            with pytest.raises(gold_services.ServiceError, match="needs a reason"):
                gold_services.decide(row.pk, lead, name, "draft", version)
            gold_services.decide(row.pk, lead, name, "draft", version, note="the words disclose before they ask")
        elif name == "utterance_type" and utterance_splits == 1:  # a value of the lead's own
            content = {**adjudication.row_state(row).gold.content, "utterance_type": "validation"}
            gold_services.save_gold(row.pk, lead, content, version)
        else:
            gold_services.decide(row.pk, lead, name, "careful", version)
        utterance_splits += name == "utterance_type"
    # On the clip only editor coded, the lead restores the draft's utterance type against the only coder.
    first = adjudication.row_state(lonely.rows.get(row_index=1))
    assert first.gold.content["utterance_type"] == "request" != first.draft.content["utterance_type"]
    gold_services.decide(
        first.row.pk, lead, "utterance_type", "draft", first.gold.version, note="she discloses; no request is made"
    )
    for clip in project.clips.all():
        gold_services.mark_adjudicated(clip, lead)
    release, built = freeze(project, version="1.0.0", seed=0, out_dir=study["tmp"] / "release", user=lead)
    files = built.files
    stats = json.loads(files["stats.json"])
    agreement = json.loads(files["agreement.json"])["report"]

    # --- gold provenance, against a hand count ------------------------------------------------------
    sources = stats["provenance"]["gold_sources"]
    hand = hand_gold_sources(project)
    total = 13 * rows_per_clip * len(FIELDS)
    assert sources["overall"]["values"] == total
    for key, n in sources["overall"]["counts"].items():
        assert n == hand[key], key
        assert sources["overall"]["shares"][key] == round(n / total, 6)
    assert (
        sum(
            sources["overall"]["counts"][k]
            for k in ("every_coder", "only_coder", "majority", "lead_chose", "lead_wrote", "no_coded_work")
        )
        == total
    )
    assert (
        hand["equal_draft_no_coder"] >= 1
        and hand["lead_wrote"] >= 2
        and hand["lead_chose"] >= 1
        and hand["only_coder"] == rows_per_clip * len(FIELDS) - 1
    )

    # --- the anchoring effect, against the krippendorff package -----------------------------------
    pull = agreement["draft_pull"]["anchoring"]
    assert pull["measurable"] is True and pull["groups"] == 13
    utterance = pull["measures"]["utterance_type"]
    for mode, key in ((AssignmentMode.FROM_DRAFT, "anchored"), (AssignmentMode.FROM_EMPTY, "from_empty")):
        hh = krippendorff.alpha(reliability_data=utterance_matrix(project, mode), level_of_measurement="nominal")
        hd = krippendorff.alpha(
            reliability_data=utterance_matrix(project, mode, against_draft=True), level_of_measurement="nominal"
        )
        assert utterance[key]["human_human"]["alpha"] == pytest.approx(hh, abs=1e-6)
        assert utterance[key]["human_draft"]["alpha"] == pytest.approx(hd, abs=1e-6)
        # The agreement page, fetched before adjudication, showed the same coded work's figures.
        assert page_pull["measures"]["utterance_type"]["human_human"][key] == pytest.approx(hh, abs=5e-4)
        assert page_pull["measures"]["utterance_type"]["human_draft"][key] == pytest.approx(hd, abs=5e-4)
    slices = {s["key"]: s for s in agreement["slices"]}
    assert utterance["anchored"]["human_human"]["alpha"] == pytest.approx(
        slices["anchored/all"]["measures"]["utterance_type"]["humans"]["alpha"], abs=1e-6
    )
    effect = utterance["human_draft"]
    assert effect["difference"] == pytest.approx(
        utterance["anchored"]["human_draft"]["alpha"] - utterance["from_empty"]["human_draft"]["alpha"], abs=1e-6
    )
    assert effect["ci95"][0] <= effect["difference"] <= effect["ci95"][1]

    # Relation-pattern presence: a coder who left the pattern unset said "not marked", which the label alpha drops.
    assert "relation_pattern_presence" in slices["all/all"]["measures"]
    presence = slices["all/all"]["measures"]["relation_pattern_presence"]["humans"]
    assert presence["units"] == 12 * rows_per_clip, "every row with two coded coders is a unit, marked or not"
    assert presence["alpha"] is not None

    # --- how each coder confirmed the draft, against the scripted habits ------------------------------
    confirming = agreement["draft_pull"]["confirming"]
    anchored_rows = 10 * rows_per_clip
    keep = confirming["coders"]["keeper"]
    assert (keep["rows"], keep["unchanged_rows"], keep["unchanged_share"]) == (anchored_rows, anchored_rows, 1.0)
    assert keep["median_seconds"] == KEEP_SECONDS and keep["quick_share"] == 1.0
    edit = confirming["coders"]["editor"]
    editor_anchored = Revision.objects.filter(
        annotator=editor,
        row__clip__assignments__annotator=editor,
        row__clip__assignments__mode=AssignmentMode.FROM_DRAFT,
    )
    kept = sum(1 for r in editor_anchored.select_related("row__draft") if r.content == r.row.draft.content)
    assert (
        edit["rows"] == anchored_rows + rows_per_clip == editor_anchored.count()
        and edit["unchanged_rows"] == kept < edit["rows"]
    )
    assert edit["median_seconds"] == EDIT_SECONDS and edit["quick_rows"] == 0
    team = confirming["team"]
    assert team["rows"] == sum(c["rows"] for c in confirming["coders"].values())

    # --- the drafting model as a baseline, against the task metrics computed from the files --------------
    system = stats["drafting_model"]
    assert system["system"]["rows_drafted"] == 13 * rows_per_clip and system["tasks"]["itp"]["applicable"] is False
    for task, (field, metric) in DRAFT_SCORED.items():
        assert system["tasks"][task]["headline_metric"] == metric, task
        predictions = {
            json.loads(line)["id"]: json.loads(line)[field]
            for line in files[f"predictions/drafting_model/{task}.jsonl"].decode().splitlines()
        }
        for split in ("train", "validation", "test"):
            gold = [json.loads(line) for line in files[f"tasks/{task}/{split}.jsonl"].decode().splitlines()]
            if not gold:
                continue
            assert system["tasks"][task]["splits"][split]["all"]["scores"][metric] == pytest.approx(
                direct_score(task, gold, predictions), abs=1e-4
            ), (task, split)
    # Every draft answer is what the draft's own row says (an RPP instance: the draft's relation_cycle_state).
    rpp = {
        json.loads(line)["id"]: json.loads(line)["relation_top3"]
        for line in files["predictions/drafting_model/rpp.jsonl"].decode().splitlines()
    }
    for inst_id, answer in rpp.items():
        _, sample_id, index = inst_id.split(":")
        draft = Draft.objects.get(row__clip__sample_id=sample_id, row__row_index=int(index)).content
        assert answer == [draft["relation_cycle_state"]]

    # --- what the card says, read back and recomputed ----------------------------------------------------
    card = files["README.md"].decode("utf-8")
    assert wrong_plurals(card) == [] and "in view" not in card
    stated = {line["the gold value"]: line for line in table(section(card, "### Where the gold's values came from"))}
    for key, words in WORDS.items():
        assert int(stated[words]["values"]) == hand[key], key
        assert stated[words]["share"] == f"{100 * hand[key] / total:.1f}%", key
    anchoring = {
        line["measure"]: line for line in table(section(card, "### The draft's pull: anchored against from-empty work"))
    }
    line = anchoring["Utterance type"]
    hh_anchored = krippendorff.alpha(
        reliability_data=utterance_matrix(project, AssignmentMode.FROM_DRAFT), level_of_measurement="nominal"
    )
    hh_empty = krippendorff.alpha(
        reliability_data=utterance_matrix(project, AssignmentMode.FROM_EMPTY), level_of_measurement="nominal"
    )
    assert float(line["human–human anchored"]) == pytest.approx(hh_anchored, abs=5e-4)
    assert float(line["human–human from empty"]) == pytest.approx(hh_empty, abs=5e-4)
    hh = utterance["human_human"]  # the report's effect (its own unit rule), as the card words it
    assert line["human–human difference [95%]"] == f"{hh['difference']:.3f} [{hh['ci95'][0]:.3f}, {hh['ci95'][1]:.3f}]"
    assert hh["difference"] == pytest.approx(hh_anchored - hh_empty, abs=1e-6)
    assert (
        line["human–draft difference [95%]"]
        == f"{effect['difference']:.3f} [{effect['ci95'][0]:.3f}, {effect['ci95'][1]:.3f}]"
    )
    assert line["human–draft anchored"] == f"{utterance['anchored']['human_draft']['alpha']:.3f}"
    assert f"over {pull['groups']} relationship groups" in card
    # The coded revisions the card states are the ones the adjudication page and the agreement API count.
    coded = re.search(r"The report compares ([\d,]+) coded revisions? on ([\d,]+) rows? of ([\d,]+) clips?", card)
    release_clips = project.clips.filter(sample_id__in=built.clip_ids)
    pages = sum(adjudication.adjudication_payload(c)["summary"]["coded_revisions"] for c in release_clips)
    api_report = compute_project_report(project, clips=list(built.clip_ids))
    assert int(coded.group(1).replace(",", "")) == pages == api_report["slices"][0]["revisions"]
    # The drafting model per task, with the caveat exactly where its score is far above the strongest rule.
    drafting = {line["task"]: line for line in table(section(card, "### The drafting model as a baseline"))}
    for task, (field, metric) in DRAFT_SCORED.items():
        predictions = {
            json.loads(line)["id"]: json.loads(line)[field]
            for line in files[f"predictions/drafting_model/{task}.jsonl"].decode().splitlines()
        }
        gold_lines = [json.loads(line) for line in files[f"tasks/{task}/test.jsonl"].decode().splitlines()]
        assert gold_lines, f"the study's test split has {task} instances"
        score = direct_score(task, gold_lines, predictions)
        assert drafting[task]["metric"] == metric, task
        assert float(drafting[task]["drafting model"]) == pytest.approx(score, abs=5e-4), task
        rule = stats["baselines"][task]["splits"]["test"]["all"]
        best = rule["scores"][rule["best_rule"]][metric]
        assert drafting[task]["strongest trivial rule"] == f"{rule['best_rule']} {best:.3f}", task
        # "Far above" is on the metric's range: intensity match runs from 1 to 5, the others from 0 to 1.
        span = 4 if metric == "intensity_match" else 1
        assert drafting[task]["difference"].endswith("· far above") == ((score - best) / span >= FAR_ABOVE), task
    assert ("A model of the drafting model's family may be favoured" in card) == any(
        row["difference"].endswith("far above") for row in drafting.values()
    )
    # How the starting points were chosen, as the assignments record it (nothing said when nothing is recorded).
    by_design = [
        a
        for a in Assignment.objects.filter(clip__sample_id__in=built.clip_ids, clip__project=project)
        if a.design.get("by") == "design"
    ]
    empty = sum(a.mode == AssignmentMode.FROM_EMPTY for a in by_design)
    assert (
        by_design
        and (
            f"{len(by_design)} assignments by the study design (a seeded random share of 20% from empty, seed 3), "
            f"{empty} of them from empty"
        )
        in card
    )
    # The relation-pattern presence measure stands beside the label's alpha, with the report's figure.
    assert f"the presence measure ({presence['alpha']:.3f}, {presence['units']} units)" in card

    # --- what the release page says ---------------------------------------------------------------------
    page = client.get(f"/projects/{project.slug}/releases/1.0.0/").content.decode()
    assert "How much of the gold is human" in page
    every_share = sources["overall"]["shares"]["every_coder"]
    assert f"{every_share:.1%}" in page
    assert not math.isnan(every_share)
    assert release.version == "1.0.0" and ClipState.RELEASED in set(project.clips.values_list("state", flat=True))
