"""Reads for the lead's adjudication: a clip's rows with every source side by
side, where the coders disagree, what is decided, and the project's progress.

Callers check the role first (``roles.is_lead``); these functions read
everything, because leads see everything. Every read of a clip is a fixed
number of queries whatever its number of rows.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from itertools import groupby

from django.http import Http404
from django.urls import reverse

from .. import selectors as scoped
from ..agreement.scope import LEFT_OUT, LEFT_OUT_FIELD, with_left_out
from ..models import (
    Assignment,
    AssignmentState,
    Clip,
    ClipState,
    Comment,
    CommentKind,
    Draft,
    Gold,
    Project,
    Revision,
    Row,
)
from ..starting import empty_content
from ..workspace.selectors import clip_header, editor_config
from ..workspace.services import relation_keys
from .fields import (
    DRAFT,
    FIELD_TITLES,
    FIELDS,
    FieldComparison,
    compare_row,
    field_keys,
    field_value,
    labels_used,
    same_value,
    with_field,
)

# States in which the gold of a clip may change. An adjudicated clip is closed:
# a re-review request reopens it (adjudicated -> in_review).
EDITABLE_STATES = frozenset({ClipState.IN_REVIEW, ClipState.REVIEWED})
CLOSED_STATES = frozenset({ClipState.ADJUDICATED, ClipState.RELEASED})


def adjudication_clip(user, clip_id: int) -> Clip:
    """The clip, read through the role-scoped selector (a lead sees every clip)."""
    try:
        return scoped.visible_clips(user).get(pk=clip_id)
    except Clip.DoesNotExist:
        raise Http404("no such clip") from None


# --- who counts: coded work, and when a clip may be adjudicated ------------------------------


@dataclass(frozen=True)
class Readiness:
    """Whether enough coders have submitted for the clip's gold to be decided (the project's setting).

    ``required``: the project's ``adjudication_min_coders`` (every assigned coder when unset), never
    more than the coders assigned; ``submitted`` and ``waiting`` name the assigned coders by state.
    """

    required: int
    submitted: tuple[str, ...]
    waiting: tuple[str, ...]

    @property
    def ready(self) -> bool:
        return len(self.submitted) >= self.required

    def refusal(self, clip: Clip) -> str:
        """Why the clip's gold cannot be decided yet ("" when it can)."""
        if self.ready:
            return ""
        if not self.submitted and not self.waiting:
            return f"no coder is assigned to {clip.sample_id}: there is no coded work to adjudicate"
        need = self.required - len(self.submitted)
        return (
            f"{clip.sample_id} cannot be adjudicated yet: {len(self.submitted)} of {self.required} required coder"
            f"{'s' if self.required != 1 else ''} submitted; waiting for {need} more "
            f"({', '.join(self.waiting)}). The project's setting says how many must submit first."
        )

    def as_dict(self) -> dict:
        return {
            "ready": self.ready,
            "required": self.required,
            "submitted": list(self.submitted),
            "waiting": list(self.waiting),
        }


def readiness(clip: Clip, assignments: list[Assignment] | None = None) -> Readiness:
    """How many of the clip's coders have submitted against how many the project requires."""
    if assignments is None:
        assignments = list(Assignment.objects.filter(clip=clip).select_related("annotator"))
    names = sorted((a.annotator.username, a.state == AssignmentState.SUBMITTED) for a in assignments)
    submitted = tuple(n for n, done in names if done)
    waiting = tuple(n for n, done in names if not done)
    return Readiness(required_coders(clip.project, len(names)), submitted, waiting)


def required_coders(project: Project, assigned: int) -> int:
    """How many of ``assigned`` coders must submit before a clip's gold can be decided: the project's
    ``adjudication_min_coders`` (every assigned coder when unset), at most ``assigned``, at least one."""
    setting = project.adjudication_min_coders
    return max(1, assigned if setting is None else min(setting, assigned))


@dataclass(frozen=True)
class Uncoded:
    """A coder's revision that is not coded work (``agreement.scope``): shown greyed, never a vote."""

    revision: Revision
    reason: str  # agreement.scope.LEFT_OUT key

    @property
    def words(self) -> str:
        return f"not coded yet ({LEFT_OUT[self.reason][0]})"


