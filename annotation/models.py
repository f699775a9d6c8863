"""The data model of a benchmark under construction.

A Row holds the fixed skeleton of an interaction unit (index, times, speaker,
words); the annotation itself is a validated JSON document per source: the
LLM ``Draft``, one ``Revision`` per annotator and the adjudicated ``Gold``.
Writes to these models are kept in the audit trail (django-simple-history).
"""

from __future__ import annotations

from decimal import Decimal

from django.conf import settings
from django.db import models
from knox.models import AbstractAuthToken
from simple_history.models import HistoricalRecords

from .audit import HistorySource
from .groups import path_group


def _history(**kwargs):
    return HistoricalRecords(bases=[HistorySource], **kwargs)


class WorkScope(models.TextChoices):
    """What counts as a coder's coded work (``agreement.scope``: the rule behind every figure)."""

    SUBMITTED = "submitted", "submitted work"
    REVIEWED = "reviewed", "submitted work and rows marked reviewed"


class Project(models.Model):
    """A benchmark under construction."""

    slug = models.SlugField(unique=True)
    name = models.CharField(max_length=200)
    taxonomy_version = models.CharField(max_length=20, default="1")
    annotators_per_clip = models.PositiveSmallIntegerField(default=3)
    # The study design (``annotation.study``): which work counts as coded, when a clip may be
    # adjudicated, how much work is coded from empty to measure the draft's pull, and what
    # counts as a quick confirmation of a draft row.
    work_scope = models.CharField(
        max_length=12,
        choices=WorkScope.choices,
        default=WorkScope.SUBMITTED,
        help_text="Which coders' values count in adjudication, agreement, edit rates and the card",
    )
    adjudication_min_coders = models.PositiveSmallIntegerField(
        null=True,
        blank=True,
        help_text="Coders who must have submitted before a clip's gold can be decided; empty: every assigned coder",
    )
    from_empty_share = models.DecimalField(
        max_digits=3,
        decimal_places=2,
        default=Decimal("0.20"),
        help_text=(
            "Share of clips (and so of assignments) reserved to be coded from empty, chosen at assignment by a seed"
        ),
    )
    quick_confirm_seconds = models.PositiveSmallIntegerField(
        default=3, help_text="A draft row confirmed unchanged faster than this counts as a quick confirmation"
    )
    # Known-answer checks (``annotation.record``): this share of each annotator's new assignments is added
    # as clips with gold that look like any other; 0 (the default) is off.
    known_answer_share = models.DecimalField(
        max_digits=3,
        decimal_places=2,
        default=Decimal("0"),
        help_text="Share of an annotator's assignments added as known-answer checks (gold clips); 0 is off",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    history = _history()

    class Meta:
        ordering = ["slug"]

    def __str__(self) -> str:
        return self.slug


class ClipState(models.TextChoices):
    # Each state's label is the one wording every page uses, the annotator's and the lead's (labels.state_label).
    IMPORTED = "imported", "imported"
    PREANNOTATING = "preannotating", "pre-annotating"
    PREANNOTATED = "preannotated", "pre-annotated"
    PREANNOTATION_FAILED = "preannotation_failed", "pre-annotation failed"
    IN_REVIEW = "in_review", "in review"
    REVIEWED = "reviewed", "reviewed"
    ADJUDICATED = "adjudicated", "adjudicated"
    RELEASED = "released", "released"
    DISCARDED = "discarded", "discarded"


class Scenario(models.TextChoices):
    COUPLE = "couple"
    FAMILY = "family"


class Clip(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="clips")
    sample_id = models.CharField(max_length=300, help_text="<group>/<clip>, as in the public release")
    scenario = models.CharField(max_length=10, choices=Scenario.choices)
    participants = models.JSONField(default=list, help_text="On-screen names, in the order they came")
    source_file = models.CharField(max_length=500, blank=True)
    # Which top-level keys the clip had, in order, so that export reproduces them.
    release_keys = models.JSONField(default=list, blank=True)
    media = models.FileField(upload_to="media/%Y/%m/", blank=True)
    media_url = models.URLField(blank=True)
    duration = models.FloatField(null=True, blank=True, help_text="Seconds")
    state = models.CharField(max_length=24, choices=ClipState.choices, default=ClipState.IMPORTED)
    discard_reason = models.TextField(blank=True)
    discarded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    content_hash = models.CharField(max_length=64, blank=True, help_text="SHA-256 of the source content")
    # How the source was read: format, detected encoding, normalisations, problems tolerated.
    ingest_report = models.JSONField(default=dict, blank=True)
    # Raw transcript speaker tag -> clip entity; rows are built once a lead confirms it.
    speaker_map = models.JSONField(default=dict, blank=True)
    speaker_map_confirmed = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    history = _history()

    class Meta:
        ordering = ["project", "sample_id"]
        constraints = [models.UniqueConstraint(fields=["project", "sample_id"], name="clip_unique_sample_per_project")]

    def __str__(self) -> str:
        return self.sample_id

    @property
    def group(self) -> str:
        """The relationship group its sample id names (``groups.path_group``)."""
        return path_group(self.sample_id)


class Cue(models.Model):
    """A raw transcript line as it arrived (before segmentation into rows)."""

    clip = models.ForeignKey(Clip, on_delete=models.CASCADE, related_name="cues")
    position = models.PositiveIntegerField()
    start_time = models.FloatField()
    end_time = models.FloatField()
    speaker = models.CharField(max_length=200, blank=True)
    text = models.TextField(blank=True)

    class Meta:
        ordering = ["clip", "position"]
        constraints = [models.UniqueConstraint(fields=["clip", "position"], name="cue_unique_position")]


class Row(models.Model):
    """The skeleton of one interaction unit; locked once the clip is assigned."""

    clip = models.ForeignKey(Clip, on_delete=models.CASCADE, related_name="rows")
    row_index = models.PositiveIntegerField(help_text="1-based, dense, in time order")
    start_time = models.FloatField()
    end_time = models.FloatField()
    primary_speaker = models.CharField(max_length=200)
    dialogue_cleaned = models.TextField(blank=True)
    history = _history()

    class Meta:
        ordering = ["clip", "row_index"]
        constraints = [models.UniqueConstraint(fields=["clip", "row_index"], name="row_unique_index")]

    def __str__(self) -> str:
        return f"{self.clip_id}#{self.row_index}"

    def skeleton(self) -> dict:
        return {
            "start_time": self.start_time,
            "end_time": self.end_time,
            "primary_speaker": self.primary_speaker,
            "dialogue_cleaned": self.dialogue_cleaned,
            "row_index": self.row_index,
        }


class AnnotationDocument(models.Model):
    """The annotated part of a row (``schema.RowAnnotation``) from one source."""

    content = models.JSONField()
    # Issues of severity "warning" found when the document was stored (schema.Issue dicts).
    warnings = models.JSONField(default=list, blank=True)
    # How the document's keys were ordered in the release format it came from
    # (see rescue_format.layout); empty means the platform's regular convention.
    layout = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True


class DraftSource(models.TextChoices):
    LLM = "llm", "LLM pre-annotation"
    OFFLINE = "offline", "Offline skeleton (no LLM)"
    IMPORT = "import", "Imported"
    SYNTHETIC = "synthetic", "Synthetic generator"


class Modality(models.TextChoices):
    """What the model could perceive of the clip when it drafted it."""

    VIDEO = "video", "video with audio"
    AUDIO = "audio", "audio only"
    TRANSCRIPT = "transcript", "transcript only"


class Draft(AnnotationDocument):
    row = models.OneToOneField(Row, on_delete=models.CASCADE, related_name="draft")
    source = models.CharField(max_length=16, choices=DraftSource.choices, default=DraftSource.LLM)
    # model, model version, prompt version, input hash, tokens, latency, cost...
    provenance = models.JSONField(default=dict, blank=True)
    # What the draft was made from; "" when not recorded (imported or synthetic drafts).
    modality = models.CharField(max_length=12, choices=Modality.choices, blank=True, default="")
    history = _history()


class RevisionStatus(models.TextChoices):
    UNTOUCHED = "untouched", "untouched"
    EDITED = "edited", "edited"
    REVIEWED = "reviewed", "reviewed"


class Revision(AnnotationDocument):
    """One annotator's version of a row. ``version`` guards against lost updates."""

    row = models.ForeignKey(Row, on_delete=models.CASCADE, related_name="revisions")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="revisions")
    version = models.PositiveIntegerField(default=1)
    status = models.CharField(max_length=12, choices=RevisionStatus.choices, default=RevisionStatus.UNTOUCHED)
    # The project's guidance in force when the annotator last saved the row (null: saved before any
    # guidance was written, never saved on the platform, or imported). Set by the row save itself.
    guidance_version = models.ForeignKey(
        "GuidanceVersion", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    history = _history()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["row", "annotator"], name="revision_one_per_annotator")]


