"""A task's ask says so (issue 17): its card tells people the agent checks back, not that it left."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("ask_mcp", "0011_people_only"),
    ]

    operations = [
        migrations.AddField(
            model_name="ask",
            name="in_task",
            field=models.BooleanField(
                default=False,
                help_text="Asked by a task of the MCP Tasks extension: no call holds it, the "
                "client polls tasks/get for its answer.",
            ),
        ),
    ]
