"""Builders for valid release-format documents; tests change one thing at a time."""

from __future__ import annotations

import copy
import json
from pathlib import Path


def client_row(
    index: int, speaker: str = "Maya", target=("Therapist",), start: float | None = None, **overrides
) -> dict:
    start = float(index * 5) if start is None else start
    row = {
        "start_time": start,
        "end_time": start + 4.0,
        "primary_speaker": speaker,
        "target": list(target),
        "dialogue_cleaned": "I keep waiting for him to notice.",
        "utterance_type": "disclosure",
        "background_dialogue": [],
        "tone_of_voice": "quiet, tired",
        "body_posture": [{"person": speaker, "description": "leaning back"}],
        "facial_expressions": [],
        "self_directed_behavior": [],
        "interaction_behavior": [],
        "internal_emotion": [{"person": speaker, "emotion_description": "feels unseen", "intensity": 6}],
        "viewpoints_attitudes": [],
        "support_strategy": [],
        "row_index": index,
        "relation_pattern": None,
        "relation_pattern_reason": None,
        "relation_pattern_evidence_rows": [],
    }
    row.update(overrides)
    return row


def therapist_row(
    index: int, target=("Maya",), strategy: str | None = "track", start: float | None = None, **overrides
) -> dict:
    row = client_row(index, speaker="Therapist", target=target, start=start)
    row.update(
        dialogue_cleaned="So when he goes quiet, you push harder?",
        utterance_type="",
        body_posture=[],
        internal_emotion=[],
        support_strategy=(
            [
                {
                    "provider": "Therapist",
                    "target": list(target),
                    "strategy_type": strategy,
                    "strategy_content": "names the cycle",
                }
            ]
            if strategy
            else []
        ),
        relation_cycle_state="pursue_withdraw",
        relation_cycle_reason="the therapist names the cycle both keep up",
    )
    row.update(overrides)
    return row


def couple_clip(sample_id: str = "maya_and_tobias/001_opening", rows=None) -> dict:
    if rows is None:
        rows = [
            client_row(1),
            therapist_row(2),
            client_row(
                3,
                speaker="Tobias",
                target=("Maya",),
                relation_pattern="pursue_withdraw",
                relation_pattern_reason="she presses, he retreats",
                relation_pattern_evidence_rows=[1, 2, 3],
            ),
        ]
    return {
        "sample_id": sample_id,
        "scenario": "couple",
        "participants": ["Maya", "Tobias"],
        "source_file": f"test/{sample_id}.json",
        "rows": rows,
    }


def family_clip(sample_id: str = "okafor_family/001_dinner") -> dict:
    people = ["Ada", "Ben", "Chidi", "Dora"]
    rows = [client_row(i + 1, speaker=p, target=("Therapist",)) for i, p in enumerate(people)]
    rows.append(
        therapist_row(5, target=("Family",), strategy="boundary", relation_cycle_state="boundary_hierarchy_strain")
    )
    return {"sample_id": sample_id, "scenario": "family", "participants": people, "source_file": "", "rows": rows}


def mutate(doc: dict, fn) -> dict:
    out = copy.deepcopy(doc)
    fn(out)
    return out


# Rows of the factories' couple by speaker, for hand-built clips (the task-instance tests).
def maya(i, **kw):
    """Maya's row ``i``."""
    return client_row(i, speaker="Maya", **kw)


def tobias(i, **kw):
    """Tobias's row ``i``, addressed to Maya unless a target is given."""
    return client_row(i, speaker="Tobias", target=kw.pop("target", ("Maya",)), **kw)


def therapist(i, **kw):
    """The therapist's row ``i``, its relation pattern unset unless given."""
    kw.setdefault("relation_cycle_state", None)
    return therapist_row(i, **kw)


def write_jsonl(path: Path, docs: list[dict], *, ensure_ascii: bool = True) -> Path:
    """``docs`` as a JSON Lines file at ``path``, one document per line."""
    path.write_text("".join(json.dumps(d, ensure_ascii=ensure_ascii) + "\n" for d in docs), encoding="utf-8")
    return path
