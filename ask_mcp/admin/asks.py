"""The asks' admin: read-only records with filters, cancel and expire per row and in bulk, the dashboard's URL.

Asks are read-only records (no Save; only superusers delete, in bulk, after Django's
confirmation) with filters, a time-left column, times to the second in the reader's clock,
answers shown as fields, who asked named as the inbox names it, and cancel and expire per row
(each behind a confirmation page, with a reason that goes back to the model) and in bulk,
decided by :mod:`ask_mcp.records.decisions` through the process's relay.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

from django.contrib import admin, messages
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString
from django.utils.timesince import timesince

from ask_mcp import runtime
from ask_mcp.admin.dashboard import dashboard
from ask_mcp.admin.forms import ReasonForm
from ask_mcp.admin.reach import DELIVERY_FIELDS
from ask_mcp.models import (
    ASK_PEOPLE,
    DECIDED,
    ApiToken,
    Ask,
    AskEvent,
    Delivery,
)
from ask_mcp.records.decisions import ask_cancel, ask_expire
from ask_mcp.server.identity import TOKEN
from ask_mcp.web.formfields import show_answer
from ask_mcp.web.naming import answered_in, asked_by, person, route_words
from ask_mcp.workers.relay import ChannelLayerUnavailable

DECISIONS: Final[dict[str, tuple[Callable[..., bool], str, str]]] = {
    "cancel": (ask_cancel, "cancelled", "the waiting call gets “cancelled”"),
    "expire": (ask_expire, "expired", "the waiting call gets “did not answer in time”"),
}
"""The per-row decisions: what decides, its past tense, and what the model is told."""


def shown_time(at: dt.datetime | None) -> SafeString | str:
    """A time to the second, in the reader's local time once times.js runs (UTC before)."""
    if at is None:
        return "—"
    utc = at.astimezone(dt.UTC)
    return format_html(
        '<time class="local" datetime="{}">{}</time>',
        utc.isoformat(),
        utc.strftime("%Y-%m-%d %H:%M:%S UTC"),
    )


if TYPE_CHECKING:  # ModelAdmin is generic only to the type checker
    AskModelAdmin = admin.ModelAdmin[Ask]
    EventInlineBase = admin.TabularInline[AskEvent, Ask]
    AskDeliveryInlineBase = admin.TabularInline[Delivery, Ask]
else:
    AskModelAdmin = admin.ModelAdmin
    EventInlineBase = AskDeliveryInlineBase = admin.TabularInline


class CollectedFilter(admin.SimpleListFilter):
    """Decided asks whose decision a call took, or not yet (docs/agents/nothing-lost.md)."""

    title = "delivered to the agent"
    parameter_name = "collected"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [("yes", "has the answer"), ("no", "answered, not yet collected")]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Ask]) -> QuerySet[Ask]:
        decided = queryset.filter(status__in=DECIDED)
        if self.value() == "yes":
            return decided.filter(collected_at__isnull=False)
        if self.value() == "no":
            return decided.filter(collected_at__isnull=True)
        return queryset


class AskEventInline(EventInlineBase):
    model = AskEvent
    template = "admin/ask_mcp/ask/events_inline.html"
    extra = 0
    max_num = 0
    can_delete = False
    fields = ("at", "kind", "actor", "actor_label", "route")
    readonly_fields = fields


class AskDeliveryInline(AskDeliveryInlineBase):
    model = Delivery
    extra = 0
    max_num = 0
    can_delete = False
    fields = DELIVERY_FIELDS
    readonly_fields = fields
    verbose_name_plural = "notifications (mail, webhooks, push)"
    template = "admin/ask_mcp/ask/deliveries_inline.html"


BY_DAY: Final = ("created", admin.DateFieldListFilter)
"""The asks' filter by the day they were asked."""