class Gold(AnnotationDocument):
    row = models.OneToOneField(Row, on_delete=models.CASCADE, related_name="gold")
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    note = models.TextField(blank=True)
    # Per-field adjudication decisions: {field: {"source": "draft"|"edit"|<username>, "note": ..., "by": ..., "at":
    # ...}}.
    decisions = models.JSONField(default=dict, blank=True)
    # Optimistic locking, as for revisions: two leads never overwrite each other.
    version = models.PositiveIntegerField(default=1)
    # The project's guidance in force at the last gold write (each write's is in the history).
    guidance_version = models.ForeignKey(
        "GuidanceVersion", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    history = _history()

    class Meta:
        verbose_name_plural = "gold"


class AssignmentMode(models.TextChoices):
    FROM_DRAFT = "from_draft", "Starts from the LLM draft"
    FROM_EMPTY = "from_empty", "Starts empty (calibration)"
    # Finished work imported from elsewhere (import_rescue --as revision): how it started is not recorded,
    # so it is neither anchored nor calibration in the agreement slices.
    IMPORTED = "imported", "Imported finished work (start not recorded)"


class AssignmentState(models.TextChoices):
    ASSIGNED = "assigned", "assigned"
    IN_PROGRESS = "in_progress", "in progress"
    SUBMITTED = "submitted", "submitted"
    REOPENED = "reopened", "reopened"


class AssignmentPurpose(models.TextChoices):
    """Why an annotator codes a clip. Only production work is anyone's data; the other two are the
    annotator's record (``annotation.record``) and nothing else reads them."""

    PRODUCTION = "production", "production work"
    QUALIFICATION = "qualification", "qualification round (training clip)"
    KNOWN_ANSWER = "known_answer", "known-answer check"


class ProductionAssignments(models.Manager):
    """The default manager: production assignments only, so that agreement, adjudication, releases,
    the assign page and the study design never meet a qualification round or a known-answer check.
    ``Assignment.every`` reads them all (the annotator's own workspace, the record)."""

    def get_queryset(self):
        return super().get_queryset().filter(purpose=AssignmentPurpose.PRODUCTION)


class Assignment(models.Model):
    clip = models.ForeignKey(Clip, on_delete=models.CASCADE, related_name="assignments")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="assignments")
    mode = models.CharField(max_length=12, choices=AssignmentMode.choices, default=AssignmentMode.FROM_DRAFT)
    state = models.CharField(max_length=12, choices=AssignmentState.choices, default=AssignmentState.ASSIGNED)
    # How the mode was chosen: {"by": "design", "share": ..., "seed": ...} when the project's from-empty
    # share reserved the clip (or left it anchored), {"by": "lead"} when the lead named it; {} unrecorded.
    design = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    submitted_at = models.DateTimeField(null=True, blank=True)
    purpose = models.CharField(max_length=16, choices=AssignmentPurpose.choices, default=AssignmentPurpose.PRODUCTION)
    objects = ProductionAssignments()
    every = models.Manager()
    history = _history()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["clip", "annotator"], name="assignment_once_per_annotator")]
        base_manager_name = "every"


