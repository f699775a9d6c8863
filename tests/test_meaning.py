"""Free-text measures validated against people's judgements of meaning (issue 26).

- the validation maths against direct computations (sklearn's roc_auc_score and cohen_kappa_score, a hand
  count of correctly ordered pairs);
- the embedding measure on hard pairs written for the project (paraphrases against same-topic pairs of
  different meaning): its AUROC is printed with the verdict it earns;
- the command that validates from a file (text and --json);
- the judging loop: stratified sampling, never one's own texts, recorded with who and when;
- the LLM judge through the real google-genai SDK against the loopback fake server answering from a fixture:
  cached per pair, model and prompt version, costed, its alpha against a direct computation, its kappa and
  AUROC against people's judgements;
- every free-text figure carries its validity on the page, the API and agreement.json (one selector).
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from django.core.management import call_command
from django.test import Client
from sklearn.metrics import cohen_kappa_score, roc_auc_score

from annotation.agreement import embeddings
from annotation.meaning import judge, judge_alpha, selectors, services, validation
from annotation.meaning.models import JudgedPair, JudgeVerdict, pair_sha256
from annotation.models import Assignment
from annotation.synthetic import generate

from .builders import meaning_hard_pairs as hard
from .builders.meaning import FIXTURE, fixture_responder
from .fakes import gemini_server as g


@pytest.fixture(scope="session")
def model():
    provider = embeddings.LocalMiniLM()
    provider.model()  # loaded once per process (a class attribute): shared with the semantic tests
    return provider


# --- the maths ------------------------------------------------------------------------------------------------


def hand_auroc(same, different):
    ordered = sum((d > s) + 0.5 * (d == s) for s in same for d in different)
    return ordered / (len(same) * len(different))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_auroc_equals_sklearn_and_a_hand_count_of_ordered_pairs(seed):
    rng = np.random.default_rng(seed)
    same = np.round(rng.random(37), 1)  # rounded: many ties
    different = np.round(rng.random(23) * 0.8 + 0.2, 1)
    ours = validation.auroc(same, different)
    assert ours == pytest.approx(
        roc_auc_score([0] * len(same) + [1] * len(different), np.r_[same, different]), abs=1e-12
    )
    assert ours == pytest.approx(hand_auroc(same, different), abs=1e-12)


def test_closer_share_is_a_hand_count():
    same, different = [0.1, 0.2, 0.3, 0.4, 0.5], [0.15, 0.25, 0.35, 0.6, 0.9]
    assert validation.closer_share(same, different) == 2 / 5  # 0.15 and 0.25 are below the median 0.3


def test_kappa_equals_sklearn():
    rng = np.random.default_rng(3)
    a = list(rng.choice(["same", "different"], 80))
    b = [x if rng.random() < 0.7 else ("same" if x == "different" else "different") for x in a]
    assert validation.cohen_kappa(a, b) == pytest.approx(cohen_kappa_score(a, b), abs=1e-12)


def test_verdicts_follow_the_documented_thresholds():
    def items(same, different):
        return [validation.Judged(d, "same") for d in same] + [validation.Judged(d, "different") for d in different]

    separated = validation.validity(items(np.linspace(0.0, 0.3, 30), np.linspace(0.5, 0.9, 30)))
    assert separated["verdict"] == "validated" and separated["auroc"] == 1.0 and separated["interval"][0] >= 0.8
    assert separated["wording"] == "agreement on meaning" and separated["sentence"].startswith(
        "validated: AUROC 1.00 ["
    )
    mixed = validation.validity(items(np.linspace(0.2, 0.6, 20), np.linspace(0.25, 0.65, 20)))
    assert mixed["verdict"] == "weak" and mixed["wording"] == "similarity of wording and topic"
    assert "reads as topic similarity" in mixed["sentence"]
    few = validation.validity(items([0.1] * 5, [0.9] * 5))
    assert few["verdict"] == "not_validated" and few["auroc"] == 1.0
    none = validation.validity([])
    assert (
        none["verdict"] == "not_validated"
        and none["sentence"] == "not validated yet: no pair of its texts has been judged"
    )
    unmeasured = validation.validity([validation.Judged(None, "same")] * 3)
    assert (
        unmeasured["sentence"]
        == "not validated yet: 3 judged pairs not yet measured by it (compute the free-text report, or run the judge)"
    )
    cant = validation.validity(items([0.1] * 12, [0.9] * 12) + [validation.Judged(0.5, "cant_tell")])
    assert cant["pairs"] == 24 and cant["cant_tell"] == 1


# --- the hard pairs -------------------------------------------------------------------------------------------


def test_the_embedding_measure_on_hard_pairs_earns_the_verdict_it_earns(model, capsys):
    """Same-topic pairs of different meaning: the case the shipped measure was never tested on."""
    rows = services.read_judgements("\n".join(json.dumps(r) for r in hard.rows()), "hard.jsonl")
    distinct = list(dict.fromkeys(t for r in rows for t in (r.text_a, r.text_b)))
    vectors = dict(zip(distinct, model.embed(distinct)))
    items = [validation.Judged(float(1 - vectors[r.text_a] @ vectors[r.text_b]), r.judgement) for r in rows]
    result = validation.validity(items, name="hard-pairs")
    same = [i.distance for i in items if i.judgement == "same"]
    different = [i.distance for i in items if i.judgement == "different"]
    assert result["auroc"] == pytest.approx(hand_auroc(same, different), abs=1e-4)
    # Within a field, how often a text is closer to its contradiction than to its paraphrase (same first text).
    firsts = {(f, a): 1 - float(vectors[a] @ vectors[b]) for f, a, b in hard.SAME}
    closer = sum(1 for f, a, b in hard.DIFFERENT if 1 - float(vectors[a] @ vectors[b]) < firsts[(f, a)])
    with capsys.disabled():
        print(
            f"\nembedding measure on {len(rows)} hard pairs ({len(same)} paraphrases, {len(different)} same-topic "
            f"different-meaning): AUROC {result['auroc']:.3f} {result['interval']}, verdict {result['verdict']}; "
            f"{closer} of {len(hard.DIFFERENT)} texts closer to their contradiction than to their paraphrase; "
            f"{result['closer_than_median_same']:.0%} of contradictions closer than the median paraphrase"
        )
    # MiniLM reads topic: on these pairs it is not a measure of meaning, and the platform must say so.
    assert result["verdict"] != "validated"


def test_the_command_prints_per_field_pairs_auroc_interval_and_verdict_and_json_the_same(model, tmp_path, settings, db):
    settings.SEMANTIC_EMBEDDINGS = "local"
    path = tmp_path / "judged.csv"
    import csv

    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=["field", "text_a", "text_b", "judgement"])
        writer.writeheader()
        writer.writerows(hard.rows())
    from io import StringIO

    out = StringIO()
    call_command("validate_free_text", str(path), stdout=out)
    text = out.getvalue()
    out_json = StringIO()
    call_command("validate_free_text", str(path), "--json", stdout=out_json)
    data = json.loads(out_json.getvalue())
    assert set(data["fields"]) == {r["field"] for r in hard.rows()}
    for field, v in data["fields"].items():
        line = next(line for line in text.splitlines() if line.startswith(field + " "))
        assert f"pairs {v['pairs']:>4}" in line and f"AUROC {v['auroc']:.3f}" in line, line
        assert f"[{v['interval'][0]:.3f}, {v['interval'][1]:.3f}]" in line and v["verdict"] in line
        # Few pairs per field: no field is validated (nor called weak) on two to eight pairs.
        assert v["verdict"] == "not_validated"
    print(text)


def test_the_command_refuses_a_file_with_an_unknown_judgement(tmp_path, db):
    from django.core.management.base import CommandError

    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({"field": "attitude", "text_a": "a", "text_b": "b", "judgement": "maybe"}) + "\n")
    with pytest.raises(CommandError, match="line 1: judgement 'maybe'"):
        call_command("validate_free_text", str(path))


# --- the judging loop -----------------------------------------------------------------------------------------


@pytest.fixture
def judged_project(project, model, settings):
    settings.SEMANTIC_EMBEDDINGS = "local"
    generate(project, clips=3, annotators=3, seed=4)
    texts = list({t for c in selectors.pool(project) for t in (c.text_a, c.text_b)})
    embeddings.embed_texts(texts, model)  # what the free-text report caches
    return project


@pytest.mark.django_db
def test_the_lead_judges_pairs_with_the_keys_values_and_each_is_recorded_with_who_and_when(judged_project, lead):
    client = Client()
    client.force_login(lead)
    field = "internal_emotion"
    url = f"/projects/{judged_project.slug}/meaning/judge/?field={field}"
    shown_bands = []
    for judgement in ["same", "different", "cant_tell", "different", "same"]:
        page = client.get(url)
        assert page.status_code == 200
        sha = re.search(r'name="pair" value="([0-9a-f]{64})"', page.content.decode()).group(1)
        response = client.post(url, {"field": field, "pair": sha, "judgement": judgement})
        assert response.status_code == 302
        row = JudgedPair.objects.get(pair_sha256=sha)
        assert row.judge == lead and row.judgement == judgement and row.embedding_distance is not None
        shown_bands.append(row.stratum)
    # Stratified: the first pairs come from different distance bands (the band with the fewest judged first).
    available = {
        selectors.stratum_of(d)
        for d in selectors.embedding_distances(
            [(c.text_a, c.text_b) for c in selectors.pool(judged_project) if c.field == field]
        )
    }
    assert len(set(shown_bands)) == min(len(available), len(shown_bands))
    # The same pair twice is refused, with a message and nothing written.
    again = client.post(url, {"field": field, "pair": sha, "judgement": "same"})
    assert again.status_code == 400 and JudgedPair.objects.count() == 5


@pytest.mark.django_db
def test_a_judge_is_never_shown_their_own_texts_nor_a_clip_they_code(judged_project, django_user_model):
    from annotation.services import create_user

    coder = django_user_model.objects.get(username=selectors.pool(judged_project)[0].authors[0])
    for field in ["internal_emotion", "viewpoint", "attitude"]:
        for _ in range(3):
            shown = selectors.next_pair(coder, judged_project, field)
            if shown is None:
                break
            assert coder.username not in shown.candidate.authors
            assert not Assignment.objects.filter(annotator=coder, clip_id=shown.candidate.clip_id).exists()
    # An annotator who codes one clip of the project judges pairs from the other clips only.
    outsider = create_user("outsider", "annotator")[0]
    first_clip = judged_project.clips.order_by("pk").first()
    Assignment.objects.create(clip=first_clip, annotator=outsider)
    seen = set()
    for _ in range(6):
        shown = selectors.next_pair(outsider, judged_project, "internal_emotion")
        if shown is None:
            break
        seen.add(shown.candidate.clip_id)
        services.record_judgement(outsider, judged_project, shown.candidate.sha, "same")
    assert seen and first_clip.pk not in seen
    # A pair from their own clip is refused even when posted by hand.
    own = next(c for c in selectors.pool(judged_project) if c.clip_id == first_clip.pk)
    with pytest.raises(services.JudgementRefused):
        services.record_judgement(outsider, judged_project, own.sha, "same")


# --- the LLM judge --------------------------------------------------------------------------------------------


@pytest.fixture
def fake(fake):
    """conftest's fake Gemini server (this fixture overrides it in this module), answering as the judge of meaning."""
    fake.responder = fixture_responder
    return fake


