"""From the database to coder-by-unit value matrices, one per value source.

The units are the rows of the clips in scope (never a discarded clip's), in
(sample id, row index) order. The coders are the annotators assigned to those
clips, each read from their own ``Revision`` of a row, plus the LLM draft as
one more coder. Which revisions count is the work scope's rule (``scope``):
by default only revisions of submitted assignments; every other revision is
left out, and counted by reason, scenario and assignment mode so that each
slice of the report can say what it left out. A counted revision carries the
mode of its assignment (anchored on the draft or calibration from empty), so
that a report can look at either kind alone.

Everything here is a read: the only writes of this capability are the cached
reports (``services``).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from itertools import islice

import numpy as np
from django.db import NotSupportedError
from django.db.models import BooleanField, Count, ExpressionWrapper, F, Func, Q, QuerySet, TextField, Window
from django.db.models.functions import Lag

from ..groups import ClipInfo, relationship_groups
from ..models import Assignment, AssignmentMode, Clip, ClipState, Draft, Project, Revision, Row
from ..schema import SPARSE_LIST_FIELDS
from ..taxonomy import SCENARIOS
from .fields import SOURCES, Measure
from .scope import DEFAULT_WORK_SCOPE, LEFT_OUT_FIELD, UNASSIGNED, reasons, with_left_out

LLM_CODER = "LLM draft"  # has a space, so it can never be a username
# A gap longer than this between two of a coder's saves in a clip is a break, not time spent on the row.
BREAK_SECONDS = 600
NOT_CODED, ANCHORED, CALIBRATION, LLM, IMPORTED = 0, 1, 2, 3, 4
MODE_CODES = {
    AssignmentMode.FROM_DRAFT: ANCHORED,
    AssignmentMode.FROM_EMPTY: CALIBRATION,
    AssignmentMode.IMPORTED: IMPORTED,
}


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
    # coding[coder, unit]: NOT_CODED, ANCHORED, CALIBRATION, IMPORTED (annotators) or LLM (the draft).
    coding: np.ndarray
    values: dict[str, ValueMatrix]
    stats: dict = field(default_factory=dict)
    work_scope: str = DEFAULT_WORK_SCOPE
    # Per unit: the id of its Row (free-text agreement reads the same rows' texts, ``textfields``).
    unit_row_ids: list[int] = field(default_factory=list)
    # Revisions left out: (mode code, NOT_CODED when unassigned; scenario; reason) -> how many.
    left_out: dict[tuple[int, str, str], int] = field(default_factory=dict)
    # Per unit: what its LLM draft was made from (``Draft.modality``: "video", "audio", "transcript",
    # "" not recorded), None where the row has no draft.
    unit_modality: np.ndarray | None = None
    # The free-text parts read in the same pass, when asked for (``extract(..., text_parts=...)``).
    text_columns: TextColumns | None = None
    # Per clip (index into sample_ids): its relationship group (index into group_names, ``annotation.groups``).
    clip_group: np.ndarray | None = None
    group_names: list[str] = field(default_factory=list)
    # How the coders worked, per counted revision (``Pace``): what the draft-pull figures read.
    pace: Pace | None = None

    @property
    def humans(self) -> list[int]:
        return [i for i, name in enumerate(self.coders) if name != LLM_CODER]

    @property
    def llm(self) -> int | None:
        return self.coders.index(LLM_CODER) if LLM_CODER in self.coders else None

    @property
    def units(self) -> int:
        return len(self.unit_speaker)


@dataclass
class Pace:
    """How each counted revision was worked, from the audit trail (one entry per counted revision).

    ``unchanged``: the revision's document equals its row's draft (JSON equality; False without a draft).
    ``seconds``: the time the coder spent on the row, as the sum of the gaps before each of their own saves
    of it, each gap measured from their previous save in the same clip; a gap over ``BREAK_SECONDS`` (a
    break) and the first save of a sitting count nothing, and a row none of whose saves had a measured gap
    is NaN (not measured).
    """

    coder: np.ndarray
    unit: np.ndarray
    unchanged: np.ndarray
    seconds: np.ndarray


def candidate_clips(project: Project, *, scenario: str | None = None, clips=None) -> QuerySet[Clip]:
    """The clips a report is about, discarded ones included (their revisions are counted as left out).

    ``clips`` may be Clip objects, ids or sample ids (or a queryset); without
    it, every clip of the project (of ``scenario``).
    """
    qs = project.clips.all()
    if scenario:
        if scenario not in SCENARIOS:
            raise ScopeError(f"unknown scenario {scenario!r} (choose from {', '.join(SCENARIOS)})")
        qs = qs.filter(scenario=scenario)
    if clips is None:
        return qs
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


def scope_clips(project: Project, *, scenario: str | None = None, clips=None) -> QuerySet[Clip]:
    """The clips whose rows are the report's units: the candidates that are not discarded."""
    return candidate_clips(project, scenario=scenario, clips=clips).exclude(state=ClipState.DISCARDED)


