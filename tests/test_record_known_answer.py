"""Known-answer checks: a seeded share of an annotator's assignments are gold clips that look like any
other; their results enter the annotator's record only, never production agreement, adjudication or a release."""

from __future__ import annotations

import html
import json
import re
from decimal import Decimal

import krippendorff
import numpy as np
import pytest
from django.test import Client

from annotation.adjudication.selectors import coders_of, row_states
from annotation.agreement.extract import extract, scope_clips
from annotation.agreement.report import compute_project_report
from annotation.assignment.services import assign_clips
from annotation.models import Assignment, AssignmentPurpose, Revision
from annotation.record import selectors, services
from annotation.record.scoring import SCORED
from annotation.releases.freeze import freeze
from annotation.releases.services import release_dir
from annotation.rescue_format.importer import import_rescue
from annotation.services import create_user
from annotation.workspace.selectors import my_assignments
from annotation.workspace.services import submit_assignment

from .builders.documents import couple_clip
from .builders.record import UTTERANCES, code_like_gold, import_gold_clip

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(project, tmp_path):
    coders = [create_user(name, "annotator", password=f"{name}-pass-123")[0] for name in ("kim", "lee")]
    golds = [import_gold_clip(project, tmp_path, f"gold_group_{i}/001_gold") for i in range(3)]
    for i in range(4):
        path = tmp_path / f"p{i}.jsonl"
        path.write_text(json.dumps(couple_clip(f"prod_group_{i}/001_open")) + "\n", encoding="utf-8")
        import_rescue(path, project, as_source="draft")
    return {"project": project, "coders": coders, "golds": golds}


def test_off_by_default(world):
    project = world["project"]
    assert project.known_answer_share == Decimal("0")
    plan = assign_clips(project, clips=project.clips.filter(sample_id__startswith="prod_"), per_clip=2)
    assert not plan.known_answer
    assert not Assignment.every.filter(purpose=AssignmentPurpose.KNOWN_ANSWER).exists()


def test_a_seeded_share_looks_like_any_other_assignment(world):
    project, (kim, _lee) = world["project"], world["coders"]
    services.set_known_answer_share(project, 0.25)
    plan = assign_clips(project, clips=project.clips.filter(sample_id__startswith="prod_"), per_clip=2, seed=3)
    assert len(plan.created) == 8 and len(plan.known_answer) == 2  # 25% of each coder's 4 assignments
    for check in plan.known_answer:
        assert check.clip.sample_id.startswith("gold_group_") and check.mode == "from_draft"
    # In the coder's queue a check is one more clip; nothing says which.
    queue = list(my_assignments(kim))
    assert len(queue) == 5 and {a.clip.sample_id for a in queue} >= {
        a.clip.sample_id for a in plan.known_answer if a.annotator == kim
    }
    # The same seed draws the same clips.
    again = sorted((a.annotator.username, a.clip.sample_id) for a in plan.known_answer)
    Assignment.every.filter(purpose=AssignmentPurpose.KNOWN_ANSWER).delete()
    Assignment.objects.all().delete()
    Revision.objects.all().delete()
    plan = assign_clips(project, clips=project.clips.filter(sample_id__startswith="prod_"), per_clip=2, seed=3)
    assert sorted((a.annotator.username, a.clip.sample_id) for a in plan.known_answer) == again


