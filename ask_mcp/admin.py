"""The admin: asks (read-only, cancel and expire), tokens, sessions, webhooks; deciding is records'.

Asks are read-only records with filters and two actions, cancel and expire, decided by
:mod:`ask_mcp.records.decisions` through the process's relay; bearer tokens are shown once when
created; initialize-era sessions and webhooks with their deliveries.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.template.response import TemplateResponse
from django.urls import URLPattern, path
from django.utils import timezone
from django.utils.html import format_html
from django.utils.timesince import timesince

from ask_mcp import runtime
from ask_mcp.models import (
    ASK_PEOPLE,
    ApiToken,
    Ask,
    AskEvent,
    LegacySessionRecord,
    Webhook,
    WebhookDelivery,
)
from ask_mcp.records import stats
from ask_mcp.records.decisions import ask_cancel, ask_expire
from ask_mcp.team.auth import TOKEN_PREFIX, TOKENS, digest
from ask_mcp.web import charts
from ask_mcp.workers.relay import ChannelLayerUnavailable

if TYPE_CHECKING:  # ModelAdmin is generic only to the type checker
    AskModelAdmin = admin.ModelAdmin[Ask]
    TokenAdminBase = admin.ModelAdmin[ApiToken]
    SessionAdminBase = admin.ModelAdmin[LegacySessionRecord]
    WebhookAdminBase = admin.ModelAdmin[Webhook]
    DeliveryAdminBase = admin.ModelAdmin[WebhookDelivery]
    DeliveryInlineBase = admin.TabularInline[WebhookDelivery, Webhook]
    EventInlineBase = admin.TabularInline[AskEvent, Ask]
else:
    AskModelAdmin = TokenAdminBase = SessionAdminBase = admin.ModelAdmin
    WebhookAdminBase = DeliveryAdminBase = admin.ModelAdmin
    DeliveryInlineBase = EventInlineBase = admin.TabularInline


class AskEventInline(EventInlineBase):
    model = AskEvent
    extra = 0
    max_num = 0
    can_delete = False
    fields = ("at", "kind", "actor", "actor_label", "route")
    readonly_fields = fields


@admin.register(Ask)
class AskAdmin(AskModelAdmin):
    inlines = (AskEventInline,)
    list_display = ("summary", "status", "age", "tool", "who_asked", "answered_by", "created")
    list_filter = ("status", "route", ("created", admin.DateFieldListFilter))
    search_fields = ("message", "answer", "principal", "client_name")
    date_hierarchy = "created"
    list_select_related = ASK_PEOPLE
    actions = ("cancel_asks", "expire_asks")
    fields = (
        "id",
        "message",
        "status",
        "route",
        "tool",
        "toolkit",
        "client_name",
        "principal",
        "asked_by",
        "team",
        "token",
        "created",
        "expires_at",
        "answered_by",
        "answered_at",
        "shown_answer",
        "shown_schema",
        "worker",
        "call_id",
    )
    readonly_fields = fields
    change_list_template = "admin/ask_mcp/ask/change_list.html"

    def get_urls(self) -> list[URLPattern]:
        dashboard = path(
            "dashboard/",
            self.admin_site.admin_view(self.dashboard_view),
            name="ask_mcp_ask_dashboard",
        )
        return [dashboard, *super().get_urls()]

    def dashboard_view(self, request: HttpRequest) -> TemplateResponse:
        """Charts of the last days' asks: per day by outcome, time to answer, rates per token."""
        days = stats.daily()
        median, p90 = stats.answer_times()
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": "Dashboard",
            "days_count": stats.DAYS,
            "total": sum(day.total for day in days),
            "pending": Ask.objects.filter(status=Ask.Status.PENDING).count(),
            "median": charts.seconds_text(median) if median is not None else None,
            "p90": charts.seconds_text(p90) if p90 is not None else None,
            "asks_chart": charts.asks_per_day(days),
            "times_chart": charts.time_to_answer(days),
            "rates_chart": charts.rates_per_token(stats.per_token()),
            "waiting": stats.waiting_longest(),
        }
        return TemplateResponse(request, "admin/ask_mcp/dashboard.html", context)

    @admin.display(description="message", ordering="message")
    def summary(self, ask: Ask) -> str:
        return str(ask)

    @admin.display(description="age", ordering="created")
    def age(self, ask: Ask) -> str:
        return timesince(ask.created, timezone.now())

    @admin.display(description="who asked")
    def who_asked(self, ask: Ask) -> str:
        return ask.principal or ask.client_name or "—"

    @admin.display(description="answer")
    def shown_answer(self, ask: Ask) -> str:
        if ask.answer is None:
            return "—"
        return format_html("<pre>{}</pre>", json.dumps(ask.answer, indent=2, ensure_ascii=False))

    @admin.display(description="requested schema")
    def shown_schema(self, ask: Ask) -> str:
        return format_html("<pre>{}</pre>", json.dumps(ask.schema, indent=2, ensure_ascii=False))

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # asks come from models, never from people

    @admin.action(description="Cancel the selected asks (the waiting call gets “cancelled”)")
    def cancel_asks(self, request: HttpRequest, queryset: QuerySet[Ask]) -> None:
        self._decide(request, queryset, ask_cancel, "cancelled")

    @admin.action(
        description="Expire the selected asks (the waiting call gets “did not answer in time”)"
    )
    def expire_asks(self, request: HttpRequest, queryset: QuerySet[Ask]) -> None:
        self._decide(request, queryset, ask_expire, "expired")

    def _decide(
        self,
        request: HttpRequest,
        queryset: QuerySet[Ask],
        decide: Callable[..., bool],
        verb: str,
    ) -> None:
        done: list[Ask] = []
        unreached = 0
        relay = runtime.relay()
        for ask in queryset.filter(status=Ask.Status.PENDING):
            try:
                if decide(ask=ask, user=request.user, relay=relay):
                    done.append(ask)
            except ChannelLayerUnavailable:
                unreached += 1
        skipped = queryset.count() - len(done) - unreached
        text = f"{len(done)} ask(s) {verb}."
        if skipped:
            text += f" {skipped} were no longer pending and were left as they were."
        self.message_user(request, text, messages.SUCCESS if done else messages.WARNING)
        if unreached:
            self.message_user(
                request,
                f"{unreached} ask(s) were left pending: the server process holding their calls "
                "could not be reached (the channel layer, Redis, is unavailable). Try again "
                "shortly.",
                messages.ERROR,
            )


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
        TOKENS.forget(obj.digest)  # a revocation or a new team counts at once in this process

    def delete_model(self, request: HttpRequest, obj: ApiToken) -> None:
        super().delete_model(request, obj)
        TOKENS.forget(obj.digest)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[ApiToken]) -> None:
        digests = list(queryset.values_list("digest", flat=True))
        super().delete_queryset(request, queryset)
        for each in digests:
            TOKENS.forget(each)

    @admin.action(description="Revoke the selected tokens")
    def revoke(self, request: HttpRequest, queryset: QuerySet[ApiToken]) -> None:
        active = queryset.filter(revoked_at__isnull=True)
        digests = list(active.values_list("digest", flat=True))
        count = active.update(revoked_at=timezone.now())
        for each in digests:
            TOKENS.forget(each)  # other workers notice within auth.CACHE_SECONDS
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
