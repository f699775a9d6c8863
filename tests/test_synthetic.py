"""The synthetic generator: release-shaped, valid, deterministic, with realistic disagreement."""

from __future__ import annotations

import json
from collections import Counter
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError

from annotation import synthetic
from annotation.models import (
    Assignment,
    AssignmentState,
    Clip,
    ClipState,
    Cue,
    Draft,
    DraftSource,
    Gold,
    Revision,
    RevisionStatus,
    Row,
)
from annotation.rescue_format.exporter import ExportSource, export_rescue
from annotation.roles import ANNOTATOR, role_of
from annotation.schema import ANNOTATION_KEYS, CLIP_KEYS, check_clip
from annotation.services import create_project, create_user
from annotation.taxonomy import THERAPIST, load_taxonomy

pytestmark = pytest.mark.django_db

SMALL = dict(clips=12, annotators=2, seed=42)


@pytest.fixture(autouse=True)
def _fast_passwords(settings):
    # The generator creates accounts; hashing their passwords properly is most of a small run.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def syn_project():
    return create_project("syn-a", name="Synthetic A")


@pytest.fixture
def generated(syn_project):
    counts = synthetic.generate(syn_project, **SMALL)
    return syn_project, counts


@pytest.fixture(scope="module")
def release_scale():
    """The full release shape, built without the database (about 2 s)."""
    return synthetic.build_clips(clips=191, annotators=3, seed=1)


def export_lines(project, source) -> list[str]:
    out = StringIO()
    export_rescue(project, source, out)
    return out.getvalue().splitlines()


def annotators_of(project):
    names = synthetic.annotator_usernames(project, SMALL["annotators"])
    return list(get_user_model().objects.filter(username__in=names).order_by("username"))


def test_small_run_writes_every_document_a_finished_project_has(generated):
    project, counts = generated
    rows = round(12 * 7079 / 191)
    assert counts["clips"] == 12 and counts["family_clips"] == 3 and counts["couple_clips"] == 9
    assert counts["rows"] == rows == Row.objects.filter(clip__project=project).count()
    in_project = dict(row__clip__project=project)
    assert counts["drafts"] == rows == Draft.objects.filter(**in_project, source=DraftSource.SYNTHETIC).count()
    reviewed = Revision.objects.filter(**in_project, status=RevisionStatus.REVIEWED)
    assert counts["revisions"] == 2 * rows == reviewed.count()
    assert counts["gold"] == rows == Gold.objects.filter(row__clip__project=project).count()
    assert counts["documents"] == 4 * rows
    assert counts["cues"] == rows == Cue.objects.filter(clip__project=project).count()
    submitted = Assignment.objects.filter(clip__project=project, state=AssignmentState.SUBMITTED)
    assert counts["assignments"] == 24 == submitted.count()
    assert set(Clip.objects.filter(project=project).values_list("state", flat=True)) == {ClipState.ADJUDICATED}
    assert {d.provenance["seed"] for d in Draft.objects.filter(row__clip__project=project)} == {42}


def test_annotator_accounts_are_created_with_the_annotator_role(generated):
    project, counts = generated
    users = annotators_of(project)
    assert [u.username for u in users] == ["syn-a_annotator1", "syn-a_annotator2"] == counts["annotators"]
    assert all(role_of(u) == ANNOTATOR for u in users)


def test_clips_look_like_release_clips(generated):
    project, _ = generated
    for clip in Clip.objects.filter(project=project):
        rows = list(clip.rows.order_by("row_index"))
        assert clip.release_keys == list(CLIP_KEYS)
        assert clip.source_file == f"synthetic/{clip.sample_id}.json"
        assert clip.duration == rows[-1].end_time
        assert len(clip.content_hash) == 64
        assert clip.speaker_map_confirmed and set(clip.speaker_map) == {*clip.participants, THERAPIST}
        assert [r.row_index for r in rows] == list(range(1, len(rows) + 1))
        assert all(a.start_time < a.end_time <= b.start_time for a, b in zip(rows, rows[1:]))
        assert all(1.99 <= r.end_time - r.start_time <= 6.01 for r in rows)
        assert clip.cues.count() == len(rows)


def test_family_clips_have_four_or_more_participants_and_use_the_family_taxonomy(generated):
    project, _ = generated
    family = list(Clip.objects.filter(project=project, scenario="family"))
    assert family
    labels = load_taxonomy("family").relation_labels | {"", None}
    for clip in family:
        assert len(clip.participants) >= 4
        assert {d.content["relation_pattern"] for d in Draft.objects.filter(row__clip=clip)} <= labels
    couples = Clip.objects.filter(project=project, scenario="couple")
    assert all(len(c.participants) == 2 for c in couples)


def test_every_source_exports_clips_that_pass_check_clip_without_warnings(generated):
    project, _ = generated
    sources = [ExportSource("gold"), ExportSource("draft")]
    sources += [ExportSource("revision", u) for u in annotators_of(project)]
    for source in sources:
        lines = export_lines(project, source)
        assert len(lines) == 12
        for line in lines:
            clip, report = check_clip(json.loads(line), taxonomy_version=project.taxonomy_version)
            assert clip is not None
            assert report.issues == [], (source.kind, report.issues[:3])