@pytest.mark.django_db
def test_the_judge_reads_hard_pairs_through_the_sdk_is_cached_costed_and_retried(fake):
    pairs = [(f, a, b) for f, a, b in hard.SAME + hard.DIFFERENT][:6]
    fake.script(g.error(429))  # retried like pre-annotation
    verdicts, asked = judge.judge_pairs(pairs)
    assert asked.asked == 6 and len(fake.generate_requests) == 7
    assert asked.tokens_in > 0 and asked.cost_usd > 0
    request = fake.generate_requests[-1]
    assert request.response_schema["properties"]["verdict"]["enum"] == ["same", "partly", "different"]
    for f, a, b in pairs:
        v = verdicts[pair_sha256(f, a, b)]
        assert v.verdict == FIXTURE[pair_sha256(f, a, b)] and v.reason and v.prompt_version == judge.PROMPT_VERSION
    # Cached per pair (either order), model and prompt version: asked again, nothing is sent.
    _, again = judge.judge_pairs([(f, b, a) for f, a, b in pairs])
    assert again.asked == 0 and again.from_cache == 6 and len(fake.generate_requests) == 7
    assert JudgeVerdict.objects.count() == 6


@pytest.mark.django_db
def test_the_judge_alpha_equals_a_direct_computation_and_the_judge_is_validated_against_people(
    judged_project, lead, fake, django_capture_on_commit_callbacks, monkeypatch
):
    monkeypatch.setattr(judge_alpha, "DE_SAMPLE", 40)  # small samples keep the test short; the maths is the same
    monkeypatch.setattr(judge_alpha, "MAX_WITHIN_PAIRS", 60)
    # People's judgements of the hard pairs, imported as from a file.
    services.import_judgements(
        judged_project,
        services.read_judgements("\n".join(json.dumps(r) for r in hard.rows()), "x.jsonl"),
        source="file:hard.jsonl",
    )
    from annotation.meaning.tasks import start_judge_job

    with django_capture_on_commit_callbacks(execute=True):
        job = start_judge_job(judged_project, user=lead)
    job.refresh_from_db()
    assert job.state == "succeeded", job.error
    report = job.result
    assert report["judge"] == {
        "provider": "gemini",
        "model": judge.judge_model(),
        "prompt_version": judge.PROMPT_VERSION,
    }
    assert report["usage"]["asked"] == len(fake.generate_requests) and report["usage"]["cost_usd"] > 0
    # Direct computation of one field's alpha: every pair of values within a unit, De over the same sample.
    inputs = judge_alpha.field_inputs(judged_project)["internal_emotion"]
    verdict = {v.pair_sha256: v.verdict for v in JudgeVerdict.objects.all()}
    dom = inputs["domain"]

    def delta(a, b):
        if a == b:
            return 0.0
        if 0 in (a, b):
            return 1.0
        return {"same": 0.0, "partly": 0.5, "different": 1.0}[verdict[pair_sha256("internal_emotion", dom[a], dom[b])]]

    n = sum(len(u) for u in inputs["units"])
    do = (
        sum(
            delta(a, b) / (len(u) - 1)
            for u in inputs["units"]
            for i, a in enumerate(u)
            for j, b in enumerate(u)
            if i != j
        )
        / n
    )
    de = np.mean([delta(a, b) for a, b in inputs["sample"]])
    assert report["fields"]["internal_emotion"]["alpha"] == pytest.approx(1 - do / de, abs=1e-4)
    # The judge against people: on the hard pairs the fixture agrees with every judgement.
    validity = selectors.project_validity(judged_project)
    jv = validity["fields"]["internal_emotion"]["judge"]
    assert jv["auroc"] == 1.0 and jv["kappa"] == 1.0 and jv["pairs"] == 8
    # A second run asks nothing new.
    asked_before = len(fake.generate_requests)
    with django_capture_on_commit_callbacks(execute=True):
        start_judge_job(judged_project, user=lead)
    assert len(fake.generate_requests) == asked_before


