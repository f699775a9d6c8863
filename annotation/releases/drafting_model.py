"""The drafting model of a release: who drafted the released rows, and its drafts as predictions.

``read_drafts`` reads the stored drafts of the released rows (one query) into
clips of the release format, each row's annotation replaced by its draft;
``tasks.draft_system`` then reads the drafting model's answer to every gold
instance from them, and ``stats`` scores those answers like any system's.
``drafting_system`` names the model from the drafts' recorded provenance:
the model, provider and prompt version of the run that drafted most rows,
and every run with its rows.
"""

from __future__ import annotations

import json
from collections import Counter

from tasks.draft_system import NOT_APPLICABLE, SYSTEM, draft_predictions, prediction_lines
from tasks.instances import Instance
from tasks.rules import ALL_TASKS

from ..models import Clip, Draft, DraftSource
from ..rescue_format.exporter import ROW_FIELDS, release_clip, release_row, row_skeleton
from ..schema import SKELETON_KEYS

IDENTITY_KEYS = ("provider", "model", "model_version", "prompt_version")


def read_drafts(complete: list[Clip], released: list[dict]) -> tuple[dict[str, dict], dict]:
    """(per sample id, the clip with its drafted rows; who drafted them), for the clips ``complete`` (``freeze``)
    whose release dicts are ``released`` (in the same order).

    A row without a draft keeps only its skeleton, so it answers nothing. One query.
    """
    by_clip: dict[int, list[dict]] = {c.pk: [] for c in complete}
    runs: Counter = Counter()
    drafts = (
        Draft.objects.filter(row__clip_id__in=list(by_clip))
        .order_by("row__clip_id", "row__row_index")
        .values_list(
            *ROW_FIELDS,
            "content",
            "layout",
            "source",
            "provenance",
        )
    )
    drafted: dict[int, dict[int, dict]] = {pk: {} for pk in by_clip}
    for clip_id, start, end, speaker, dialogue, index, content, layout, source, provenance in drafts.iterator(
        chunk_size=2000
    ):
        row = row_skeleton(start, end, speaker, dialogue, index)
        drafted[clip_id][index] = release_row(row, content, layout)
        provenance = provenance or {}
        runs[(source, *(str(provenance.get(k) or "") for k in IDENTITY_KEYS))] += 1
    clips = {}
    for clip, gold in zip(complete, released):
        rows = [drafted[clip.pk].get(r["row_index"]) or {k: r[k] for k in SKELETON_KEYS} for r in gold["rows"]]
        clips[clip.sample_id] = release_clip(clip, rows)
    return clips, drafting_system(runs)


def drafting_system(runs: Counter) -> dict:
    """The drafting model as the drafts record it: the run that drafted most rows, and every run."""
    listed = [
        {"source": source, **{k: v or None for k, v in zip(IDENTITY_KEYS, identity)}, "rows": n}
        for (source, *identity), n in sorted(runs.items(), key=lambda kv: (-kv[1], kv[0]))
    ]
    main = listed[0] if listed else None
    return {
        "name": SYSTEM,
        "rows_drafted": sum(runs.values()),
        "source": main["source"] if main else None,
        "source_label": DraftSource(main["source"]).label if main and main["source"] in DraftSource.values else None,
        "llm": bool(main and main["source"] == DraftSource.LLM),
        **{k: main[k] if main else None for k in IDENTITY_KEYS},
        "runs": listed,
    }


def drafting_predictions(
    instances: dict[str, list[Instance]],
    draft_clips: dict[str, dict],
    *,
    taxonomy_version: str,
    seed: int,
    params,
    profile=None,
) -> dict[str, dict]:
    """{task: {instance id: the draft's prediction}} for every task the draft answers (by ``profile``'s builders)."""
    return {
        task: draft_predictions(
            task,
            instances[task],
            draft_clips,
            taxonomy_version=taxonomy_version,
            seed=seed,
            params=params,
            profile=profile,
        )
        for task in ALL_TASKS
        if task in instances and task not in NOT_APPLICABLE
    }


def prediction_files(instances: dict[str, list[Instance]], predictions: dict[str, dict]) -> dict[str, bytes]:
    """``predictions/drafting_model/<task>.jsonl``: the draft's predictions in the public format, every split."""
    return {
        f"predictions/{SYSTEM}/{task}.jsonl": "".join(
            json.dumps(line, ensure_ascii=False) + "\n" for line in prediction_lines(task, instances[task], answers)
        ).encode("utf-8")
        for task, answers in predictions.items()
    }