def test_documents_follow_the_regular_convention(generated):
    project, _ = generated

    def cycle(c):
        return c["relation_cycle_state"], c["relation_cycle_reason"], c["relation_cycle_evidence_rows"]

    for doc in Gold.objects.filter(row__clip__project=project).select_related("row"):
        # jsonb keeps no key order; the empty layout makes export use the convention's.
        assert set(doc.content) == set(ANNOTATION_KEYS) and doc.layout == {}
        c = doc.content
        if doc.row.primary_speaker == THERAPIST:
            assert c["utterance_type"] == ""
            pattern = (c["relation_pattern"], c["relation_pattern_reason"], c["relation_pattern_evidence_rows"])
            assert cycle(c) == pattern
        else:
            assert c["utterance_type"] and c["support_strategy"] == []
            assert cycle(c) == ("", "", [])
        assert all(1 <= ev <= doc.row.row_index for ev in c["relation_pattern_evidence_rows"])


def test_export_is_exactly_what_the_pure_builder_produced_key_order_included(generated):
    project, _ = generated
    built = sorted(synthetic.build_clips(**SMALL), key=lambda c: c.sample_id)
    expected = [json.dumps(c.documents()["gold"], ensure_ascii=False) for c in built]
    assert export_lines(project, ExportSource("gold")) == expected


def test_same_seed_gives_identical_gold_in_two_projects_and_another_seed_does_not(generated):
    first, _ = generated
    second = create_project("syn-b")
    synthetic.generate(second, **SMALL)
    third = create_project("syn-c")
    synthetic.generate(third, **{**SMALL, "seed": 43})
    gold = export_lines(first, ExportSource("gold"))
    assert export_lines(second, ExportSource("gold")) == gold
    assert export_lines(third, ExportSource("gold")) != gold


def test_revisions_disagree_with_the_draft_on_some_but_not_most_fields(generated):
    project, _ = generated
    drafts = {d.row_id: d.content for d in Draft.objects.filter(row__clip__project=project)}
    by_user = {}
    for rev in Revision.objects.filter(row__clip__project=project):
        by_user.setdefault(rev.annotator_id, {})[rev.row_id] = rev.content
    fields = [k for k in ANNOTATION_KEYS if not k.startswith("relation_cycle")]
    for revisions in by_user.values():
        changed = sum(revisions[row][k] != drafts[row][k] for row in drafts for k in fields)
        share = changed / (len(drafts) * len(fields))
        assert 0.05 < share < 0.35
        rows_touched = sum(any(revisions[row][k] != drafts[row][k] for k in fields) for row in drafts)
        assert rows_touched > len(drafts) / 2  # nearly every row gets some edit


def test_annotators_agree_with_each_other_more_than_chance(release_scale):
    # Where both annotators changed the draft's utterance type, they often pick the same one.
    both = [
        (a["utterance_type"], b["utterance_type"])
        for clip in release_scale
        for d, a, b in zip(clip.draft, clip.revisions[0], clip.revisions[1])
        if a["utterance_type"] != d["utterance_type"] and b["utterance_type"] != d["utterance_type"]
    ]
    assert len(both) > 50
    assert sum(x == y for x, y in both) / len(both) > 0.3  # chance is about 0.15 over nine labels


def test_gold_takes_each_field_from_a_majority_of_annotators_or_annotator_one(release_scale):
    def majority(values):
        top, n = Counter(json.dumps(v, sort_keys=True) for v in values).most_common(1)[0]
        return json.loads(top) if n * 2 > len(values) else values[0]

    for clip in release_scale[:20]:
        for i, gold in enumerate(clip.gold):
            revisions = [rev[i] for rev in clip.revisions]
            for key in ANNOTATION_KEYS:
                if not key.startswith("relation_"):
                    assert gold[key] == majority([r[key] for r in revisions])
            # The relation pattern votes on its label; reason and evidence come with it.
            label = majority([r["relation_pattern"] for r in revisions])
            assert gold["relation_pattern"] == label
            givers = [r for r in revisions if r["relation_pattern"] == label]
            assert (gold["relation_pattern_reason"], gold["relation_pattern_evidence_rows"]) == (
                givers[0]["relation_pattern_reason"],
                givers[0]["relation_pattern_evidence_rows"],
            )


