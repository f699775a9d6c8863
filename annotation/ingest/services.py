"""The one write path of ingest, behind the upload page, the API and ``manage.py ingest``.

Contract of ``ingest_files``: every transcript gets exactly one result,
``created``, ``unchanged``, ``replaced`` or ``refused``. Each file is
read and checked completely before anything is written, and written in its
own transaction: a refused file writes nothing, and one bad file in a batch
does not stop the others.

Idempotency: a file whose bytes (SHA-256) match a clip of the project is
``unchanged``. A different file for an existing sample id is refused unless
``replace`` is asked for and the clip holds no human work yet; then its
cues, rows and drafts are replaced in one transaction.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import PurePosixPath
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import URLValidator
from django.db import IntegrityError, transaction

from ..labels import state_label
from ..models import Assignment, Clip, ClipState, Comment, Cue, Gold, Project, Revision
from ..schema import CLIP_KEYS
from ..services import ServiceError
from ..taxonomy import SCENARIOS
from . import speakers
from .errors import IngestError
from .formats import FORMATS, TRANSCRIPT_SUFFIXES, Transcript, read_transcript
from .uploads import is_media, size_limit

# A clip may be re-ingested over only while nobody has worked on it and no worker is writing its rows.
REPLACEABLE_STATES = (ClipState.IMPORTED, ClipState.PREANNOTATED, ClipState.PREANNOTATION_FAILED)
_SAMPLE_ID = re.compile(r"^[^/\s][^/]*/[^/]*[^/\s]$")

CREATED, UNCHANGED, REPLACED, REFUSED = "created", "unchanged", "replaced", "refused"

# The longest file name (with its folder) a clip records, and a sample id's.
NAME_LIMIT = Clip._meta.get_field("source_file").max_length
SAMPLE_ID_LIMIT = Clip._meta.get_field("sample_id").max_length
# A stored media file's name, in bytes: file systems allow 255 per name, and the storage adds a suffix when taken.
MEDIA_NAME_BYTES = 120


def shown_name(name: str, limit: int = 120) -> str:
    """A file name as a message may quote it: control characters and undecodable bytes escaped, cut to ``limit``."""
    shown = "".join(
        ch if ch.isprintable() else ch.encode("unicode_escape", "backslashreplace").decode("ascii") for ch in name
    )
    shown = shown.encode("utf-8", "backslashreplace").decode("utf-8")
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"


def name_problem(name: str) -> str:
    """Why a file cannot be ingested under ``name`` (its relative path), or "" when it can.

    Any length and any characters a file system allows come here (the CLI
    reads names from the disk, the page and the API from the browser); the
    clip records the name, so it must fit ``Clip.source_file`` and be text
    PostgreSQL can store.
    """
    if len(name) > NAME_LIMIT:
        return (
            f"{shown_name(name)}: the file name is {len(name):,} characters, over the {NAME_LIMIT} a clip records; "
            "rename the file or its folder"
        )
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return f"{shown_name(name)}: the file name is not valid UTF-8; rename the file"
    if any(not ch.isprintable() for ch in name):
        return f"{shown_name(name)}: the file name holds control characters; rename the file"
    return ""


def storable_media_name(name: str) -> str:
    """The name a media file is stored under: its own, cut to ``MEDIA_NAME_BYTES`` bytes, suffix kept."""
    path = PurePosixPath(name)
    stem, suffix = path.stem, path.suffix
    budget = MEDIA_NAME_BYTES - len(suffix.encode("utf-8"))
    while len(stem.encode("utf-8")) > budget:
        stem = stem[:-1]
    return f"{stem or 'media'}{suffix}"


@dataclass
class Upload:
    """One file handed to ingest.

    ``name`` is the relative name as uploaded (``<folder>/<file>`` when the
    folder is known); it becomes ``Clip.source_file`` and gives the default
    sample id. ``read`` returns the bytes; ``file`` is a Django ``File`` for
    media, which is stored rather than read.
    """

    name: str
    size: int
    read: Callable[[], bytes]
    file: Any = None

    @property
    def suffix(self) -> str:
        return PurePosixPath(self.name).suffix.lower()

    @property
    def is_media(self) -> bool:
        return is_media(self.name)

    def too_large(self) -> str:
        """Why the file is over its size limit (MAX_UPLOAD_BYTES, or MAX_MEDIA_BYTES for media); "" if it is not."""
        limit, setting = size_limit(self.name)
        if self.size > limit or getattr(self.file, "over_limit", False):
            return f"{self.name}: file is {self.size:,} bytes, over the limit of {limit:,} bytes ({setting})"
        return ""

    @property
    def pairing_key(self) -> tuple[str, str]:
        path = PurePosixPath(self.name)
        return (path.parent.name, path.stem)


@dataclass
class IngestOptions:
    scenario: str
    participants: list[str] | None = None
    sample_id: str | None = None  # only for a single transcript
    group: str | None = None  # the sample id's folder part when the upload carries no folder
    speaker_map: dict[str, str] | None = None  # given by the caller: confirms the map
    replace: bool = False
    media_url: str = ""  # only for a single transcript


@dataclass
class FileResult:
    file: str
    status: str
    message: str = ""
    line: int | None = None
    sample_id: str | None = None
    clip_id: int | None = None
    cues: int = 0
    speaker_map_confirmed: bool = False
    unmapped_speakers: list[str] = field(default_factory=list)
    # What reading the file changed that a person should know at once (rolling captions collapsed).
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return asdict(self)


def check_options(options: IngestOptions, transcript_count: int) -> None:
    """Refuse a request whose parameters are wrong for every file (ServiceError)."""
    if options.scenario not in SCENARIOS:
        raise ServiceError(f"scenario must be one of {', '.join(SCENARIOS)}, got {options.scenario!r}")
    if options.participants is not None:
        problems = speakers.check_participants(options.participants, options.scenario)
        if problems:
            raise ServiceError("participants: " + "; ".join(problems))
    if options.speaker_map is not None:
        if not isinstance(options.speaker_map, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in options.speaker_map.items()
        ):
            raise ServiceError("speaker map must be a JSON object of speaker tag -> entity name (both strings)")
    if options.sample_id is not None:
        if transcript_count > 1:
            raise ServiceError("a sample id can only be given when ingesting a single transcript")
        if len(options.sample_id) > SAMPLE_ID_LIMIT:
            raise ServiceError(
                f"the sample id is {len(options.sample_id):,} characters, over the {SAMPLE_ID_LIMIT} a sample id may "
                "have"
            )
        if not _SAMPLE_ID.match(options.sample_id) or name_problem(options.sample_id):
            raise ServiceError(f"sample id {shown_name(options.sample_id)!r} must look like <group>/<clip>")
    if options.group is not None and (not options.group.strip() or "/" in options.group or name_problem(options.group)):
        raise ServiceError(
            f"group {shown_name(options.group)!r} must be one folder name, without '/' or control characters"
        )
    if options.media_url:
        if transcript_count > 1:
            raise ServiceError("a media URL can only be given when ingesting a single transcript")
        try:
            URLValidator(schemes=["http", "https"])(options.media_url)
        except ValidationError:
            raise ServiceError(f"media URL {options.media_url!r} is not an http(s) URL") from None


def ingest_files(project: Project, uploads: list[Upload], options: IngestOptions, *, actor=None) -> list[FileResult]:
    """Ingest transcripts (and media files paired with them by folder and file stem)."""
    transcripts = [u for u in uploads if not u.is_media]
    media = [u for u in uploads if u.is_media]
    check_options(options, len(transcripts))
    if not transcripts:
        raise ServiceError(f"no transcript among the files (expected {', '.join(TRANSCRIPT_SUFFIXES)})")
    media_by_key: dict[tuple[str, str], Upload] = {}
    media_by_stem: dict[str, list[Upload]] = {}
    for m in media:
        media_by_key[m.pairing_key] = m
        media_by_stem.setdefault(m.pairing_key[1], []).append(m)

    results, used = [], set()
    batch: dict[str, str] = {}  # sample id -> file that took it in this batch
    for upload in transcripts:
        match = media_by_key.get(upload.pairing_key)
        if match is None and len(media_by_stem.get(upload.pairing_key[1], [])) == 1:
            match = media_by_stem[upload.pairing_key[1]][0]
        if match is not None:
            used.add(id(match))
            if match.too_large():
                results.append(_refused(upload, f"{upload.name}: refused with its media file; {match.too_large()}"))
                continue
        result = ingest_one(project, upload, options, media=match, actor=actor, batch=batch)
        if result.status != REFUSED and result.sample_id:
            batch.setdefault(result.sample_id, upload.name)
        results.append(result)
    for m in media:
        if id(m) not in used:
            results.append(FileResult(m.name, REFUSED, f"{m.name}: media file with no transcript of the same name"))
    return results


def _refused(upload: Upload, message: str, line: int | None = None, **extra) -> FileResult:
    return FileResult(upload.name, REFUSED, message, line=line, **extra)


def default_sample_id(name: str, group: str | None) -> str | None:
    """``<parent folder>/<file stem>``; ``group`` stands in for the folder when given."""
    path = PurePosixPath(name)
    folder = group or path.parent.name
    return f"{folder}/{path.stem}" if folder and path.stem else None


def ingest_one(
    project: Project,
    upload: Upload,
    options: IngestOptions,
    *,
    media: Upload | None = None,
    actor=None,
    batch: dict[str, str] | None = None,
) -> FileResult:
    """Ingest one transcript. Never raises for a bad file: the result says why it was refused.

    ``batch`` maps the sample ids already taken by other files of the same
    upload to their file names, so that two files for one clip (``001.srt``
    and ``001.vtt``) do not replace each other.
    """
    problem = name_problem(upload.name) or (media is not None and name_problem(media.name))
    if problem:
        return FileResult(shown_name(upload.name, NAME_LIMIT), REFUSED, problem)
    if upload.too_large():
        return _refused(upload, upload.too_large())
    raw = upload.read()
    limit = settings.MAX_UPLOAD_BYTES
    if len(raw) > limit:
        return _refused(upload, f"{upload.name}: file is over the limit of {limit:,} bytes (MAX_UPLOAD_BYTES)")
    try:
        transcript = read_transcript(upload.name, raw)
    except IngestError as exc:
        return _refused(upload, str(exc), exc.line)
    content_hash = hashlib.sha256(raw).hexdigest()

    sample_id = (
        options.sample_id or transcript.metadata.get("sample_id") or default_sample_id(upload.name, options.group)
    )
    if sample_id is None:
        return _refused(
            upload, f"{upload.name}: no folder to take the sample id's group from; give a group or a sample id"
        )
    if len(sample_id) > SAMPLE_ID_LIMIT:
        return _refused(
            upload,
            f"{upload.name}: the sample id would be {len(sample_id):,} characters, over the {SAMPLE_ID_LIMIT} "
            "a sample id may have; give a shorter sample id, group or file name",
        )
    if not _SAMPLE_ID.match(sample_id) or name_problem(sample_id):
        return _refused(upload, f"{upload.name}: sample id {shown_name(sample_id)!r} must look like <group>/<clip>")
    source_file = transcript.metadata.get("source_file")
    if source_file and name_problem(str(source_file)):
        return _refused(upload, f"{upload.name}: its source_file {name_problem(str(source_file))}", sample_id=sample_id)
    file_scenario = transcript.metadata.get("scenario")
    if file_scenario and file_scenario != options.scenario:
        return _refused(
            upload,
            f"{upload.name}: the file says scenario {file_scenario!r}, the request says {options.scenario!r}",
            1,
            sample_id=sample_id,
        )

    same = project.clips.filter(content_hash=content_hash).first()
    if same is not None:
        return _unchanged(upload, same, media, options)
    if batch and sample_id in batch:
        return _refused(
            upload,
            f"{upload.name}: {batch[sample_id]} in the same upload is already sample {sample_id}",
            sample_id=sample_id,
        )

    existing = project.clips.filter(sample_id=sample_id).first()
    if existing is not None:
        blocker = replace_blocker(existing) if options.replace else "pass replace to overwrite it"
        if blocker:
            return _refused(
                upload,
                f"{upload.name}: {sample_id} already exists with different content; {blocker}",
                sample_id=sample_id,
                clip_id=existing.pk,
            )

    participants, speaker_map, confirmed, problems = _speakers(transcript, options)
    if problems:
        return _refused(upload, f"{upload.name}: " + "; ".join(problems), sample_id=sample_id)

    report = _report(upload, raw, transcript, options)
    try:
        clip = _write(
            project,
            existing,
            transcript,
            upload,
            media,
            options,
            actor,
            sample_id=sample_id,
            participants=participants,
            speaker_map=speaker_map,
            confirmed=confirmed,
            content_hash=content_hash,
            report=report,
        )
    except _ReplaceBlocked as exc:
        return _refused(upload, f"{upload.name}: {sample_id} {exc}", sample_id=sample_id)
    except IntegrityError:
        return _refused(
            upload,
            f"{upload.name}: {sample_id} was ingested at the same moment by another request; try again",
            sample_id=sample_id,
        )
    status = REPLACED if existing is not None else CREATED
    unmapped = [t for t, e in speaker_map.items() if not e]
    message = f"{len(transcript.cues)} cues, {FORMATS[transcript.format]}, {transcript.encoding.get('encoding', '?')}"
    if not confirmed:
        message += "; speaker map waits for confirmation"
    return FileResult(
        upload.name,
        status,
        message,
        sample_id=sample_id,
        clip_id=clip.pk,
        cues=len(transcript.cues),
        speaker_map_confirmed=confirmed,
        unmapped_speakers=unmapped,
        notes=list(transcript.notes.headlines),
    )


def replace_blocker(clip: Clip) -> str:
    """Why ``clip`` cannot be replaced by a new transcript ("" if it can)."""
    if clip.state == ClipState.PREANNOTATING:
        return "it is being pre-annotated; replace it when that has finished"
    if clip.state not in REPLACEABLE_STATES:
        return f"it is {state_label(clip.state)} and can no longer be replaced"
    work = [
        ("revisions", Revision.objects.filter(row__clip=clip).exists()),
        ("gold rows", Gold.objects.filter(row__clip=clip).exists()),
        ("assignments", Assignment.objects.filter(clip=clip).exists()),
        ("comments", Comment.objects.filter(clip=clip).exists()),
    ]
    done = [what for what, exists in work if exists]
    if done:
        return f"it already has human work ({', '.join(done)}) and cannot be replaced"
    return ""


def _unchanged(upload: Upload, clip: Clip, media: Upload | None, options: IngestOptions) -> FileResult:
    message = "same content as the clip already in the project"
    if clip.source_file and clip.source_file != upload.name:
        message += f" (from {clip.source_file})"
    if (media is not None or options.media_url) and not (clip.media or clip.media_url):
        # The one write an unchanged transcript allows: media the first upload did not bring.
        with transaction.atomic():
            _attach_media(clip, media, options.media_url)
            clip._change_reason = "media attached"
            clip.save()
        message += "; media attached"
    return FileResult(
        upload.name,
        UNCHANGED,
        message,
        sample_id=clip.sample_id,
        clip_id=clip.pk,
        cues=clip.cues.count(),
        speaker_map_confirmed=clip.speaker_map_confirmed,
        unmapped_speakers=[t for t, e in clip.speaker_map.items() if not e],
    )


def _speakers(transcript: Transcript, options: IngestOptions) -> tuple[list[str], dict[str, str], bool, list[str]]:
    """Participants, the speaker map, whether it is confirmed, and any problems."""
    tags = transcript.speaker_tags
    given = {t: e for t, e in (options.speaker_map or {}).items() if t in tags}
    if options.participants is not None:
        participants = list(options.participants)
    elif transcript.metadata.get("participants"):
        participants = list(transcript.metadata["participants"])
    else:
        participants = speakers.default_participants(tags, options.scenario, given)
    problems = speakers.check_participants(participants, options.scenario)
    if problems:
        if not participants:
            problems = ["no participants could be told from the speaker labels; give the participants"]
        return participants, {}, False, problems
    problems = speakers.check_map(given, tags, participants, options.scenario, complete=False)
    suggestion = speakers.suggest(tags, participants, options.scenario)
    mapping = {tag: given.get(tag, suggestion[tag]) for tag in tags}
    confirmed = options.speaker_map is not None and all(mapping[t] or t in given for t in tags)
    return participants, mapping, confirmed, problems


def _report(upload: Upload, raw: bytes, transcript: Transcript, options: IngestOptions) -> dict:
    counts = Counter(c.speaker for c in transcript.cues)
    return {
        "file": upload.name,
        "bytes": len(raw),
        "format": transcript.format,
        "format_name": FORMATS[transcript.format],
        "encoding": transcript.encoding,
        **transcript.notes.as_dict(),
        "cues": len(transcript.cues),
        "speaker_tags": {tag: counts[tag] for tag in transcript.speaker_tags},
        "speaker_map_given": options.speaker_map is not None,
    }


def _attach_media(clip: Clip, media: Upload | None, media_url: str) -> None:
    if media is not None:
        clip.media.save(storable_media_name(PurePosixPath(media.name).name), media.file, save=False)
    if media_url:
        clip.media_url = media_url


class _ReplaceBlocked(Exception):
    pass


def _write(
    project,
    existing,
    transcript,
    upload,
    media,
    options,
    actor,
    *,
    sample_id,
    participants,
    speaker_map,
    confirmed,
    content_hash,
    report,
) -> Clip:
    stored_media = None
    try:
        with transaction.atomic():
            if existing is not None:
                clip = Clip.objects.select_for_update().get(pk=existing.pk)
                blocker = replace_blocker(clip)  # checked again under the lock
                if blocker:
                    raise _ReplaceBlocked(f"changed while being replaced: {blocker}")
                old_media = clip.media.name
                clip.rows.all().delete()  # drafts go with their rows
                clip.cues.all().delete()
                clip._change_reason = f"transcript replaced from {upload.name}"
            else:
                clip = Clip(project=project, sample_id=sample_id)
                clip._change_reason = f"ingested from {upload.name}"
            clip.scenario = options.scenario
            clip.participants = participants
            clip.source_file = transcript.metadata.get("source_file") or upload.name
            clip.release_keys = list(CLIP_KEYS)
            clip.duration = max(c.end for c in transcript.cues)
            clip.state = ClipState.IMPORTED
            clip.content_hash = content_hash
            clip.ingest_report = report
            clip.speaker_map = speaker_map
            clip.speaker_map_confirmed = confirmed
            if media is not None or options.media_url:
                _attach_media(clip, media, options.media_url)
                stored_media = clip.media.name if media is not None else None
                if existing is not None and media is not None and old_media:
                    storage = clip.media.storage
                    transaction.on_commit(lambda: storage.delete(old_media))
            if actor is not None:
                clip._history_user = actor
            clip.save()
            Cue.objects.bulk_create(
                Cue(clip=clip, position=i, start_time=c.start, end_time=c.end, speaker=c.speaker, text=c.text)
                for i, c in enumerate(transcript.cues, start=1)
            )
    except Exception:
        if stored_media:
            clip.media.storage.delete(stored_media)
        raise
    return clip


def confirm_speaker_map(
    clip: Clip, mapping: dict[str, str], *, participants: list[str] | None = None, actor=None
) -> Clip:
    """A lead's confirmed map: every raw tag of the clip -> an entity (or ``""``, unknown).

    ``participants`` (optional) replaces the clip's participant list in the
    same step, since naming a diarisation label often names a participant.
    Refused once the clip has rows: they were built from the previous map.
    """
    if not isinstance(mapping, dict) or not all(isinstance(k, str) for k in mapping):
        raise ServiceError("speaker map must be an object of speaker tag -> entity name")
    participants = list(clip.participants if participants is None else participants)
    tags = list(dict.fromkeys(clip.cues.order_by("position").values_list("speaker", flat=True)))
    problems = speakers.check_participants(participants, clip.scenario)
    problems += speakers.check_map(mapping, tags, participants, clip.scenario, complete=True)
    if problems:
        raise ServiceError("; ".join(problems))
    with transaction.atomic():
        locked = Clip.objects.select_for_update().get(pk=clip.pk)
        if locked.state == ClipState.PREANNOTATING:
            raise ServiceError(
                f"clip {locked.sample_id} is being pre-annotated; change its speakers after that finishes"
            )
        if locked.rows.exists():
            raise ServiceError(
                f"clip {locked.sample_id} already has rows built from the previous speaker map; "
                "re-ingest the transcript with replace to change speakers"
            )
        locked.participants = participants
        locked.speaker_map = {tag: mapping[tag] for tag in tags}
        locked.speaker_map_confirmed = True
        locked._change_reason = "speaker map confirmed"
        if actor is not None:
            locked._history_user = actor
        locked.save()
    return locked


def accept_suggested_speakers(clips, *, actor=None) -> tuple[list[Clip], list[Clip]]:
    """Confirm the stored suggestion of each clip where every speaker tag found a name.

    Returns (confirmed, left for a lead to map by hand).
    """
    confirmed, left = [], []
    for clip in clips:
        if clip.speaker_map_confirmed:
            continue
        if not speakers.is_complete(clip.speaker_map):
            left.append(clip)
            continue
        try:
            confirmed.append(confirm_speaker_map(clip, dict(clip.speaker_map), actor=actor))
        except ServiceError:
            left.append(clip)
    return confirmed, left