def scope_sample_ids(clips) -> list[str] | None:
    """The clip list as the report names it: sorted sample ids, or None for 'all clips'."""
    if clips is None:
        return None
    if isinstance(clips, QuerySet):
        return sorted(clips.values_list("sample_id", flat=True))
    return sorted(str(c.sample_id if isinstance(c, Clip) else c) for c in clips)


def report_scope(scenario, clips, work_scope: str) -> dict:
    """The scope a report states it covers (both kinds of report say it the same way)."""
    return {"scenario": scenario or None, "clips": scope_sample_ids(clips), "work": work_scope}


# --- the parts of a document the measures read ----------------------------------------
#
# The database returns, per document, the JSON text of each part the measures
# read (``fields.Measure.reads``) and whether each sparse list has an entry:
# decoding whole documents (~750 bytes each, mostly free text) was most of
# the extraction time. Texts are compared, not decoded: a measure's value is
# computed once per distinct combination of its parts and the row's speaker,
# and every document with that combination gets it.


class JSONText(Func):
    """The JSON text of the value at ``path`` inside a JSON column.

    SQL NULL when the path is absent, the text ``null`` for a JSON null (the
    relation keys need the difference), ``"x"`` for a string: exactly what
    ``json.loads`` turns back into the value.
    """

    output_field = TextField()

    def __init__(self, column: str, *path: str | int):
        self.path = path
        super().__init__(F(column))

    def as_postgresql(self, compiler, connection, **extra):
        sql, params = compiler.compile(self.source_expressions[0])
        return f"(({sql}) #> %s)::text", (*params, [str(p) for p in self.path])

    def as_sqlite(self, compiler, connection, **extra):
        sql, params = compiler.compile(self.source_expressions[0])
        json_path = "$" + "".join(f"[{p}]" if isinstance(p, int) else f'."{p}"' for p in self.path)
        return f"(({sql}) -> %s)", (*params, json_path)

    def as_sql(self, compiler, connection, **extra):
        raise NotSupportedError(
            f"agreement extraction reads JSON paths on PostgreSQL and SQLite, not {connection.vendor}"
        )


# Part name -> path in the document, read as JSON text.
TEXT_PARTS: dict[str, tuple[str | int, ...]] = {
    "utterance_type": ("utterance_type",),
    "strategy_type": ("support_strategy", 0, "strategy_type"),
    "strategy_target": ("support_strategy", 0, "target"),
    "relation_pattern": ("relation_pattern",),
    "relation_cycle_state": ("relation_cycle_state",),
    "target": ("target",),
    "internal_emotion": ("internal_emotion",),
}
# has_<list>: whether the sparse list has a first entry.
FLAG_PARTS = {f"has_{name}": name for name in SPARSE_LIST_FIELDS}
PARTS = (*TEXT_PARTS, *FLAG_PARTS)
# Parts that are a top-level key of the same name, read whole.
_WHOLE_KEYS = tuple(name for name, path in TEXT_PARTS.items() if path == (name,))


