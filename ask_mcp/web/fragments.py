"""What the inbox shows of an ask (its template context, the fragments pushed live); it reads and decides nothing.

Pages (views) and the live socket (consumers) render the same partials from
``ask_mcp/asks.html``, so an ask looks the same however it reached the screen.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from django.http import HttpRequest
from django.template.loader import render_to_string
from django.utils import timezone
from django.utils.timesince import timesince

from ask_mcp.models import Ask, AskEvent, AskReach, Delivery
from ask_mcp.protocol.forms import FieldError
from ask_mcp.web.formfields import FormField, Submitted, build_fields, show_answer

if TYPE_CHECKING:
    from django.contrib.auth.models import User


ASKS: Final = "ask_mcp/asks.html"
"""The template holding every partial an ask is drawn with, on pages and pushed live."""


NO_AGENT_WAITING: Final = (
    "No agent is waiting right now: its connection dropped or its server restarted. You can "
    "still answer; the answer is kept until the agent asks again and collects it."
)
"""What a pending ask's card says when no call waits on it (README, Nothing lost)."""
AWAITS_COLLECTION: Final = (
    "Answered, waiting for the agent to collect it: it is kept until the agent's call takes it."
)
"""What a decided ask says until a call has taken its decision."""


@dataclass(slots=True)
class AskItem:
    """One ask with its form (or how it ended), as the templates draw it."""

    ask: Ask
    fields: list[FormField] = field(default_factory=list)
    sent: bool | None = None
    """True: this request's answer won; False: it came too late; None: nothing was submitted."""
    delivered: bool = False
    """With `sent`: the agent has the answer now (else it waits to be collected)."""
    history: list[AskEvent] = field(default_factory=list)
    """The ask's events, oldest first (its own page shows them)."""
    notice: str | None = None
    """Why a submitted reply could not be handled just now (it may be sent again)."""
    deliveries: list[Delivery] = field(default_factory=list)
    """The ask's notifications (mail, webhooks), oldest first (its own page shows them)."""

    @property
    def hex(self) -> str:
        return self.ask.id.hex

    @property
    def answerable(self) -> bool:
        return self.ask.awaits_browser_answer

    @property
    def agent_line(self) -> str:
        """Whether an agent waits for this ask or has its decision, in a person's words."""
        ask = self.ask
        if ask.route == Ask.Route.CLIENT:
            return ""
        if ask.is_pending:
            return "" if ask.agent_waiting else NO_AGENT_WAITING
        if ask.is_decided and ask.collected_at is None:
            return AWAITS_COLLECTION
        if ask.is_decided:
            return "The agent has this answer."
        return ""

    @property
    def answer_rows(self) -> list[tuple[str, str]]:
        if self.ask.status != Ask.Status.ACCEPTED or not isinstance(self.ask.answer, dict):
            return []
        return show_answer(self.ask.schema, self.ask.answer)

    @property
    def asked_ago(self) -> str:
        elapsed = timezone.now() - self.ask.created
        if elapsed.total_seconds() < 60:
            return "just now"
        return f"{timesince(self.ask.created)} ago"

    @property
    def asked_by(self) -> str:
        """Who put the question, as far as the server knows."""
        if self.ask.asked_by is not None:
            client = f" via {self.ask.client_name}" if self.ask.client_name else ""
            return f"{self.ask.asked_by.get_username()}{client}"
        return self.ask.principal or self.ask.client_name or "an MCP client"

    @property
    def reach(self) -> AskReach | None:
        """The ask's reminder and escalation, when read with it (with_people); else None."""
        cached = self.ask._state.fields_cache.get("reach")
        return cached if isinstance(cached, AskReach) else None

    @property
    def decided_by(self) -> str:
        ask = self.ask
        if ask.answered_by is not None:
            return ask.answered_by.get_username()
        if ask.route == Ask.Route.CLIENT:
            return ask.client_name or "the client"
        return "someone"


def item(
    ask: Ask,
    *,
    submitted: Submitted | None = None,
    errors: Sequence[FieldError] = (),
    history: list[AskEvent] | None = None,
) -> AskItem:
    fields = build_fields(
        ask.schema, id_prefix=f"f-{ask.id.hex}", submitted=submitted, errors=errors
    )
    return AskItem(ask, fields, history=history or [])


def socket_request(scope: dict[str, Any], user: User | AnonymousUser) -> HttpRequest:
    """A request standing in for the socket's page, so pushed forms carry the page's CSRF secret."""
    request = HttpRequest()
    request.user = user
    secret = scope.get("cookies", {}).get(settings.CSRF_COOKIE_NAME)
    if secret:
        request.META["CSRF_COOKIE"] = secret
    return request


def render_sync(request: HttpRequest, asks: Iterable[Ask] | None) -> str:
    """The live-status mark and, for an inbox, its list as it is now (sent when a socket connects)."""
    context = {"items": None if asks is None else [item(ask) for ask in asks]}
    return render_to_string(f"{ASKS}#inbox-sync", context, request)


def render_asked(request: HttpRequest, ask: Ask) -> str:
    return render_to_string(f"{ASKS}#inbox-asked", {"item": item(ask)}, request)


def render_gone(ask_hex: str) -> str:
    return render_to_string(f"{ASKS}#inbox-gone", {"hex": ask_hex})


def render_state(request: HttpRequest, ask: Ask, *, oob: bool) -> str:
    """An ask page's state block: the form while pending, how it ended otherwise."""
    return render_to_string(f"{ASKS}#ask-state", {"item": item(ask), "oob": oob}, request)


def render_waiting(request: HttpRequest, ask: Ask) -> str:
    """A pending ask's agent line alone (out of band), so its form and any draft stay put."""
    return render_to_string(f"{ASKS}#ask-waiting", {"item": item(ask), "oob": True}, request)
