"""Agreement counts only work a coder has done.

The project of the issue: five synthetic clips, three annotators, an LLM
draft; one clip submitted, the other four assigned and never opened (each
revision still a copy of the draft). Every figure is checked against an
independent computation: values read straight from the stored documents
(plain dictionary lookups, not the extraction's JSON paths) and alpha from a
direct ``krippendorff.alpha`` call; counts by hand.
"""

from __future__ import annotations

import json

import krippendorff
import numpy as np
import pytest

from annotation.agreement import services
from annotation.agreement.report import compute_project_report
from annotation.agreement.scope import REVIEWED, SUBMITTED, coded_revisions
from annotation.models import (
    AgreementReport,
    Assignment,
    AssignmentMode,
    AssignmentState,
    ClipState,
    Draft,
    Revision,
    RevisionStatus,
)
from annotation.services import transition
from annotation.synthetic import generate
from annotation.taxonomy import THERAPIST
from annotation.workspace.services import save_revision

from .builders.agreement import reopen_untouched, report_slice

pytestmark = pytest.mark.django_db

LLM = "LLM draft"


def utterance(content: dict, speaker: str):
    """The utterance type as a coder gave it: client rows only; "" is no value."""
    return (content.get("utterance_type") or None) if speaker != THERAPIST else None


def target(content: dict, speaker: str):
    return tuple(sorted(set(content.get("target") or []))) or None


@pytest.fixture
def issue_project(project):
    """One submitted clip (the first), four untouched ones; returns (clips in sample id order, annotators)."""
    generate(project, clips=5, annotators=3, seed=11)
    clips = list(project.clips.order_by("sample_id"))
    for clip in clips[1:]:
        reopen_untouched(clip)
    coders = sorted({a.annotator for a in Assignment.objects.filter(clip__project=project)}, key=lambda u: u.username)
    return clips, coders


def direct(revisions, value, *, with_draft: bool = False) -> tuple[int, float | None]:
    """(units with two or more values, krippendorff.alpha) from the given revisions, read document by document."""
    cells: dict[tuple[str, int], object] = {}
    rows = {}
    for r in revisions.select_related("row", "annotator"):
        cells[(r.annotator.username, r.row_id)] = value(r.content, r.row.primary_speaker)
        rows[r.row_id] = r.row
    if with_draft:
        for d in Draft.objects.filter(row_id__in=rows):
            cells[(LLM, d.row_id)] = value(d.content, rows[d.row_id].primary_speaker)
    coders = sorted({c for c, _ in cells})
    units = sorted(rows)
    labels = sorted({v for v in cells.values() if v is not None}, key=repr)
    code = {v: float(i) for i, v in enumerate(labels)}
    matrix = np.array(
        [[code[cells[(c, u)]] if cells.get((c, u)) is not None else np.nan for u in units] for c in coders]
    )
    pairable = int(((~np.isnan(matrix)).sum(axis=0) >= 2).sum())
    if pairable == 0 or len(labels) < 2:
        return pairable, None
    return pairable, float(krippendorff.alpha(reliability_data=matrix, level_of_measurement="nominal"))


def test_one_submitted_clip_gives_exactly_the_alpha_of_its_values_alone(issue_project):
    clips, coders = issue_project
    submitted = Revision.objects.filter(row__clip=clips[0])
    report = compute_project_report(clips[0].project)
    entry = report_slice(report)
    assert report["coded_work"] is True and report["work_scope"]["key"] == SUBMITTED

    for key, value in (("utterance_type", utterance), ("target", target)):
        units, alpha = direct(submitted, value)
        figure = entry["measures"][key]["humans"]
        assert figure["units"] == units > 0 and figure["coders"] == 3
        assert figure["alpha"] == pytest.approx(alpha, abs=1e-6)
        # The LLM as one more coder: only on the rows the annotators coded.
        units, alpha = direct(submitted, value, with_draft=True)
        assert entry["measures"][key]["with_llm"]["units"] == units
        assert entry["measures"][key]["with_llm"]["alpha"] == pytest.approx(alpha, abs=1e-6)
    for pair in entry["measures"]["utterance_type"]["pairs"]:
        if LLM in pair["pair"]:
            (name,) = set(pair["pair"]) - {LLM}
            units, alpha = direct(submitted.filter(annotator__username=name), utterance, with_draft=True)
            assert (pair["units"], pair["alpha"]) == (units, pytest.approx(alpha, abs=1e-6))

    # What was counted and what was left out, by hand.
    rows = [clip.rows.count() for clip in clips]
    assert report["counts"]["revisions"] == entry["revisions"] == 3 * rows[0]
    assert entry["left_out"] == {"not_submitted": 3 * sum(rows[1:]), "discarded_clip": 0, "unassigned": 0}
    assert (entry["clips"], entry["rows"]) == (1, rows[0])
    assert (report["counts"]["coded_clips"], report["counts"]["coded_rows"]) == (1, rows[0])
    assert coded_revisions(clips[0].project.clips.all()).count() == 3 * rows[0]


