"""From the database to coder-by-unit value matrices, one per value source.

The units are the rows of the clips in scope, in (sample id, row index)
order. The coders are the annotators assigned to those clips, each read from
their own ``Revision`` of a row, plus the LLM draft as one more coder. A
revision counts only when its annotator is assigned to the row's clip (a
reassigned annotator's old work is left out), and it carries the mode of that
assignment (anchored on the draft or calibration from empty), so that a
report can look at either kind alone.

Everything here is a read: the only writes of this capability are the cached
reports (``services``).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np
from django.db import connections
from django.db.models import BooleanField, ExpressionWrapper, F, Q, QuerySet
from django.db.models.functions import JSONArray

from ..models import Assignment, AssignmentMode, Clip, ClipState, Draft, Project, Revision, Row
from ..schema import SPARSE_LIST_FIELDS
from ..taxonomy import SCENARIOS
from .fields import SOURCES

LLM_CODER = "LLM draft"  # has a space, so it can never be a username
NOT_CODED, ANCHORED, CALIBRATION, LLM = 0, 1, 2, 3
MODE_CODES = {AssignmentMode.FROM_DRAFT: ANCHORED, AssignmentMode.FROM_EMPTY: CALIBRATION}


class ScopeError(ValueError):
    """The scenario or clip list does not name anything in the project (message for the user)."""


@dataclass
class ValueMatrix:
    """Coded values of one source: ``codes[coder, unit]`` indexes ``domain``; -1 is missing."""

    codes: np.ndarray
    domain: list


@dataclass
class Extraction:
    coders: list[str]  # annotators by username, then LLM_CODER when there is a draft
    sample_ids: list[str]  # clips in scope, sorted
    unit_clip: np.ndarray  # per unit: index into sample_ids
    unit_scenario: np.ndarray  # per unit: scenario name
    unit_speaker: list[str]
    # coding[coder, unit]: NOT_CODED, ANCHORED, CALIBRATION (annotators) or LLM (the draft).
    coding: np.ndarray
    values: dict[str, ValueMatrix]
    stats: dict = field(default_factory=dict)

    @property
    def humans(self) -> list[int]:
        return [i for i, name in enumerate(self.coders) if name != LLM_CODER]

    @property
    def llm(self) -> int | None:
        return self.coders.index(LLM_CODER) if LLM_CODER in self.coders else None

    @property
    def units(self) -> int:
        return len(self.unit_speaker)


def scope_clips(project: Project, *, scenario: str | None = None, clips=None) -> QuerySet[Clip]:
    """The clips a report covers.

    ``clips`` may be Clip objects, ids or sample ids (or a queryset); without
    it, every clip of the project except discarded ones.
    """
    qs = project.clips.all()
    if scenario:
        if scenario not in SCENARIOS:
            raise ScopeError(f"unknown scenario {scenario!r} (choose from {', '.join(SCENARIOS)})")
        qs = qs.filter(scenario=scenario)
    if clips is None:
        return qs.exclude(state=ClipState.DISCARDED)
    if isinstance(clips, QuerySet):
        return qs.filter(pk__in=clips.values("pk"))
    wanted = list(clips)
    ids = {c.pk if isinstance(c, Clip) else c for c in wanted if isinstance(c, (Clip, int))}
    names = {c for c in wanted if isinstance(c, str)}
    found = qs.filter(pk__in=ids) | qs.filter(sample_id__in=names)
    missing = names - set(found.values_list("sample_id", flat=True))
    if missing:
        where = f" (scenario {scenario})" if scenario else ""
        raise ScopeError(f"no clip {', '.join(sorted(missing))} in project {project.slug}{where}")
    return found


def scope_sample_ids(clips) -> list[str] | None:
    """The clip list as the report names it: sorted sample ids, or None for 'all clips'."""
    if clips is None:
        return None
    if isinstance(clips, QuerySet):
        return sorted(clips.values_list("sample_id", flat=True))
    return sorted(str(c.sample_id if isinstance(c, Clip) else c) for c in clips)


# The parts of an annotation document the measures read (fields.py), fetched by
# the database as JSON paths: decoding whole documents (~750 bytes each, mostly
# free text) was most of the extraction time on PostgreSQL.
def _flag(**lookup) -> ExpressionWrapper:
    return ExpressionWrapper(Q(**lookup), output_field=BooleanField())


# Read as JSON, not text: on SQLite a text read cannot tell a JSON null from the string "null".
_VALUES = (
    "content__utterance_type",
    "content__support_strategy__0__strategy_type",
    "content__relation_pattern",
    "content__relation_cycle_state",
    "content__target",
    "content__support_strategy__0__target",
    "content__internal_emotion",
)
# Whether each sparse list has an entry, and which relation keys the row carries (null and absent differ there).
_FLAGS = {
    **{f"agreement_has_{name}": _flag(**{f"content__{name}__0__isnull": False}) for name in SPARSE_LIST_FIELDS},
    "agreement_has_relation_pattern": _flag(content__has_key="relation_pattern"),
    "agreement_has_relation_cycle_state": _flag(content__has_key="relation_cycle_state"),
}
_OTHER_LISTS = tuple(
    (name, SPARSE_LIST_FIELDS.index(name))
    for name in SPARSE_LIST_FIELDS
    if name not in ("support_strategy", "internal_emotion")
)
_HAS_STRATEGY = SPARSE_LIST_FIELDS.index("support_strategy")


def _document_values(documents: QuerySet, leading: tuple[str, ...]):
    """(leading values..., the _VALUES..., the _FLAGS...) per document."""
    documents = documents.annotate(**_FLAGS)
    if connections[documents.db].vendor != "postgresql":
        return documents.values_list(*leading, *_VALUES, *_FLAGS)
    # PostgreSQL packs the parts into one JSON array per document: one decode per
    # document instead of one per part (decoding was most of the extraction time).
    # Not on SQLite, whose JSON_ARRAY turns a JSON null read by path into the text "null".
    packed = JSONArray(*(F(name) for name in (*_VALUES, *_FLAGS)))
    return ((*row[:-1], *row[-1]) for row in documents.annotate(agreement_parts=packed).values_list(*leading, "agreement_parts"))


def slim_documents(documents: QuerySet, *leading: str):
    """(leading values..., slim document) per row of ``documents`` (Revision or Draft).

    The slim document has what the measures read, in the shape of the full
    one: the first strategy's type and target, the internal emotions, the
    relation keys the document carries, and for the other sparse lists a
    one-item list when the list is not empty.
    """
    n = len(leading)
    rows = _document_values(documents, leading)
    for row in rows:
        utterance, strategy_type, pattern, cycle, target, strategy_target, emotions = row[n : n + 7]
        has = row[n + 7 :]
        doc = {
            "target": target,
            "utterance_type": utterance,
            "internal_emotion": emotions or [],
            "support_strategy": [{"strategy_type": strategy_type, "target": strategy_target}]
            if has[_HAS_STRATEGY]
            else [],
        }
        for name, i in _OTHER_LISTS:
            doc[name] = [True] if has[i] else []
        if has[-2]:
            doc["relation_pattern"] = pattern
        if has[-1]:
            doc["relation_cycle_state"] = cycle
        yield (*row[:n], doc)


def extract(clips: QuerySet[Clip]) -> Extraction:
    """Read the rows, assignments, revisions and drafts of ``clips`` into value matrices."""
    clip_rows = sorted(clips.values_list("id", "sample_id", "scenario"), key=lambda c: c[1])
    sample_ids = [c[1] for c in clip_rows]
    clip_pos = {c[0]: i for i, c in enumerate(clip_rows)}
    scenario_of = {c[0]: c[2] for c in clip_rows}

    rows = list(Row.objects.filter(clip__in=clips).values_list("id", "clip_id", "row_index", "primary_speaker"))
    rows.sort(key=lambda r: (clip_pos[r[1]], r[2]))
    unit_of = {r[0]: j for j, r in enumerate(rows)}
    clip_of_unit = [r[1] for r in rows]
    speakers = [r[3] for r in rows]

    assigned: dict[tuple[int, int], str] = {}
    usernames: dict[int, str] = {}
    for clip_id, annotator_id, username, mode in Assignment.objects.filter(clip__in=clips).values_list(
        "clip_id", "annotator_id", "annotator__username", "mode"
    ):
        assigned[(clip_id, annotator_id)] = mode
        usernames[annotator_id] = username

    # (coder name, unit, mode, content) for every document that counts.
    documents: list[tuple[str, int, int, dict]] = []
    status_counts: Counter = Counter()
    unassigned = 0
    for row_id, annotator_id, status, content in slim_documents(
        Revision.objects.filter(row__clip__in=clips), "row_id", "annotator_id", "status"
    ):
        unit = unit_of[row_id]
        mode = assigned.get((clip_of_unit[unit], annotator_id))
        if mode is None:
            unassigned += 1
            continue
        status_counts[status] += 1
        documents.append((usernames[annotator_id], unit, MODE_CODES.get(mode, ANCHORED), content))
    drafts = 0
    for row_id, content in slim_documents(Draft.objects.filter(row__clip__in=clips), "row_id"):
        documents.append((LLM_CODER, unit_of[row_id], LLM, content))
        drafts += 1

    coders = sorted({d[0] for d in documents if d[0] != LLM_CODER})
    if drafts:
        coders.append(LLM_CODER)
    coder_pos = {name: i for i, name in enumerate(coders)}
    n_units = len(rows)
    coding = np.zeros((len(coders), n_units), dtype=np.int8)

    doc_coder = np.fromiter((coder_pos[d[0]] for d in documents), dtype=np.int64, count=len(documents))
    doc_unit = np.fromiter((d[1] for d in documents), dtype=np.int64, count=len(documents))
    coding[doc_coder, doc_unit] = [d[2] for d in documents]
    doc_speaker = [speakers[d[1]] for d in documents]

    values = {}
    for source, measure in SOURCES.items():
        # One value per document (None: missing, or the measure does not apply to the row).
        raw = [
            measure.value(d[3], speaker) if measure.applies_to(speaker) else None
            for d, speaker in zip(documents, doc_speaker)
        ]
        domain = sorted({v for v in raw if v is not None})
        code_of = {v: i for i, v in enumerate(domain)}
        code_of[None] = -1
        codes = np.full((len(coders), n_units), -1, dtype=np.int32)
        codes[doc_coder, doc_unit] = [code_of[v] for v in raw]
        values[source] = ValueMatrix(codes, domain)

    modes = Counter(assigned.values())
    stats = {
        "clips": len(sample_ids),
        "rows": n_units,
        "annotators": len(coders) - (1 if drafts else 0),
        "assignments": {"anchored": modes[AssignmentMode.FROM_DRAFT], "calibration": modes[AssignmentMode.FROM_EMPTY]},
        "revisions": sum(status_counts.values()),
        "revisions_by_status": dict(sorted(status_counts.items())),
        # Revisions of annotators no longer assigned to the clip are not coders' work for this report.
        "revisions_left_out_unassigned": unassigned,
        "drafts": drafts,
        "rows_without_draft": n_units - drafts,
    }
    return Extraction(
        coders=coders,
        sample_ids=sample_ids,
        unit_clip=np.asarray([clip_pos[c] for c in clip_of_unit], dtype=np.int32),
        unit_scenario=np.asarray([scenario_of[c] for c in clip_of_unit], dtype=object),
        unit_speaker=speakers,
        coding=coding,
        values=values,
        stats=stats,
    )
