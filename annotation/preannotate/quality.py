"""How good the LLM drafts were, field by field and per modality, measured against what humans kept.

For every row that has an LLM draft and a human reference, each field is reduced
to its *entries*: the people of a ``facial_expressions`` list, the strategy types
of ``support_strategy``, the label of ``relation_pattern`` (``""`` "no clear
pattern" is an entry, null "not annotated" is none), the presence of a tone, and
so on (``FIELDS``). Comparing the draft's entries with the human's gives, per
field:

- **agreement**: the share of compared rows whose draft entries are exactly the
  human's (same entries, same counts);
- **deleted**: the share of drafted entries the humans did not keep, i.e. what
  the model invented as far as the humans are concerned;
- **missed**: the share of human entries the draft did not have.

The human reference of a row is its gold when it has one, else each revision an
assigned annotator marked reviewed ("coded"); a row with two reviewed revisions
is two comparisons. Drafts are grouped by the modality they were made from
(``Draft.modality``), plus all together. Drafts from the offline skeleton are left
out (no model wrote them); imported drafts count, under "not recorded".

A read only: nothing here writes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from django.db.models import Exists, OuterRef

from ..models import Assignment, ClipState, Draft, DraftSource, Gold, Modality, Project, Revision, RevisionStatus
from ..schema import relation_label
from ..taxonomy import THERAPIST

ALL = "all"
NOT_RECORDED = "not recorded"
# Modalities in the order the report lists them.
MODALITY_ORDER = (*Modality.values, "")


def _entries(name: str, unit: Callable[[dict], object]) -> Callable[[dict, str], list]:
    return lambda doc, speaker: [unit(entry) for entry in doc.get(name) or [] if isinstance(entry, dict)]


def _relation(doc: dict, speaker: str) -> list:
    label = relation_label({**doc, "primary_speaker": speaker})
    return [] if label is None else [label]


@dataclass(frozen=True)
class Field:
    name: str
    entries: Callable[[dict, str], list]
    applies: Callable[[str], bool] = lambda speaker: True
    unit: str = ""  # what one entry is, for the reader


FIELDS: tuple[Field, ...] = (
    Field("target", lambda doc, speaker: list(doc.get("target") or []), unit="person addressed"),
    Field(
        "utterance_type",
        lambda doc, speaker: [doc["utterance_type"]] if doc.get("utterance_type") else [],
        applies=lambda speaker: speaker != THERAPIST,
        unit="label; client rows only",
    ),
    Field(
        "tone_of_voice",
        lambda doc, speaker: ["tone"] if str(doc.get("tone_of_voice") or "").strip() else [],
        unit="a tone given",
    ),
    Field("background_dialogue", _entries("background_dialogue", lambda e: e.get("speaker")), unit="speaker"),
    Field("body_posture", _entries("body_posture", lambda e: e.get("person")), unit="person"),
    Field("facial_expressions", _entries("facial_expressions", lambda e: e.get("person")), unit="person"),
    Field("self_directed_behavior", _entries("self_directed_behavior", lambda e: e.get("person")), unit="person"),
    Field(
        "interaction_behavior",
        _entries("interaction_behavior", lambda e: (e.get("initiator"), tuple(sorted(e.get("target") or [])))),
        unit="initiator → targets",
    ),
    Field("internal_emotion", _entries("internal_emotion", lambda e: e.get("person")), unit="person"),
    Field(
        "viewpoints_attitudes",
        _entries("viewpoints_attitudes", lambda e: (e.get("source"), e.get("target"))),
        unit="source → target",
    ),
    Field(
        "support_strategy",
        _entries("support_strategy", lambda e: e.get("strategy_type")),
        applies=lambda speaker: speaker == THERAPIST,
        unit="strategy type; therapist rows only",
    ),
    Field("relation_pattern", _relation, unit='label, or "" for no clear pattern'),
)


@dataclass
class Tally:
    """The counts behind one field's figures."""

    rows: int = 0  # comparisons where the field applies
    agreeing: int = 0
    drafted: int = 0
    deleted: int = 0
    human: int = 0
    missed: int = 0

    def add(self, draft: list, human: list) -> None:
        d, h = Counter(draft), Counter(human)
        kept = sum((d & h).values())
        self.rows += 1
        self.agreeing += d == h
        self.drafted += sum(d.values())
        self.human += sum(h.values())
        self.deleted += sum(d.values()) - kept
        self.missed += sum(h.values()) - kept

    def figures(self) -> dict:
        def share(part: int, whole: int) -> float | None:
            return part / whole if whole else None

        return {
            "rows": self.rows,
            "agreement": share(self.agreeing, self.rows),
            "agreeing_rows": self.agreeing,
            "drafted": self.drafted,
            "deleted": self.deleted,
            "deleted_share": share(self.deleted, self.drafted),
            "human": self.human,
            "missed": self.missed,
            "missed_share": share(self.missed, self.human),
        }