def test_results_enter_the_record_only(world, tmp_path):
    project, (kim, lee) = world["project"], world["coders"]
    services.set_known_answer_share(project, 0.25)
    golds = project.clips.filter(sample_id__startswith="gold_")
    plan = assign_clips(project, clips=project.clips.filter(sample_id__startswith="prod_"), per_clip=2, seed=3)
    for a in plan.created:  # production work, submitted
        Revision.objects.filter(row__clip=a.clip, annotator=a.annotator).update(status="reviewed")
        submit_assignment(a, a.annotator)
    before = compute_project_report(project, resamples=1000, seed=0)
    before_ex = extract(scope_clips(project))
    assert before_ex.coders[:2] == ["kim", "lee"] and before_ex.stats["revisions"] > 0
    for check in plan.known_answer:

        def wrong(index, doc):
            if doc.get("utterance_type"):
                doc["utterance_type"] = UTTERANCES[(UTTERANCES.index(doc["utterance_type"]) + 1) % len(UTTERANCES)]
            return doc

        code_like_gold(check.clip, check.annotator, wrong)
        submit_assignment(check, check.annotator)
    # The record has them.
    record = selectors.coder_record(project, kim)
    assert record["known_answer"]["submitted"] == 1 and record["known_answer"]["rows"] > 0
    ut = next(s for s in record["known_answer"]["scores"] if s["key"] == "utterance_type")
    assert ut["matching"]["same"] == 0
    # Production agreement is unchanged: same coders, same counted revisions, same figures.
    after_ex = extract(scope_clips(project))
    assert after_ex.coders == before_ex.coders and after_ex.stats == before_ex.stats
    after = compute_project_report(project, resamples=1000, seed=0)
    assert json.dumps(after["slices"], sort_keys=True) == json.dumps(before["slices"], sort_keys=True)
    # Adjudication of a gold clip sees no coder.
    clip = plan.known_answer[0].clip
    assert coders_of(clip) == []
    assert all(not s.revisions for s in row_states(clip))
    # The release: no trace of the checks' work.
    freeze(project, version="1.0.0", seed=1, out_dir=release_dir(project, "1.0.0"), accept_incomplete=["couple"])
    folder = release_dir(project, "1.0.0")
    text = "".join(
        p.read_text(encoding="utf-8", errors="replace")
        for p in folder.rglob("*")
        if p.is_file() and p.suffix in (".json", ".jsonl", ".md", ".csv")
    )
    assert "kim" not in text and "lee" not in text
    stats = json.loads((folder / "stats.json").read_text())
    assert stats["coders"]["count"] == 0 and stats["coders"]["per_coder"] == []
    agreement = json.loads((folder / "agreement.json").read_text())
    assert "kim" not in json.dumps(agreement)
    assert Revision.objects.filter(
        row__clip__in=golds, annotator__in=[kim, lee]
    ).exists()  # the work is kept, for the record


def test_the_coder_page_shows_the_checks_label_scores_against_a_hand_count(world):
    project, (kim, _lee) = world["project"], world["coders"]
    services.set_known_answer_share(project, 0.25)
    plan = assign_clips(project, clips=project.clips.filter(sample_id__startswith="prod_"), per_clip=2, seed=3)
    (check,) = [a for a in plan.known_answer if a.annotator == kim]

    def every_third_wrong(index, doc):
        if index % 3 == 0 and doc.get("utterance_type"):
            doc["utterance_type"] = UTTERANCES[(UTTERANCES.index(doc["utterance_type"]) + 1) % len(UTTERANCES)]
        return doc

    code_like_gold(check.clip, kim, every_third_wrong)
    submit_assignment(check, kim)

    # By hand, from the stored documents: utterance type on client rows, the coder and the gold as two coders.
    mine = {
        r.row.row_index: r.content
        for r in Revision.objects.filter(row__clip=check.clip, annotator=kim).select_related("row")
    }
    rows = check.clip.rows.select_related("gold").order_by("row_index")
    client_rows = [
        (mine[r.row_index]["utterance_type"], r.gold.content["utterance_type"])
        for r in rows
        if r.primary_speaker != "Therapist"
    ]
    labels = sorted({v for pair in client_rows for v in pair})
    expected = krippendorff.alpha(
        reliability_data=np.array(
            [[labels.index(a) for a, _ in client_rows], [labels.index(b) for _, b in client_rows]], dtype=float
        ),
        level_of_measurement="nominal",
    )
    same = sum(a == b for a, b in client_rows)
    assert 0 < same < len(client_rows)

    client = Client()
    client.force_login(kim)
    page = client.get(f"/projects/{project.slug}/record/coders/{kim.pk}/").content.decode()
    section = page.split("<h2>Known-answer checks</h2>", 1)[1]
    assert f"1 of 1 check clip submitted, {rows.count()} rows compared with the gold." in section
    table = {
        html.unescape(label): (alpha, int(n), int(k))
        for label, alpha, n, k in re.findall(
            r'<tr><th scope="row">([^<]+)</th><td class="num">([^<]+)</td><td class="num">(\d+)</td>'
            r'<td class="num">(\d+)</td></tr>',
            section,
        )
    }
    assert table["Utterance type"] == (f"{expected:.3f}", len(client_rows), same)
    # The label measures a round is scored on, and only those: free-text fields are not scored on a check
    # (the page is computed in the request, and scoring free text would load the embedding model there).
    assert list(table) == [m.label for m in SCORED]
