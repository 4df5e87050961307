"""The inbox pages: the list, each ask's page, answering it (htmx or plain POST); deciding is records'.

A submitted answer runs down the layers once: the form is read here (formfields), the ask is
decided and its call woken by :func:`ask_mcp.records.decisions.ask_answer` through the process's
relay, and the page is drawn from the decision it returns.
"""

from __future__ import annotations

import datetime as dt
import uuid
from typing import TYPE_CHECKING, Final

from channels.db import database_sync_to_async
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import AnonymousUser, Group
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods
from django_htmx.middleware import HtmxDetails

from ask_mcp import runtime
from ask_mcp.models import Ask, AskEvent, Delivery, ReachPreference
from ask_mcp.protocol.forms import ACTIONS
from ask_mcp.records.decisions import ask_answer, ask_shown, asks_shown
from ask_mcp.records.held import held_by, hold, undo
from ask_mcp.web import cards
from ask_mcp.web.cards import ASKS, AskItem, item
from ask_mcp.web.consumers import LIVE_ASK_PATH, LIVE_INBOX_PATH
from ask_mcp.web.formfields import read_reply
from ask_mcp.web.listing import CLOSED, HISTORY_PAGE, INBOX_LIMIT, Filters, as_shown, inbox_asks
from ask_mcp.workers.relay import ChannelLayerUnavailable

if TYPE_CHECKING:
    from django.contrib.auth.models import User


MAX_KNOWN: Final = 200
"""Cards a poll asks about at most (an inbox draws INBOX_LIMIT; the rest are ignored)."""
NOT_DELIVERED: Final = (
    "Not sent: the server could not reach the process holding this question (its channel layer "
    "is unavailable). Nothing was recorded and the question still waits; send your reply again "
    "in a moment."
)
"""What a person is told when their reply could not reach the call (it may be sent again)."""
UNDO: Final = "undo"
"""The action that takes back a held decision (not an answer: the agent never sees it)."""


class HtmxHttpRequest(HttpRequest):
    htmx: HtmxDetails


async def _signed_in(request: HttpRequest) -> User | AnonymousUser:
    # Resolved once here, so templates reading request.user never query from the event loop.
    user = await request.auser()
    request.user = user
    return user


@login_required
@require_GET
async def inbox(request: HtmxHttpRequest) -> HttpResponse:
    user = await _signed_in(request)
    filters = Filters.read(request.GET)
    pending = inbox_asks(Ask.objects.inbox(user), filters)
    asks = [ask async for ask in as_shown(pending)[:INBOX_LIMIT]]
    total = len(asks) if len(asks) < INBOX_LIMIT else await pending.acount()
    await database_sync_to_async(asks_shown)(asks, user)
    query = filters.query_string()
    suffix = f"?{query}" if query else ""
    held = await held_by(user, asks)
    context = {
        "items": [item(ask, held=held.get(ask.id)) for ask in asks],
        "total": total,
        "filters": filters,
        "teams": await _team_names(user),
        "routes": [(Ask.Route.BROWSER, "browser inbox"), (Ask.Route.URL, "URL")],
        "live_url": LIVE_INBOX_PATH + suffix,
        "poll_url": reverse("ask_mcp:poll") + suffix,
        "away_until": await _away_until(user),
    }
    return render(request, "ask_mcp/inbox.html", context)


async def _away_until(user: User | AnonymousUser) -> dt.datetime | None:
    """When the signed-in person's Away ends, while it lasts (the inbox's Away form)."""
    if not user.is_authenticated:
        return None
    choice = await ReachPreference.objects.filter(user=user).afirst()
    until = choice.away_until if choice is not None else None
    return until if until is not None and until > timezone.now() else None


async def _team_names(user: User | AnonymousUser) -> list[str]:
    if not user.is_authenticated:
        return []
    teams = Group.objects.all() if user.is_staff else Group.objects.filter(user=user)
    return [name async for name in teams.order_by("name").values_list("name", flat=True)]