class CommentKind(models.TextChoices):
    COMMENT = "comment"
    FLAG_SPLIT = "flag_split", "Row should be split"
    FLAG_MERGE = "flag_merge", "Row should be merged"
    DISCARD_PROPOSAL = "discard_proposal", "Proposal to discard the clip"


class Comment(models.Model):
    clip = models.ForeignKey(Clip, on_delete=models.CASCADE, related_name="comments")
    row = models.ForeignKey(Row, null=True, blank=True, on_delete=models.CASCADE, related_name="comments")
    author = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="comments")
    kind = models.CharField(max_length=20, choices=CommentKind.choices, default=CommentKind.COMMENT)
    body = models.TextField()
    # Set on a lead's message to one coder (a re-review request, a note naming them): only
    # that coder and the leads read it (selectors.visible_comments).
    addressee = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="addressed_comments"
    )
    resolved = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    history = _history()

    class Meta:
        ordering = ["created_at"]


class JobState(models.TextChoices):
    QUEUED = "queued", "queued"
    RUNNING = "running", "running"
    SUCCEEDED = "succeeded", "succeeded"
    FAILED = "failed", "failed"


class Job(models.Model):
    """Background work as the UI sees it: what, how far, and what went wrong."""

    kind = models.CharField(max_length=40)
    state = models.CharField(max_length=12, choices=JobState.choices, default=JobState.QUEUED)
    project = models.ForeignKey(Project, null=True, blank=True, on_delete=models.CASCADE, related_name="jobs")
    clip = models.ForeignKey(Clip, null=True, blank=True, on_delete=models.CASCADE, related_name="jobs")
    # Idempotency key: the same key is the same piece of work.
    key = models.CharField(max_length=200, blank=True, db_index=True)
    params = models.JSONField(default=dict, blank=True)
    result = models.JSONField(default=dict, blank=True)
    progress_done = models.PositiveIntegerField(default=0)
    progress_total = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    celery_task_id = models.CharField(max_length=64, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    @property
    def progress(self) -> float:
        return self.progress_done / self.progress_total if self.progress_total else 0.0


class AgreementReport(models.Model):
    """A computed agreement report, cached until the revisions behind it change."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="agreement_reports")
    scope = models.JSONField(default=dict, blank=True)  # e.g. {"scenario": "couple"} or {"clips": [...]}
    # Digest of everything the report depends on (revision ids and versions, drafts, parameters).
    fingerprint = models.CharField(max_length=64, db_index=True)
    report = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]


class TextEmbedding(models.Model):
    """A sentence embedding of one text by one model, kept so that a text is embedded once.

    Keyed by the model's identifier (name and version, see
    ``agreement.embeddings``) and the SHA-256 of the text; the text itself is
    not stored. ``vector`` holds ``dimensions`` little-endian float32 numbers,
    exactly the numbers every computation uses (a fresh embedding is rounded to
    them before use), so that a figure is the same whether its texts came from
    the model or from here.
    """

    model = models.CharField(max_length=200)
    text_sha256 = models.CharField(max_length=64)
    dimensions = models.PositiveIntegerField()
    vector = models.BinaryField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["model", "text_sha256"], name="one_embedding_per_model_and_text")
        ]


class FrozenReleaseError(Exception):
    """A frozen release was about to be changed or deleted."""


class ReleaseQuerySet(models.QuerySet):
    def update(self, **kwargs):
        raise FrozenReleaseError("releases are immutable; freeze a new version instead")

    def delete(self):
        raise FrozenReleaseError("releases are immutable and cannot be deleted")


class Release(models.Model):
    """A frozen, versioned benchmark release: files on disk plus their manifest."""

    project = models.ForeignKey(Project, on_delete=models.PROTECT, related_name="releases")
    version = models.CharField(max_length=40)
    seed = models.BigIntegerField()
    split_ratios = models.JSONField(default=list)
    path = models.CharField(max_length=500)
    manifest = models.JSONField(default=dict)
    # The database facts the card states (stats.json's provenance) as JSON text, kept so that
    # --reproduce states what was true at freeze time, whatever the project did since.
    provenance = models.TextField(blank=True, default="")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    objects = ReleaseQuerySet.as_manager()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "version"], name="release_unique_version")]

    def save(self, *args, **kwargs):
        if self.pk is not None:
            raise FrozenReleaseError(f"release {self.version} is frozen; freeze a new version instead")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise FrozenReleaseError(f"release {self.version} is frozen and cannot be deleted")


class ImportKind(models.TextChoices):
    GOLD = "gold"
    DRAFT = "draft"
    REVISION = "revision"


class ImportRecordImmutable(Exception):
    """An import record was about to be changed: they log what happened."""


class ImportRecordQuerySet(models.QuerySet):
    def update(self, **kwargs):
        raise ImportRecordImmutable("import records are a log of what happened; they are never changed")


class ImportRecord(models.Model):
    """One file read by ``import_rescue``: what came in, from which file, when, by whom.

    The dataset card states where gold and drafts came from only from these
    records; a correction of released gold (``--correct-released``) also
    records what it changed. Written once, never changed.
    """

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="import_records")
    kind = models.CharField(max_length=12, choices=ImportKind.choices)
    file_path = models.CharField(max_length=1000, help_text="The file as the import read it")
    sha256 = models.CharField(max_length=64, help_text="SHA-256 of the file's bytes")
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    imported_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    source = models.CharField(max_length=16, help_text="cli, web, api or system (as in the audit trail)")
    created_at = models.DateTimeField(auto_now_add=True)
    sample_ids = models.JSONField(default=list, help_text="The clips of the file, in file order")
    created_sample_ids = models.JSONField(default=list, blank=True, help_text="The clips this import created")
    # Revision imports: the clips whose assignment for the annotator this import created.
    assignments_created = models.JSONField(default=list, blank=True)
    row_count = models.PositiveIntegerField(default=0)
    # A correction of released gold: {"clips": [{sample_id, releases, rows: [{row_index, fields}]}]}; empty otherwise.
    correction = models.JSONField(default=dict, blank=True)

    objects = ImportRecordQuerySet.as_manager()

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        return f"{self.kind} from {self.file_path}"

    @property
    def file_name(self) -> str:
        return self.file_path.replace("\\", "/").rsplit("/", 1)[-1]

    def save(self, *args, **kwargs):
        if self.pk is not None:
            raise ImportRecordImmutable("import records are a log of what happened; they are never changed")
        super().save(*args, **kwargs)


class ReplaySpeed(models.TextChoices):
    SLOWER = "0.75", "0.75×"
    NORMAL = "1", "1×"
    FASTER = "1.25", "1.25×"


class AnnotatorSettings(models.Model):
    """How the workspace plays a row back for one person, kept on the server so
    that it follows them from browser to browser."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="annotator_settings")
    replay_speed = models.CharField(max_length=5, choices=ReplaySpeed.choices, default=ReplaySpeed.NORMAL)
    # Seconds of media played before the row starts, to hear the turn arrive (0 to 2).
    preroll = models.DecimalField(max_digits=3, decimal_places=2, default=0)
    updated_at = models.DateTimeField(auto_now=True)


