"""Webhooks: where questions are announced for a person or a team, and the old per-webhook delivery log; rows, not sending.

Sending is :mod:`ask_mcp.reach.webhooks`' and :mod:`ask_mcp.reach.queue`'s (every notification is a
:class:`~ask_mcp.models.reach.Delivery` now; :class:`WebhookDelivery` keeps the history from
before). Registered with the app through :mod:`ask_mcp.models`.
"""

from __future__ import annotations

import secrets

from django.conf import settings
from django.db import models


def new_webhook_secret() -> str:
    """A webhook's signing secret: 256 random bits, URL-safe (the receiver pastes it)."""
    return "whsec_" + secrets.token_urlsafe(32)


class Webhook(models.Model):
    """Where to announce new questions for a person or a team (a Slack-compatible incoming webhook)."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="mcp_webhooks",
        help_text="Announce questions addressed to this person…",
    )
    team = models.ForeignKey(
        "auth.Group",
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="mcp_webhooks",
        help_text="…or to this team.",
    )
    url = models.URLField(max_length=500, help_text="An http(s) URL that accepts a JSON POST.")
    secret = models.CharField(
        max_length=100,
        default=new_webhook_secret,
        help_text="Signs every delivery (the Askserver-Signature header); the receiver keeps a copy.",
    )
    active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=models.Q(user__isnull=False, team__isnull=True)
                | models.Q(user__isnull=True, team__isnull=False),
                name="ask_mcp_webhook_user_xor_team",
            )
        ]

    def __str__(self) -> str:
        return f"{self.user or self.team} → {self.url}"


class WebhookDelivery(models.Model):
    """One announcement of one question to one webhook (before Delivery held them all); kept for history."""

    class Status(models.TextChoices):
        PENDING = "pending"
        DELIVERED = "delivered"
        FAILED = "failed"

    webhook = models.ForeignKey(Webhook, on_delete=models.CASCADE, related_name="deliveries")
    ask_id = models.CharField(max_length=32, db_index=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0)
    response_status = models.PositiveSmallIntegerField(null=True, blank=True)
    last_error = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name_plural = "webhook deliveries"
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.ask_id[:8]} → {self.webhook.url} ({self.status})"