@login_required
@require_GET
async def poll(request: HtmxHttpRequest) -> HttpResponse:
    """The inbox as its socket would push it, for browsers whose WebSockets are blocked: the
    pending list, and how each ask the page still shows (`known`, hex ids) but no longer waits
    ended. With `list=0` only the latter (an ask's own page asks about its ask alone)."""
    user = await _signed_in(request)
    filters = Filters.read(request.GET)
    asks: list[Ask] | None = None
    total = 0
    if request.GET.get("list") != "0":
        pending = inbox_asks(Ask.objects.inbox(user), filters)
        asks = [ask async for ask in as_shown(pending)[:INBOX_LIMIT]]
        total = len(asks) if len(asks) < INBOX_LIMIT else await pending.acount()
        await database_sync_to_async(asks_shown)(asks, user)
    waiting = {ask.id for ask in asks or ()}
    gone = [each for each in _hex_ids(request.GET.get("known", "")) if each not in waiting]
    ended = [
        ask
        async for ask in as_shown(Ask.objects.visible_to(user).filter(pk__in=gone)).exclude(
            status=Ask.Status.PENDING
        )
    ]
    html = await database_sync_to_async(cards.render_sync)(
        request, asks, ended=ended, total=total, live=False
    )
    return HttpResponse(html)


def _hex_ids(text: str) -> list[uuid.UUID]:
    ids = []
    for part in text.split(",")[:MAX_KNOWN]:
        try:
            ids.append(uuid.UUID(part.strip()))
        except ValueError:
            continue  # a stale or mangled id names nothing
    return ids


@login_required
@require_GET
async def mine(request: HtmxHttpRequest) -> HttpResponse:
    """Everything the signed-in person decided, newest first: their own history, staff or not."""
    user = await _signed_in(request)
    filters = Filters.read(request.GET)
    answered = filters.apply(Ask.objects.filter(answered_by_id=user.pk)).order_by("-answered_at")
    paginator = Paginator(as_shown(answered), HISTORY_PAGE)
    page = await database_sync_to_async(paginator.get_page)(request.GET.get("page"))
    rows = await database_sync_to_async(list)(page.object_list)
    context = {
        "items": [AskItem(ask) for ask in rows],
        "page": page,
        "filters": filters,
        "query": filters.query_string(),
        "statuses": [(status, Ask.Status(status).label) for status in CLOSED],
    }
    return render(request, "ask_mcp/mine.html", context)


@login_required
@require_http_methods(["GET", "POST"])
async def ask_page(request: HtmxHttpRequest, ask_id: uuid.UUID) -> HttpResponse:
    user = await _signed_in(request)
    ask = await _ask(user, ask_id)
    if request.method == "POST":
        return await _answer(request, user, ask)
    await ask_shown(ask=ask, user=user)
    shown = item(ask, history=await _history(ask))
    shown.deliveries = [each async for each in Delivery.objects.filter(ask=ask)]
    return _page(request, shown)


async def _ask(user: User | AnonymousUser, ask_id: uuid.UUID) -> Ask:
    """The ask, if `user` may see it: 404 when there is none, 403 when it is someone else's."""
    try:
        ask = await as_shown(Ask.objects.all()).aget(pk=ask_id)
    except Ask.DoesNotExist:
        raise Http404("No such question.") from None
    # Checked on the row in hand: an EXISTS over visible_to cost more than the row itself.
    if not await ask.ais_visible_to(user):
        raise PermissionDenied("This question is addressed to someone else.")
    return ask


async def _history(ask: Ask) -> list[AskEvent]:
    return [event async for event in AskEvent.objects.filter(ask=ask).select_related("actor")]


def _page(request: HtmxHttpRequest, shown: AskItem, status: int = 200) -> HttpResponse:
    context = {"item": shown, "live_url": LIVE_ASK_PATH.format(ask_id=shown.ask.id)}
    return render(request, "ask_mcp/ask.html", context, status=status)


