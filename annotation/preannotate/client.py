"""Gemini calls through the google-genai SDK: structured output, retries, rate limit, fallback.

One :class:`GeminiClient` serves one clip; the windows of a long clip may call
it from several threads at once. Every HTTP attempt first takes a slot from the
shared rate limiter. 429, 5xx and timeouts are retried with
exponential backoff and jitter (tenacity), honouring ``Retry-After`` (header or
the API's ``RetryInfo``) when the server sends one; the SDK's own retries are
left off so that every attempt is counted and limited here.

If the API refuses the response schema as too complex (400 INVALID_ARGUMENT,
"too many states for serving"), the client switches to JSON mode without a
schema for the rest of the clip and records why; the answer is validated the
same way either way. An answer that is not usable (no candidates, blocked,
MAX_TOKENS, SAFETY, empty) raises :class:`PreannotationFailed` with its reason.
"""

from __future__ import annotations

import email.utils
import json
import logging
import re
import threading
import time
from dataclasses import dataclass, field

import tenacity
from google import genai
from google.genai import errors as genai_errors
from google.genai import types

from . import conf
from .errors import PreannotationFailed
from .ratelimit import RateLimiter, shared_limiter

log = logging.getLogger(__name__)


def _network_errors() -> tuple[type[BaseException], ...]:
    found: list[type[BaseException]] = []
    for name in ("httpx2", "httpx"):
        try:
            module = __import__(name)
        except ImportError:
            continue
        found += [module.TimeoutException, module.TransportError]
    return tuple(found)


NETWORK_ERRORS = _network_errors()
TIMEOUT_ERRORS = tuple(e for e in NETWORK_ERRORS if e.__name__ == "TimeoutException")
SAFETY_FINISH = {"SAFETY", "PROHIBITED_CONTENT", "BLOCKLIST", "SPII", "IMAGE_SAFETY", "IMAGE_PROHIBITED_CONTENT"}
NORMAL_FINISH = {None, "STOP", "FINISH_REASON_UNSPECIFIED"}


def is_transient(exc: BaseException) -> bool:
    """429, 408, 5xx and network failures are worth another attempt; the rest are not."""
    if isinstance(exc, genai_errors.APIError):
        return exc.code in (408, 429) or 500 <= (exc.code or 0) < 600
    return isinstance(exc, NETWORK_ERRORS)


def schema_refused(exc: BaseException) -> bool:
    """The API's 400 for a response schema it cannot serve.

    The reason comes either in the message or in a BadRequest field violation;
    some models answer only a bare INVALID_ARGUMENT. A 400 INVALID_ARGUMENT for a
    request that carried a schema is therefore taken as a refusal of the schema
    (unless it names the key): the JSON-mode retry then shows whether it was.
    """
    if not isinstance(exc, genai_errors.APIError) or exc.code != 400:
        return False
    text = f"{exc.message or ''} {json.dumps(exc.details, default=str)}".lower()
    if "too many states" in text:
        return True
    return (exc.status or "") == "INVALID_ARGUMENT" and "api key" not in text


def retry_after_seconds(exc: BaseException | None) -> float | None:
    """The server's own delay hint: the Retry-After header, else google.rpc.RetryInfo in the body."""
    if not isinstance(exc, genai_errors.APIError):
        return None
    headers = getattr(getattr(exc, "response", None), "headers", None) or {}
    value = headers.get("retry-after") if hasattr(headers, "get") else None
    if value:
        value = value.strip()
        if re.fullmatch(r"\d+(\.\d+)?", value):
            return float(value)
        try:
            when = email.utils.parsedate_to_datetime(value)
            return max(0.0, when.timestamp() - time.time())
        except (TypeError, ValueError):
            pass
    details = exc.details.get("error", exc.details) if isinstance(exc.details, dict) else {}
    for item in (details.get("details") or []) if isinstance(details, dict) else []:
        if isinstance(item, dict) and str(item.get("@type", "")).endswith("RetryInfo"):
            m = re.fullmatch(r"(\d+(?:\.\d+)?)s", str(item.get("retryDelay", "")))
            if m:
                return float(m.group(1))
    return None


def _failure_reason(exc: BaseException) -> str:
    if isinstance(exc, genai_errors.APIError):
        if exc.code == 429:
            return "rate_limited"
        if exc.code == 408 or 500 <= (exc.code or 0) < 600:
            return "server_error" if exc.code != 408 else "timeout"
        return "api_error"
    if isinstance(exc, TIMEOUT_ERRORS):
        return "timeout"
    return "network"


