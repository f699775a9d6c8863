"""The Gemini provider: prompt, windows, calls, validation and stitching for one clip.

Pure with respect to the database: it reads a :class:`ClipInput` and returns an
:class:`Outcome` (or raises :class:`PreannotationFailed`); storing is the
caller's business, in one transaction.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from ..models import DraftSource
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
    return windows.plan(
        len(inp.cues), int(conf.get("PREANNOTATE_WINDOW_CUES")), int(conf.get("PREANNOTATE_WINDOW_OVERLAP"))
    )


def prompt_version(scenario: str, taxonomy_version: str = "1") -> str:
    return system_prompt(scenario, taxonomy_version).version


def annotate(
    inp: ClipInput, *, client: GeminiClient | None = None, progress: Callable[[int, int], None] | None = None
) -> Outcome:
    if not any(c.has_words for c in inp.cues):
        raise PreannotationFailed("no_cues", "the clip has no transcript cue with words")
    prompt = system_prompt(inp.scenario, inp.taxonomy_version)
    schema, schema_dict = (
        lean_schema(inp.scenario, inp.taxonomy_version),
        lean_schema_dict(inp.scenario, inp.taxonomy_version),
    )
    plan = plan_for(inp)
    client = client or GeminiClient.from_settings()
    answers = []
    try:
        media = client.upload_video(inp.media_path, inp.media_mime) if inp.has_video else None
        for window in plan:
            user = render_transcript(inp, window.first, window.stop, window.number, len(plan))
            answer = client.generate(prompt.text, user, schema=schema, schema_dict=schema_dict, media=media)
            try:
                answers.append(parse_answer(answer.text, inp, window=window.number))
            except PreannotationFailed as exc:
                where = f" (part {window.number} of {len(plan)})" if len(plan) > 1 else ""
                raise PreannotationFailed(
                    exc.reason, exc.detail + where, usage=client.usage.as_dict(), attempts=client.attempts
                ) from exc
            if progress:
                progress(window.number, len(plan))
    finally:
        client.close()

    rows = windows.stitch(plan, answers, inp.cues)
    summary = finalise(rows, inp)
    usage = client.usage.as_dict()
    summary.update(
        windows=len(plan), schema_mode=client.schema_mode, retries=len(client.attempts), attempts=client.attempts
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
        "schema_mode": client.schema_mode,  # response_schema | json_fallback
        "windows": len(plan),
        "requests": usage["requests"],
        "tokens_in": usage["tokens_in"],
        "tokens_out": usage["tokens_out"],
        "latency_s": usage["latency_s"],
        "cost_usd": usage["cost_usd"],
    }
    if client.fallback_reason:
        provenance["schema_fallback_reason"] = client.fallback_reason
    if inp.has_video:
        provenance["video"] = inp.media_fingerprint
    summary["price_per_mtok"] = {
        "in": float(conf.get("GEMINI_PRICE_IN_PER_MTOK")),
        "out": float(conf.get("GEMINI_PRICE_OUT_PER_MTOK")),
    }
    return Outcome(rows=rows, source=DraftSource.LLM, provenance=provenance, summary=summary)


def warm_up() -> None:
    """Do, once and without network, the lazy work of a first request (prompt rendering,
    schema derivation, the SDK's pydantic model building). A prefork worker calls it in
    the parent before forking, so its children start warm instead of each paying ~0.5 s."""
    from google import genai
    from google.genai import types

    from ..taxonomy import SCENARIOS, available_versions

    # Loads the SDK's transport modules; the client itself is thrown away (each process makes its own).
    genai.Client(api_key="warm-up", http_options=types.HttpOptions(base_url="http://127.0.0.1:9"))

    for version in available_versions():
        for scenario in SCENARIOS:
            system_prompt(scenario, version)
            lean_schema(scenario, version)
    config = types.GenerateContentConfig(
        system_instruction="warm-up",
        response_mime_type="application/json",
        response_schema=lean_schema(SCENARIOS[0]),
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
    )
    types.Content(
        role="user",
        parts=[types.Part.from_text(text="warm-up"), types.Part.from_uri(file_uri="x", mime_type="video/mp4")],
    )
    config.model_dump(exclude_none=True)
    types.GenerateContentResponse.model_validate(
        {
            "candidates": [{"content": {"parts": [{"text": "{}"}], "role": "model"}, "finishReason": "STOP"}],
            "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1},
            "modelVersion": "warm-up",
        }
    )
