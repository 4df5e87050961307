"""Database models of the ask_mcp app."""

from __future__ import annotations

from django.db import models


class LegacySessionRecord(models.Model):
    """An initialize-era (2025-06-18 / 2025-11-25) MCP session, visible to every worker process."""

    id = models.CharField(primary_key=True, max_length=64)
    protocol_version = models.CharField(max_length=20)
    capabilities = models.JSONField(default=dict)
    client_info = models.JSONField(null=True, blank=True)
    principal = models.CharField(max_length=255, blank=True, default="")
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