# --- one figure, three places ---------------------------------------------------------------------------------


@pytest.mark.django_db
def test_every_free_text_figure_says_what_it_is_on_the_page_the_api_and_agreement_json(
    judged_project, lead, model, tmp_path, settings
):
    """The weak embedding measure on internal emotion is never called agreement on meaning."""
    from annotation.agreement import services as agreement
    from annotation.releases.agreement_report import agreement_document

    rows = [r for r in hard.rows() if r["field"] == "internal_emotion"]
    rows = rows + [dict(r, text_a=r["text_a"] + ".") for r in rows] + [dict(r, text_a=r["text_a"] + "!") for r in rows]
    embeddings.embed_texts([t for r in rows for t in (r["text_a"], r["text_b"])], model)  # as the command does
    services.import_judgements(
        judged_project, services.read_judgements("\n".join(json.dumps(r) for r in rows), "x.jsonl"), source="file:x"
    )
    expected = selectors.project_validity(judged_project)["fields"]["internal_emotion"]["embedding"]
    assert expected["pairs"] == 24
    client = Client()
    client.force_login(lead)
    params = agreement.Params.from_query({}, judged_project.work_scope)
    agreement.compute_and_store(judged_project, params, kind=agreement.TEXTS)
    api = client.get(f"/api/v1/projects/{judged_project.slug}/agreement/texts/").json()
    entry = next(s for s in api["report"]["summary"] if s["field"] == "internal_emotion")
    assert entry["measure"] == "embedding" and entry["validity"] == json.loads(json.dumps(expected))
    assert api["report"]["meaning"]["judge"]["prompt_version"] == judge.PROMPT_VERSION
    page = client.get(f"/projects/{judged_project.slug}/agreement/").content.decode()
    section = page.split('id="agreement-texts"', 1)[1].split("</section>", 1)[0]
    title = section.split("</h2>", 1)[0]
    if expected["verdict"] != "validated":
        assert "agreement on meaning" not in title and "similarity of wording and topic" in title
    row = section.split('data-validity-for="internal_emotion"', 1)[1].split("</tr>", 1)[0]
    assert expected["sentence"].replace("'", "&#x27;") in row and f"α measures {expected['wording']}" in row
    document = agreement_document(judged_project, list(judged_project.clips.values_list("sample_id", flat=True)))
    released = next(s for s in document["semantic"]["report"]["summary"] if s["field"] == "internal_emotion")
    assert released["validity"] == json.loads(json.dumps(expected))
    assert document["semantic"]["report"]["meaning"]["judgements"]["count"] == 24
    assert set(released["measures"]) == {"embedding", "judge"}