def _describe(exc: BaseException) -> str:
    if isinstance(exc, genai_errors.APIError):
        return f"HTTP {exc.code} {exc.status or ''}: {(exc.message or str(exc.details))[:300]}".replace("  ", " ")
    return f"{type(exc).__name__}: {str(exc)[:300] or 'no detail'}"


@dataclass
class Answer:
    text: str
    model_version: str
    tokens_in: int
    tokens_out: int
    latency: float  # seconds, the successful attempt only


@dataclass
class Usage:
    """What the clip cost so far, failed answers included (they are billed too)."""

    requests: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    latency: float = 0.0
    model_versions: list[str] = field(default_factory=list)

    def cost(self) -> float:
        price_in = float(conf.get("GEMINI_PRICE_IN_PER_MTOK"))
        price_out = float(conf.get("GEMINI_PRICE_OUT_PER_MTOK"))
        return round(self.tokens_in * price_in / 1e6 + self.tokens_out * price_out / 1e6, 6)

    def as_dict(self) -> dict:
        return {
            "requests": self.requests,
            "tokens_in": self.tokens_in,
            "tokens_out": self.tokens_out,
            "latency_s": round(self.latency, 3),
            "cost_usd": self.cost(),
            "model_versions": list(self.model_versions),
        }


def request_config(
    system: str,
    schema: types.Schema | None,
    max_output_tokens: int | None,
    temperature: float | None,
    thinking_budget: int | None = None,
) -> types.GenerateContentConfig:
    """The generateContent configuration of every request (JSON out, with or without a schema).

    The thinking budget is always sent when known: thinking tokens count against
    ``max_output_tokens``, and only a fixed budget leaves a known room for the answer.
    """
    return types.GenerateContentConfig(
        system_instruction=system,
        response_mime_type="application/json",
        response_schema=schema,
        max_output_tokens=max_output_tokens,
        temperature=temperature,
        thinking_config=types.ThinkingConfig(thinking_budget=thinking_budget) if thinking_budget is not None else None,
        # No tools are offered; skip the SDK's function-calling loop.
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
    )