@dataclass(frozen=True)
class Suggestion:
    """The value a lead may accept for a field, and where it comes from.

    ``kind``: ``unanimous`` (every coder whose work counts gave it; with one
    such coder, ``single``) or ``majority`` (a strict majority of them).
    ``source`` is the coder accepting takes the value from; ``agree`` the coders
    who gave this value. When the coders split there is no suggestion: the LLM
    draft never decides (``base`` leaves the field empty).
    """

    kind: str
    source: str
    value: object
    agree: tuple[str, ...]

    def as_dict(self) -> dict:
        return {"kind": self.kind, "source": self.source, "agree": list(self.agree)}


@dataclass
class RowState:
    """One row with every document about it and how the coders compare."""

    row: Row
    draft: Draft | None
    revisions: dict[str, Revision]  # the coded work only, by annotator username, sorted
    gold: Gold | None
    disputes: dict[str, FieldComparison] = field(default_factory=dict)
    # Revisions that are not coded work (not submitted, not reviewed...): shown, never compared.
    uncoded: dict[str, Uncoded] = field(default_factory=dict)

    @property
    def coder_contents(self) -> dict[str, dict]:
        return {name: r.content for name, r in self.revisions.items()}

    @property
    def unanimous(self) -> bool:
        """Every coder gave the same document (and there is at least one coder)."""
        return bool(self.revisions) and not self.disputes

    @property
    def undecided(self) -> list[str]:
        decided = self.gold.decisions if self.gold else {}
        return [name for name in self.disputes if name not in decided]

    @property
    def adjudicated(self) -> bool:
        return self.gold is not None and not self.undecided

    @property
    def relation_keys(self) -> tuple[str, str, str]:
        content = self.gold.content if self.gold else self.base()[0]
        return relation_keys(content, self.row.primary_speaker)

    def labels(self) -> set[str]:
        out = set()
        for content in [*self.coder_contents.values(), *([self.gold.content] if self.gold else [])]:
            out |= labels_used(content, relation_keys(content, self.row.primary_speaker))
        return out

    def source_value(self, source: str, name: str):
        """A field's value in one source (a coder's username or ``draft``); KeyError if absent."""
        if source == DRAFT:
            if self.draft is None:
                raise KeyError(source)
            return field_value(self.draft.content, name)
        return field_value(self.revisions[source].content, name)

    def same_as(self, name: str, value) -> list[str]:
        """The sources (coders, then the draft) whose value of the field equals ``value``."""
        sources = list(self.revisions)
        if self.draft is not None:
            sources.append(DRAFT)
        return [s for s in sources if same_value(name, self.source_value(s, name), value)]

    def suggestions(self) -> dict[str, Suggestion]:
        """Per field, the value a lead may accept; no entry where the coders split (or nobody's work counts)."""
        coders = list(self.revisions)
        out = {}
        for name in FIELDS:
            dispute = self.disputes.get(name)
            agree = [c for c in coders if c not in dispute.outliers] if dispute else coders
            if agree:
                kind = "majority" if dispute else ("unanimous" if len(coders) > 1 else "single")
                out[name] = Suggestion(
                    kind, agree[0], field_value(self.revisions[agree[0]].content, name), tuple(agree)
                )
        return out

    def base(self) -> tuple[dict, dict]:
        """The document a new gold starts from (every suggestion taken), and its layout.

        Nothing in it is decided: the page shows it as a suggestion, and a
        field becomes gold only when the lead takes, accepts or edits it.
        A field without a suggestion (the coders split) is empty, never the
        draft's value: the lead decides it.
        """
        coders = list(self.revisions.values())
        start = coders[0] if coders else self.draft
        if start is None:
            return {}, {}
        content = empty_content(start.content, self.row.primary_speaker)
        for name, suggestion in self.suggestions().items():
            content = with_field(content, name, suggestion.value)
        return content, dict(start.layout or {})


