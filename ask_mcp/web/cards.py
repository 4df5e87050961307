"""The inbox's cards: what an ask shows (its template context, and the cards pushed live); it decides nothing.

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
from django.middleware.csrf import get_token
from django.template.loader import render_to_string
from django.utils import timezone
from django.utils.safestring import SafeString
from django.utils.timesince import timesince

from ask_mcp.models import Ask, AskEvent, AskReach, Delivery, HeldDecision
from ask_mcp.protocol.forms import FieldError
from ask_mcp.reach.plan import nobody_else_words
from ask_mcp.web.formfields import FormField, Submitted, build_fields, show_answer
from ask_mcp.web.markdown import plain_title, render_markdown
from ask_mcp.web.naming import (
    agent,
    answered_in,
    asked_by,
    person,
    route_words,
    team_name,
)

if TYPE_CHECKING:
    from django.contrib.auth.models import User


ASKS: Final = "ask_mcp/asks.html"
"""The template holding every partial an ask is drawn with, on pages and pushed live."""


QUICK_OPTIONS: Final = 4
"""Choices a folded card shows as buttons at most (four fit one row on a 390 px phone)."""
NO_AGENT_WAITING: Final = (
    "No agent is waiting right now: its connection dropped or its server restarted. You can "
    "still answer; the answer is kept until the agent asks again and collects it."
)
"""What a pending ask's card says when no call waits on it (docs/agents/nothing-lost.md)."""
TASK_POLLING: Final = (
    "The agent asked this as a task: it checks back for the answer rather than holding a "
    "connection, and your answer reaches it at its next check."
)
"""What a pending task's card says: no call waits on it, and none needs to (docs/agents/tasks.md)."""
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
    status_line: str = ""
    """One line on the ask's state shown above its form (the card's single status slot)."""
    opened: bool = False
    """Draw the card unfolded (a re-shown form with errors, a failed send)."""
    held: HeldDecision | None = None
    """The viewer's decision on this ask, held for UNDO_SECONDS (the card offers Undo)."""

    @property
    def quick(self) -> FormField | None:
        """The one field a folded card answers in one tap: a yes/no, or one choice of up to
        QUICK_OPTIONS options, alone in its form; None for any other form."""
        if len(self.fields) != 1 or not self.ask.awaits_browser_answer:
            return None
        only = self.fields[0]
        if only.widget == "yesno" or (only.widget == "radio" and only.required):
            return only if 0 < len(only.options) <= QUICK_OPTIONS else None
        return None

    @property
    def held_words(self) -> str:
        """The held decision in words: "You declined.", "You answered: Yes."."""
        if self.held is None:
            return ""
        reply = self.held.reply
        action = reply.get("action")
        if action == "decline":
            return "You declined this question."
        if action == "cancel":
            return "You stopped this question (the agent is told it was cancelled)."
        content = reply.get("content") or {}
        shown = show_answer(self.ask.schema, content) if isinstance(content, dict) else []
        said = "; ".join(value for _, value in shown)
        return f"You answered: {said}." if said else "You answered."

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
        if ask.is_pending and ask.in_task:
            return TASK_POLLING
        if ask.is_pending:
            return "" if ask.agent_waiting else NO_AGENT_WAITING
        if ask.is_decided and ask.collected_at is None:
            return AWAITS_COLLECTION
        if ask.is_decided:
            return "The agent has this answer."
        return ""

    @property
    def route_line(self) -> str:
        """Where this ask is answered: the inbox (only, for a people-only token) or the client."""
        return route_words(self.ask.route, people_only=self.ask.people_only)

    @property
    def answered_in(self) -> str:
        """Which route answered it ("in the inbox", "in the client's own form"); "" if none did."""
        return answered_in(self.ask)

    @property
    def history_lines(self) -> list[tuple[AskEvent, str]]:
        """The history's events, each with where it happened in words ("in the inbox")."""
        lines = []
        for event in self.history:
            where = route_words(event.route) if event.route else ""
            if where and event.kind == AskEvent.Kind.CREATED:
                where = f"to be answered {where}"  # created by the agent, not in the inbox
            lines.append((event, where))
        return lines

    @property
    def answer_rows(self) -> list[tuple[str, str]]:
        if self.ask.status != Ask.Status.ACCEPTED or not isinstance(self.ask.answer, dict):
            return []
        return show_answer(self.ask.schema, self.ask.answer)

    @property
    def title(self) -> str:
        """The message's first line as plain words (no Markdown marks), for headings and lists."""
        return plain_title(str(self.ask))

    @property
    def message_html(self) -> SafeString:
        """The message as the agent wrote it: Markdown, rendered and cleaned (web.markdown)."""
        return render_markdown(self.ask.message)

    @property
    def asker_rows(self) -> list[tuple[str, str]]:
        """Who asked, in words people use: the agent (client and version), the person it works
        for, the team, the token it used and its session."""
        ask = self.ask
        rows = []
        if ask.client_name:
            rows.append(("agent", agent(ask)))
        if ask.asked_by is not None:
            rows.append(("for", person(ask.asked_by)))
        elif ask.principal:
            rows.append(("as", ask.principal))
        if team := team_name(ask):
            rows.append(("team", team))
        if ask.credential:
            rows.append(("token", ask.credential))
        if ask.session:
            rows.append(("session", ask.session[:8]))
        return rows

    @property
    def ended_reason(self) -> str:
        """Why the ask stopped waiting, in one sentence (empty while it waits)."""
        ask = self.ask
        when = timezone.localtime(ask.answered_at).strftime("%H:%M:%S") if ask.answered_at else ""
        at = f" at {when}" if when else ""
        where = f" {self.answered_in}" if self.answered_in else ""
        if ask.status == Ask.Status.ACCEPTED:
            return f"Answered by {self.decided_by}{where}{at}."
        if ask.status == Ask.Status.DECLINED:
            return f"Declined by {self.decided_by}{where}{at}."
        # Staff's reason, as the model was told it (the template escapes it, as all text).
        said = f" Reason: {ask.reason}" if ask.reason else ""
        if ask.status == Ask.Status.CANCELLED:
            return f"Cancelled by {self.decided_by}{where}{at}.{said}"
        if ask.status == Ask.Status.EXPIRED:
            return f"Expired: nobody answered in time.{said}"
        if ask.status == Ask.Status.WITHDRAWN:
            if ask.reason:  # the server's own (a revoked token): the agent did not stop
                return f"Withdrawn.{said}"
            return "Withdrawn: the agent stopped waiting for an answer."
        return ""

    @property
    def seen_by(self) -> str:
        """Who has seen the ask, for its card: "carol 2 minutes ago, dave just now"; empty when
        nobody has, or when the looks were not read with the ask (listing.as_shown)."""
        looks = getattr(self.ask, "seen_events", None) or []
        said = []
        for look in looks:
            who = look.actor.get_username() if look.actor is not None else "someone"
            elapsed = timezone.now() - look.at
            ago = "just now" if elapsed.total_seconds() < 60 else f"{timesince(look.at)} ago"
            said.append(f"{who} {ago}")
        return ", ".join(said)

    @property
    def reached(self) -> str:
        """Which devices a push of the ask got to, for its card: "Erin's phone (erin) 1 minute
        ago"; each device once, at its latest; empty when none did, or when the acknowledgements
        were not read with the ask (listing.as_shown)."""
        latest: dict[tuple[str, str], Any] = {}
        for event in getattr(self.ask, "reached_events", None) or []:  # oldest first
            who = person(event.actor) if event.actor is not None else "someone"
            latest[(event.actor_label or "a device", who)] = event.at
        said = []
        for (device, who), at in latest.items():
            elapsed = timezone.now() - at
            ago = "just now" if elapsed.total_seconds() < 60 else f"{timesince(at)} ago"
            said.append(f"{device} ({who}) {ago}")
        return ", ".join(said)

    @property
    def nobody_else(self) -> str:
        """While the ask waits on a person who is away and its team has no escalation: that
        nobody else is offered it (plan.nobody_else_words); empty otherwise, or when it was not
        read with the ask (listing.as_shown)."""
        ask = self.ask
        until = getattr(ask, "away_until", None)
        if not ask.is_pending or until is None or until <= timezone.now():
            return ""
        if getattr(ask, "escalates", True) or ask.asked_by is None:
            return ""
        return nobody_else_words(ask.asked_by.get_username(), until, team_name(ask) or None)

    @property
    def asked_ago(self) -> str:
        elapsed = timezone.now() - self.ask.created
        if elapsed.total_seconds() < 60:
            return "just now"
        return f"{timesince(self.ask.created)} ago"

    @property
    def asked_by(self) -> str:
        """Who put the question, in one line: "claude-code for Bea Jones (team ops)"."""
        return asked_by(self.ask)

    @property
    def reach(self) -> AskReach | None:
        """The ask's reminder and escalation, when read with it (with_people); else None."""
        cached = self.ask._state.fields_cache.get("reach")
        return cached if isinstance(cached, AskReach) else None

    @property
    def decided_by(self) -> str:
        ask = self.ask
        if ask.answered_by is not None:
            return person(ask.answered_by)
        if ask.route == Ask.Route.CLIENT:
            return ask.client_name or "the client"
        return "someone"


