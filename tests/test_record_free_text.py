"""A qualification round's free-text fields, scored on the worker with the project's free-text measure:
the figure against a direct computation (the ``krippendorff`` package with the distance 1 - cos of the
model's embeddings, built here by hand), the feedback page's "being computed" state with the label scores
shown at once, and the real worker storing the scores after a submit through the page.

The real model (all-MiniLM-L6-v2) is loaded once for this module; the page and the submit never load it.
"""

from __future__ import annotations

import krippendorff
import numpy as np
import pytest
from django.test import Client

from annotation.agreement import embeddings
from annotation.models import Job, JobState, Revision
from annotation.record import free_text, services
from annotation.services import create_user

from .builders.record import code_like_gold, import_gold_clip

TONES = ["sharp and loud", "", "soft, close to tears"]


@pytest.fixture(scope="module")
def model():
    provider = embeddings.LocalMiniLM()
    provider.model()  # once for the module
    return provider


def _change_tones(index, doc):
    if index % 3 == 0:
        doc["tone_of_voice"] = TONES[(index // 3) % len(TONES)]
    return doc


@pytest.fixture
def round_world(project, lead, tmp_path):
    trainee = create_user("newbie", "annotator", password="newbie-pass-123")[0]
    clip = import_gold_clip(project, tmp_path, "train_group/001_training")
    services.mark_training(project, clip, actor=lead)
    attempt = services.start_round(project, "couple", trainee, actor=lead)
    code_like_gold(clip, trainee, _change_tones)
    return {"project": project, "trainee": trainee, "clip": clip, "attempt": attempt}


def _norm(text) -> str:
    return " ".join((text or "").split())


def _krippendorff_tone(pairs: list[tuple[str, str]], provider) -> tuple[float, int, int]:
    """Tone of voice (one text per row): alpha of (coder, gold) pairs with delta = 1 - cos (0 for the same
    text, 1 between an empty and a written text), through the krippendorff package; units and same-text count."""
    units = [(a, b) for a, b in pairs if a or b]
    values = sorted({t for pair in units for t in pair})
    written = [v for v in values if v]
    vec = dict(zip(written, provider.embed(written)))
    n = len(values)
    delta = np.zeros((n, n))
    for a in range(n):
        for b in range(n):
            va, vb = values[a], values[b]
            if va == vb:
                delta[a, b] = 0.0
            elif not va or not vb:
                delta[a, b] = 1.0
            else:
                delta[a, b] = 1.0 - float(
                    np.dot(vec[va], vec[vb]) / (np.linalg.norm(vec[va]) * np.linalg.norm(vec[vb]))
                )

    def lookup(v1, v2, i1, i2, n_v, dtype=np.float64):
        return delta[i1, i2].astype(dtype)

    data = np.array([[values.index(a) for a, _ in units], [values.index(b) for _, b in units]], dtype=float)
    alpha = krippendorff.alpha(
        reliability_data=data, value_domain=np.arange(n, dtype=float), level_of_measurement=lookup
    )
    return float(alpha), len(units), sum(a == b for a, b in units)


def _direct_tone_alpha(clip, trainee, provider) -> tuple[float, int, int]:
    mine = {
        r.row.row_index: _norm(r.content.get("tone_of_voice"))
        for r in Revision.objects.filter(row__clip=clip, annotator=trainee).select_related("row")
    }
    gold = {r.row_index: _norm(r.gold.content.get("tone_of_voice")) for r in clip.rows.select_related("gold")}
    return _krippendorff_tone([(mine[i], gold[i]) for i in sorted(gold)], provider)


@pytest.mark.django_db
def test_free_text_scores_match_krippendorff_with_the_embedding_distance(round_world, model, monkeypatch):
    clip, trainee = round_world["clip"], round_world["trainee"]

    def no_model_here(*args, **kwargs):
        raise AssertionError("the embedding model must not load in the submit or the page")

    monkeypatch.setattr(free_text, "embed_texts", no_model_here)
    attempt = services.submit_round(round_world["attempt"], trainee)
    job = Job.objects.get(kind=free_text.JOB_KIND, key=str(attempt.pk))
    assert job.state == JobState.QUEUED and job.params["attempt"] == attempt.pk
    assert free_text.text_state(attempt) == "computing" and not free_text.text_scores(attempt.scores)

    # The feedback page at once: the label scores, and the free text being computed.
    client = Client()
    client.force_login(trainee)
    page = client.get(f"/projects/{attempt.project.slug}/qualification/rounds/{attempt.pk}/").content.decode()
    assert 'id="scores"' in page and "Utterance type" in page
    assert 'id="free-text-state"' in page and "being computed" in page and 'id="text-scores"' not in page
    body = client.get(f"/api/v1/projects/{attempt.project.slug}/record/coders/{trainee.pk}/").json()
    assert "computing" in str(body)

    # What the worker does, called here with the module's model.
    monkeypatch.undo()
    assert services.store_text_scores(attempt.pk, provider=model) == len(free_text.TEXT_FIELDS)
    attempt.refresh_from_db()
    tone = attempt.scores["text.tone_of_voice"]
    expected, units, same = _direct_tone_alpha(clip, trainee, model)
    assert tone["alpha"] == pytest.approx(expected, abs=1e-4)
    assert tone["units"] == units and tone["matching"] == {
        "rows": units,
        "same": same,
        "share": pytest.approx(same / units, abs=1e-4),
    }
    assert 0 < same < units and tone["alpha"] < 1
    assert tone["interval"][0] <= tone["alpha"] <= tone["interval"][1]
    assert attempt.scores["utterance_type"]["alpha"] == 1.0  # the label scores are kept as they were
    # A field the trainee copied from the gold word for word, one text on every row: no variation, alpha undefined (said
    # why).
    body_posture = attempt.scores["text.body_posture"]
    assert body_posture["matching"]["same"] == body_posture["matching"]["rows"] > 0
    assert body_posture["alpha"] is None and "no variation" in body_posture["reason"]

    page = client.get(f"/projects/{attempt.project.slug}/qualification/rounds/{attempt.pk}/").content.decode()
    assert 'id="text-scores"' in page and "being computed" not in page
    assert f"{tone['alpha']:.3f}" in page


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_the_worker_scores_the_free_text_after_a_submit_on_the_page(celery_worker_process, project, lead, tmp_path):
    from .conftest import wait_for

    trainee = create_user("newbie", "annotator", password="newbie-pass-123")[0]
    clip = import_gold_clip(project, tmp_path, "train_group/001_training")
    services.mark_training(project, clip, actor=lead)
    services.start_round(project, "couple", trainee, actor=lead)
    code_like_gold(clip, trainee, _change_tones)
    client = Client()
    client.force_login(trainee)
    response = client.post(f"/projects/{project.slug}/qualification/", {"scenario": "couple", "action": "submit"})
    assert response.status_code == 302
    job = Job.objects.get(kind=free_text.JOB_KIND)
    wait_for(lambda: Job.objects.get(pk=job.pk).state in (JobState.SUCCEEDED, JobState.FAILED), timeout=180)
    job.refresh_from_db()
    assert job.state == JobState.SUCCEEDED, job.error
    page = client.get(response["Location"]).content.decode()
    assert 'id="text-scores"' in page and "Tone of voice" in page


@pytest.mark.django_db
def test_the_dashboard_free_text_part_against_krippendorff(project, lead, model):
    from annotation.models import Assignment, Gold
    from annotation.record import dashboard, dashboard_texts
    from annotation.synthetic import generate

    generate(project, clips=6, annotators=3, seed=5)
    dashboard.compute_and_store(project, "couple")  # the label dashboard, as its worker stores it
    fp = dashboard.fingerprint(project, "couple")
    assert dashboard_texts.text_state(project, "couple", fp).status == "missing"  # only reads
    state = dashboard_texts.ensure_text_report(project, "couple", fp, user=lead)  # the page's call: a job, no model
    assert state.status == JobState.QUEUED and state.report is None
    client = Client()
    client.force_login(lead)
    page = client.get(f"/projects/{project.slug}/record/?scenario=couple").content.decode()
    assert 'id="text-state"' in page and "being computed" in page

    dashboard_texts.compute_and_store(project, "couple", fp, provider=model)  # what the embeddings worker does
    state = dashboard_texts.text_state(project, "couple", fp)
    assert state.status == "ready"
    tone = next(f for f in state.report["fields"] if f["key"] == "tone_of_voice")
    golds = {g.row_id: g.content for g in Gold.objects.filter(row__clip__project=project, row__clip__scenario="couple")}
    for figure in tone["coders"]:
        submitted = Assignment.objects.filter(
            annotator__username=figure["coder"], state="submitted", clip__scenario="couple"
        ).values("clip_id")
        pairs = [
            (_norm(r.content.get("tone_of_voice")), _norm(golds[r.row_id].get("tone_of_voice")))
            for r in Revision.objects.filter(
                annotator__username=figure["coder"], row__clip_id__in=submitted, row_id__in=list(golds)
            ).order_by("row_id")
        ]
        expected, units, same = _krippendorff_tone(pairs, model)
        assert figure["units"] == units and figure["matching"]["same"] == same
        assert figure["alpha"] == pytest.approx(expected, abs=1e-4)
    page = client.get(f"/projects/{project.slug}/record/?scenario=couple").content.decode()
    assert 'id="text-summary"' in page and f"{tone['coders'][0]['alpha']:.3f}" in page
