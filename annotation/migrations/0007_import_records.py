"""Import records: which file ``import_rescue`` read, when, by whom, and (for a
correction of released gold) what it changed.

No data migration: imports made before this one left no record, and the
dataset card says so ("not recorded") rather than guessing.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('annotation', '0006_draft_modality'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='ImportRecord',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('kind', models.CharField(choices=[('gold', 'Gold'), ('draft', 'Draft'), ('revision', 'Revision')], max_length=12)),
                ('file_path', models.CharField(help_text='The file as the import read it', max_length=1000)),
                ('sha256', models.CharField(help_text="SHA-256 of the file's bytes", max_length=64)),
                ('source', models.CharField(help_text='cli, web, api or system (as in the audit trail)', max_length=16)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('sample_ids', models.JSONField(default=list, help_text='The clips of the file, in file order')),
                ('created_sample_ids', models.JSONField(blank=True, default=list, help_text='The clips this import created')),
                ('assignments_created', models.JSONField(blank=True, default=list)),
                ('row_count', models.PositiveIntegerField(default=0)),
                ('correction', models.JSONField(blank=True, default=dict)),
                ('annotator', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to=settings.AUTH_USER_MODEL)),
                ('imported_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to=settings.AUTH_USER_MODEL)),
                ('project', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='import_records', to='annotation.project')),
            ],
            options={
                'ordering': ['created_at', 'id'],
            },
        ),
    ]