def _judge_from_file(project, model, rows, name):
    """People's judgements of ``rows`` imported as from a file, their texts embedded as the command does."""
    embeddings.embed_texts([t for r in rows for t in (r["text_a"], r["text_b"])], model)
    services.import_judgements(
        project, services.read_judgements("\n".join(json.dumps(r) for r in rows), name), source=f"file:{name}"
    )


@pytest.mark.django_db
def test_a_release_records_the_judgements_its_validity_read_and_reproduces_after_more_are_made(
    project, model, tmp_path, settings
):
    """Judgements made after a freeze move the project's validity on, not the release's: it recorded its set."""
    from annotation.releases.freeze import JUDGEMENTS_NOT_RECORDED, build_release, freeze, reproduce

    settings.SEMANTIC_EMBEDDINGS = "local"
    settings.RELEASES_ROOT = str(tmp_path / "releases")
    generate(project, clips=12, annotators=3, seed=6)

    def judge_from_file(rows, name):
        _judge_from_file(project, model, rows, name)

    rows = [r for r in hard.rows() if r["field"] == "internal_emotion"]
    judge_from_file(
        rows + [dict(r, text_a=r["text_a"] + ".") for r in rows] + [dict(r, text_a=r["text_a"] + "!") for r in rows],
        "first.jsonl",
    )
    newest = JudgedPair.objects.filter(project=project).latest("pk")
    release, built = freeze(project, version="1.0.0", seed=1, out_dir=tmp_path / "r1")
    recorded = release.manifest["inputs"]["meaning_judgements"]
    assert recorded == {
        "count": 3 * len(rows),
        "as_of": newest.created_at.isoformat(),
        "newest_id": newest.pk,
        # Nobody ran the judge: the release records its judge, with no verdict and no run.
        "judge": {
            "model": judge.judge_model(),
            "prompt_version": judge.PROMPT_VERSION,
            "verdicts": 0,
            "newest_verdict_id": 0,
            "run": None,
        },
    }
    meaning = json.loads(built.files["agreement.json"])["semantic"]["report"]["meaning"]
    assert meaning["judgements"]["count"] == 3 * len(rows) and meaning["judgements"]["last"] == recorded["as_of"]
    card = built.files["README.md"].decode("utf-8")
    assert f"read from {3 * len(rows)} judgements of meaning, the newest made on {recorded['as_of'][:10]}" in card
    assert "The LLM judge's verdicts" not in card  # it read none

    judge_from_file([dict(r, text_a=r["text_a"] + "?") for r in rows], "second.jsonl")
    assert selectors.project_validity(project)["judgements"]["count"] == 4 * len(rows)  # the project's figures moved on
    again, verification = reproduce(release, tmp_path / "again")
    assert verification.ok, verification.lines()
    assert again.files == built.files
    JudgedPair.objects.filter(pk=newest.pk).delete()  # a judgement it read is gone: the reproduction says so
    _, verification = reproduce(release, tmp_path / "after-deletion")
    assert (
        f"the release's free-text validity read {3 * len(rows)} judgements of meaning; {3 * len(rows) - 1} of them are "
        "left" in verification.problems
    )

    # A release frozen before the set was recorded reads every judgement, as it did, and records none.
    old = build_release(project, version="0.9.0", seed=1, clip_ids=again.clip_ids, judgements=JUDGEMENTS_NOT_RECORDED)
    assert "meaning_judgements" not in old.inputs
    assert (
        json.loads(old.files["agreement.json"])["semantic"]["report"]["meaning"]["judgements"]["count"]
        == 4 * len(rows) - 1
    )
    assert "judgements of meaning, the newest" not in old.files["README.md"].decode("utf-8")


