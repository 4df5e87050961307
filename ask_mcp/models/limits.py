"""What the flood limits leave behind: how many asks each principal had refused, by limit and minute; rows, not counting.

Counting is :mod:`ask_mcp.records.limits`' (the pending and rate limits) and the recorder's (the
table's share and capacity, passed on through its refusal port); this is only the row, registered
with the app through :mod:`ask_mcp.models`. Staff read it in the admin and on the dashboard.
"""

from __future__ import annotations

from django.db import models


class RefusedAsks(models.Model):
    """How many asks one principal had refused by one limit in one minute, and the last one's message."""

    class Limit(models.TextChoices):
        CAPACITY = "capacity", "the table is full (ELICITATION_CAPACITY)"
        SHARE = "share", "share of the table (ELICITATION_PER_PRINCIPAL)"
        PENDING = "pending", "pending asks (PENDING_ASKS_PER_PRINCIPAL)"
        RATE = "rate", "new asks a minute (NEW_ASKS_PER_MINUTE)"

    principal = models.CharField(max_length=200, blank=True)
    limit = models.CharField(max_length=16, choices=Limit.choices)
    minute = models.DateTimeField(help_text="The minute the refusals fell in (UTC, seconds cut).")
    count = models.PositiveIntegerField(default=0)
    last_message = models.TextField(blank=True, default="")
    last_at = models.DateTimeField()

    class Meta:
        verbose_name = "refused asks"
        verbose_name_plural = "refused asks"
        ordering = ["-minute"]
        constraints = [
            models.UniqueConstraint(
                fields=["principal", "limit", "minute"], name="refusedasks_one_row"
            )
        ]
        indexes = [models.Index(fields=["minute"], name="refusedasks_minute")]

    def __str__(self) -> str:
        return f"{self.count} refused ({self.limit}) for {self.principal or 'anonymous'}"