def _part_expressions() -> dict:
    texts = {f"agreement_{name}": JSONText("content", *path) for name, path in TEXT_PARTS.items()}
    flags = {
        f"agreement_{name}": ExpressionWrapper(
            Q(**{f"content__{field}__0__isnull": False}), output_field=BooleanField()
        )
        for name, field in FLAG_PARTS.items()
    }
    return {**texts, **flags}


class DocumentParts:
    """Documents streamed in as columns of small integers: per part (``PARTS``, and any free-text parts asked
    for), the position of each document's value among that part's distinct values, numbered in order of first
    appearance (what ``_factorise`` gives); the leading fields come back as plain lists.

    Documents repeat their parts a lot (drafts, unchanged revisions, phrases coders reuse): a 10x release reads
    280,000 documents with a few tens of thousands of distinct parts, so only the distinct values are kept, and
    every per-document step after is numpy's. Several querysets read into one reader share its numbering.
    """

    CHUNK = 2000

    def __init__(self, text_parts: tuple[str, ...] = ()):
        self.expressions = _part_expressions()
        # A free-text part that is also a label part (a whole top-level key) is read once.
        whole = {path[0]: name for name, path in TEXT_PARTS.items() if len(path) == 1}
        self._text_names = {key: f"agreement_{whole[key]}" if key in whole else f"text_{key}" for key in text_parts}
        self.expressions.update(
            {name: JSONText("content", key) for key, name in self._text_names.items() if name.startswith("text_")}
        )
        self._levels: dict[str, dict] = {name: {} for name in self.expressions}  # value (None: absent) -> number
        self._codes: dict[str, list[np.ndarray]] = {name: [] for name in self.expressions}

    def read(self, documents: QuerySet, *leading: str) -> dict[str, list]:
        """Take ``documents`` (in their queryset's order); returns the columns of the ``leading`` fields."""
        out: dict[str, list] = {name: [] for name in leading}
        rows = documents.annotate(**self.expressions).values_list(*leading, *self.expressions)
        rows = rows.iterator(chunk_size=self.CHUNK)
        while chunk := list(islice(rows, self.CHUNK)):
            columns = list(zip(*chunk))
            for column, kept in zip(columns, out.values()):
                kept.extend(column)
            for name, column in zip(self.expressions, columns[len(leading) :]):
                levels = self._levels[name]
                new = [value for value in dict.fromkeys(column) if value not in levels]
                levels.update(zip(new, range(len(levels), len(levels) + len(new))))
                self._codes[name].append(
                    np.fromiter(map(levels.__getitem__, column), dtype=np.int64, count=len(column))
                )
        return out

    def _column(self, name: str) -> tuple[np.ndarray, list]:
        codes = self._codes[name]
        return (np.concatenate(codes) if codes else np.zeros(0, dtype=np.int64)), list(self._levels[name])

    def label_parts(self) -> dict[str, tuple[np.ndarray, list]]:
        """{part of ``PARTS``: (its code per document, in the order read; its distinct values by code)}."""
        return {name: self._column(f"agreement_{name}") for name in PARTS}

    def text_parts(self) -> dict[str, tuple[np.ndarray, list]]:
        """The same for the free-text parts asked for, by document key."""
        return {key: self._column(name) for key, name in self._text_names.items()}


def combined_codes(start: np.ndarray | None, columns: list[tuple[np.ndarray, int]]) -> np.ndarray:
    """One code per document for its combination of ``start`` (e.g. the speaker; None: nothing) and the
    factorised ``columns`` ((codes, number of levels) each); equal combinations, equal codes."""
    if start is None and len(columns) == 1:
        return columns[0][0]
    combined = np.zeros(len(columns[0][0]), dtype=np.int64) if start is None else start
    for codes, levels in columns:
        # Renumbered after each step, so the combined code stays small.
        combined = np.unique(combined * levels + codes, return_inverse=True)[1].reshape(-1)
    return combined


@dataclass
class TextColumns:
    """The free-text parts of the documents an extraction counts, read with its label parts (``extract(...,
    text_parts=...)``) for ``textfields.extract_texts``: per document (revisions, then drafts, as the
    extraction numbers them) its coder and unit, and per part its codes and distinct raw JSON texts."""

    doc_coder: np.ndarray
    doc_unit: np.ndarray
    parts: dict[str, tuple[np.ndarray, list]]


