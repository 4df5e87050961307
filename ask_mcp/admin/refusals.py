"""The refused asks' admin: one read-only row per principal, limit and minute, with the last refused question."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.contrib import admin
from django.http import HttpRequest

from ask_mcp.models import RefusedAsks

if TYPE_CHECKING:  # ModelAdmin is generic only to the type checker
    RefusedAdminBase = admin.ModelAdmin[RefusedAsks]
else:
    RefusedAdminBase = admin.ModelAdmin


@admin.register(RefusedAsks)
class RefusedAsksAdmin(RefusedAdminBase):
    """Counted by the server (:mod:`ask_mcp.records.limits`); staff read them, nobody edits them."""

    list_display = ("minute", "principal", "limit", "count", "last_message_start")
    list_filter = ("limit", "minute")
    search_fields = ("principal", "last_message")
    date_hierarchy = "minute"
    readonly_fields = ("principal", "limit", "minute", "count", "last_at", "last_message")

    @admin.display(description="last question")
    def last_message_start(self, row: RefusedAsks) -> str:
        first = row.last_message.strip().splitlines()[0] if row.last_message.strip() else ""
        return first if len(first) <= 80 else first[:79] + "…"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