async def _answer(request: HtmxHttpRequest, user: User | AnonymousUser, ask: Ask) -> HttpResponse:
    """A submitted reply, in one pass down: the form read (formfields), the ask decided and its
    call woken (records, through the process's relay), the page drawn from what was decided."""
    action = request.POST.get("action")
    from_inbox = request.htmx.target == f"inbox-ask-{ask.id.hex}"
    if action == UNDO:
        return await _undo(request, user, ask)
    if action is None or action not in ACTIONS:
        return HttpResponseBadRequest("action must be one of: accept, decline, cancel, undo")
    if not ask.awaits_browser_answer:
        return _after(request, AskItem(ask, sent=False), from_inbox)
    reply, errors = read_reply(ask.schema, action, request.POST)
    if errors:
        return _invalid(request, item(ask, submitted=request.POST, errors=errors), from_inbox)
    # A refusal, or a one-tap answer from a folded card, waits UNDO_SECONDS with Undo on the card.
    undoable = action != "accept" or request.POST.get("quick") == "1"
    if from_inbox and undoable and user.is_authenticated:
        held = await hold(ask=ask, reply=reply, user=user, relay=runtime.relay())
        if held is not None:
            return render(request, f"{ASKS}#ask-card", {"item": item(ask, held=held)})
    try:
        answered = await ask_answer(ask=ask, reply=reply, user=user, relay=runtime.relay())
    except ChannelLayerUnavailable:
        return _not_delivered(request, ask, from_inbox)
    shown = AskItem(answered.ask, sent=answered.won, delivered=answered.delivered)
    return _after(request, shown, from_inbox)


async def _undo(request: HtmxHttpRequest, user: User | AnonymousUser, ask: Ask) -> HttpResponse:
    """Undo: the held decision is forgotten and the card is the question again; when it was
    already committed (or someone answered first), how the ask ended."""
    if await undo(ask=ask, user=user):
        return render(request, f"{ASKS}#ask-card", {"item": item(ask)})
    ended = await as_shown(Ask.objects.all()).aget(pk=ask.pk)
    if ended.awaits_browser_answer:  # nothing was held: the question, as it waits
        return render(request, f"{ASKS}#ask-card", {"item": item(ended)})
    mine = ended.answered_by_id is not None and ended.answered_by_id == user.pk
    shown = AskItem(ended, sent=mine, delivered=mine and ended.collected_at is not None)
    return render(request, f"{ASKS}#inbox-outcome", {"item": shown})


def _invalid(request: HtmxHttpRequest, shown: AskItem, from_inbox: bool) -> HttpResponse:
    """The form again, with what the person filled in and why it does not fit."""
    if from_inbox:  # the card again, unfolded, with the errors tied to their inputs
        return render(request, f"{ASKS}#ask-card", {"item": shown})
    if request.htmx:
        return render(request, f"{ASKS}#page-invalid", {"item": shown})
    return _page(request, shown)


def _not_delivered(request: HtmxHttpRequest, ask: Ask, from_inbox: bool) -> HttpResponse:
    """The reply could not reach its call: say so, and keep what the person filled in."""
    shown = item(ask, submitted=request.POST)
    shown.notice = NOT_DELIVERED
    shown.opened = True
    if from_inbox:  # the card, with its inputs and the reason, stays in the inbox
        return render(request, f"{ASKS}#ask-card", {"item": shown})
    if request.htmx:  # htmx swaps only 2xx responses
        return render(request, f"{ASKS}#page-answered", {"item": shown})
    return _page(request, shown, status=503)


def _after(request: HtmxHttpRequest, shown: AskItem, from_inbox: bool) -> HttpResponse:
    """The response to a submit that was decided (won, or too late)."""
    if from_inbox:  # the card turns into its outcome, in place
        return render(request, f"{ASKS}#inbox-outcome", {"item": shown})
    if request.htmx:
        return render(request, f"{ASKS}#page-answered", {"item": shown})
    return _page(request, shown)
