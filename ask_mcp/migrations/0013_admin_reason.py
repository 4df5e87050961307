"""Staff's reason for cancelling or expiring an ask (issue 18): kept with it, told to the model."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('ask_mcp', '0012_ask_in_task'),
    ]

    operations = [
        migrations.AddField(
            model_name='ask',
            name='reason',
            field=models.CharField(blank=True, db_default='', default='', help_text='Why staff cancelled or expired it; the waiting model is told.', max_length=300, verbose_name="staff's reason"),
        ),
    ]
