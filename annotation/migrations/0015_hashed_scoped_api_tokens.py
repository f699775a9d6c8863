"""API tokens hashed, expiring and scoped (django-rest-knox's token with a scope).

The tokens of DRF's authtoken app were stored in plain text. Each one becomes
a hashed read-write token that expires API_TOKEN_DAYS after this migration
(so scripts keep working until then), and the plain-text keys are deleted.
"""
from datetime import timedelta

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


PLAIN_TEXT_TABLE = "authtoken_token"


def hash_plain_text_tokens(apps, schema_editor):
    from django.utils import timezone
    from knox.crypto import hash_token
    from knox.settings import CONSTANTS

    connection = schema_editor.connection
    if PLAIN_TEXT_TABLE not in connection.introspection.table_names():
        return
    ApiToken = apps.get_model("annotation", "ApiToken")
    expiry = timezone.now() + timedelta(days=getattr(settings, "API_TOKEN_DAYS", 90))
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT key, user_id FROM {PLAIN_TEXT_TABLE}")
        ApiToken.objects.bulk_create(
            ApiToken(digest=hash_token(key), token_key=key[: CONSTANTS.TOKEN_KEY_LENGTH], user_id=user_id, expiry=expiry, scope="read-write")
            for key, user_id in cursor.fetchall()
        )
        cursor.execute(f"DELETE FROM {PLAIN_TEXT_TABLE}")


class Migration(migrations.Migration):

    dependencies = [
        ('annotation', '0014_study_design'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='ApiToken',
            fields=[
                ('digest', models.CharField(max_length=128, primary_key=True, serialize=False)),
                ('token_key', models.CharField(db_index=True, max_length=25)),
                ('created', models.DateTimeField(auto_now_add=True)),
                ('expiry', models.DateTimeField(blank=True, null=True)),
                ('scope', models.CharField(choices=[('read', 'read-only'), ('read-write', 'read-write')], default='read-write', max_length=12)),
                ('user', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='auth_token_set', to=settings.AUTH_USER_MODEL)),
            ],
            options={
                'ordering': ['user', 'created'],
            },
        ),
        migrations.RunPython(hash_plain_text_tokens, migrations.RunPython.noop),
    ]
