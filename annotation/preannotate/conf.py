"""Pre-annotation settings, each with a default.

``GEMINI_API_KEY``, ``GEMINI_BASE_URL`` and ``GEMINI_MODEL`` come from
``rescue_annot/settings.py``. The tuning knobs below are read from Django
settings when defined there, else from the environment (so a worker started
with ``PREANNOTATE_RETRY_BASE_DELAY=0.05`` in its environment gets it), else
from the default here. Read them through :func:`get` at call time, never at
import time, so tests can override them.
"""

from __future__ import annotations

import os

from django.conf import settings

DEFAULTS: dict[str, object] = {
    # Price per million tokens (USD), for the cost estimate on each draft.
    # Defaults: Gemini 2.5 Flash list prices (input text/image/video, output incl. thinking).
    "GEMINI_PRICE_IN_PER_MTOK": 0.30,
    "GEMINI_PRICE_OUT_PER_MTOK": 2.50,
    # Per-request HTTP timeout; a long clip's answer can take minutes to generate.
    "GEMINI_TIMEOUT_SECONDS": 300.0,
    # The model's output limit; windows are sized so an answer stays well inside it.
    "GEMINI_MAX_OUTPUT_TOKENS": 65536,
    "GEMINI_TEMPERATURE": 0.2,
    # Requests per minute, shared by every worker (Redis when a broker is configured).
    "GEMINI_RPM": 60,
    # The sliding window of the rate limit, and a safety margin added to it so
    # that network jitter between our clock and the server's never shows a burst
    # above the limit on the server's side.
    "PREANNOTATE_RATE_WINDOW_SECONDS": 60.0,
    "PREANNOTATE_RATE_MARGIN_SECONDS": 1.0,
    # Where the shared limiter keeps its state; default: the Celery broker if it is Redis.
    "PREANNOTATE_RATE_REDIS_URL": "",
    "PREANNOTATE_RATE_KEY": "rescue:preannotate:rate",
    # Attempts per request (the first try included) on 429 / 5xx / timeouts.
    "PREANNOTATE_MAX_ATTEMPTS": 5,
    "PREANNOTATE_RETRY_BASE_DELAY": 2.0,
    "PREANNOTATE_RETRY_MAX_DELAY": 120.0,
    # Cues per request and the context cues shared with each neighbouring window.
    # 60 cues: a release row is ~250 tokens of JSON (p95 ~375; compact JSON of the
    # 406 sample rows: median 836, p95 1,295 characters), a cue gives 1–1.3 rows,
    # so an answer is at most ~29,000 tokens. Gemini 2.5 counts its thinking
    # tokens against the same 65,536-token output limit (up to 8,192 by default),
    # which leaves ~57,000 for the answer: 60 cues use about half of it. The other
    # half is the margin for clips with more splits or wordier rows; a cut-off
    # answer (MAX_TOKENS) fails the whole clip, so this is not a knob for speed
    # (the windows of a clip are asked side by side anyway).
    "PREANNOTATE_WINDOW_CUES": 60,
    "PREANNOTATE_WINDOW_OVERLAP": 4,
    # Windows of one long clip asked at the same time (1: one after another). Every
    # request still goes through the shared rate limiter, so this never raises the rate.
    "PREANNOTATE_WINDOW_CONCURRENCY": 4,
    # The Celery queue of the per-clip tasks (settings route annotation.preannotate.* there too).
    "PREANNOTATE_QUEUE": "preannotate",
    # A queued or running clip job with no sign of life for this long may be re-dispatched
    # by a lead (its worker died; the broker would only redeliver after its visibility timeout).
    "PREANNOTATE_STALE_SECONDS": 900.0,
    # How long to wait for an uploaded video to become ACTIVE.
    "GEMINI_FILE_TIMEOUT_SECONDS": 600.0,
    "GEMINI_FILE_POLL_SECONDS": 2.0,
}


def get(name: str):
    """The value of ``name``: Django settings, then the environment, then DEFAULTS."""
    default = DEFAULTS[name]
    if hasattr(settings, name):
        return getattr(settings, name)
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    if isinstance(default, bool):
        return raw.lower() in ("1", "true", "yes", "on")
    if isinstance(default, int):
        return int(raw)
    if isinstance(default, float):
        return float(raw)
    return raw


def gemini_api_key() -> str:
    return getattr(settings, "GEMINI_API_KEY", "") or ""


def gemini_base_url() -> str:
    return getattr(settings, "GEMINI_BASE_URL", "") or ""


def gemini_model() -> str:
    return getattr(settings, "GEMINI_MODEL", "") or "gemini-2.5-flash"