def row_states(clip: Clip, rows=None) -> list[RowState]:
    """Every row of the clip (or the given rows) with its sources: four queries.

    Only coded work (the project's work scope, ``agreement.scope``: the rule
    the agreement report follows) is compared, suggested and voted on; the
    other revisions are kept apart as ``uncoded``.
    """
    if rows is None:
        rows, scope = list(Row.objects.filter(clip=clip).order_by("row_index")), {"row__clip": clip}
    else:
        rows = list(rows)
        scope = {"row_id__in": [r.pk for r in rows]}
    drafts = {d.row_id: d for d in Draft.objects.filter(**scope)}
    golds = {g.row_id: g for g in Gold.objects.filter(**scope)}
    revisions: dict[int, dict[str, Revision]] = defaultdict(dict)
    uncoded: dict[int, dict[str, Uncoded]] = defaultdict(dict)
    read = with_left_out(Revision.objects.filter(**scope), clip.project.work_scope)
    for revision in read.select_related("annotator").order_by("annotator__username"):
        reason = getattr(revision, LEFT_OUT_FIELD)
        if reason is None:
            revisions[revision.row_id][revision.annotator.username] = revision
        else:
            uncoded[revision.row_id][revision.annotator.username] = Uncoded(revision, reason)
    states = []
    for row in rows:
        state = RowState(
            row, drafts.get(row.pk), revisions.get(row.pk, {}), golds.get(row.pk), uncoded=uncoded.get(row.pk, {})
        )
        state.disputes = compare_row(state.coder_contents)
        states.append(state)
    return states


def row_state(row: Row) -> RowState:
    return row_states(row.clip, [row])[0]


# --- filters -------------------------------------------------------------------


@dataclass(frozen=True)
class RowFilter:
    """Which rows the lead wants to see. Empty means every row."""

    disagreements: bool = False  # only rows where the coders disagree
    open: bool = False  # only rows not yet adjudicated
    field: str = ""  # only rows where this field is disputed
    label: str = ""  # only rows where a coder or the gold uses this label ("kind:label", or a label of any kind)
    annotator: str = ""  # only rows where this coder is outvoted (or there is no majority)
    order: str = ""  # "" row order, "disputed": most disputed first (the page sorts; no row is left out)

    @classmethod
    def from_query(cls, params) -> RowFilter:
        def truthy(v):
            return str(v).lower() in ("1", "true", "yes", "on")

        name = params.get("field", "")
        return cls(
            disagreements=truthy(params.get("disagreements", "")),
            open=truthy(params.get("open", "")),
            field=name if name in FIELD_TITLES else "",
            label=params.get("label", "")[:100],
            annotator=params.get("annotator", "")[:150],
            order="disputed" if params.get("order", "") == "disputed" else "",
        )

    def as_dict(self) -> dict:
        return {
            "disagreements": self.disagreements,
            "open": self.open,
            "field": self.field,
            "label": self.label,
            "annotator": self.annotator,
            "order": self.order,
        }

    def _uses_label(self, labels: set[str]) -> bool:
        if ":" in self.label:
            return self.label in labels
        return any(used.partition(":")[2] == self.label for used in labels)

    def matches(self, state: RowState) -> bool:
        if self.disagreements and not state.disputes:
            return False
        if self.open and state.adjudicated:
            return False
        if self.field and self.field not in state.disputes:
            return False
        if self.label and not self._uses_label(state.labels()):
            return False
        if self.annotator:
            fields = [state.disputes[self.field]] if self.field in state.disputes else state.disputes.values()
            if not any(self.annotator in c.outliers for c in fields):
                return False
        return True


# --- the clip page ---------------------------------------------------------------


