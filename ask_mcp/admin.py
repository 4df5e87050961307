"""The admin's view of asks: read-only records, filters, and the cancel and expire actions."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils import timezone
from django.utils.html import format_html
from django.utils.timesince import timesince

from .models import Ask
from .services import ask_cancel, ask_expire

if TYPE_CHECKING:
    AskModelAdmin = admin.ModelAdmin[Ask]
else:
    AskModelAdmin = admin.ModelAdmin  # generic only to the type checker


@admin.register(Ask)
class AskAdmin(AskModelAdmin):
    list_display = ("summary", "status", "age", "tool", "who_asked", "answered_by", "created")
    list_filter = ("status", "route", ("created", admin.DateFieldListFilter))
    search_fields = ("message",)
    date_hierarchy = "created"
    list_select_related = ("answered_by",)
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
        done = [
            ask
            for ask in queryset.filter(status=Ask.Status.PENDING)
            if ask_cancel(ask=ask, user=request.user)
        ]
        self._report(request, done, "cancelled", queryset.count())

    @admin.action(
        description="Expire the selected asks (the waiting call gets “did not answer in time”)"
    )
    def expire_asks(self, request: HttpRequest, queryset: QuerySet[Ask]) -> None:
        done = [ask for ask in queryset.filter(status=Ask.Status.PENDING) if ask_expire(ask=ask)]
        self._report(request, done, "expired", queryset.count())

    def _report(self, request: HttpRequest, done: list[Ask], verb: str, selected: int) -> None:
        skipped = selected - len(done)
        text = f"{len(done)} ask(s) {verb}."
        if skipped:
            text += f" {skipped} were no longer pending and were left as they were."
        self.message_user(request, text, messages.SUCCESS if done else messages.WARNING)