def item(
    ask: Ask,
    *,
    submitted: Submitted | None = None,
    errors: Sequence[FieldError] = (),
    history: list[AskEvent] | None = None,
    held: HeldDecision | None = None,
) -> AskItem:
    fields = build_fields(
        ask.schema, id_prefix=f"f-{ask.id.hex}", submitted=submitted, errors=errors
    )
    return AskItem(ask, fields, history=history or [], opened=bool(errors), held=held)


def socket_request(scope: dict[str, Any], user: User | AnonymousUser) -> HttpRequest:
    """A request standing in for the socket's page, so pushed forms carry the page's CSRF secret."""
    request = HttpRequest()
    request.user = user
    secret = scope.get("cookies", {}).get(settings.CSRF_COOKIE_NAME)
    if secret:
        request.META["CSRF_COOKIE"] = secret
    return request


def render_sync(
    request: HttpRequest,
    asks: Iterable[Ask] | None,
    *,
    ended: Iterable[Ask] = (),
    total: int | None = None,
    live: bool = True,
) -> str:
    """The live-status mark and, for an inbox, its list as it is now (sent when a socket connects,
    and on every poll): inbox.js merges the cards into the page, leaving open ones untouched.
    `ended` are asks the page still shows that stopped waiting (a poll names them)."""
    items = None if asks is None else [item(ask) for ask in asks]
    context = {
        "items": items,
        "ended_items": [item(ask) for ask in ended],
        "total": total if total is not None else len(items or ()),
        "live": live,
    }
    return render_to_string(f"{ASKS}#inbox-sync", context, request)


