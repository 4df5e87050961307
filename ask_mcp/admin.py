"""Admin for the MCP side: bearer tokens (shown once when created) and initialize-era sessions."""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING, Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils import timezone

from .auth import TOKEN_PREFIX, digest
from .models import ApiToken, LegacySessionRecord

if TYPE_CHECKING:  # ModelAdmin is generic only in the type stubs
    TokenAdminBase = admin.ModelAdmin[ApiToken]
    SessionAdminBase = admin.ModelAdmin[LegacySessionRecord]
else:
    TokenAdminBase = SessionAdminBase = admin.ModelAdmin


@admin.register(ApiToken)
class ApiTokenAdmin(TokenAdminBase):
    list_display = ("prefix", "name", "user", "team", "created_at", "last_used_at", "revoked_at")
    list_filter = ("revoked_at", "team")
    search_fields = ("name", "prefix", "user__username")
    readonly_fields = ("prefix", "created_at", "last_used_at")
    fields = ("user", "name", "team", "prefix", "created_at", "last_used_at", "revoked_at")
    actions = ("revoke",)

    def save_model(self, request: HttpRequest, obj: ApiToken, form: Any, change: bool) -> None:
        if not change:
            token = TOKEN_PREFIX + secrets.token_urlsafe(32)
            obj.digest = digest(token)
            obj.prefix = token[: len(TOKEN_PREFIX) + 4]
            messages.warning(
                request, f"The new token is {token} — copy it now; it will not be shown again."
            )
        super().save_model(request, obj, form, change)

    @admin.action(description="Revoke the selected tokens")
    def revoke(self, request: HttpRequest, queryset: QuerySet[ApiToken]) -> None:
        count = queryset.filter(revoked_at__isnull=True).update(revoked_at=timezone.now())
        self.message_user(request, f"Revoked {count} token(s).")


@admin.register(LegacySessionRecord)
class LegacySessionAdmin(SessionAdminBase):
    list_display = (
        "__str__",
        "protocol_version",
        "principal",
        "created_at",
        "last_seen_at",
        "ended_at",
    )
    list_filter = ("protocol_version", "ended_at")
    readonly_fields = [field.name for field in LegacySessionRecord._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False
