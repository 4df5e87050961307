"""Seeing and answering every ask is a permission of its own (`ask_mcp.answer_every_ask`), no
longer implied by being staff. Only the model's options change: no table is touched."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("ask_mcp", "0005_inbox")]

    operations = [
        migrations.AlterModelOptions(
            name="ask",
            options={
                "ordering": ["-created"],
                "permissions": [
                    ("answer_every_ask", "Can see and answer every ask in the inbox")
                ],
            },
        ),
    ]
