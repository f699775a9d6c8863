"""Drafts record what the model could perceive: video with audio, audio only or the transcript only.

Drafts made before this field existed are filled from what they were made from:
until then only a ``video/*`` file was ever sent to the model (its provenance has a
``video`` key), so every other LLM draft was made from the transcript only, and so
was every offline skeleton. Imported and synthetic drafts stay "" (not recorded).
Going back simply drops the column, so the reverse of the data step is a no-op.
"""

from django.db import migrations, models

MODALITY = models.CharField(
    blank=True,
    choices=[("video", "video with audio"), ("audio", "audio only"), ("transcript", "transcript only")],
    default="",
    max_length=12,
)


def record_modalities(apps, schema_editor):
    Draft = apps.get_model("annotation", "Draft")
    llm = Draft.objects.filter(source="llm")
    llm.filter(provenance__has_key="video").update(modality="video")
    llm.exclude(provenance__has_key="video").update(modality="transcript")
    Draft.objects.filter(source="offline").update(modality="transcript")


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0005_history_append_only"),
    ]

    operations = [
        migrations.AddField(model_name="draft", name="modality", field=MODALITY),
        migrations.AddField(model_name="historicaldraft", name="modality", field=MODALITY),
        migrations.RunPython(record_modalities, migrations.RunPython.noop),
    ]