def test_release_scale_has_the_shape_of_the_real_release(release_scale):
    clips = release_scale
    assert len(clips) == 191 and sum(len(c.skeletons) for c in clips) == 7079
    assert Counter(c.scenario for c in clips) == {"couple": 174, "family": 17}
    per_group = Counter(c.group for c in clips)
    couple_groups = {c.group for c in clips if c.scenario == "couple"}
    assert all(3 <= per_group[g] <= 10 for g in couple_groups)
    # Family clips as the release names them: one merged clip per family, each number a different family.
    families = [c for c in clips if c.scenario == "family"]
    assert [c.sample_id for c in families] == [f"family_therapy/{n:03d}/merged" for n in range(1, 18)]
    assert all(per_group[c.group] == 1 for c in families)
    for scenario in ("couple", "family"):  # nobody appears in two couples or two families
        people = [p for c in {c.group: c for c in clips if c.scenario == scenario}.values() for p in c.participants]
        assert len(people) == len(set(people)), scenario
    family_rows = [len(c.skeletons) for c in clips if c.scenario == "family"]
    assert 60 < sum(family_rows) / len(family_rows) < 80
    rows = [(s, d) for c in clips for s, d in zip(c.skeletons, c.draft)]
    therapist = [d for s, d in rows if s["primary_speaker"] == THERAPIST]
    assert 0.31 < len(therapist) / len(rows) < 0.39
    states = Counter({None: "null", "": "blank"}.get(d["relation_pattern"], "label") for _, d in rows)
    assert 0.60 < states["null"] / len(rows) < 0.72 and 0.04 < states["blank"] / len(rows) < 0.10
    assert 0.45 < sum(bool(d["support_strategy"]) for d in therapist) / len(therapist) < 0.60
    utterances = Counter(d["utterance_type"] for _, d in rows if d["utterance_type"])
    assert utterances.most_common(1)[0][0] == "disclosure"
    intensities = [e["intensity"] for _, d in rows for e in d["internal_emotion"]]
    assert min(intensities) >= 4 and max(intensities) <= 10 and 6 <= sum(intensities) / len(intensities) <= 7


def test_the_draft_depends_on_the_seed_and_clip_count_only():
    one, three = (synthetic.build_clips(clips=20, annotators=n, seed=5) for n in (1, 3))
    assert [c.draft for c in one] == [c.draft for c in three]
    assert [c.skeletons for c in one] == [c.skeletons for c in three]


def test_the_weights_table_names_only_taxonomy_labels():
    for scenario in ("couple", "family"):
        tax = load_taxonomy(scenario)
        assert set(synthetic.WEIGHTS[scenario]["relation"]) == tax.relation_labels
        assert set(synthetic.WEIGHTS[scenario]["strategy"]) == tax.strategy_labels
        assert set(synthetic.WEIGHTS["utterance"]) == tax.utterance_labels


def test_family_share_follows_the_release():
    assert [synthetic.family_clip_count(k) for k in (1, 2, 11, 12, 20, 191, 1910)] == [0, 1, 1, 3, 3, 17, 170]


def test_small_projects_have_three_couples_and_three_families_so_every_split_is_reachable():
    for clips in (12, 20, 40):
        built = synthetic.build_clips(clips=clips, annotators=1, seed=9)
        per_scenario = Counter(scenario for scenario, _ in {(c.scenario, c.group) for c in built})
        assert per_scenario["couple"] >= 3 and per_scenario["family"] >= 3, clips


def test_generating_the_same_clips_twice_is_refused_and_writes_nothing(generated):
    project, _ = generated
    before = Row.objects.count()
    with pytest.raises(synthetic.SyntheticError, match="already has"):
        synthetic.generate(project, **SMALL)
    assert Row.objects.count() == before


def test_command_generates_into_an_existing_project_and_reuses_annotators():
    project = create_project("syn-cmd")
    existing, _ = create_user("syn-cmd_annotator1", ANNOTATOR)
    out = StringIO()
    args = ["--project", "syn-cmd", "--clips", "3", "--annotators", "2", "--seed", "9"]
    call_command("generate_synthetic", *args, stdout=out)
    text = out.getvalue()
    rows = Row.objects.filter(clip__project=project).count()
    assert text.startswith(f"generated 3 clips, {rows} rows (2 couple and 1 family clips), ") and text.endswith(" s\n")
    assert Clip.objects.filter(project=project).count() == 3
    usernames = Revision.objects.filter(row__clip__project=project).values_list("annotator__username", flat=True)
    assert set(usernames) == {"syn-cmd_annotator1", "syn-cmd_annotator2"}
    assert Revision.objects.filter(annotator=existing).exists()
    history = Gold.history.filter(row__clip__project=project)
    assert history.exists() and set(history.values_list("history_source", flat=True)) == {"cli"}


def test_command_refuses_an_unknown_project():
    with pytest.raises(CommandError, match="no project 'missing'"):
        call_command("generate_synthetic", "--project", "missing", "--clips", "2")


@pytest.mark.django_db
def test_transcripts_alone_are_imported_clips_with_the_cues_of_their_rows_and_nothing_else():
    project = create_project("transcripts", name="Transcripts")
    built = synthetic.build_clips(clips=3, annotators=1, seed=5, taxonomy_version=project.taxonomy_version)
    cues = synthetic.store_transcripts(project, built)
    assert cues == sum(len(c.skeletons) for c in built)
    for c in built:
        clip = project.clips.get(sample_id=c.sample_id)
        assert clip.state == ClipState.IMPORTED and clip.rows.count() == 0 and clip.history.count() == 1
        assert [(q.position, q.start_time, q.end_time, q.speaker, q.text) for q in clip.cues.order_by("position")] == [
            (s["row_index"], s["start_time"], s["end_time"], s["primary_speaker"], s["dialogue_cleaned"])
            for s in c.skeletons
        ]
    assert not Draft.objects.filter(row__clip__project=project).exists()
