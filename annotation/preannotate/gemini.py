"""The Gemini provider: prompt, windows, calls, validation and stitching for one clip.

Pure with respect to the database: it reads a :class:`ClipInput` and returns an
:class:`Outcome` (or raises :class:`PreannotationFailed`); storing is the
caller's business, in one transaction.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed

from ..models import DraftSource
from ..taxonomy import DEFAULT_VERSION
from . import conf, windows
from .client import GeminiClient
from .errors import PreannotationFailed
from .prompts import system_prompt
from .response_schema import lean_schema, lean_schema_dict
from .transcript import ClipInput, render_transcript
from .validate import Outcome, finalise, parse_answer

log = logging.getLogger(__name__)
PROVIDER = "gemini"


def plan_for(inp: ClipInput) -> list[windows.Window]:
    return windows.plan(len(inp.cues), conf.window_cues(), int(conf.get("PREANNOTATE_WINDOW_OVERLAP")))


def prompt_version(scenario: str, taxonomy_version: str = DEFAULT_VERSION) -> str:
    return system_prompt(scenario, taxonomy_version).version


def annotate(
    inp: ClipInput, *, client: GeminiClient | None = None, progress: Callable[[int, int], None] | None = None
) -> Outcome:
    if not any(c.has_words for c in inp.cues):
        raise PreannotationFailed("no_cues", "the clip has no transcript cue with words")
    try:
        plan = plan_for(inp)
        client = client or GeminiClient.from_settings()
    except conf.BudgetError as exc:
        raise PreannotationFailed("configuration", str(exc)) from exc
    prompt = system_prompt(inp.scenario, inp.taxonomy_version, modality=inp.modality)
    schema, schema_dict = (
        lean_schema(inp.scenario, inp.taxonomy_version),
        lean_schema_dict(inp.scenario, inp.taxonomy_version),
    )
    overlap = int(conf.get("PREANNOTATE_WINDOW_OVERLAP"))
    cut_off: list[str] = []  # parts whose answer hit the output limit and were asked again in halves
    try:
        media = client.media_part(inp.media_path, inp.media_url, inp.media_mime) if inp.has_media else None

        def ask(window: windows.Window) -> list[tuple[windows.Window, list]]:
            user = render_transcript(inp, window.first, window.stop, window.label, len(plan))
            where = f" (part {window.label} of {len(plan)})" if len(plan) > 1 or window.part != "1" else ""
            try:
                answer = client.generate(prompt.text, user, schema=schema, schema_dict=schema_dict, media=media)
                return [(window, parse_answer(answer.text, inp, window=window.number, part=window.label))]
            except PreannotationFailed as exc:
                halves = windows.split(window, len(inp.cues), overlap) if exc.reason == "max_tokens" else None
                if halves is None:
                    raise PreannotationFailed(exc.reason, exc.detail + where) from exc
            # Cut off at the output limit: the same cues in two smaller requests (the cost of
            # the cut-off answer is already counted in the client's usage).
            log.info("clip %s: answer%s cut off at the output limit; asking again in two halves", inp.sample_id, where)
            cut_off.append(window.label)
            return [pair for half in halves for pair in ask(half)]

        answered = [pair for pairs in _ask_all(plan, ask, progress) for pair in pairs]
    except PreannotationFailed as exc:
        # Usage as of now: with windows asked side by side, others may have been billed since.
        exc.usage, exc.attempts = client.usage_now(), client.attempts
        raise
    finally:
        client.close()

    rows = windows.stitch([w for w, _ in answered], [r for _, r in answered], inp.cues)
    summary = finalise(rows, inp)
    usage = client.usage_now()
    summary.update(
        windows=len(answered),
        cut_off_parts=sorted(cut_off),
        schema_mode=client.schema_mode,
        retries=len(client.attempts),
        attempts=client.attempts,
    )
    # Copied onto every draft of the clip. Usage figures are those of the whole clip
    # (all its requests); prices per million tokens are in the job's result.
    provenance = {
        "provider": PROVIDER,
        "model": client.model,
        # What the API says it ran (e.g. a dated snapshot behind the alias).
        "model_version": usage["model_versions"][0] if len(usage["model_versions"]) == 1 else usage["model_versions"],
        "prompt_version": prompt.version,
        "taxonomy_version": inp.taxonomy_version,
        "input_hash": inp.input_hash(),
        "modality": str(inp.modality),
        "schema_mode": client.schema_mode,  # response_schema | json_fallback
        "windows": len(answered),
        "window_cues": conf.window_cues(),
        "thinking_budget": client.thinking_budget,
        "requests": usage["requests"],
        "tokens_in": usage["tokens_in"],
        "tokens_out": usage["tokens_out"],
        "latency_s": usage["latency_s"],
        "cost_usd": usage["cost_usd"],
    }
    if client.fallback_reason:
        provenance["schema_fallback_reason"] = client.fallback_reason
    if inp.has_media:
        provenance["media"] = inp.media_fingerprint
    if inp.media_skipped:
        provenance["media_skipped"] = inp.media_skipped
    summary["price_per_mtok"] = {
        "in": float(conf.get("GEMINI_PRICE_IN_PER_MTOK")),
        "out": float(conf.get("GEMINI_PRICE_OUT_PER_MTOK")),
    }
    return Outcome(rows=rows, source=DraftSource.LLM, provenance=provenance, summary=summary)


def _ask_all(plan: list[windows.Window], ask, progress) -> list:
    """The answers of every window of ``plan``, in plan order (each what ``ask`` returned).

    A long clip's windows are independent requests, so they are asked side by
    side (at most PREANNOTATE_WINDOW_CONCURRENCY at once): the clip then takes
    about one answer's time instead of one per window, and a long clip started
    late no longer holds its worker after the others are done. Each request
    still takes its slot from the shared rate limiter first, so the limit holds
    exactly as for sequential requests. If a window fails, windows not started
    yet are cancelled, those in flight are waited for (their cost is counted),
    and the failure of the earliest failed window is raised.

    ``progress`` is called here, in the task's own thread, after each window but
    the last (the last is the job's completion, written with the result): it
    writes to the database, which the window threads never touch.
    """
    total = len(plan)
    if total == 1:
        return [ask(plan[0])]
    width = max(1, min(total, int(conf.get("PREANNOTATE_WINDOW_CONCURRENCY"))))
    answers: dict[int, list] = {}
    failures: dict[int, BaseException] = {}
    with ThreadPoolExecutor(max_workers=width, thread_name_prefix="preannotate-window") as pool:
        futures = {pool.submit(ask, window): window.number for window in plan}
        for future in as_completed(futures):
            number = futures[future]
            if future.cancelled():
                continue
            error = future.exception()
            if error is not None:
                failures[number] = error
                for other in futures:
                    other.cancel()
                continue
            answers[number] = future.result()
            if progress and not failures and len(answers) < total:
                progress(len(answers), total)
    if failures:
        raise failures[min(failures)]
    return [answers[window.number] for window in plan]


def warm_up() -> None:
    """Do, once and without network, the lazy work of a first request.

    A prefork worker calls it in the parent before forking, so that its pool
    processes start warm instead of each paying it on its first clip, all at
    the same moment (eight processes x ~0.3 s of CPU on a small machine held the
    first requests back by seconds). What it prepares: the prompts and lean
    schemas, the SDK client of the configured endpoint (its TLS contexts), and
    one generateContent call through the SDK against an in-memory transport,
    which builds the SDK's request and response models the way a real answer
    does.
    """
    from google import genai
    from google.genai import types

    from ..models import Modality
    from ..taxonomy import SCENARIOS, available_versions
    from .client import prepare_sdk_client, request_config

    for version in available_versions():
        for scenario in SCENARIOS:
            for modality in Modality.values:
                system_prompt(scenario, version, modality=modality)
            lean_schema(scenario, version)
    prepare_sdk_client()
    try:
        http = _offline_http()
    except ImportError:  # neither HTTP library the SDK can use: nothing to warm
        return
    offline = genai.Client(
        api_key="warm-up",  # pragma: allowlist secret (a placeholder: this client never leaves the process)
        http_options=types.HttpOptions(
            base_url="http://warm-up.invalid", httpx_client=http.sync, httpx_async_client=http.asynchronous
        ),
    )
    quiet = logging.getLogger(http.name)  # its request log line would name a host that does not exist
    was_disabled, quiet.disabled = quiet.disabled, True
    try:
        for schema in (lean_schema(SCENARIOS[0]), None):
            offline.models.generate_content(
                model=conf.gemini_model(),
                contents=[types.Part.from_uri(file_uri="warm-up", mime_type="video/mp4"), "warm-up"],
                config=request_config("warm-up", schema, 1, None),
            )
    finally:
        quiet.disabled = was_disabled


def _offline_http():
    """An HTTP client pair (sync, async) for the SDK that answers every request with a
    minimal generateContent response, in memory; ``name`` is the library's logger."""
    from types import SimpleNamespace

    try:
        import httpx2 as httpx
    except ImportError:
        import httpx

    answer = {
        "candidates": [{"content": {"parts": [{"text": "{}"}], "role": "model"}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2},
        "modelVersion": "warm-up",
    }
    transport = httpx.MockTransport(lambda request: httpx.Response(200, json=answer))
    return SimpleNamespace(
        name=httpx.__name__,
        sync=httpx.Client(transport=transport),
        asynchronous=httpx.AsyncClient(transport=transport),
    )