def gold_document(state: RowState) -> dict:
    """The row's gold (``content`` null until a first decision) and the suggestion beside it.

    ``status``: ``decided`` (gold with every disputed field decided), ``open``
    (a disputed field is undecided, with or without gold yet) or ``new`` (no
    gold yet and nothing disputed). ``suggestion``: the document the lead may
    accept (``content``, every suggested value taken) and, per field, its kind
    (unanimous, majority, draft), the source accepting takes it from and the
    coders who gave it.
    """
    content, _ = state.base()
    suggestion = {"content": content, "fields": {name: s.as_dict() for name, s in state.suggestions().items()}}
    if state.gold is not None:
        g = state.gold
        status = "decided" if not state.undecided else "open"
        return {
            "id": g.pk,
            "version": g.version,
            "status": status,
            "content": g.content,
            "warnings": g.warnings,
            "decisions": g.decisions,
            "updated_at": g.updated_at.isoformat(),
            "suggestion": suggestion,
        }
    return {
        "id": None,
        "version": 0,
        "status": "open" if state.disputes else "new",
        "content": None,
        "warnings": [],
        "decisions": {},
        "updated_at": None,
        "suggestion": suggestion,
    }


def row_payload(state: RowState, commented: set[int]) -> dict:
    row = state.row
    return {
        "row_id": row.pk,
        "row_index": row.row_index,
        "start_time": row.start_time,
        "end_time": row.end_time,
        "primary_speaker": row.primary_speaker,
        "dialogue_cleaned": row.dialogue_cleaned,
        "relation_keys": list(state.relation_keys),
        "gold": gold_document(state),
        "draft": {"content": state.draft.content, "warnings": state.draft.warnings, "source": state.draft.source}
        if state.draft
        else None,
        "coders": {
            name: {"content": r.content, "status": r.status, "version": r.version}
            for name, r in state.revisions.items()
        },
        # Revisions that are not coded work: the page shows them greyed as "not coded yet", without their values.
        "uncoded": {
            name: {"status": u.revision.status, "reason": u.reason, "words": u.words}
            for name, u in state.uncoded.items()
        },
        "disputed": list(state.disputes),
        "outliers": {name: c.outliers for name, c in state.disputes.items()},
        "labels": sorted(state.labels()),
        "unanimous": state.unanimous,
        "commented": row.row_index in commented,
    }


def clip_summary(states: list[RowState]) -> dict:
    disputed_rows = [s for s in states if s.disputes]
    return {
        "rows": len(states),
        "gold_rows": sum(1 for s in states if s.gold is not None),
        "adjudicated_rows": sum(1 for s in states if s.adjudicated),
        "disputed_rows": len(disputed_rows),
        "undecided_fields": sum(len(s.undecided) for s in states),
        "unanimous_without_gold": sum(1 for s in states if s.unanimous and s.gold is None),
        "gold_with_issues": sum(1 for s in states if s.gold is not None and s.gold.warnings),
        # The revisions compared (coded work) and those shown as not coded yet: the agreement report's counts.
        "coded_revisions": sum(len(s.revisions) for s in states),
        "uncoded_revisions": sum(len(s.uncoded) for s in states),
    }


def _row_endpoint(name: str) -> str:
    """An endpoint URL with ``{row}`` where the row id goes (filled in by the page script)."""
    return reverse(name, args=[0]).replace("/0/", "/{row}/")


def coders_of(
    clip: Clip, assignments: list[Assignment] | None = None, states: list[RowState] | None = None
) -> list[dict]:
    """The clip's assigned coders; ``coded_rows``: the rows whose revision counts as coded work (with ``states``)."""
    if assignments is None:
        assignments = list(
            Assignment.objects.filter(clip=clip).select_related("annotator").order_by("annotator__username")
        )
    coded = defaultdict(int)
    for state in states or []:
        for name in state.revisions:
            coded[name] += 1
    return [
        {
            "username": a.annotator.username,
            "mode": a.mode,
            "state": a.state,
            "state_words": a.get_state_display().lower(),
            "assignment": a.pk,
            "coded_rows": coded[a.annotator.username],
            "coded": coded[a.annotator.username] > 0,
        }
        for a in sorted(assignments, key=lambda a: a.annotator.username)
    ]


