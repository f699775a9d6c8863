"""Pre-annotation: Gemini (or the offline skeleton) drafts every row of a clip, on Celery workers.

How it fits together (each module holds one idea):

- ``transcript``: what the model is given — the clip's cues with speakers as entities.
- ``prompts`` + ``prompts/*.md``: the versioned instructions per scenario, label sets filled in from the taxonomy.
- ``response_schema``: the lean structured-output schema, derived from ``annotation.schema``.
- ``client``: SDK calls with the shared rate limit (``ratelimit``), retries, Retry-After and the JSON-mode fallback.
- ``windows``: long clips in overlapping windows, stitched back.
- ``validate``: the answer checked against the schema, the ROW_SCHEMA rules and the transcript.
- ``gemini`` / ``offline``: the two providers, each turning a clip into rows and drafts.
- ``services``: start a batch, run one clip's job exactly once, retry; ``selectors``: reads for pages and API.
- ``celery_tasks``, ``views``, ``api``, ``urls``: the task and the ways in.
"""