def test_edit_rates_against_the_draft_count_only_coded_rows(issue_project):
    clips, coders = issue_project
    report = compute_project_report(clips[0].project)
    entry = report_slice(report)
    client_rows = [r for r in clips[0].rows.all() if r.primary_speaker != THERAPIST]
    drafts = {d.row_id: d.content for d in Draft.objects.filter(row__clip=clips[0])}
    changed, compared = {}, 0
    for coder in coders:
        mine = {r.row_id: r.content for r in Revision.objects.filter(row__clip=clips[0], annotator=coder)}
        diff = sum(
            utterance(mine[r.pk], r.primary_speaker) != utterance(drafts[r.pk], r.primary_speaker) for r in client_rows
        )
        changed[coder.username] = round(diff / len(client_rows), 6)
        compared += len(client_rows)
    figure = entry["measures"]["utterance_type"]["changed_from_draft"]
    assert figure["by_annotator"] == changed and figure["compared"] == compared
    # The untouched clips (equal to the draft everywhere) would have pulled every rate towards 0.
    assert sum(changed.values()) > 0
    assert {name: rates["rows"] for name, rates in entry["edit_rates"].items()} == {
        c.username: clips[0].rows.count() for c in coders
    }


def test_rows_marked_reviewed_in_an_open_assignment_count_in_the_reviewed_scope_only(issue_project):
    clips, coders = issue_project
    project = clips[0].project
    before = compute_project_report(project)
    default_fp = services.fingerprint(project, services.Params())
    reviewed_fp = services.fingerprint(project, services.Params(work_scope=REVIEWED))
    assert default_fp != reviewed_fp  # the scope is part of the cache key

    # Two annotators review the first four client rows of the second (open) clip; one of them changes a label.
    open_clip = clips[1]
    rows = [r for r in open_clip.rows.order_by("row_index") if r.primary_speaker != THERAPIST][:4]
    for coder in coders[:2]:
        for row in rows:
            revision = Revision.objects.get(row=row, annotator=coder)
            content = dict(revision.content)
            if coder == coders[0] and row == rows[0]:
                content["utterance_type"] = "defense" if content.get("utterance_type") != "defense" else "accusation"
            save_revision(revision.pk, coder, content, revision.version, reviewed=True)
    assert Assignment.objects.get(clip=open_clip, annotator=coders[0]).state == AssignmentState.IN_PROGRESS

    # The default scope: the same report, and the same cache key, as before.
    assert services.fingerprint(project, services.Params()) == default_fp
    assert compute_project_report(project) == before
    # The reviewed scope: the submitted clip plus those rows.
    assert services.fingerprint(project, services.Params(work_scope=REVIEWED)) != reviewed_fp
    report = compute_project_report(project, work_scope=REVIEWED)
    counted = Revision.objects.filter(row__clip=clips[0]) | Revision.objects.filter(
        row__in=rows, annotator__in=coders[:2]
    )
    units, alpha = direct(counted, utterance)
    figure = report_slice(report)["measures"]["utterance_type"]["humans"]
    assert (figure["units"], figure["alpha"]) == (units, pytest.approx(alpha, abs=1e-6))
    assert figure["units"] == report_slice(before)["measures"]["utterance_type"]["humans"]["units"] + len(rows)
    assert report["scope"]["work"] == REVIEWED
    assert report["work_scope"]["label"] == "submitted work and rows marked reviewed"
    total_open = 3 * sum(c.rows.count() for c in clips[1:])
    not_reviewed = total_open - 2 * len(rows)
    assert report_slice(report)["left_out"] == {"not_reviewed": not_reviewed, "discarded_clip": 0, "unassigned": 0}


