"""What the meaning capability records: people's judgements of text pairs, and the judge's verdicts (a cache).

Defined here and imported by ``annotation.models`` (the app's one models module), so that the
capability's tables live with the capability.
"""

from __future__ import annotations

import hashlib

from django.conf import settings
from django.db import models


def pair_sha256(field: str, text_a: str, text_b: str) -> str:
    """The pair's identity: the field and the two texts, in either order."""
    first, second = sorted((text_a, text_b))
    return hashlib.sha256("\x1f".join((field, first, second)).encode("utf-8")).hexdigest()


class Judgement(models.TextChoices):
    SAME = "same", "same meaning"
    DIFFERENT = "different", "different meaning"
    CANT_TELL = "cant_tell", "can't tell"


class JudgedPair(models.Model):
    """One person's reading of two coders' texts of one free-text field: same meaning, different, or can't tell.

    ``judge`` is null for judgements imported from a file (``source`` says which). The embedding distance is
    the one the pair was sampled with (the vectors of ``embedding_model`` cached when it was shown).
    """

    project = models.ForeignKey("annotation.Project", on_delete=models.CASCADE, related_name="judged_pairs")
    field = models.CharField(max_length=40)
    text_a = models.TextField()
    text_b = models.TextField()
    pair_sha256 = models.CharField(max_length=64, db_index=True)
    judgement = models.CharField(max_length=12, choices=Judgement.choices)
    judge = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    source = models.CharField(max_length=200, default="page")  # "page", "api", or "file:<name>"
    clip = models.ForeignKey("annotation.Clip", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    embedding_model = models.CharField(max_length=200, blank=True)
    embedding_distance = models.FloatField(null=True, blank=True)
    stratum = models.PositiveSmallIntegerField(null=True, blank=True)  # the distance band it was sampled from
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        app_label = "annotation"
        ordering = ["created_at", "pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "pair_sha256", "judge"],
                name="one_judgement_per_pair_and_judge",
                condition=models.Q(judge__isnull=False),
            )
        ]


class JudgeVerdict(models.Model):
    """The LLM judge's reading of a text pair, cached per pair, model and prompt version (asked once)."""

    pair_sha256 = models.CharField(max_length=64)
    model = models.CharField(max_length=100)
    prompt_version = models.CharField(max_length=40)
    verdict = models.CharField(max_length=12)  # same | partly | different
    reason = models.TextField(blank=True)
    model_version = models.CharField(max_length=100, blank=True)
    tokens_in = models.PositiveIntegerField(default=0)
    tokens_out = models.PositiveIntegerField(default=0)
    cost_usd = models.FloatField(default=0.0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        app_label = "annotation"
        constraints = [
            models.UniqueConstraint(
                fields=["pair_sha256", "model", "prompt_version"], name="one_verdict_per_pair_model_prompt"
            )
        ]
