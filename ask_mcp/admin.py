"""Admin for the MCP side: bearer tokens (shown once when created) and initialize-era sessions."""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING, Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils import timezone

from .auth import TOKEN_PREFIX, digest
from .models import ApiToken, LegacySessionRecord, Webhook, WebhookDelivery

if TYPE_CHECKING:  # ModelAdmin is generic only in the type stubs
    TokenAdminBase = admin.ModelAdmin[ApiToken]
    SessionAdminBase = admin.ModelAdmin[LegacySessionRecord]
    WebhookAdminBase = admin.ModelAdmin[Webhook]
    DeliveryAdminBase = admin.ModelAdmin[WebhookDelivery]
    DeliveryInlineBase = admin.TabularInline[WebhookDelivery, Webhook]
else:
    TokenAdminBase = SessionAdminBase = WebhookAdminBase = DeliveryAdminBase = admin.ModelAdmin
    DeliveryInlineBase = admin.TabularInline


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


class DeliveryInline(DeliveryInlineBase):
    model = WebhookDelivery
    extra = 0
    can_delete = False
    fields = ("ask_id", "status", "attempts", "response_status", "last_error", "created_at")
    readonly_fields = fields
    ordering = ("-created_at",)
    max_num = 0


@admin.register(Webhook)
class WebhookAdmin(WebhookAdminBase):
    list_display = ("url", "user", "team", "active", "created_at")
    list_filter = ("active",)
    inlines = (DeliveryInline,)


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(DeliveryAdminBase):
    list_display = ("ask_id", "webhook", "status", "attempts", "response_status", "created_at")
    list_filter = ("status",)
    search_fields = ("ask_id", "last_error")
    readonly_fields = [field.name for field in WebhookDelivery._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False