def adjudication_payload(clip: Clip, row_filter: RowFilter | None = None) -> dict:
    """Everything the adjudication page (and the API) shows for a clip.

    Six queries whatever the number of rows: the clip's rows, drafts, gold,
    revisions (with their annotators), assignments and comments; the
    taxonomy is file data and the project comes joined with the clip.
    """
    row_filter = row_filter or RowFilter()
    states = row_states(clip)
    scores, similarity = disagreements(clip, states)
    config = editor_config(clip)
    comments = list(Comment.objects.filter(clip=clip).select_related("author", "row").order_by("created_at"))
    comment_list = [
        {
            "id": c.pk,
            "row": c.row.row_index if c.row_id else None,
            "kind": c.kind,
            "body": c.body,
            "author": c.author.username,
            "created_at": c.created_at.isoformat(),
            "resolved": c.resolved,
        }
        for c in comments
    ]
    commented = {c["row"] for c in comment_list if c["row"] is not None}
    assignments = list(Assignment.objects.filter(clip=clip).select_related("annotator"))
    coders = coders_of(clip, assignments, states)
    ready = readiness(clip, assignments)
    return {
        "clip": {**clip_header(clip), "editable": clip.state in EDITABLE_STATES and ready.ready},
        # Whether enough coders submitted for the gold to be decided, and which work counts (the agreement's rule).
        "readiness": {**ready.as_dict(), "reason": ready.refusal(clip)},
        "work_scope": {"key": clip.project.work_scope, "label": clip.project.get_work_scope_display()},
        # What the shared row editor (static/workspace/editor.js) edits here.
        "document": "gold",
        "document_title": "gold",
        "compare_to_draft": False,
        "storage_prefix": "rescue:gold:",
        "endpoints": {
            "save": _row_endpoint("api-row-gold"),
            "validate": _row_endpoint("api-row-gold-validate"),
            "decide": _row_endpoint("api-row-gold-decide"),
            "accept": _row_endpoint("api-row-gold-accept-suggestion"),
        },
        "coders": coders,
        "fields": [{"name": name, "title": FIELD_TITLES[name], "keys": list(field_keys(name))} for name in FIELDS],
        "rows": [
            {**row_payload(s, commented), "disagreement": scores[s.row.pk]} for s in states if row_filter.matches(s)
        ],
        # Whether the texts' similarities are complete (a worker embeds the missing texts), and the score's rule.
        "similarity": similarity,
        "filters": row_filter.as_dict(),
        "summary": clip_summary(states),
        "comments": comment_list,
        "discard_proposals": [
            c for c in comment_list if c["kind"] == CommentKind.DISCARD_PROPOSAL and not c["resolved"]
        ],
        "cues": [],
        "assignment": None,
        "config": config,
        "label_choices": label_choices(config),
    }


def disagreements(clip: Clip, states: list[RowState]) -> tuple[dict[int, dict], dict]:
    """Per row id, how much its coders disagree (``disagreement``), and whether the text similarities are complete."""
    from ..agreement.embeddings import EmbeddingError
    from .disagreement import DEFAULT_THRESHOLD, Vectors, row_disagreement, row_texts, similarity_status

    try:
        vectors = Vectors(t for s in states for t in row_texts(s.coder_contents, s.row.primary_speaker))
    except EmbeddingError as exc:
        vectors, similarity = None, {"status": "unavailable", "error": str(exc), "missing": None, "job": None}
    else:
        similarity = similarity_status(clip, vectors)
    similarity["threshold"] = DEFAULT_THRESHOLD
    scores = {}
    for s in states:
        if vectors is None:
            scores[s.row.pk] = None
        else:
            scores[s.row.pk] = row_disagreement(s.coder_contents, s.row.primary_speaker, vectors).as_dict()
    return scores, similarity


def label_choices(config: dict) -> list[dict]:
    """Every taxonomy label once, with the kinds of field that use it (``repair`` is an
    utterance type and a strategy): what the page's label filter offers."""
    kinds: dict[str, list[str]] = {}
    for key, word in (
        ("utterance_types", "utterance type"),
        ("support_strategies", "strategy"),
        ("relation_patterns", "relation pattern"),
    ):
        for item in config[key]:
            kinds.setdefault(item["label"], []).append(word)
    return [{"label": label, "kinds": kinds[label]} for label in sorted(kinds)]


# --- the project's progress -------------------------------------------------------


