"""The reach models' admin: webhooks with their deliveries, every notification, escalations and preferences.

A webhook's URL is vetted at its form (:class:`~ask_mcp.admin.forms.WebhookForm`) as the sender
vets it; deliveries and notifications are read-only history. Which deliveries an ask gets is
:mod:`ask_mcp.reach.plan`'s.

Webhooks and escalations are per-team channels: a staff member sees, sets and changes them only
for the teams they belong to (a person's webhook only for themselves), with fallbacks inside
those teams, unless they hold ANSWER_EVERY_ASK. The model permission alone let a staff member
escalate another team's asks to herself and subscribe to any team's questions. A later
per-team channel's admin takes :class:`TeamScoped` with its own field names.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Final

from django import forms
from django.contrib import admin
from django.contrib.auth.models import Group, User
from django.db.models import ForeignKey, Q, QuerySet
from django.http import HttpRequest

from ask_mcp.admin.forms import EscalationForm, WebhookForm
from ask_mcp.models import (
    ANSWER_EVERY_ASK,
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


def own_teams(user: Any) -> QuerySet[Group] | None:
    """The teams `user` may set channels for: None when every team (ANSWER_EVERY_ASK)."""
    if user.has_perm(ANSWER_EVERY_ASK):
        return None
    return Group.objects.filter(user=user)


class TeamScoped:
    """A per-team channel's admin: rows, choices and fallbacks only within the staff member's teams.

    `team_fields` name the teams a row is for or falls back to; `person_fields` name people:
    `self_fields` may only be the staff member (a person's own channel), the others any member
    of their teams (a fallback). The row list is scoped by `scope`, a query of the teams.
    """

    team_fields: ClassVar[tuple[str, ...]] = ()
    self_fields: ClassVar[tuple[str, ...]] = ()
    person_fields: ClassVar[tuple[str, ...]] = ()

    def scope(self, user: Any, teams: QuerySet[Group]) -> Q:
        """The rows `user` may see and change, given their teams."""
        raise NotImplementedError  # abstract: each channel's admin names its rows (no default scope)

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        rows: QuerySet[Any] = super().get_queryset(request)  # type: ignore[misc]
        teams = own_teams(request.user)
        return rows if teams is None else rows.filter(self.scope(request.user, teams))

    def formfield_for_foreignkey(
        self, db_field: ForeignKey[Any, Any], request: HttpRequest, **kwargs: Any
    ) -> forms.ModelChoiceField[Any] | None:
        teams = own_teams(request.user)
        if teams is not None:
            if db_field.name in self.team_fields:
                kwargs["queryset"] = teams
            elif db_field.name in self.self_fields:
                kwargs["queryset"] = User.objects.filter(id=request.user.pk or 0)
            elif db_field.name in self.person_fields:
                kwargs["queryset"] = User.objects.filter(groups__in=teams).distinct()
        field: forms.ModelChoiceField[Any] | None = super().formfield_for_foreignkey(  # type: ignore[misc]
            db_field, request, **kwargs
        )
        return field


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
class WebhookAdmin(TeamScoped, WebhookAdminBase):
    form = WebhookForm
    team_fields = ("team",)
    self_fields = ("user",)

    def scope(self, user: Any, teams: QuerySet[Group]) -> Q:
        return Q(team__in=teams) | Q(user=user)

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
class EscalationAdmin(TeamScoped, EscalationAdminBase):
    form = EscalationForm
    team_fields = ("team", "fallback_team")
    person_fields = ("fallback_user",)

    def scope(self, user: Any, teams: QuerySet[Group]) -> Q:
        return Q(team__in=teams)

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