@admin.register(Ask)
class AskAdmin(AskModelAdmin):
    inlines = (AskEventInline, AskDeliveryInline)
    list_display = (
        "summary",
        "status",
        "delivery",
        "time_left",
        "age",
        "tool",
        "who_asked",
        "decided_by",
        "asked_at",
        "row_actions",
    )
    list_filter = ("status", "route", "people_only", CollectedFilter, BY_DAY)
    search_fields = ("message", "answer", "principal", "client_name")
    date_hierarchy = "created"
    list_select_related = (*ASK_PEOPLE, "team")
    actions = ("cancel_asks", "expire_asks")
    fields = (
        "id",
        "message",
        "status",
        "route",
        "people_only",
        "tool",
        "toolkit",
        "who_asked",
        "client_name",
        "principal",
        "asked_for",
        "team",
        "asked_at",
        "expires",
        "time_left",
        "decided_by",
        "answered",
        "decided_at",
        "reason",
        "token",
        "shown_answer",
        "shown_schema",
        "delivery",
        "collected_at",
        "collected_by",
        "detached_at",
        "worker",
        "call_id",
    )
    readonly_fields = fields
    change_list_template = "admin/ask_mcp/ask/change_list.html"

    def dashboard_view(self, request: HttpRequest) -> TemplateResponse:
        """Charts of the last days' asks: per day by outcome, time to answer, rates per token.

        It shows question texts, token names and rates: the view permission on asks (what the
        ask list needs) is required, as being staff is not (a staff member given only webhook
        rights read every team's questions here).
        """
        if not self.has_view_permission(request):
            raise PermissionDenied
        return dashboard(request, self.admin_site, self.model._meta)

    @admin.display(description="agent")
    def delivery(self, ask: Ask) -> str:
        """Whether the agent has the decision, waits for one, or nobody waits right now."""
        if ask.is_pending:
            return "waiting" if ask.agent_waiting else "no agent waiting right now"
        if ask.is_decided:
            return "has the answer" if ask.collected_at else "not yet collected"
        return "—"

    @admin.display(description="message", ordering="message")
    def summary(self, ask: Ask) -> str:
        return str(ask)

    @admin.display(description="age", ordering="created")
    def age(self, ask: Ask) -> str:
        return timesince(ask.created, timezone.now())

    @admin.display(description="who asked")
    def who_asked(self, ask: Ask) -> str:
        return asked_by(ask)  # the inbox's words, so both name the asker alike

    @admin.display(description="asked for", ordering="asked_by__username")
    def asked_for(self, ask: Ask) -> str:
        return person(ask.asked_by) if ask.asked_by is not None else "—"

    @admin.display(description="decided by", ordering="answered_by__username")
    def decided_by(self, ask: Ask) -> str:
        if ask.answered_by is not None:
            return person(ask.answered_by)
        return "—" if ask.is_pending else "—  (no person)"

    @admin.display(description="answered")
    def answered(self, ask: Ask) -> str:
        """Which route answered it, in the inbox's words ("in the inbox"), or where it waits."""
        if ask.is_pending:
            return f"waits {route_words(ask.route, people_only=ask.people_only)}"
        return answered_in(ask) or "—"

    @admin.display(description="token")
    def token(self, ask: Ask) -> SafeString | str:
        """The token the asking call came with, linked to its page while it exists."""
        if ask.credential_kind != TOKEN or not ask.credential_id.isdigit():
            return "—"
        found = ApiToken.objects.filter(pk=int(ask.credential_id)).first()
        if found is None:
            return f"{ask.credential or ask.credential_id} (deleted)"
        url = reverse("admin:ask_mcp_apitoken_change", args=[found.pk])
        return format_html('<a href="{}">{}</a>', url, found)

    @admin.display(description="asked", ordering="created")
    def asked_at(self, ask: Ask) -> SafeString | str:
        return shown_time(ask.created)

    @admin.display(description="waits until", ordering="expires_at")
    def expires(self, ask: Ask) -> SafeString | str:
        return shown_time(ask.expires_at)

    @admin.display(description="decided", ordering="answered_at")
    def decided_at(self, ask: Ask) -> SafeString | str:
        return shown_time(ask.answered_at)

    @admin.display(description="time left", ordering="expires_at")
    def time_left(self, ask: Ask) -> SafeString | str:
        if not ask.is_pending:
            return "—"
        left = (ask.expires_at - timezone.now()).total_seconds()
        if left <= 0:
            return "overdue"
        minutes, seconds = divmod(int(left), 60)
        return format_html(
            '<span class="countdown" data-expires="{}">{} min {} s</span>',
            ask.expires_at.isoformat(),
            minutes,
            seconds,
        )

    @admin.display(description="decide")
    def row_actions(self, ask: Ask) -> SafeString | str:
        if not ask.is_pending:
            return ""
        links = (
            (reverse(f"admin:ask_mcp_ask_{verb}", args=[ask.pk]), label, str(ask))
            for verb, label in (("cancel", "Cancel…"), ("expire", "Expire…"))
        )
        return format_html_join(
            " ",
            '<a class="button" href="{}" aria-label="{} {}">{}</a>',
            ((url, label.rstrip("…"), title, label) for url, label, title in links),
        )

    @admin.display(description="answer")
    def shown_answer(self, ask: Ask) -> SafeString | str:
        if ask.answer is None:
            return "—"
        rows = show_answer(ask.schema, ask.answer) if isinstance(ask.answer, dict) else []
        fields = format_html_join("", "<dt>{}</dt><dd>{}</dd>", rows)
        raw = json.dumps(ask.answer, indent=2, ensure_ascii=False)
        return format_html(
            '<dl class="answer-fields">{}</dl><details><summary>As JSON</summary><pre>{}</pre></details>',
            fields,
            raw,
        )

    @admin.display(description="requested schema")
    def shown_schema(self, ask: Ask) -> str:
        return format_html("<pre>{}</pre>", json.dumps(ask.schema, indent=2, ensure_ascii=False))

    class Media:
        js = ("ask_mcp/times.js",)
        css = {"all": ("ask_mcp/admin.css",)}

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # asks come from models, never from people

    def has_change_permission(self, request: HttpRequest, obj: Ask | None = None) -> bool:
        return False  # a record of what was asked and answered: shown, never edited

    def has_decide_permission(self, request: HttpRequest) -> bool:
        """Cancelling or expiring an ask is more than viewing it: Django's change permission."""
        return bool(request.user.has_perm("ask_mcp.change_ask"))

    def has_delete_permission(self, request: HttpRequest, obj: Ask | None = None) -> bool:
        # Only superusers remove asks (a removal request), in bulk, after Django's confirmation.
        return obj is None and bool(getattr(request.user, "is_superuser", False))

    def get_urls(self) -> list[URLPattern]:
        own = [
            path(
                f"<path:object_id>/{verb}/",
                self.admin_site.admin_view(self._decide_one),
                {"verb": verb},
                name=f"ask_mcp_ask_{verb}",
            )
            for verb in DECISIONS
        ]
        dashboard = path(
            "dashboard/",
            self.admin_site.admin_view(self.dashboard_view),
            name="ask_mcp_ask_dashboard",
        )
        return [dashboard, *own, *super().get_urls()]

    def _decide_one(self, request: HttpRequest, object_id: str, verb: str) -> HttpResponse:
        """One ask's cancel or expire: a confirmation page, then the decision on POST."""
        ask = self.get_object(request, object_id)
        if ask is None or not self.has_view_permission(request, ask):
            raise Http404("No such ask.")
        if not self.has_decide_permission(request):
            raise PermissionDenied("Deciding an ask needs the change permission on asks.")
        decide, done, told = DECISIONS[verb]
        back = reverse("admin:ask_mcp_ask_changelist")
        form = ReasonForm(request.POST if request.method == "POST" else None)
        if form.is_valid():
            self._decide(request, Ask.objects.filter(pk=ask.pk), decide, done, form.said)
            return HttpResponseRedirect(back)
        context = {
            "form": form,
            **self.admin_site.each_context(request),
            "title": f"{verb.capitalize()} this ask?",
            "ask": ask,
            "verb": verb,
            "told": told,
            "asker": asked_by(ask),
            "opts": self.model._meta,
            "back": back,
        }
        return TemplateResponse(request, "admin/ask_mcp/ask/decide.html", context)

    @admin.action(
        description="Cancel the selected asks (the waiting call gets “cancelled”)",
        permissions=["decide"],  # deciding an ask is more than viewing it
    )
    def cancel_asks(self, request: HttpRequest, queryset: QuerySet[Ask]) -> HttpResponse | None:
        return self._confirmed(request, queryset, "cancel", "cancel_asks")

    @admin.action(
        description="Expire the selected asks (the waiting call gets “did not answer in time”)",
        permissions=["decide"],
    )
    def expire_asks(self, request: HttpRequest, queryset: QuerySet[Ask]) -> HttpResponse | None:
        return self._confirmed(request, queryset, "expire", "expire_asks")

    def _confirmed(
        self, request: HttpRequest, queryset: QuerySet[Ask], verb: str, action: str
    ) -> HttpResponse | None:
        """A bulk decision: first a page naming the asks and what their calls will be told
        (as Django's bulk delete does), then, once confirmed, the decision."""
        decide, done, told = DECISIONS[verb]
        form = ReasonForm(request.POST if request.POST.get("confirmed") == "yes" else None)
        if form.is_valid():
            self._decide(request, queryset, decide, done, form.said)
            return None
        context = {
            "form": form,
            **self.admin_site.each_context(request),
            "title": f"{verb.capitalize()} {queryset.count()} ask(s)?",
            "asks": list(queryset.select_related(*ASK_PEOPLE, "team")),
            "verb": verb,
            "told": told,
            "action": action,
            "opts": self.model._meta,
            "back": reverse("admin:ask_mcp_ask_changelist"),
            "selected": request.POST.getlist(ACTION_CHECKBOX_NAME),
            "select_across": request.POST.get("select_across", "0"),
        }
        return TemplateResponse(request, "admin/ask_mcp/ask/decide_many.html", context)

    def _decide(
        self,
        request: HttpRequest,
        queryset: QuerySet[Ask],
        decide: Callable[..., bool],
        verb: str,
        reason: str = "",
    ) -> None:
        done: list[Ask] = []
        unreached = 0
        relay = runtime.relay()
        # Counted before deciding: a Pending filter no longer sees the asks once they are decided
        # (counted after, 16 cancelled from that filter read "-16 were no longer pending").
        selected = queryset.count()
        for ask in queryset.filter(status=Ask.Status.PENDING):
            try:
                if decide(ask=ask, user=request.user, relay=relay, reason=reason):
                    done.append(ask)
            except ChannelLayerUnavailable:
                unreached += 1
        skipped = selected - len(done) - unreached
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