def slim_document(parts: dict) -> dict:
    """A document in the shape of the full one, holding only ``parts`` (part name -> text or flag).

    A measure given the parts it declares reads from this what it would read
    from the full document: a text of None (SQL NULL) is an absent key, a
    sparse list with its flag set is a one-entry list.
    """
    doc: dict = {}
    for key in _WHOLE_KEYS:
        text = parts.get(key)
        if text is not None:
            doc[key] = json.loads(text)
    if "has_support_strategy" in parts:
        first = {}
        for key, part in (("strategy_type", "strategy_type"), ("target", "strategy_target")):
            if parts.get(part) is not None:
                first[key] = json.loads(parts[part])
        doc["support_strategy"] = [first] if parts["has_support_strategy"] else []
    for flag, name in FLAG_PARTS.items():
        if flag in parts and name not in doc:
            doc[name] = [True] if parts[flag] else []
    return doc


def _factorise(column) -> tuple[np.ndarray, list]:
    """Codes (positions in the list of distinct values, in order of first appearance) and that list."""
    levels = list(dict.fromkeys(column))
    position = {v: i for i, v in enumerate(levels)}
    return np.fromiter(map(position.__getitem__, column), dtype=np.int64, count=len(column)), levels


def measure_codes(measure: Measure, parts: dict[str, tuple[np.ndarray, list]], speaker: tuple[np.ndarray, list]):
    """(codes per document into the domain, -1 missing; the sorted domain) of one measure.

    ``parts`` and ``speaker`` are factorised columns (``_factorise``). The value
    is computed once per distinct (speaker, parts read) combination.
    """
    combined = combined_codes(speaker[0], [(parts[name][0], len(parts[name][1])) for name in measure.reads])
    _, first, inverse = np.unique(combined, return_index=True, return_inverse=True)
    values = []
    for doc in first.tolist():
        who = speaker[1][speaker[0][doc]]
        if not measure.applies_to(who):
            values.append(None)
            continue
        slim = slim_document({name: parts[name][1][parts[name][0][doc]] for name in measure.reads})
        values.append(measure.value(slim, who))
    domain = sorted({v for v in values if v is not None})
    code_of = {v: i for i, v in enumerate(domain)}
    per_combination = np.fromiter((-1 if v is None else code_of[v] for v in values), dtype=np.int32, count=len(values))
    return per_combination[inverse.reshape(-1)], domain