def test_left_out_revisions_are_counted_per_slice_with_their_reason(project, lead):
    generate(project, clips=6, annotators=3, seed=5)
    clips = list(project.clips.order_by("sample_id"))
    n = {c.sample_id: c.rows.count() for c in clips}
    coders = sorted({a.annotator for a in Assignment.objects.filter(clip__project=project)}, key=lambda u: u.username)
    # clips[0]: submitted, anchored. clips[1]: submitted, calibration. clips[2]: open (not submitted).
    # clips[3]: submitted but discarded. clips[4]: one coder's assignment removed (their revisions stay).
    Assignment.objects.filter(clip=clips[1]).update(mode=AssignmentMode.FROM_EMPTY)
    reopen_untouched(clips[2])
    transition(clips[3], ClipState.DISCARDED, actor=lead, reason="audio unusable")
    Assignment.objects.filter(clip=clips[4], annotator=coders[2]).delete()
    report = compute_project_report(project)
    by_key = {s["key"]: s for s in report["slices"]}
    s = [c.sample_id for c in clips]
    expected_all = {"not_submitted": 3 * n[s[2]], "discarded_clip": 3 * n[s[3]], "unassigned": n[s[4]]}
    assert by_key["all/all"]["left_out"] == expected_all
    assert report["counts"]["revisions_left_out"] == expected_all
    assert report["counts"]["revisions_left_out_unassigned"] == n[s[4]]
    # An unassigned coder's revisions have no assignment mode: they appear under "all" only.
    assert by_key["anchored/all"]["left_out"] == {**expected_all, "unassigned": 0}
    assert by_key["calibration/all"]["left_out"] == {"not_submitted": 0, "discarded_clip": 0, "unassigned": 0}
    assert by_key["calibration/all"]["revisions"] == 3 * n[s[1]]
    counted = sum(n[x] for x in s) * 3 - sum(expected_all.values())
    assert report["counts"]["revisions"] == by_key["all/all"]["revisions"] == counted
    assert report["counts"]["clips"] == 5  # the discarded clip is no unit of agreement
    # Per scenario: each clip's left-out revisions land in its own scenario's slices.
    for scenario in ("couple", "family"):
        key = f"all/{scenario}"
        if key in by_key:
            mine = {x.sample_id for x in clips if x.scenario == scenario}
            want = {
                "not_submitted": 3 * n[s[2]] * (s[2] in mine),
                "discarded_clip": 3 * n[s[3]] * (s[3] in mine),
                "unassigned": n[s[4]] * (s[4] in mine),
            }
            assert by_key[key]["left_out"] == want


def _numbers_named_alpha(value) -> list:
    if isinstance(value, dict):
        found = [v for k, v in value.items() if k.endswith("alpha") and isinstance(v, (int, float))]
        return found + [x for v in value.values() for x in _numbers_named_alpha(v)]
    if isinstance(value, list):
        return [x for v in value for x in _numbers_named_alpha(v)]
    return []


def test_a_scope_without_coded_work_says_so_and_prints_no_alpha(project, lead, client, tmp_path):
    """Untouched revisions equal the draft everywhere: the old report gave alpha 1.000 on nearly every field."""
    import io

    from django.core.management import call_command

    from annotation.releases.agreement_report import agreement_document, summary_rows

    generate(project, clips=3, annotators=3, seed=2)
    for clip in project.clips.all():
        reopen_untouched(clip)
    report = compute_project_report(project)
    assert report["coded_work"] is False and report["summary"] == []
    assert report["empty_reason"].startswith("no coded work yet: no submitted work in this scope; ")
    assert (
        f"{report['counts']['rows'] * 3} revisions left out ({report['counts']['rows'] * 3} not submitted)"
        in (report["empty_reason"])
    )
    assert all(s["empty"] and s["reason"].startswith("no coded work yet") for s in report["slices"])
    assert _numbers_named_alpha(report) == []

    # The API and the page.
    client.force_login(lead)
    body = client.get(f"/api/v1/projects/{project.slug}/agreement/").json()
    assert body["status"] == "ready" and body["coded_work"] is False and body["scope"] == "submitted"
    assert body["empty_reason"] == report["empty_reason"] and _numbers_named_alpha(body) == []
    page = client.get(f"/projects/{project.slug}/agreement/").content.decode()
    assert "No coded work yet: no submitted work in this scope" in page and "1.000" not in page
    assert "<table" not in page

    # The command, as text and as JSON.
    out, target_file = io.StringIO(), tmp_path / "agreement.json"
    call_command("agreement", "--project", project.slug, "--json", str(target_file), stdout=out)
    text = out.getvalue()
    assert "No figures: no coded work yet" in text and "alpha" not in text.lower().replace("krippendorff", "")
    assert json.loads(target_file.read_text())["coded_work"] is False

    # What a release's agreement.json and card would read.
    document = agreement_document(project, list(project.clips.values_list("sample_id", flat=True)))
    assert document["report"]["coded_work"] is False and summary_rows(document) == []


def report_counts_modes(project) -> dict:
    return compute_project_report(project)["counts"]["assignments"]