@dataclass
class _Group:
    clips: set = field(default_factory=set)
    rows: set = field(default_factory=set)
    comparisons: int = 0
    tallies: dict = field(default_factory=lambda: {f.name: Tally() for f in FIELDS})

    def add(self, clip_id: int, row_id: int, speaker: str, draft: dict, human: dict) -> None:
        self.clips.add(clip_id)
        self.rows.add(row_id)
        self.comparisons += 1
        for f in FIELDS:
            if f.applies(speaker):
                self.tallies[f.name].add(f.entries(draft, speaker), f.entries(human, speaker))

    def as_dict(self, modality: str) -> dict:
        labels = {**dict(Modality.choices), "": NOT_RECORDED, ALL: "all modalities"}
        return {
            "modality": modality or NOT_RECORDED,
            "label": labels[modality],
            "clips": len(self.clips),
            "rows": len(self.rows),
            "comparisons": self.comparisons,
            "fields": [{"field": f.name, "entry": f.unit, **self.tallies[f.name].figures()} for f in FIELDS],
        }


def _references(row_ids: list[int]) -> dict[int, list[tuple[str, dict]]]:
    """Per row: [("gold", content)] when it has gold, else [(annotator, content)] per coded revision."""
    out: dict[int, list[tuple[str, dict]]] = {}
    for row_id, content in Gold.objects.filter(row_id__in=row_ids).values_list("row_id", "content"):
        out[row_id] = [("gold", content)]
    assigned = Assignment.objects.filter(clip_id=OuterRef("row__clip_id"), annotator_id=OuterRef("annotator_id"))
    coded = (
        Revision.objects.filter(row_id__in=row_ids, status=RevisionStatus.REVIEWED)
        .exclude(row_id__in=list(out))
        .filter(Exists(assigned))
        .values_list("row_id", "annotator__username", "content")
        .order_by("row_id", "annotator__username")
    )
    for row_id, username, content in coded:
        out.setdefault(row_id, []).append((username, content))
    return out


def draft_quality(project: Project, *, clips=None) -> dict:
    """The draft-quality report of ``project`` (or of the clips ``clips``, ids or Clip objects)."""
    drafts = Draft.objects.filter(row__clip__project=project).exclude(source=DraftSource.OFFLINE)
    drafts = drafts.exclude(row__clip__state=ClipState.DISCARDED)
    if clips is not None:
        drafts = drafts.filter(row__clip__in=list(clips))
    found = list(drafts.values_list("row_id", "row__clip_id", "row__primary_speaker", "modality", "content"))
    references = _references([row_id for row_id, *_ in found])
    groups: dict[str, _Group] = {}
    reference_kinds: Counter = Counter()
    for row_id, clip_id, speaker, modality, content in found:
        for who, human in references.get(row_id, []):
            reference_kinds["gold" if who == "gold" else "revisions"] += 1
            for key in (modality, ALL):
                groups.setdefault(key, _Group()).add(clip_id, row_id, speaker, content, human)
    order = [m for m in MODALITY_ORDER if m in groups]
    return {
        "project": project.slug,
        "drafted_rows": len(found),
        "compared_with": {"gold": reference_kinds["gold"], "reviewed_revisions": reference_kinds["revisions"]},
        "modalities": [groups[m].as_dict(m) for m in order] + ([groups[ALL].as_dict(ALL)] if ALL in groups else []),
        "fields": [{"field": f.name, "entry": f.unit} for f in FIELDS],
    }