def extract(
    clips: QuerySet[Clip], work_scope: str = DEFAULT_WORK_SCOPE, text_parts: tuple[str, ...] = ()
) -> Extraction:
    """Read the rows, assignments, counted revisions and drafts of ``clips`` into value matrices.

    The units are the rows of the clips that are not discarded; revisions of
    discarded clips are only counted as left out. ``text_parts``: top-level
    document keys read in the same pass for the free-text figures
    (``Extraction.text_columns``; ``textfields.extract_with_texts``).
    """
    in_scope = clips.exclude(state=ClipState.DISCARDED)
    clip_rows = sorted(in_scope.values_list("id", "sample_id", "scenario", "participants"), key=lambda c: c[1])
    sample_ids = [c[1] for c in clip_rows]
    clip_pos = {c[0]: i for i, c in enumerate(clip_rows)}
    scenario_of = {c[0]: c[2] for c in clip_rows}

    rows = list(Row.objects.filter(clip__in=in_scope).values_list("id", "clip_id", "row_index", "primary_speaker"))
    rows.sort(key=lambda r: (clip_pos[r[1]], r[2]))
    unit_of = {r[0]: j for j, r in enumerate(rows)}
    clip_of_unit = [r[1] for r in rows]
    speakers = [r[3] for r in rows]

    assigned: dict[tuple[int, int], str] = {}
    usernames: dict[int, str] = {}
    modes: Counter = Counter()
    for clip_id, annotator_id, username, mode, clip_state in Assignment.objects.filter(clip__in=clips).values_list(
        "clip_id", "annotator_id", "annotator__username", "mode", "clip__state"
    ):
        assigned[(clip_id, annotator_id)] = mode
        usernames[annotator_id] = username
        modes[mode] += clip_state != ClipState.DISCARDED

    # The documents that count: the coded revisions (the work scope's rule), then the drafts, each streamed once
    # for the label parts and any free-text parts. In a fixed order (by row, then coder's name): free texts are
    # numbered in order of first appearance, which must not depend on a query plan.
    revisions = with_left_out(Revision.objects.filter(row__clip__in=clips), work_scope)
    reader = DocumentParts(text_parts)
    same_as_draft = ExpressionWrapper(Q(content=F("row__draft__content")), output_field=BooleanField())
    counted = reader.read(
        revisions.filter(**{f"{LEFT_OUT_FIELD}__isnull": True})
        .annotate(agreement_same_as_draft=same_as_draft)
        .order_by("row_id", "annotator__username"),
        "row_id",
        "annotator_id",
        "status",
        "id",
        "agreement_same_as_draft",
    )
    drafts = reader.read(Draft.objects.filter(row__clip__in=in_scope).order_by("row_id"), "row_id", "modality")
    left_out: Counter = Counter()
    for item in (
        revisions.exclude(**{f"{LEFT_OUT_FIELD}__isnull": True})
        .values("row__clip_id", "row__clip__scenario", "annotator_id", LEFT_OUT_FIELD)
        .annotate(n=Count("id"))
        .order_by()
    ):
        mode = assigned.get((item["row__clip_id"], item["annotator_id"]))
        mode_code = NOT_CODED if mode is None else MODE_CODES.get(mode, ANCHORED)
        left_out[(mode_code, item["row__clip__scenario"], item[LEFT_OUT_FIELD])] += item["n"]

    n_revisions = len(counted["row_id"])
    doc_names = [usernames[a] for a in counted["annotator_id"]]
    doc_modes = [
        MODE_CODES.get(assigned[(clip_of_unit[unit_of[r]], a)], ANCHORED)
        for r, a in zip(counted["row_id"], counted["annotator_id"])
    ]
    n_drafts = len(drafts["row_id"])
    doc_names += [LLM_CODER] * n_drafts
    doc_modes += [LLM] * n_drafts
    doc_rows = counted["row_id"] + drafts["row_id"]

    coders = sorted(set(doc_names) - {LLM_CODER})
    if n_drafts:
        coders.append(LLM_CODER)
    coder_pos = {name: i for i, name in enumerate(coders)}
    n_units = len(rows)
    coding = np.zeros((len(coders), n_units), dtype=np.int8)
    doc_coder = np.fromiter((coder_pos[name] for name in doc_names), dtype=np.int64, count=len(doc_names))
    doc_unit = np.fromiter((unit_of[r] for r in doc_rows), dtype=np.int64, count=len(doc_rows))
    coding[doc_coder, doc_unit] = doc_modes

    unit_speaker_codes, speaker_names = _factorise(speakers)
    doc_speaker = (unit_speaker_codes[doc_unit], speaker_names)
    parts = reader.label_parts()
    values = {}
    for source, measure in SOURCES.items():
        per_document, domain = measure_codes(measure, parts, doc_speaker)
        codes = np.full((len(coders), n_units), -1, dtype=np.int32)
        codes[doc_coder, doc_unit] = per_document
        values[source] = ValueMatrix(codes, domain)

    human_units = coding[[i for i, name in enumerate(coders) if name != LLM_CODER]].any(axis=0)
    left_by_reason: Counter = Counter()
    for (_mode, _scenario, reason), n in left_out.items():
        left_by_reason[reason] += n
    stats = {
        "clips": len(sample_ids),
        "rows": n_units,
        # Rows and clips on which at least one annotator's values count.
        "coded_rows": int(human_units.sum()),
        "coded_clips": len({clip_of_unit[j] for j in np.flatnonzero(human_units).tolist()}),
        "annotators": len(coders) - (1 if n_drafts else 0),
        "assignments": {
            "anchored": modes[AssignmentMode.FROM_DRAFT],
            "calibration": modes[AssignmentMode.FROM_EMPTY],
            "imported": modes[AssignmentMode.IMPORTED],
        },
        # The revisions whose values count, and those left out by reason (``scope.LEFT_OUT``).
        "revisions": n_revisions,
        "revisions_by_status": dict(sorted(Counter(counted["status"]).items())),
        "revisions_left_out": {reason: left_by_reason[reason] for reason in reasons(work_scope)},
        "revisions_left_out_unassigned": left_by_reason[UNASSIGNED],
        "drafts": n_drafts,
        "rows_without_draft": n_units - n_drafts,
    }
    groups = _clip_groups(clip_rows, rows)
    seconds = _seconds_on_rows(clips, counted["id"])
    pace = Pace(
        coder=doc_coder[:n_revisions].copy(),
        unit=doc_unit[:n_revisions].copy(),
        unchanged=np.fromiter((bool(x) for x in counted["agreement_same_as_draft"]), dtype=bool, count=n_revisions),
        seconds=np.fromiter((seconds.get(r, np.nan) for r in counted["id"]), dtype=float, count=n_revisions),
    )
    return Extraction(
        clip_group=groups[0],
        group_names=groups[1],
        pace=pace,
        coders=coders,
        sample_ids=sample_ids,
        unit_clip=np.asarray([clip_pos[c] for c in clip_of_unit], dtype=np.int32),
        unit_scenario=np.asarray([scenario_of[c] for c in clip_of_unit], dtype=object),
        unit_speaker=speakers,
        coding=coding,
        values=values,
        stats=stats,
        work_scope=work_scope,
        unit_row_ids=[r[0] for r in rows],
        left_out=dict(left_out),
        unit_modality=_unit_modality(n_units, [unit_of[r] for r in drafts["row_id"]], drafts["modality"]),
        text_columns=(TextColumns(doc_coder, doc_unit, reader.text_parts()) if text_parts else None),
    )