def project_progress(project: Project) -> dict:
    """Clips and rows adjudicated, and the disagreements left per field.

    Streams the project's coded revisions row by row (one query per table,
    however large the project): only coded work (the project's work scope, the
    agreement report's rule) is compared, so a clip nobody submitted has no
    disagreement and no open decision. A row is adjudicated when it has gold
    and every disputed field has a decision, or when its clip is adjudicated
    or released (gold imported or generated elsewhere carries no decisions).
    Discarded clips leave the benchmark and are not counted. Per clip also:
    the coders assigned and submitted, and whether enough submitted for its
    gold to be decided (``readiness``).
    """
    clips = {
        c["id"]: {
            **c,
            "rows": 0,
            "disputed_rows": 0,
            "adjudicated_rows": 0,
            "gold_rows": 0,
            "undecided_fields": 0,
            "coders": 0,
            "assigned": 0,
            "submitted": 0,
            "ready": False,
        }
        for c in project.clips.values("id", "sample_id", "state", "scenario").order_by("sample_id")
    }
    row_clip = dict(Row.objects.filter(clip__project=project).values_list("id", "clip_id"))
    decisions = dict(Gold.objects.filter(row__clip__project=project).values_list("row_id", "decisions"))
    left = {name: 0 for name in FIELDS}
    coders = defaultdict(set)
    revisions = (
        with_left_out(Revision.objects.filter(row__clip__project=project), project.work_scope)
        .filter(**{f"{LEFT_OUT_FIELD}__isnull": True})
        .order_by("row_id", "annotator__username")
        .values_list("row_id", "annotator__username", "content")
        .iterator(chunk_size=2000)
    )
    disputes_by_row = {}
    for row_id, group in groupby(revisions, key=lambda r: r[0]):
        contents = {name: content for _, name, content in group}
        coders[row_clip[row_id]].update(contents)
        disputes_by_row[row_id] = list(compare_row(contents))
    for clip_id, state in Assignment.objects.filter(clip__project=project).values_list("clip_id", "state"):
        clips[clip_id]["assigned"] += 1
        clips[clip_id]["submitted"] += state == AssignmentState.SUBMITTED
    for clip in clips.values():
        clip["ready"] = clip["submitted"] >= required_coders(project, clip["assigned"])
    for row_id, clip_id in row_clip.items():
        clip = clips[clip_id]
        clip["rows"] += 1
        disputed = disputes_by_row.get(row_id, [])
        clip["disputed_rows"] += bool(disputed)
        has_gold = row_id in decisions
        clip["gold_rows"] += has_gold
        undecided = [name for name in disputed if name not in (decisions.get(row_id) or {})]
        if clip["state"] in CLOSED_STATES or (has_gold and not undecided):
            clip["adjudicated_rows"] += 1
        elif clip["state"] != ClipState.DISCARDED:
            clip["undecided_fields"] += len(undecided)
            for name in undecided:
                left[name] += 1
    counted = [c for c in clips.values() if c["state"] != ClipState.DISCARDED]
    for clip_id, names in coders.items():
        clips[clip_id]["coders"] = len(names)
    return {
        "clips": len(counted),
        "clips_adjudicated": sum(1 for c in counted if c["state"] in CLOSED_STATES),
        "clips_discarded": len(clips) - len(counted),
        "clips_ready": sum(1 for c in counted if c["ready"] and c["state"] in EDITABLE_STATES),
        "rows": sum(c["rows"] for c in counted),
        "rows_adjudicated": sum(c["adjudicated_rows"] for c in counted),
        "disagreements_left": left,
        "disagreements_left_total": sum(left.values()),
        "per_clip": list(clips.values()),
    }


def open_discard_proposals(project: Project) -> dict[int, int]:
    """Per clip id: how many discard proposals wait for a lead."""
    counts: dict[int, int] = defaultdict(int)
    for clip_id in Comment.objects.filter(
        clip__project=project, kind=CommentKind.DISCARD_PROPOSAL, resolved=False
    ).values_list("clip_id", flat=True):
        counts[clip_id] += 1
    return dict(counts)
