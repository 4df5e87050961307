"""Each ask names the credential it came with by kind and id, not by a foreign key to a token (issue
26): a second kind of credential then needs only its own table. The asks' token ids are copied
into the new columns (and back, going backwards, for the tokens that still exist). A session no
longer keeps a team: each request's own identity routes its questions.

(Written by hand on Django 6.1.3's generated operations, with the data step between them.)
"""

from typing import Any

from django.db import migrations, models
from django.db.models.functions import Cast


def token_to_credential(apps: Any, schema_editor: Any) -> None:
    """Every ask that kept a token now names it as a credential of kind "token"."""
    Ask = apps.get_model("ask_mcp", "Ask")
    Ask.objects.filter(token__isnull=False).update(
        credential_kind="token", credential_id=Cast("token_id", models.CharField())
    )


def credential_to_token(apps: Any, schema_editor: Any) -> None:
    """Backwards: the asks whose token still exists keep it again as the foreign key."""
    Ask = apps.get_model("ask_mcp", "Ask")
    ApiToken = apps.get_model("ask_mcp", "ApiToken")
    existing = ApiToken.objects.annotate(key=Cast("pk", models.CharField())).values("key")
    Ask.objects.filter(credential_kind="token", credential_id__in=existing).update(
        token_id=Cast("credential_id", models.IntegerField())
    )
    if schema_editor.connection.vendor == "postgresql":
        # The foreign key's checks run now, not at commit: the steps after this one alter the
        # table, which PostgreSQL refuses while checks are pending.
        schema_editor.execute("SET CONSTRAINTS ALL IMMEDIATE")


class Migration(migrations.Migration):

    dependencies = [
        ('ask_mcp', '0013_admin_reason'),
    ]

    operations = [
        migrations.AddField(
            model_name='ask',
            name='credential_kind',
            field=models.CharField(blank=True, default='', help_text='Which kind (ask_mcp.server.identity.CredentialKind).', max_length=16),
        ),
        migrations.AddField(
            model_name='ask',
            name='credential_id',
            field=models.CharField(blank=True, default='', help_text='Its id within its kind.', max_length=64),
        ),
        migrations.RunPython(token_to_credential, credential_to_token, elidable=True),
        migrations.RemoveIndex(
            model_name='ask',
            name='ask_token',
        ),
        migrations.RemoveField(
            model_name='ask',
            name='token',
        ),
        migrations.AddIndex(
            model_name='ask',
            index=models.Index(condition=models.Q(('credential_kind', ''), _negated=True), fields=['credential_kind', 'credential_id'], name='ask_credential'),
        ),
        migrations.RemoveField(
            model_name='legacysessionrecord',
            name='team',
        ),
    ]
