"""Decisions held for an undo window: a person's refusal or one-tap answer in the inbox, kept until UNDO_SECONDS pass; rows, not committing.

Committing is :mod:`ask_mcp.records.held`'s; this is only the row, registered with the app
through :mod:`ask_mcp.models`. A row per person and ask: while it is held the ask stays
pending everywhere else, so an answer given meanwhile (another person, the client's own form,
a mail link) wins, and the held decision is dropped when it falls due.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models


class HeldDecision(models.Model):
    """One person's decision on one ask, not yet told to the agent: Undo deletes it."""

    ask = models.ForeignKey("ask_mcp.Ask", on_delete=models.CASCADE, related_name="held")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    reply = models.JSONField(help_text='The reply as the form gave it: {"action", "content"}.')
    due_at = models.DateTimeField(
        help_text="When it is committed: UNDO_SECONDS after it was made, or before the ask expires."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = "decision held for undo"
        verbose_name_plural = "decisions held for undo"
        constraints = [
            models.UniqueConstraint(fields=["ask", "user"], name="ask_mcp_held_one_per_person")
        ]
        indexes = [models.Index(fields=["due_at"], name="held_due")]

    def __str__(self) -> str:
        return f"{self.reply.get('action', '?')} on {self.ask_id} held until {self.due_at}"