class GuidanceImmutable(Exception):
    """A guidance version was about to be changed or deleted: a change makes a new version."""


class GuidanceVersionQuerySet(models.QuerySet):
    def update(self, **kwargs):
        raise GuidanceImmutable("guidance versions are never changed; write the guidance again to make a new version")

    def delete(self):
        raise GuidanceImmutable("guidance versions are never deleted: revisions and releases name them")


class GuidanceVersion(models.Model):
    """One version of a project's own guidance, its living codebook: every entry in force, as written.

    Leads attach guidance to a label or a set of labels of one field ("accusation vs
    disclosure: ..."); each change (an entry written, rewritten or withdrawn) makes a new
    version holding all the entries then in force, with who made the change, when and why.
    Versions are never changed or deleted, so a revision, a gold row or a release that names
    a version names exactly the text that was in force (``annotation.codebook``).
    """

    project = models.ForeignKey(Project, on_delete=models.PROTECT, related_name="guidance_versions")
    number = models.PositiveIntegerField(help_text="1, 2, ... within the project")
    taxonomy_version = models.CharField(
        max_length=20, help_text="The project's taxonomy the entries were checked against"
    )
    # [{"scenario", "field", "labels", "text", "written_by", "written_at", "version"}], in display order.
    entries = models.JSONField(default=list)
    # What this version changed: {"action": "wrote"|"rewrote"|"withdrew", "scenario", "field", "labels"}.
    change = models.JSONField(default=dict)
    reason = models.TextField(help_text="Why the lead made the change")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    source = models.CharField(
        max_length=16, default="system", help_text="web, api, cli or system (as in the audit trail)"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    objects = GuidanceVersionQuerySet.as_manager()

    class Meta:
        ordering = ["project", "number"]
        constraints = [models.UniqueConstraint(fields=["project", "number"], name="guidance_version_unique_number")]

    def __str__(self) -> str:
        return f"{self.project_id} guidance v{self.number}"

    def save(self, *args, **kwargs):
        if self.pk is not None:
            raise GuidanceImmutable(
                "guidance versions are never changed; write the guidance again to make a new version"
            )
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise GuidanceImmutable("guidance versions are never deleted: revisions and releases name them")


class TokenScope(models.TextChoices):
    READ = "read", "read-only"
    READ_WRITE = "read-write", "read-write"


class ApiToken(AbstractAuthToken):
    """An API token for scripts (django-rest-knox's token with a scope): annotation/tokens.py.

    Only a SHA-512 digest of the key is stored (knox), the key itself is shown
    once when it is made; it expires (``API_TOKEN_DAYS``), dies with a password
    change, and a ``read`` token may only read.
    """

    scope = models.CharField(max_length=12, choices=TokenScope.choices, default=TokenScope.READ_WRITE)

    class Meta:
        ordering = ["user", "created"]

    def __str__(self) -> str:
        return f"{self.user} {self.scope} token {self.token_key}…"


# The meaning capability's tables (judged text pairs, the LLM judge's cached verdicts) live with it.
from .meaning.models import JudgedPair, JudgeVerdict  # noqa: E402,F401

# The annotator's record (qualification rounds, waivers, stored dashboards): its own module, same app.
from .record.models import (  # noqa: E402,F401
    AnnotatorRecordReport,
    QualificationAttempt,
    QualificationDecision,
    QualificationRule,
    TrainingClip,
)