CSRF_SLOT: Final = "__askmcp_csrf_token__"
"""Where a shared card's CSRF token goes; each socket puts its own page's token there."""
SHARED_CARDS: Final = 64
"""Pushed cards kept rendered per process: one new ask goes to every open inbox at once."""
_shared: dict[str, str] = {}


def shared_card(request: HttpRequest, ask: Ask) -> str:
    """A new ask's card with a CSRF slot, rendered once per process for every socket it is pushed to
    (at 100 open inboxes, rendering it per socket put the last arrival seconds behind the
    first; `make bench`, inbox suite)."""
    key = f"{ask.id.hex}:{ask.status}"
    html = _shared.get(key)
    if html is None:
        context = {"item": item(ask), "csrf_token": CSRF_SLOT}
        html = render_to_string(f"{ASKS}#inbox-asked", context, request)
        if len(_shared) >= SHARED_CARDS:
            _shared.pop(next(iter(_shared)))
        _shared[key] = html
    return html


def with_csrf(html: str, request: HttpRequest) -> str:
    """A shared card with this socket's page's CSRF token in its slot: the only difference
    between the bytes two sockets of one viewer get."""
    return html.replace(CSRF_SLOT, get_token(request)) if html else html


def render_ended(request: HttpRequest, ask: Ask, *, page: bool = False) -> str:
    """How an ask ended, into its card's (or page's) status slot only: the form and whatever was
    typed in it stay; inbox.js greys the form and keeps the draft to copy."""
    template = "page-ended" if page else "inbox-ended"
    return render_to_string(f"{ASKS}#{template}", {"item": item(ask)}, request)


def render_gone(ask_hex: str) -> str:
    """An ask the socket's person may no longer see (or that was deleted): its card leaves."""
    return render_to_string(f"{ASKS}#inbox-gone", {"hex": ask_hex})


def render_waiting(request: HttpRequest, ask: Ask) -> str:
    """A pending ask's agent line alone (out of band), so its form and any draft stay put."""
    return render_to_string(f"{ASKS}#ask-waiting", {"item": item(ask), "oob": True}, request)
