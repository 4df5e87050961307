"""Database models of the ask_mcp app."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class LegacySessionRecord(models.Model):
    """An initialize-era (2025-06-18 / 2025-11-25) MCP session, visible to every worker process."""

    id = models.CharField(primary_key=True, max_length=64)
    protocol_version = models.CharField(max_length=20)
    capabilities = models.JSONField(default=dict)
    client_info = models.JSONField(null=True, blank=True)
    principal = models.CharField(max_length=255, blank=True, default="")
    team = models.CharField(max_length=255, blank=True, default="")
    log_level = models.CharField(max_length=16, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    last_seen_at = models.DateTimeField()
    ended_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = "legacy MCP session"
        indexes = [models.Index(fields=["ended_at", "last_seen_at"])]

    def __str__(self) -> str:
        name = (self.client_info or {}).get("name", "client")
        return f"{name} ({self.protocol_version}) {self.id[:8]}…"


class ApiToken(models.Model):
    """A bearer token for /mcp. Only its SHA-256 is stored; the token itself is shown once."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="mcp_tokens"
    )
    name = models.CharField(max_length=100, blank=True, help_text="What the token is for.")
    team = models.ForeignKey(
        "auth.Group",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="mcp_tokens",
        help_text="Questions asked with this token also go to this team.",
    )
    digest = models.CharField(max_length=64, unique=True, editable=False)
    prefix = models.CharField(
        max_length=12, editable=False, help_text="Start of the token, to recognise it."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = "MCP token"

    def __str__(self) -> str:
        label = f" ({self.name})" if self.name else ""
        return f"{self.prefix}…{label}"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None


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
    """One announcement of one question to one webhook, with its attempts."""

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