@pytest.mark.django_db
def test_a_release_records_the_judge_run_and_verdicts_its_validity_read_and_reproduces_after_the_judge_runs_again(
    project, model, lead, fake, tmp_path, settings, django_capture_on_commit_callbacks, monkeypatch
):
    """A later judge run, verdicts asked since and another judge model move the project's judge figures on, not the
    release's: it recorded the run whose alpha it shows and the verdicts its judge validity read."""
    from annotation.meaning.tasks import start_judge_job
    from annotation.models import Job
    from annotation.releases.freeze import build_release, freeze, reproduce

    monkeypatch.setattr(judge_alpha, "DE_SAMPLE", 40)  # small samples keep the test short; the maths is the same
    monkeypatch.setattr(judge_alpha, "MAX_WITHIN_PAIRS", 60)
    settings.SEMANTIC_EMBEDDINGS = "local"
    settings.RELEASES_ROOT = str(tmp_path / "releases")
    generate(project, clips=12, annotators=3, seed=6)

    def run_judge():
        with django_capture_on_commit_callbacks(execute=True):
            job = start_judge_job(project, user=lead)
        job.refresh_from_db()
        assert job.state == "succeeded", job.error
        return job

    def judge_figures(document):
        return json.loads(document)["semantic"]["report"]["meaning"]

    rows = [r for r in hard.rows() if r["field"] == "internal_emotion"]
    _judge_from_file(project, model, rows, "first.jsonl")
    first_model = judge.judge_model()
    first_run = run_judge()
    # Judged after the run: the judge has read none of these pairs at the freeze.
    _judge_from_file(project, model, [dict(r, text_a=r["text_a"] + ".") for r in rows], "second.jsonl")
    read = JudgeVerdict.objects.filter(model=judge.judge_model(), prompt_version=judge.PROMPT_VERSION)
    count, newest_verdict = read.count(), read.latest("pk")
    release, built = freeze(project, version="1.0.0", seed=1, out_dir=tmp_path / "r1")
    recorded = release.manifest["inputs"]["meaning_judgements"]
    assert recorded["count"] == 2 * len(rows)
    assert recorded["judge"] == {
        "model": judge.judge_model(),
        "prompt_version": judge.PROMPT_VERSION,
        "verdicts": count,
        "newest_verdict_id": newest_verdict.pk,
        "run": first_run.pk,
    }
    meaning = judge_figures(built.files["agreement.json"])
    assert meaning["judge"] == judge.describe()
    assert meaning["judge_run"]["finished_at"] == first_run.finished_at.isoformat()
    frozen = meaning["fields"]["internal_emotion"]["judge"]
    assert frozen["pairs"] == len(rows)  # the second file's pairs have no verdict yet
    card = built.files["README.md"].decode("utf-8")
    assert (
        f"judge {judge.judge_model()}, prompt version {judge.PROMPT_VERSION}, with the {count:,} verdicts it had given "
        f"by the freeze, its alpha from the judge run finished on {first_run.finished_at.isoformat()[:10]}."
    ) in card

    # The judge runs again (it reads the second file's pairs), then under another model.
    second_run = run_judge()
    assert read.count() > count and selectors.latest_judge_run(project) == second_run
    assert selectors.project_validity(project)["fields"]["internal_emotion"]["judge"]["pairs"] == 2 * len(rows)
    settings.MEANING_JUDGE_MODEL = "gemini-judge-later"
    third_run = run_judge()
    assert JudgeVerdict.objects.filter(model="gemini-judge-later").exists()
    assert selectors.with_validity({}, project)["meaning"]["judge"]["model"] == "gemini-judge-later"
    assert selectors.latest_judge_run(project) == third_run
    # Back to the first model: its own latest run is the one shown, not the later run of another model.
    settings.MEANING_JUDGE_MODEL = first_model
    assert selectors.latest_judge_run(project) == second_run
    settings.MEANING_JUDGE_MODEL = "gemini-judge-later"
    again, verification = reproduce(release, tmp_path / "again")
    assert verification.ok, verification.lines()
    assert again.files == built.files
    assert judge_figures(again.files["agreement.json"])["judge"]["model"] == recorded["judge"]["model"]

    # A release that recorded the older set (judgements only) reads the judge as it is now, as it did.
    older = {key: recorded[key] for key in ("count", "as_of", "newest_id")}
    old = build_release(project, version="0.9.0", seed=1, clip_ids=again.clip_ids, judgements=older)
    assert old.inputs["meaning_judgements"] == older
    old_meaning = judge_figures(old.files["agreement.json"])
    assert old_meaning["judge"]["model"] == "gemini-judge-later"
    assert old_meaning["judge_run"]["finished_at"] == third_run.finished_at.isoformat()
    assert "The LLM judge's verdicts" not in old.files["README.md"].decode("utf-8")

    # A verdict it read, or the run whose alpha it shows, gone: the reproduction says so.
    newest_verdict.delete()
    Job.objects.filter(pk=first_run.pk).delete()
    _, verification = reproduce(release, tmp_path / "after-deletion")
    assert {
        f"the release's free-text validity read {count} verdicts of the judge {recorded['judge']['model']} "
        f"({judge.PROMPT_VERSION}); {count - 1} of them are left",
        f"the judge run {first_run.pk} whose alpha the release shows is gone",
    } <= set(verification.problems)
