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
    # The model's output limit. Gemini 2.5 counts its thinking tokens against it, so
    # the thinking budget below is set explicitly on every request and the answer
    # gets what is left (windows are sized from that, see PREANNOTATE_WINDOW_CUES).
    "GEMINI_MAX_OUTPUT_TOKENS": 65536,
    # Tokens the model may spend thinking per request (0 turns thinking off on
    # gemini-2.5-flash; its range is 0-24,576). Left unset, 2.5 Flash thinks
    # dynamically up to ~24,576 tokens, which made the room left for the answer unknown.
    "GEMINI_THINKING_BUDGET": 8192,
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
    # Cues per request. 0 (the default) sizes the window from the output budget:
    #   (GEMINI_MAX_OUTPUT_TOKENS - GEMINI_THINKING_BUDGET)
    #     / (PREANNOTATE_TOKENS_PER_ROW x PREANNOTATE_ROWS_PER_CUE x PREANNOTATE_ANSWER_HEADROOM)
    # = (65,536 - 8,192) / (357 x 1.3 x 1.5) = 82 cues with the defaults, so most family
    # clips (about 71 rows) go in one request. A number here overrides the computation.
    "PREANNOTATE_WINDOW_CUES": 0,
    # Answer tokens per row: the 95th percentile of the 406 rows of the real sample as
    # the model's answer JSON, counted with the Gemma 3 tokenizer Gemini 2.x uses
    # (bench/bench_row_tokens.py; median 244, mean 250, max 413).
    "PREANNOTATE_TOKENS_PER_ROW": 357,
    # Rows per cue: a cue becomes one row, sometimes two (split addressees).
    "PREANNOTATE_ROWS_PER_CUE": 1.3,
    # Room for whitespace in the model's JSON (indented JSON of the same rows measured
    # 1.33x compact) and for clips wordier than the sample. An answer cut off anyway
    # (MAX_TOKENS) is asked again in two halves, down to one cue.
    "PREANNOTATE_ANSWER_HEADROOM": 1.5,
    # Context cues shared with each neighbouring window.
    "PREANNOTATE_WINDOW_OVERLAP": 4,
    # Windows of one long clip asked at the same time (1: one after another). Every
    # request still goes through the shared rate limiter, so this never raises the rate.
    "PREANNOTATE_WINDOW_CONCURRENCY": 4,
    # The Celery queue of the per-clip tasks (settings route annotation.preannotate.* there too).
    "PREANNOTATE_QUEUE": "preannotate",
    # A queued or running clip job with no sign of life for this long may be re-dispatched
    # by a lead (its worker died; the broker would only redeliver after its visibility timeout).
    "PREANNOTATE_STALE_SECONDS": 900.0,
    # How long to wait for an uploaded video or audio file to become ACTIVE.
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


class BudgetError(ValueError):
    """The output and thinking budgets leave no room for an answer (message for the user)."""


def thinking_budget() -> int:
    budget = int(get("GEMINI_THINKING_BUDGET"))
    if budget < 0:
        # -1 asks Gemini for dynamic thinking: the room left for the answer would be unknown again.
        raise BudgetError(f"GEMINI_THINKING_BUDGET must be 0 or more tokens, got {budget}")
    return budget


def answer_budget() -> int:
    """Output tokens left for the answer once the model has thought as much as it may."""
    limit, thinking = int(get("GEMINI_MAX_OUTPUT_TOKENS")), thinking_budget()
    room = limit - thinking
    if room <= 0:
        raise BudgetError(
            f"GEMINI_THINKING_BUDGET ({thinking}) leaves nothing of GEMINI_MAX_OUTPUT_TOKENS ({limit}) for the answer"
        )
    return room


def window_cues() -> int:
    """Cues per request: PREANNOTATE_WINDOW_CUES if set, else what the answer budget holds."""
    explicit = int(get("PREANNOTATE_WINDOW_CUES"))
    if explicit > 0:
        return explicit
    per_cue = (
        float(get("PREANNOTATE_TOKENS_PER_ROW"))
        * float(get("PREANNOTATE_ROWS_PER_CUE"))
        * float(get("PREANNOTATE_ANSWER_HEADROOM"))
    )
    cues = int(answer_budget() // per_cue)
    if cues < 1:
        raise BudgetError(f"an answer budget of {answer_budget()} tokens does not hold one cue ({per_cue:.0f} tokens)")
    return cues
