"""New asks get time-ordered ids (UUIDv7). The default is applied in Python, never by the
database, so only the migration state changes: on SQLite an AlterField would copy the whole
table to change nothing stored."""

from django.db import migrations, models

import ask_mcp.server.ids


class Migration(migrations.Migration):
    dependencies = [
        ("ask_mcp", "0002_sparse_indexes"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="ask",
                    name="id",
                    field=models.UUIDField(
                        default=ask_mcp.server.ids.new_ask_id,
                        editable=False,
                        primary_key=True,
                        serialize=False,
                    ),
                ),
            ],
        ),
    ]
