"""What the record keeps. Imported by ``annotation.models`` (same app, its own module)."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from ..models import Clip, Project, _history


class TrainingClip(models.Model):
    """A clip with gold that the lead set aside as qualification material for its scenario."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="training_clips")
    clip = models.OneToOneField(Clip, on_delete=models.CASCADE, related_name="training")
    note = models.TextField(blank=True, help_text="What the lead wants trainees to notice in this clip")
    marked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    history = _history()

    class Meta:
        ordering = ["clip__sample_id"]


class QualificationRule(models.Model):
    """The pass rule of a project's scenario: alpha against gold of at least ``min_score`` on each of
    ``fields`` (measure keys of ``agreement.fields``), each over at least ``min_rows`` rows, within
    ``max_attempts`` rounds. Without a rule (every project until a lead sets one) nobody is refused."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="qualification_rules")
    scenario = models.CharField(max_length=10)
    fields = models.JSONField(default=list)
    min_score = models.FloatField(default=0.8)
    min_rows = models.PositiveIntegerField(default=40)
    max_attempts = models.PositiveSmallIntegerField(default=3)
    reason = models.TextField(blank=True)
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    updated_at = models.DateTimeField(auto_now=True)
    history = _history()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project", "scenario"], name="one_qualification_rule_per_scenario")
        ]


class AttemptState(models.TextChoices):
    OPEN = "open", "in progress"
    SCORED = "scored", "scored"


class QualificationAttempt(models.Model):
    """One qualification round of an annotator: the training clips coded from empty, then scored.

    ``scores``: per measure key {"alpha", "matching", "rows", "interval"}; ``feedback``: the rows and
    fields that differ from the gold, as the annotator reads them; ``answers``: the coder's documents
    at scoring time (the next round starts from empty again, so the record keeps them here).
    """

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="qualification_attempts")
    scenario = models.CharField(max_length=10)
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="qualification_attempts"
    )
    number = models.PositiveSmallIntegerField()
    state = models.CharField(max_length=8, choices=AttemptState.choices, default=AttemptState.OPEN)
    sample_ids = models.JSONField(default=list)
    rule = models.JSONField(default=dict, blank=True, help_text="The rule in force when the round was scored")
    scores = models.JSONField(default=dict, blank=True)
    feedback = models.JSONField(default=list, blank=True)
    answers = models.JSONField(default=dict, blank=True)
    rows = models.PositiveIntegerField(default=0)
    passed = models.BooleanField(null=True)
    started_at = models.DateTimeField(auto_now_add=True)
    scored_at = models.DateTimeField(null=True, blank=True)
    history = _history()

    class Meta:
        ordering = ["project", "scenario", "annotator", "number"]
        constraints = [
            models.UniqueConstraint(fields=["project", "scenario", "annotator", "number"], name="attempt_numbered_once")
        ]


class DecisionKind(models.TextChoices):
    WAIVED = "waived", "rule waived"
    SENT_BACK = "sent_back", "sent back to qualification"


class QualificationDecision(models.Model):
    """A lead's decision about an annotator's qualification, with the reason: a waiver of the rule, or
    sending the annotator back to qualification (a pass or waiver before it no longer counts)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="qualification_decisions")
    scenario = models.CharField(max_length=10)
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="qualification_decisions"
    )
    kind = models.CharField(max_length=10, choices=DecisionKind.choices)
    reason = models.TextField()
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    history = _history()

    class Meta:
        ordering = ["created_at", "pk"]


class AnnotatorRecordReport(models.Model):
    """A computed per-annotator dashboard (``record.dashboard``), keyed by a digest of its inputs."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="record_reports")
    scenario = models.CharField(max_length=10, blank=True)
    fingerprint = models.CharField(max_length=64, db_index=True)
    report = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
