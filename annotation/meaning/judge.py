"""Gemini as a judge of equivalence: does a second coder's text say what the first one's says?

One request per text pair, through the pre-annotation client (``preannotate.client.GeminiClient``): the
same shared rate limit, the same retries with backoff and ``Retry-After``, the same structured output and
usage accounting. The answer is a verdict, ``same`` / ``partly`` / ``different``, with a one-line reason,
validated before use. Verdicts are cached per text pair (the field and the two texts, either order),
model and prompt version (``JudgeVerdict``): a pair is asked once, and each verdict records its tokens and
cost.

The judge's distance is 0 for ``same``, 0.5 for ``partly`` and 1 for ``different``. Like the LLM draft it
is never a coder: its verdicts give a measure, validated against people's judgements like the embeddings.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass

from django.conf import settings
from google.genai import types

from ..agreement.textfields import TEXT_FIELDS_BY_KEY
from ..preannotate import conf
from ..preannotate.client import GeminiClient
from ..preannotate.errors import PreannotationFailed
from .models import JudgeVerdict, pair_sha256

log = logging.getLogger(__name__)

PROMPT_VERSION = "meaning-judge-1"
VERDICTS = ("same", "partly", "different")
DISTANCE = {"same": 0.0, "partly": 0.5, "different": 1.0}
MAX_OUTPUT_TOKENS = 1024  # a verdict and one line; thinking is off (budget 0)

SYSTEM = """You compare two annotations written by two trained coders about the same moment of a couple or \
family therapy session (the same speaker turn, and the same person or pair of people). Each annotation \
describes one aspect of that moment (named below). Decide whether the two annotations state the same \
meaning: the same emotion, stance, belief, behaviour or intention, with the same direction and about the \
same strength.

- "same": a reader would take the same clinical meaning from both, whatever the wording.
- "partly": they share part of the meaning (one adds or leaves out something that matters, or one is \
clearly stronger or weaker), but neither contradicts the other.
- "different": they describe a different or opposite meaning, even if they are about the same topic \
(for example "feels hopeful about the talk" against "dreads the talk").

Judge the meaning only, not the wording, the length or the grammar. Answer with the verdict and one short \
line saying why."""


def response_schema() -> types.Schema:
    return types.Schema(
        type=types.Type.OBJECT,
        properties={
            "verdict": types.Schema(type=types.Type.STRING, enum=list(VERDICTS)),
            "reason": types.Schema(type=types.Type.STRING),
        },
        required=["verdict", "reason"],
        property_ordering=["verdict", "reason"],
    )


SCHEMA_DICT = {"type": "object", "properties": {"verdict": {"enum": list(VERDICTS)}, "reason": {"type": "string"}}}


def judge_model() -> str:
    return getattr(settings, "MEANING_JUDGE_MODEL", "") or conf.gemini_model()


def describe(model: str | None = None, prompt_version: str = PROMPT_VERSION) -> dict:
    """The judge: the configured one, or (``model``, ``prompt_version``) the one a release recorded."""
    return {"provider": "gemini", "model": model or judge_model(), "prompt_version": prompt_version}


def user_prompt(field: str, text_a: str, text_b: str) -> str:
    label = TEXT_FIELDS_BY_KEY[field].label if field in TEXT_FIELDS_BY_KEY else field
    return f"Aspect: {label}\n\nAnnotation A: {text_a}\n\nAnnotation B: {text_b}"


class JudgeFailed(RuntimeError):
    """The judge could not answer for a pair (message for the user)."""


def parse_verdict(text: str) -> tuple[str, str]:
    try:
        answer = json.loads(text)
    except json.JSONDecodeError as exc:
        raise JudgeFailed(f"the judge's answer is not JSON ({exc.msg})") from None
    verdict = answer.get("verdict") if isinstance(answer, dict) else None
    if verdict not in VERDICTS:
        raise JudgeFailed(f"the judge's answer has no verdict among {', '.join(VERDICTS)}: {text[:200]!r}")
    reason = answer.get("reason")
    return verdict, " ".join(str(reason).split())[:500] if isinstance(reason, str) else ""


def verdicts_read(model: str, prompt_version: str = PROMPT_VERSION, newest_id: int | None = None):
    """The judge's verdicts of ``model`` and ``prompt_version``: every one, or (``newest_id``) those made up to that
    one (a release's recorded set)."""
    rows = JudgeVerdict.objects.filter(model=model, prompt_version=prompt_version)
    return rows if newest_id is None else rows.filter(pk__lte=newest_id)


def cached(
    shas: list[str], model: str | None = None, prompt_version: str = PROMPT_VERSION, newest_id: int | None = None
) -> dict[str, JudgeVerdict]:
    read = verdicts_read(model or judge_model(), prompt_version, newest_id)
    found: dict[str, JudgeVerdict] = {}
    for start in range(0, len(shas), 2000):
        for v in read.filter(pair_sha256__in=shas[start : start + 2000]):
            found[v.pair_sha256] = v
    return found


@dataclass
class Asked:
    asked: int = 0
    from_cache: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0


def judge_pairs(
    pairs: list[tuple[str, str, str]], *, client: GeminiClient | None = None, progress=None
) -> tuple[dict[str, JudgeVerdict], Asked]:
    """The judge's verdict on every ``(field, text_a, text_b)``: from the cache, else asked (and cached)."""
    model = judge_model()
    wanted = {pair_sha256(f, a, b): (f, a, b) for f, a, b in pairs}
    found = cached(list(wanted), model)
    stats = Asked(from_cache=len(found))
    missing = [sha for sha in wanted if sha not in found]
    if missing and client is None:
        try:
            client = GeminiClient.from_settings(model=model, max_output_tokens=MAX_OUTPUT_TOKENS, thinking_budget=0)
        except PreannotationFailed as exc:
            raise JudgeFailed(exc.detail) from exc
    price_in, price_out = float(conf.get("GEMINI_PRICE_IN_PER_MTOK")), float(conf.get("GEMINI_PRICE_OUT_PER_MTOK"))
    for done, sha in enumerate(missing, start=1):
        field, a, b = wanted[sha]
        try:
            answer = client.generate(
                SYSTEM, user_prompt(field, a, b), schema=response_schema(), schema_dict=SCHEMA_DICT
            )
        except PreannotationFailed as exc:
            raise JudgeFailed(f"the judge failed on a pair ({exc.reason}): {exc.detail}") from exc
        verdict, reason = parse_verdict(answer.text)
        cost = round(answer.tokens_in * price_in / 1e6 + answer.tokens_out * price_out / 1e6, 8)
        found[sha], _ = JudgeVerdict.objects.get_or_create(
            pair_sha256=sha,
            model=model,
            prompt_version=PROMPT_VERSION,
            defaults={
                "verdict": verdict,
                "reason": reason,
                "model_version": answer.model_version,
                "tokens_in": answer.tokens_in,
                "tokens_out": answer.tokens_out,
                "cost_usd": cost,
            },
        )
        stats.asked += 1
        stats.tokens_in += answer.tokens_in
        stats.tokens_out += answer.tokens_out
        stats.cost_usd += cost
        if progress:
            progress(done, len(missing))
    stats.cost_usd = round(stats.cost_usd, 6)
    return found, stats
