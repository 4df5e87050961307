"""The reach models' admin: webhooks with their deliveries, every notification, escalations and preferences.

A webhook's URL is vetted at its form (:class:`~ask_mcp.admin.forms.WebhookForm`) as the sender
vets it; deliveries and notifications are read-only history. Which deliveries an ask gets is
:mod:`ask_mcp.reach.plan`'s.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from ask_mcp.admin.forms import WebhookForm
from ask_mcp.models import (
    Delivery,
    Escalation,
    PushDevice,
    ReachPreference,
    Webhook,
    WebhookDelivery,
    new_webhook_secret,
)

if TYPE_CHECKING:  # ModelAdmin is generic only to the type checker
    WebhookAdminBase = admin.ModelAdmin[Webhook]
    DeliveryAdminBase = admin.ModelAdmin[WebhookDelivery]
    DeliveryInlineBase = admin.TabularInline[WebhookDelivery, Webhook]
    HookDeliveryInlineBase = admin.TabularInline[Delivery, Webhook]
    ReachDeliveryAdminBase = admin.ModelAdmin[Delivery]
    EscalationAdminBase = admin.ModelAdmin[Escalation]
    PreferenceAdminBase = admin.ModelAdmin[ReachPreference]
    DeviceAdminBase = admin.ModelAdmin[PushDevice]
else:
    WebhookAdminBase = DeliveryAdminBase = ReachDeliveryAdminBase = admin.ModelAdmin
    EscalationAdminBase = PreferenceAdminBase = DeviceAdminBase = admin.ModelAdmin
    DeliveryInlineBase = HookDeliveryInlineBase = admin.TabularInline

DELIVERY_FIELDS: Final = (
    "created_at",
    "purpose",
    "channel",
    "address",
    "state",
    "attempts",
    "response_status",
    "last_error",
    "next_attempt_at",
    "sent_at",
    "acked_at",
)
"""What the admin shows of each notification, under its ask or webhook and in its own list."""


class DeliveryInline(DeliveryInlineBase):
    """Deliveries made before every notification became a Delivery (kept as history)."""

    model = WebhookDelivery
    verbose_name_plural = "earlier webhook deliveries"
    extra = 0
    can_delete = False
    fields = ("ask_id", "status", "attempts", "response_status", "last_error", "created_at")
    readonly_fields = fields
    ordering = ("-created_at",)
    max_num = 0


class HookDeliveryInline(HookDeliveryInlineBase):
    model = Delivery
    extra = 0
    max_num = 0
    can_delete = False
    fields = ("ask", *DELIVERY_FIELDS)
    readonly_fields = fields
    ordering = ("-created_at",)
    verbose_name_plural = "deliveries"


@admin.register(Webhook)
class WebhookAdmin(WebhookAdminBase):
    form = WebhookForm
    list_display = ("url", "user", "team", "active", "created_at")
    list_filter = ("active",)
    readonly_fields = ("secret",)
    fields = ("url", "user", "team", "active", "secret")
    inlines = (HookDeliveryInline, DeliveryInline)
    actions = ("rotate_secret",)

    @admin.action(description="Give the selected webhooks new secrets (receivers need the new one)")
    def rotate_secret(self, request: HttpRequest, queryset: QuerySet[Webhook]) -> None:
        for webhook in queryset:
            webhook.secret = new_webhook_secret()
            webhook.save(update_fields=["secret"])
        self.message_user(request, f"{queryset.count()} webhook(s) have new secrets.")


@admin.register(Delivery)
class ReachDeliveryAdmin(ReachDeliveryAdminBase):
    list_display = ("ask", "purpose", "channel", "address", "state", "attempts", "created_at")
    list_filter = ("state", "channel", "purpose")
    search_fields = ("address", "last_error", "ask__message")
    list_select_related = ("ask",)
    readonly_fields = [field.name for field in Delivery._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # planned by the server (ask_mcp.reach.plan)


@admin.register(Escalation)
class EscalationAdmin(EscalationAdminBase):
    list_display = ("team", "after_minutes", "fallback_team", "fallback_user", "active")
    list_filter = ("active",)


@admin.register(ReachPreference)
class ReachPreferenceAdmin(PreferenceAdminBase):
    list_display = ("user", "email_asks", "email_reminders", "updated_at")


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(DeliveryAdminBase):
    list_display = ("ask_id", "webhook", "status", "attempts", "response_status", "created_at")
    list_filter = ("status",)
    search_fields = ("ask_id", "last_error")
    readonly_fields = [field.name for field in WebhookDelivery._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False


@admin.register(PushDevice)
class PushDeviceAdmin(DeviceAdminBase):
    """People's devices for push notifications: read-only (each person adds theirs on Settings);
    deleting one stops its notifications."""

    list_display = ("name", "user", "created_at", "last_sent_at", "last_delivered_at")
    list_filter = ("last_delivered_at",)
    search_fields = ("name", "user__username")
    fields = ("user", "name", "endpoint", "created_at", "last_sent_at", "last_delivered_at")
    readonly_fields = fields

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False
