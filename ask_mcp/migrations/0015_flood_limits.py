"""Floods (issue 28, items 7 and 8; issue 32, item 5): the indexes the flood limits count a
principal's pending and recent asks with, and its sessions by last use; one row of refused asks
per principal, limit and minute.
"""

from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("ask_mcp", "0014_identity"),
        ("auth", "0012_alter_user_first_name_max_length"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="RefusedAsks",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("principal", models.CharField(blank=True, max_length=200)),
                (
                    "limit",
                    models.CharField(
                        choices=[
                            ("capacity", "the table is full (ELICITATION_CAPACITY)"),
                            ("share", "share of the table (ELICITATION_PER_PRINCIPAL)"),
                            ("pending", "pending asks (PENDING_ASKS_PER_PRINCIPAL)"),
                            ("rate", "new asks a minute (NEW_ASKS_PER_MINUTE)"),
                        ],
                        max_length=16,
                    ),
                ),
                (
                    "minute",
                    models.DateTimeField(
                        help_text="The minute the refusals fell in (UTC, seconds cut)."
                    ),
                ),
                ("count", models.PositiveIntegerField(default=0)),
                ("last_message", models.TextField(blank=True, default="")),
                ("last_at", models.DateTimeField()),
            ],
            options={
                "verbose_name": "refused asks",
                "verbose_name_plural": "refused asks",
                "ordering": ["-minute"],
            },
        ),
        migrations.AddIndex(
            model_name="ask",
            index=models.Index(
                condition=models.Q(
                    ("status", "pending"), models.Q(("principal", ""), _negated=True)
                ),
                fields=["principal"],
                name="ask_principal_pending",
            ),
        ),
        migrations.AddIndex(
            model_name="ask",
            index=models.Index(
                condition=models.Q(("principal", ""), _negated=True),
                fields=["principal", "created"],
                name="ask_principal_created",
            ),
        ),
        migrations.AddIndex(
            model_name="legacysessionrecord",
            index=models.Index(
                condition=models.Q(("principal", ""), _negated=True),
                fields=["principal", "last_seen_at"],
                name="session_principal_seen",
            ),
        ),
        migrations.AddIndex(
            model_name="refusedasks",
            index=models.Index(fields=["minute"], name="refusedasks_minute"),
        ),
        migrations.AddConstraint(
            model_name="refusedasks",
            constraint=models.UniqueConstraint(
                fields=("principal", "limit", "minute"), name="refusedasks_one_row"
            ),
        ),
    ]
