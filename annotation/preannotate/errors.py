"""How a pre-annotation fails: one exception with a reason code the UI and tests can rely on."""

from __future__ import annotations

# Reason codes (Job.result["failure"]["reason"]) and what they mean for a lead.
REASONS = {
    "invalid_json": "the answer was not valid JSON",
    "schema_mismatch": "the answer's JSON does not have the structure of the response schema",
    "max_tokens": "the answer was cut off at the model's output limit (MAX_TOKENS), even for a single cue",
    "safety": "the answer was blocked by the model's safety filter",
    "blocked": "the request was blocked before an answer was generated",
    "no_candidates": "the model returned no candidate answer",
    "empty": "the answer was empty",
    "finish_reason": "the model stopped for another reason than finishing",
    "rate_limited": "the API kept answering 429 (rate limited) after every retry",
    "server_error": "the API kept answering with a server error (5xx) after every retry",
    "timeout": "the API did not answer in time, after every retry",
    "network": "the API could not be reached, after every retry",
    "api_error": "the API refused the request",
    "media_upload": "the clip's video or audio could not be uploaded",
    "video_upload": "the clip's video could not be uploaded",  # as jobs recorded it before audio was sent too
    "no_cues": "the clip has no transcript cue with words",
    "speaker_map": "the clip's speaker mapping is not confirmed",
    "human_work": "the clip already has human revisions or gold",
    "clip_state": "the clip left the pre-annotating state while the job ran",
    "internal_error": "an unexpected error in the platform",
    "configuration": "the pre-annotation settings are inconsistent",
}


class PreannotationFailed(Exception):
    """A clip could not be pre-annotated. Nothing is written for it; the reason is recorded."""

    def __init__(self, reason: str, detail: str, *, usage: dict | None = None, attempts: list | None = None):
        assert reason in REASONS, reason
        self.reason, self.detail = reason, detail
        self.usage = usage or {}
        self.attempts = attempts or []
        super().__init__(f"{reason}: {detail}")

    def as_dict(self) -> dict:
        return {"reason": self.reason, "meaning": REASONS[self.reason], "detail": self.detail}