class GeminiClient:
    """Calls for one clip; make one per task. ``generate`` may run in several threads at
    once (a long clip's windows): what they share (usage, attempts, the schema mode) is
    updated under a lock."""

    def __init__(
        self,
        *,
        api_key: str,
        base_url: str = "",
        model: str,
        timeout: float,
        max_output_tokens: int,
        temperature: float | None,
        limiter: RateLimiter,
        thinking_budget: int | None = None,
        max_attempts: int,
        base_delay: float,
        max_delay: float,
        sleep=time.sleep,
    ):
        if not api_key:
            raise PreannotationFailed("api_error", "GEMINI_API_KEY is not set; use the offline provider or set the key")
        self.model = model
        self.timeout = timeout
        self.max_output_tokens = max_output_tokens
        self.thinking_budget = thinking_budget
        self.temperature = temperature
        self.limiter = limiter
        self.max_attempts = max(1, int(max_attempts))
        self.base_delay, self.max_delay = float(base_delay), float(max_delay)
        self._sleep = sleep
        self._sdk = _sdk_client(api_key, base_url, int(timeout * 1000))
        self.schema_mode = "response_schema"
        self.fallback_reason = ""
        self.usage = Usage()
        self.attempts: list[dict] = []  # one entry per failed HTTP attempt, for the job's record
        self._uploaded: list[str] = []
        self._lock = threading.Lock()

    @classmethod
    def from_settings(cls, **overrides) -> GeminiClient:
        model = overrides.pop("model", None) or conf.gemini_model()
        options = {
            "api_key": conf.gemini_api_key(),
            "base_url": conf.gemini_base_url(),
            "model": model,
            "timeout": float(conf.get("GEMINI_TIMEOUT_SECONDS")),
            "max_output_tokens": int(conf.get("GEMINI_MAX_OUTPUT_TOKENS")),
            "thinking_budget": conf.thinking_budget(),
            "temperature": conf.get("GEMINI_TEMPERATURE"),
            "limiter": shared_limiter(model),
            "max_attempts": int(conf.get("PREANNOTATE_MAX_ATTEMPTS")),
            "base_delay": float(conf.get("PREANNOTATE_RETRY_BASE_DELAY")),
            "max_delay": float(conf.get("PREANNOTATE_RETRY_MAX_DELAY")),
        }
        options.update(overrides)
        return cls(**options)

    # --- retries ---------------------------------------------------------------

    def _wait(self, state: tenacity.RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        hinted = retry_after_seconds(exc)
        if hinted is not None:
            # The server said how long; a little jitter keeps workers from coming back together.
            return min(self.max_delay, hinted) * (1 + 0.1 * _jitter())
        return tenacity.wait_exponential_jitter(initial=self.base_delay, max=self.max_delay, jitter=self.base_delay)(
            state
        )

    def _before_sleep(self, state: tenacity.RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome else None
        delay = state.next_action.sleep if state.next_action else 0.0
        with self._lock:
            self.attempts.append(
                {"attempt": state.attempt_number, "error": _describe(exc), "retry_in_s": round(delay, 3)}
            )
        log.info("Gemini attempt %s failed (%s); retrying in %.2f s", state.attempt_number, _describe(exc), delay)

    def _retrying(self, call, *args, **kwargs):
        retrying = tenacity.Retrying(
            stop=tenacity.stop_after_attempt(self.max_attempts),
            retry=tenacity.retry_if_exception(is_transient),
            wait=self._wait,
            before_sleep=self._before_sleep,
            sleep=self._sleep,
            reraise=True,
        )
        try:
            return retrying(call, *args, **kwargs)
        except PreannotationFailed:
            raise
        except Exception as exc:
            if not isinstance(exc, (genai_errors.APIError, *NETWORK_ERRORS)):
                raise
            tries = retrying.statistics.get("attempt_number", 1)
            after = f" after {tries} attempts" if tries > 1 else ""
            with self._lock:
                self.attempts.append({"attempt": tries, "error": _describe(exc), "retry_in_s": None})
            raise PreannotationFailed(
                _failure_reason(exc), f"{_describe(exc)}{after}", usage=self.usage_now(), attempts=self.attempts
            ) from exc

    def usage_now(self) -> dict:
        """The clip's usage so far, read consistently while other windows may be adding to it."""
        with self._lock:
            return self.usage.as_dict()

    # --- generateContent -------------------------------------------------------

    def generate(
        self,
        system: str,
        user: str,
        *,
        schema: types.Schema | None = None,
        schema_dict: dict | None = None,
        media: types.Part | None = None,
    ) -> Answer:
        """One answer for one request, retried as needed. Raises PreannotationFailed."""
        return self._retrying(self._attempt, system, user, schema, schema_dict, media)

    def _attempt(self, system, user, schema, schema_dict, media) -> Answer:
        self.limiter.acquire()
        use_schema = schema is not None and self.schema_mode == "response_schema"
        text = user
        if schema_dict is not None and not use_schema:
            # Without structured output the model still needs the exact structure.
            text += "\n\nAnswer with JSON only, following exactly this schema:\n" + json.dumps(
                schema_dict, separators=(",", ":")
            )
        config = request_config(
            system, schema if use_schema else None, self.max_output_tokens, self.temperature, self.thinking_budget
        )
        contents = [media, text] if media is not None else [text]
        started = time.monotonic()
        try:
            response = self._sdk.models.generate_content(model=self.model, contents=contents, config=config)
        except genai_errors.APIError as exc:
            with self._lock:
                self.usage.requests += 1
                refused = use_schema and schema_refused(exc)
                if refused and self.schema_mode == "response_schema":
                    self.schema_mode = "json_fallback"
                    self.fallback_reason = _describe(exc)
                    log.warning(
                        "Gemini refused the response schema (%s); falling back to JSON mode", self.fallback_reason
                    )
            if refused:
                return self._attempt(system, user, schema, schema_dict, media)
            raise
        except NETWORK_ERRORS:
            with self._lock:
                self.usage.requests += 1
            raise
        latency = time.monotonic() - started
        with self._lock:
            self.usage.requests += 1
            self.usage.latency += latency
        return self._read(response, latency)

    def _read(self, response: types.GenerateContentResponse, latency: float) -> Answer:
        meta = response.usage_metadata
        tokens_in = (meta.prompt_token_count or 0) if meta else 0
        tokens_out = ((meta.candidates_token_count or 0) + (meta.thoughts_token_count or 0)) if meta else 0
        version = response.model_version or ""
        with self._lock:
            self.usage.tokens_in += tokens_in
            self.usage.tokens_out += tokens_out
            if version and version not in self.usage.model_versions:
                self.usage.model_versions.append(version)

        def fail(reason: str, detail: str):
            return PreannotationFailed(reason, detail, usage=self.usage_now(), attempts=self.attempts)

        if not response.candidates:
            feedback = response.prompt_feedback
            block = getattr(feedback, "block_reason", None) if feedback else None
            if block:
                name = getattr(block, "value", str(block))
                reason = "safety" if name in SAFETY_FINISH else "blocked"
                raise fail(reason, f"the request was blocked (block reason {name}); no answer was generated")
            raise fail("no_candidates", "the API answered without any candidate")
        candidate = response.candidates[0]
        finish = getattr(candidate.finish_reason, "value", candidate.finish_reason)
        if finish == "MAX_TOKENS":
            raise fail(
                "max_tokens",
                f"the answer was cut off after {tokens_out} output tokens (finish reason MAX_TOKENS)",
            )
        if finish in SAFETY_FINISH:
            raise fail("safety", f"the answer was blocked (finish reason {finish})")
        if finish not in NORMAL_FINISH:
            raise fail("finish_reason", f"the model stopped with finish reason {finish}")
        parts = (candidate.content.parts if candidate.content else None) or []
        text = "".join(p.text for p in parts if p.text and not p.thought)
        if not text.strip():
            raise fail("empty", "the answer contained no text")
        return Answer(text=text, model_version=version, tokens_in=tokens_in, tokens_out=tokens_out, latency=latency)

    # --- media -----------------------------------------------------------------

    def media_part(self, path: str, url: str, mime_type: str) -> types.Part:
        """The part that carries the clip's video or audio: a local file is uploaded with the
        Files API (and waited for until ACTIVE), a URL is sent as it is for the API to fetch."""
        if url:
            return types.Part(file_data=types.FileData(file_uri=url, mime_type=mime_type or None))
        return self.upload_media(path, mime_type)

    def upload_media(self, path: str, mime_type: str) -> types.Part:
        """Upload a video or audio file with the Files API, wait until it is ACTIVE, return the part to send."""
        try:
            uploaded = self._retrying(
                lambda: self._sdk.files.upload(file=path, config=types.UploadFileConfig(mime_type=mime_type))
            )
        except PreannotationFailed as exc:
            raise PreannotationFailed(
                "media_upload", exc.detail, usage=self.usage_now(), attempts=self.attempts
            ) from exc
        self._uploaded.append(uploaded.name)
        deadline = time.monotonic() + float(conf.get("GEMINI_FILE_TIMEOUT_SECONDS"))
        while getattr(uploaded.state, "value", uploaded.state) == "PROCESSING":
            if time.monotonic() > deadline:
                raise PreannotationFailed(
                    "media_upload", f"the uploaded file {uploaded.name} was still processing after the timeout"
                )
            self._sleep(float(conf.get("GEMINI_FILE_POLL_SECONDS")))
            uploaded = self._retrying(self._sdk.files.get, name=uploaded.name)
        state = getattr(uploaded.state, "value", uploaded.state)
        if state == "FAILED":
            raise PreannotationFailed(
                "media_upload", f"the API could not process the file {uploaded.name}: {uploaded.error}"
            )
        return types.Part.from_uri(file_uri=uploaded.uri, mime_type=uploaded.mime_type or mime_type)

    def close(self) -> None:
        """Delete the files uploaded for this clip (they would expire after 48 h anyway)."""
        for name in self._uploaded:
            try:
                self._sdk.files.delete(name=name)
            except Exception:  # cleanup only
                log.info("could not delete uploaded file %s", name, exc_info=True)
        self._uploaded.clear()


_SDK_CLIENTS: dict[tuple, genai.Client] = {}
_SDK_LOCK = threading.Lock()


def prepare_sdk_client() -> None:
    """Build the SDK client of the configured endpoint now (see ``gemini.warm_up``)."""
    if conf.gemini_api_key():
        _sdk_client(
            conf.gemini_api_key(), conf.gemini_base_url(), int(float(conf.get("GEMINI_TIMEOUT_SECONDS")) * 1000)
        )


def _sdk_client(api_key: str, base_url: str, timeout_ms: int) -> genai.Client:
    """One SDK client per process and configuration: building one loads the TLS trust store
    twice (~0.1 s of CPU), which at hundreds of clips per worker is worth keeping. A client
    built in a prefork worker's parent before the fork has no connection open yet, so each
    pool process inherits it and opens its own connections on first use."""
    key = (api_key, base_url, timeout_ms)
    with _SDK_LOCK:
        client = _SDK_CLIENTS.get(key)
        if client is None:
            client = _SDK_CLIENTS[key] = genai.Client(
                api_key=api_key,
                http_options=types.HttpOptions(base_url=base_url or None, timeout=timeout_ms),
            )
        return client


def _jitter() -> float:
    import random

    return random.random()