def _clip_groups(clip_rows: list[tuple], rows: list[tuple]) -> tuple[np.ndarray, list[str]]:
    """Each clip's relationship group (the splits' rule, ``annotation.groups``), as an index into the group names."""
    row_count = Counter(r[1] for r in rows)
    infos = [
        ClipInfo(sample_id, scenario, row_count[pk], tuple(participants or ()))
        for pk, sample_id, scenario, participants in clip_rows
    ]
    _, group_of = relationship_groups(infos)
    names = sorted(set(group_of.values()))
    position = {name: i for i, name in enumerate(names)}
    return np.asarray([position[group_of[c[1]]] for c in clip_rows], dtype=np.int64), names


def _seconds_on_rows(clips: QuerySet[Clip], revision_ids: list[int]) -> dict[int, float]:
    """Per revision id: the seconds its coder spent on the row (``Pace.seconds``), where measured.

    Read from the coders' own saves in the audit trail; the gap before each save comes from the database
    (a window over each coder's saves in each clip, in time order), so only one number per save comes back.
    """
    if not revision_ids:
        return {}
    saves = (
        Revision.history.filter(row__clip__in=clips, history_type="~", history_user_id=F("annotator_id"))
        .annotate(
            previous=Window(
                Lag("history_date"),
                partition_by=[F("annotator_id"), F("row__clip_id")],
                order_by=[F("history_date").asc(), F("history_id").asc()],
            )
        )
        .values_list("id", "history_date", "previous")
    )
    wanted = set(revision_ids)
    out: dict[int, float] = {}
    for revision, at, previous in saves.iterator(chunk_size=5000):
        if revision not in wanted or previous is None:
            continue
        gap = (at - previous).total_seconds()
        if gap <= BREAK_SECONDS:
            out[revision] = out.get(revision, 0.0) + gap
    return out


def _unit_modality(n_units: int, units: list[int], modalities: list[str]) -> np.ndarray:
    out = np.full(n_units, None, dtype=object)
    if units:
        out[np.asarray(units, dtype=np.int64)] = np.asarray(modalities, dtype=object)
    return out