def test_revisions_imported_as_finished_work_count_as_submitted(project, sample_path, tmp_path):
    import io

    from django.core.management import call_command

    from annotation.rescue_format.importer import import_rescue
    from annotation.services import create_user

    lines = sample_path.read_text(encoding="utf-8").splitlines()[:2]
    first = tmp_path / "first.jsonl"
    first.write_text("\n".join(lines) + "\n", encoding="utf-8")
    import_rescue(first, project, as_source="draft")
    a = create_user("imported_a", "annotator")[0]
    b = create_user("imported_b", "annotator")[0]
    # b was already assigned (open) before their finished work arrived from elsewhere.
    clip = project.clips.order_by("sample_id").first()
    Assignment.objects.create(clip=clip, annotator=b)
    # Each annotator's file: the release rows with a few utterance types changed, differently per annotator.
    for user, offset in ((a, 0), (b, 1)):
        changed = []
        for line in lines:
            doc = json.loads(line)
            for i, row in enumerate(doc["rows"]):
                if row["primary_speaker"] != THERAPIST and (i + offset) % 5 == 0:
                    row["utterance_type"] = "defense" if row.get("utterance_type") != "defense" else "request"
            changed.append(json.dumps(doc))
        path = tmp_path / f"{user.username}.jsonl"
        path.write_text("\n".join(changed) + "\n", encoding="utf-8")
        if user == a:  # through the command, as a lead would
            args = ("--project", project.slug, "--as", "revision", "--annotator", "imported_a")
            call_command("import_rescue", str(path), *args, stdout=io.StringIO())
        else:
            import_rescue(path, project, as_source="revision", annotator=user)

    assignments = Assignment.objects.filter(clip__project=project)
    assert assignments.count() == 4 and set(assignments.values_list("state", flat=True)) == {AssignmentState.SUBMITTED}
    assert all(a.submitted_at is not None for a in assignments)
    latest = Assignment.objects.get(clip=clip, annotator=b).history.order_by("-history_id").first()
    assert (latest.state, latest.history_change_reason) == ("submitted", "revisions imported as finished work")
    # How imported work started is not recorded: neither anchored nor calibration, counted in "all" only.
    assert set(assignments.values_list("mode", flat=True)) == {AssignmentMode.IMPORTED}
    assert report_counts_modes(project) == {"anchored": 0, "calibration": 0, "imported": 4}
    # Every coder's work is in: the clips move on to reviewed, as a submission would move them, ready to adjudicate.
    assert set(project.clips.values_list("state", flat=True)) == {ClipState.REVIEWED}
    report = compute_project_report(project)
    counted = Revision.objects.filter(row__clip__project=project)
    assert report["counts"]["revisions"] == counted.count()
    assert report["counts"]["revisions_left_out"]["not_submitted"] == 0
    units, alpha = direct(counted, utterance)
    figure = report_slice(report)["measures"]["utterance_type"]["humans"]
    assert (figure["units"], figure["alpha"]) == (units, pytest.approx(alpha, abs=1e-6))


def test_the_cache_follows_what_counts_and_ignores_work_in_progress(issue_project):
    clips, coders = issue_project
    project = clips[0].project
    params = services.Params()
    first = services.ensure_report(project, params, compute=services.Compute.IN_PROCESS)
    assert first.status == "ready" and AgreementReport.objects.count() == 1

    # An annotator works on an open clip: nothing that counts changed, the stored report is still current.
    revision = Revision.objects.filter(row__clip=clips[2], annotator=coders[0]).order_by("row__row_index").first()
    save_revision(revision.pk, coders[0], {**revision.content, "tone_of_voice": "flat"}, revision.version)
    still = services.report_state(project, params)
    assert still.status == "ready" and still.report.pk == first.report.pk and not still.stale

    # A submission changes what counts: the stored report is stale until a new one is computed.
    Revision.objects.filter(row__clip=clips[2]).update(status=RevisionStatus.REVIEWED)
    Assignment.objects.filter(clip=clips[2]).update(state=AssignmentState.SUBMITTED)
    stale = services.report_state(project, params)
    assert stale.status == "missing" and stale.report.pk == first.report.pk and stale.stale
    fresh = services.ensure_report(project, params, compute=services.Compute.IN_PROCESS)
    assert fresh.status == "ready" and not fresh.stale
    assert (
        fresh.report.report["counts"]["revisions"]
        == first.report.report["counts"]["revisions"] + 3 * clips[2].rows.count()
    )
    # Reopening one coder's assignment takes their work out again.
    Assignment.objects.filter(clip=clips[2], annotator=coders[1]).update(state=AssignmentState.REOPENED)
    assert services.report_state(project, params).stale
