"""Import release-format clips into a project as gold, draft or one annotator's revision.

Everything is validated before anything is written; the writes happen in one
transaction, so a bad file leaves the database exactly as it was.

Every file read leaves an ``ImportRecord`` (kind, file and its SHA-256, who,
when, the clips and rows it brought): the dataset card states where gold and
drafts came from only from these records. Gold is never imported silently onto
a clip that is already in a release: that is refused unless the caller says it
is a correction (``correct_released``, a lead), and a correction records which
rows and fields it changed, for the next release's card and diff.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from django.db import transaction
from django.utils import timezone
from simple_history.utils import bulk_create_with_history

from ..audit import current_source
from ..models import (
    Assignment,
    AssignmentMode,
    AssignmentState,
    Clip,
    ClipState,
    Cue,
    Draft,
    DraftSource,
    Gold,
    ImportRecord,
    Project,
    Release,
    Revision,
    RevisionStatus,
    Row,
)
from ..roles import is_lead
from ..schema import ANNOTATION_KEYS, CLIP_KEYS, SKELETON_KEYS, Issue, check_clip, row_issue_index
from ..services import transition
from . import layout
from .reader import Problem, ReadError, SourceClip, read_path

SOURCES = ("gold", "draft", "revision")
_STATE_AFTER_IMPORT = {"gold": ClipState.ADJUDICATED, "draft": ClipState.PREANNOTATED, "revision": ClipState.IN_REVIEW}


class ImportFailed(Exception):
    # A file with thousands of wrong keys gets its first problems and a count (issue 14: wide JSON).
    LISTED = 20

    def __init__(self, problems: list[Problem]):
        self.problems = problems
        lines = [str(p) for p in problems[: self.LISTED]]
        if len(problems) > self.LISTED:
            lines.append(f"... and {len(problems) - self.LISTED} more problems")
        super().__init__("\n".join(lines))


@dataclass
class ImportResult:
    created: list[str] = field(default_factory=list)  # sample ids of new clips
    attached: list[str] = field(default_factory=list)  # existing clips that got a document
    rows: int = 0
    warnings: list[tuple[str, Issue]] = field(default_factory=list)
    records: list[ImportRecord] = field(default_factory=list)  # one per file read

    @property
    def corrected(self) -> list[dict]:
        """The released clips this import corrected, with the rows and fields it changed."""
        return [clip for record in self.records for clip in record.correction.get("clips", [])]


@dataclass
class _Checked:
    source: SourceClip
    clip: object  # schema.Clip
    rows: list[dict]
    row_warnings: dict[int, list[dict]]  # row position -> warning dicts (paths relative to the row)
    warnings: list[Issue]  # the same, with paths from the clip


def _problem(src: SourceClip, issue: Issue, rows: list) -> Problem:
    data = src.data if isinstance(src.data, dict) else {}
    pos = row_issue_index(issue)
    row_no = None
    if pos is not None:
        raw_row = rows[pos] if pos < len(rows) else None
        row_no = (
            raw_row.get("row_index")
            if isinstance(raw_row, dict) and isinstance(raw_row.get("row_index"), int)
            else pos + 1
        )
    sample_id = data.get("sample_id") if isinstance(data.get("sample_id"), str) else None
    return Problem(src.file, issue.message, line=src.line, sample_id=sample_id, row=row_no, field=issue.path or None)


def _relative(issue: Issue) -> dict:
    d = issue.as_dict()
    d["path"] = issue.path.split("].", 1)[1] if issue.path.startswith("rows[") and "]." in issue.path else issue.path
    return d


def _check_all(sources: list[SourceClip], taxonomy_version: str) -> list[_Checked]:
    problems: list[Problem] = []
    checked: list[_Checked] = []
    first_seen: dict[str, SourceClip] = {}
    for src in sources:
        clip, report = check_clip(src.data, taxonomy_version=taxonomy_version)
        rows = src.data.get("rows") if isinstance(src.data, dict) and isinstance(src.data.get("rows"), list) else []
        problems.extend(_problem(src, issue, rows) for issue in report.errors)
        if clip is None or not report.ok:
            continue
        if clip.sample_id in first_seen:
            other = first_seen[clip.sample_id]
            problems.append(
                Problem(
                    src.file,
                    f"duplicate sample id (first seen in {other.file}, line {other.line})",
                    line=src.line,
                    sample_id=clip.sample_id,
                    field="sample_id",
                )
            )
            continue
        first_seen[clip.sample_id] = src
        row_warnings: dict[int, list[dict]] = {}
        for issue in report.warnings:
            row_warnings.setdefault(row_issue_index(issue), []).append(_relative(issue))
        checked.append(_Checked(src, clip, rows, row_warnings, report.warnings))
    if problems:
        raise ImportFailed(problems)
    return checked


def _skeleton_matches(existing: list[Row], rows: list[dict]) -> bool:
    if len(existing) != len(rows):
        return False
    return all(r.skeleton() == {k: raw[k] for k in SKELETON_KEYS} for r, raw in zip(existing, rows))


def released_versions(project: Project) -> dict[str, list[str]]:
    """{sample id: the versions of the project's releases that hold the clip}, oldest first."""
    out: dict[str, list[str]] = defaultdict(list)
    for version, clips in (
        Release.objects.filter(project=project).order_by("created_at", "id").values_list("version", "manifest__clips")
    ):
        for clip in clips or []:
            out[clip["sample_id"]].append(version)
    return dict(out)


def import_rescue(
    path: str | Path,
    project: Project,
    *,
    as_source: str = "gold",
    annotator=None,
    actor=None,
    correct_released: bool = False,
) -> ImportResult:
    """Import every clip under ``path``. Raises ImportFailed (nothing written) on any error.

    ``actor`` is who imports (recorded); ``correct_released`` lets gold onto clips
    already in a release, as a correction that ``actor``, a lead, makes.
    """
    if as_source not in SOURCES:
        raise ValueError(f"as_source must be one of {SOURCES}")
    if (as_source == "revision") != (annotator is not None):
        raise ValueError("a revision import needs an annotator, and only a revision import takes one")
    if correct_released and (as_source != "gold" or actor is None or not is_lead(actor)):
        raise ValueError("a correction of released gold is a gold import made by a lead (actor)")
    try:
        sources = read_path(path)
    except ReadError as exc:
        raise ImportFailed(exc.problems) from None
    checked = _check_all(sources, project.taxonomy_version)

    result = ImportResult()
    # The rows of clips that already exist, in one query (Row's default order is clip, row_index).
    existing = {
        c.sample_id: c
        for c in project.clips.filter(sample_id__in=[c.clip.sample_id for c in checked]).prefetch_related("rows")
    }
    problems = []
    for item in checked:
        clip = existing.get(item.clip.sample_id)
        if clip is not None and not _skeleton_matches(list(clip.rows.all()), item.rows):
            problems.append(
                Problem(
                    item.source.file,
                    "a clip with this sample id already exists with different rows (times, speakers or words)",
                    line=item.source.line,
                    sample_id=item.clip.sample_id,
                )
            )
    released = released_versions(project)
    if not correct_released:
        for item in checked:
            if item.clip.sample_id in released:
                versions = ", ".join(released[item.clip.sample_id])
                why = (
                    "released gold is changed only by a correction (import_rescue --correct-released --by LEAD), which "
                    "is recorded and listed by the next release"
                    if as_source == "gold"
                    # A release's agreement figures are computed from its clips' drafts and revisions.
                    else (
                        f"a released clip takes no more {as_source}s: the release's agreement figures come from the "
                        "ones it has"
                    )
                )
                problems.append(
                    Problem(
                        item.source.file,
                        f"this clip is in release {versions}; {why}",
                        line=item.source.line,
                        sample_id=item.clip.sample_id,
                    )
                )
    if problems:
        raise ImportFailed(problems)

    with transaction.atomic():
        documents: list = []
        had_assignment = set()
        if as_source == "revision":
            had_assignment = set(
                Assignment.objects.filter(clip__in=list(existing.values()), annotator=annotator).values_list(
                    "clip__sample_id", flat=True
                )
            )
        corrections: dict[str, dict] = {}
        for item in checked:
            clip = existing.get(item.clip.sample_id)
            replaced = None  # the row positions whose document is replaced: all of them, but in a correction
            if clip is None:
                clip, rows = _create_clip(project, item, as_source)
                result.created.append(clip.sample_id)
            else:
                rows = list(clip.rows.all())
                result.attached.append(clip.sample_id)
                if clip.sample_id in released:
                    changes = _gold_changes(rows, item.rows)
                    corrections[clip.sample_id] = {
                        "sample_id": clip.sample_id,
                        "releases": released[clip.sample_id],
                        "rows": changes,
                    }
                    # A correction touches only the rows it changes: the others keep their gold and its
                    # adjudication record (replacing them would make decided gold look imported).
                    changed = {c["row_index"] for c in changes}
                    replaced = {pos for pos, row in enumerate(rows) if row.row_index in changed}
                _replace_existing(
                    [r for pos, r in enumerate(rows) if replaced is None or pos in replaced], as_source, annotator
                )
            if as_source == "revision":
                # Imported revisions are finished work from elsewhere: a submitted assignment, so they count
                # as coded work in agreement (and the annotator cannot edit them without a lead reopening it).
                assignment = Assignment.objects.filter(clip=clip, annotator=annotator).first()
                assignment = assignment or Assignment(clip=clip, annotator=annotator)
                assignment.state, assignment.submitted_at = AssignmentState.SUBMITTED, timezone.now()
                assignment.mode = AssignmentMode.IMPORTED
                assignment._change_reason = "revisions imported as finished work"
                assignment.save()
                _review_when_every_coder_is_done(clip, actor)
            for pos, (row, raw) in enumerate(zip(rows, item.rows)):
                if replaced is None or pos in replaced:
                    documents.append(_document(as_source, row, raw, item.row_warnings.get(pos, []), annotator, actor))
            result.rows += len(rows)
            result.warnings.extend((clip.sample_id, issue) for issue in item.warnings)
        model = {"gold": Gold, "draft": Draft, "revision": Revision}[as_source]
        bulk_create_with_history(documents, model, batch_size=1000, default_user=actor)
        result.records = _record_files(
            project, checked, as_source, annotator, actor, result, had_assignment, corrections
        )
    return result


def _review_when_every_coder_is_done(clip: Clip, actor) -> None:
    """An imported coder's work is submitted work: the clip moves on as a submission would move it,
    to reviewed once every assignment is in, so that a lead can adjudicate it."""
    if clip.state in (ClipState.IMPORTED, ClipState.PREANNOTATED):
        transition(clip, ClipState.IN_REVIEW, actor=actor, reason="revisions imported")
    if clip.state == ClipState.IN_REVIEW and not clip.assignments.exclude(state=AssignmentState.SUBMITTED).exists():
        transition(
            clip,
            ClipState.REVIEWED,
            actor=actor,
            reason="revisions imported as finished work; every assignment submitted",
        )


def _gold_changes(rows: list[Row], incoming: list[dict]) -> list[dict]:
    """[{row_index, fields}] of the rows whose gold ``incoming`` changes: the annotation
    keys whose value (or presence) differs; ``(key order)`` when only the order does."""
    current = {g.row_id: g for g in Gold.objects.filter(row__in=rows)}
    changed = []
    for row, raw in zip(rows, incoming):
        new = {k: raw[k] for k in raw if k in ANNOTATION_KEYS}
        gold = current.get(row.pk)
        if gold is None:
            changed.append({"row_index": row.row_index, "fields": ["(no gold before)"]})
            continue
        old = gold.content
        fields = sorted(k for k in set(old) | set(new) if (k in old) != (k in new) or old.get(k) != new.get(k))
        if not fields and (gold.layout or {}) != layout.capture(raw):
            fields = ["(key order)"]
        if fields:
            changed.append({"row_index": row.row_index, "fields": fields})
    return changed


def _record_files(
    project, checked, as_source, annotator, actor, result: ImportResult, had_assignment: set, corrections: dict
) -> list[ImportRecord]:
    """One ImportRecord per file read, in the order the files were read."""
    by_file: dict[str, list[_Checked]] = {}
    for item in checked:
        by_file.setdefault(item.source.file, []).append(item)
    created = set(result.created)
    records = []
    for file, items in by_file.items():
        ids = [i.clip.sample_id for i in items]
        corrected = [corrections[s] for s in ids if s in corrections]
        records.append(
            ImportRecord.objects.create(
                project=project,
                kind=as_source,
                file_path=file,
                sha256=items[0].source.file_sha256,
                annotator=annotator,
                imported_by=actor if getattr(actor, "is_authenticated", False) else None,
                source=current_source(),
                sample_ids=ids,
                created_sample_ids=[s for s in ids if s in created],
                assignments_created=[s for s in ids if s not in had_assignment] if as_source == "revision" else [],
                row_count=sum(len(i.rows) for i in items),
                correction={"clips": corrected, "rows_changed": sum(len(c["rows"]) for c in corrected)}
                if corrected
                else {},
            )
        )
    return records


def _create_clip(project: Project, item: _Checked, as_source: str) -> tuple[Clip, list[Row]]:
    data = item.source.data
    clip = Clip.objects.create(
        project=project,
        sample_id=item.clip.sample_id,
        scenario=item.clip.scenario,
        participants=list(item.clip.participants),
        source_file=item.clip.source_file,
        release_keys=[k for k in data if k in CLIP_KEYS],
        duration=max((r["end_time"] for r in item.rows), default=None),
        state=_STATE_AFTER_IMPORT[as_source],
        content_hash=item.source.content_hash,
        # Release rows already name the clip's entities: nothing to map.
        speaker_map={name: name for name in {r["primary_speaker"] for r in item.rows}},
        speaker_map_confirmed=True,
    )
    rows = [Row(clip=clip, **{k: raw[k] for k in SKELETON_KEYS}) for raw in item.rows]
    rows = bulk_create_with_history(rows, Row, batch_size=1000)
    if rows and rows[0].pk is None:  # backends that do not return ids from bulk inserts
        rows = list(clip.rows.order_by("row_index"))
    # The release carries no raw transcript: the rows' own times and words are the cues.
    Cue.objects.bulk_create(
        [
            Cue(
                clip=clip,
                position=i,
                start_time=r.start_time,
                end_time=r.end_time,
                speaker=r.primary_speaker,
                text=r.dialogue_cleaned,
            )
            for i, r in enumerate(rows, start=1)
        ]
    )
    return clip, rows


def _replace_existing(rows: list[Row], as_source: str, annotator) -> None:
    ids = [r.pk for r in rows]
    if as_source == "gold":
        Gold.objects.filter(row_id__in=ids).delete()
    elif as_source == "draft":
        Draft.objects.filter(row_id__in=ids).delete()
    else:
        Revision.objects.filter(row_id__in=ids, annotator=annotator).delete()


def _document(as_source, row: Row, raw: dict, warnings: list[dict], annotator, actor):
    content = {k: raw[k] for k in raw if k in ANNOTATION_KEYS}
    common = dict(row=row, content=content, warnings=warnings, layout=layout.capture(raw))
    if as_source == "gold":
        return Gold(decided_by=actor, note="imported", **common)
    if as_source == "draft":
        return Draft(source=DraftSource.IMPORT, provenance={"imported": True}, **common)
    return Revision(annotator=annotator, status=RevisionStatus.REVIEWED, **common)


def summarise_warnings(result: ImportResult) -> Counter:
    return Counter(issue.code for _, issue in result.warnings)
