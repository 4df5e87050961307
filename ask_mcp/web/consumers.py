"""The live inbox socket: htmx fragments pushed as asks appear and end; it decides nothing about them.

Every socket joins one channel-layer group; each event names an ask, and the socket renders
what its signed-in person may see of it. On connect the inbox gets its whole list again, so
an ask that appeared or ended while the page loaded (or while the socket was down) is not
missed; inbox.js merges it, so cards already on screen keep what is typed in them. An ask that
ends rewrites only its status line (why it ended): the form stays, greyed, with the draft.
An inbox socket lists what its page's filters (its query string) let through. Each event is
read once per process and viewer (person and filters), however many of their sockets are open:
a new ask is checked against the viewer's visibility and filters, noted shown and drawn once
(each socket only puts its own CSRF token into the same bytes), and an ask that ended or
changed is read and drawn once.

An inbox also says which of its cards are unfolded, and an ask's page that it is open
(ask_mcp.web.presence): each socket passes that on to the others, and an inbox draws on its
cards who else is answering them.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import parse_qsl

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.contrib.auth.models import AnonymousUser

from ask_mcp.models import Ask
from ask_mcp.records.decisions import asks_shown
from ask_mcp.records.events import ASKED, ENDED, INBOX_GROUP
from ask_mcp.web import browsers, cards, presence
from ask_mcp.web.listing import INBOX_LIMIT, Filters, as_shown, inbox_asks
from ask_mcp.web.naming import person

if TYPE_CHECKING:
    from django.contrib.auth.models import User


LIVE_INBOX_PATH: Final = "/ws/inbox/"
"""The inbox's live socket."""
LIVE_ASK_PATH: Final = "/ws/asks/{ask_id}/"
"""One ask page's live socket."""
CLOSE_UNAUTHORISED: Final = 4403
"""The close code for a socket whose person is not signed in or may not see the ask."""
ARRIVALS_KEPT: Final = 256
"""Fan-outs kept per process, one per announcement and viewer: an event reaches every socket
within a second, so a few hundred covers many viewers and asks at once; older ones are dropped
first (a late socket then reads the ask itself, as every socket once did)."""

ArrivalKey = tuple[asyncio.AbstractEventLoop, str, str, Any, Filters]
"""One fan-out: the loop the sockets run on, the event's kind and id, the viewer's user id and
filters."""
_arrivals: dict[ArrivalKey, asyncio.Future[Any]] = {}


def arrival[T](key: ArrivalKey, load: Callable[[], Coroutine[Any, Any, T]]) -> asyncio.Future[T]:
    """The one reading of an event for every socket of one viewer: started by the first socket
    the event reaches, awaited by the rest (at 100 sockets, a read each took the p99 from 31 ms
    to 5.4 s: Channels runs every socket's database work on one thread; `make bench`, inbox)."""
    found = _arrivals.get(key)
    if found is None:
        found = asyncio.ensure_future(load())
        if len(_arrivals) >= ARRIVALS_KEPT:
            _arrivals.pop(next(iter(_arrivals)))
        _arrivals[key] = found
        found.add_done_callback(lambda done: _forget_failed(key, done))
    return found


def _forget_failed(key: ArrivalKey, done: asyncio.Future[Any]) -> None:
    """A read that failed (the database away) is not kept: the next event reads again."""
    if (done.cancelled() or done.exception() is not None) and _arrivals.get(key) is done:
        del _arrivals[key]


class InboxConsumer(AsyncWebsocketConsumer):  # type: ignore[misc]  # channels is untyped
    """One open inbox (no `ask_id`) or ask page (`ask_id` in the route)."""

    user: User | AnonymousUser
    ask_id: uuid.UUID | None
    shown: set[str]
    filters: Filters
    session_group: str | None
    opened: set[str]
    """This socket's cards that are unfolded (told to the others)."""
    answering: dict[str, dict[str, tuple[str, float]]]
    """Who else is answering, by ask: their socket, their name and when it lapses (time.time)."""
    lapses: list[asyncio.TimerHandle]
    drawn: dict[str, str]
    """The presence line last sent for each card."""

    async def connect(self) -> None:
        self.opened, self.answering, self.lapses, self.drawn = set(), {}, [], {}
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.close(code=CLOSE_UNAUTHORISED)
            return
        self.user = user
        self.ask_id = self.scope["url_route"]["kwargs"].get("ask_id")
        self.shown = set()
        query = self.scope.get("query_string", b"").decode("latin-1")
        self.filters = Filters.read(dict(parse_qsl(query)))
        if self.ask_id is not None and not await database_sync_to_async(self._visible)(self.ask_id):
            await self.close(code=CLOSE_UNAUTHORISED)
            return
        await self.channel_layer.group_add(INBOX_GROUP, self.channel_name)
        key = getattr(self.scope.get("session"), "session_key", None)
        self.session_group = browsers.session_group(key) if key else None
        if self.session_group is not None:  # closed when its browser is signed out elsewhere
            await self.channel_layer.group_add(self.session_group, self.channel_name)
        await self.accept()
        await self.send(text_data=await database_sync_to_async(self._list_now)())
        if self.ask_id is None:  # who is answering already: the others say it to this socket
            reply = {"type": "inbox.presence_asked", "channel": self.channel_name}
            await self.channel_layer.group_send(INBOX_GROUP, reply)

    async def disconnect(self, code: int) -> None:
        for handle in getattr(self, "lapses", []):
            handle.cancel()
        for ask_hex in list(getattr(self, "opened", ())):  # the page left: nobody answers here
            await self._say_presence(ask_hex, opened=False)
        await self.channel_layer.group_discard(INBOX_GROUP, self.channel_name)
        if getattr(self, "session_group", None) is not None:
            await self.channel_layer.group_discard(self.session_group, self.channel_name)

    async def session_ended(self, event: dict[str, Any]) -> None:
        """Its browser was signed out from another (ask_mcp.web.browsers.end_others)."""
        await self.close(code=CLOSE_UNAUTHORISED)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        """An inbox says one of its cards was unfolded or folded; anything else is ignored."""
        said = presence.read(text_data)
        if said is None:
            return
        mine = self.ask_id.hex if self.ask_id is not None else None
        if said[0] != mine and (mine is not None or said[0] not in self.shown):
            return  # only for asks drawn for this person (checked on connect for a page)
        ask_hex, what = said
        if what == "open":
            self.opened.add(ask_hex)
        else:
            self.opened.discard(ask_hex)
        await self._say_presence(ask_hex, opened=what == "open")

    async def _say_presence(self, ask_hex: str, *, opened: bool, to: str | None = None) -> None:
        event = {
            "type": "inbox.presence",
            "ask": ask_hex,
            "user": self.user.pk,
            "name": person(self.user) if self.user.is_authenticated else "someone",
            "channel": self.channel_name,
            "until": time.time() + presence.PRESENCE_SECONDS if opened else 0.0,
        }
        if to is None:
            await self.channel_layer.group_send(INBOX_GROUP, event)
        else:
            await self.channel_layer.send(to, event)

    async def inbox_presence_asked(self, event: dict[str, Any]) -> None:
        """A new inbox socket asks who is answering: say this socket's open cards to it."""
        if event["channel"] != self.channel_name:
            for ask_hex in list(self.opened):
                await self._say_presence(ask_hex, opened=True, to=event["channel"])

    async def inbox_presence(self, event: dict[str, Any]) -> None:
        """Someone unfolded or folded a card: redraw who else is answering it here (never the
        person themself, whose own other tabs say nothing of them either)."""
        ask_hex = event["ask"]
        if self.ask_id is not None or ask_hex not in self.shown or event["user"] == self.user.pk:
            return
        here = self.answering.setdefault(ask_hex, {})
        if event["until"] > time.time():
            here[event["channel"]] = (event["name"], event["until"])
            loop = asyncio.get_running_loop()
            # One timer per heartbeat heard, dropped once it ran; all cancelled when this closes.
            self.lapses = [handle for handle in self.lapses if handle.when() > loop.time()]
            redraw = lambda: asyncio.ensure_future(self._draw_presence(ask_hex))  # noqa: E731
            self.lapses.append(loop.call_later(presence.PRESENCE_SECONDS + 0.5, redraw))
        else:
            here.pop(event["channel"], None)
        await self._draw_presence(ask_hex)

    async def _draw_presence(self, ask_hex: str) -> None:
        """Send the card's "is answering" line, without those whose presence lapsed."""
        now = time.time()
        here = {k: v for k, v in self.answering.get(ask_hex, {}).items() if v[1] > now}
        self.answering[ask_hex] = here
        said = presence.fragment(ask_hex, [name for name, _ in here.values()])
        # A heartbeat that changes nothing sends nothing (one each 20 s per open card and viewer).
        if ask_hex in self.shown and self.drawn.get(ask_hex) != said:
            self.drawn[ask_hex] = said
            await self.send(text_data=said)

    async def inbox_asked(self, event: dict[str, Any]) -> None:
        ask_hex = event["ask"]
        if self.ask_id is not None or ask_hex in self.shown:
            return
        # Per announcement, not per ask: an escalation announces the ask again to new people.
        once = event.get("event") or ask_hex
        key = (asyncio.get_running_loop(), ASKED, once, self.user.pk, self.filters)
        shared = arrival(key, lambda: database_sync_to_async(self._asked)(ask_hex))
        # Shielded: this socket closing must not cancel the read its viewer's other sockets await.
        html = await asyncio.shield(shared)
        if html:
            self.shown.add(ask_hex)
            self.drawn.pop(ask_hex, None)  # a new card: its presence line is drawn afresh
            request = cards.socket_request(self.scope, self.user)
            await self.send(text_data=cards.with_csrf(html, request))

    async def inbox_ended(self, event: dict[str, Any]) -> None:
        """An ask stopped waiting, or changed how it waits (no agent waits on it any more, one
        attached, its answer was collected): still pending, only its agent line is redrawn, so
        a draft being typed into its form stays as it is."""
        ask_hex = event["ask"]
        if self.ask_id is not None and ask_hex != self.ask_id.hex:
            return
        if self.ask_id is None and ask_hex not in self.shown:
            return
        html: str
        if self.ask_id is None and "event" in event:  # an inbox: one reading per viewer
            key = (asyncio.get_running_loop(), ENDED, event["event"], self.user.pk, self.filters)
            shared = arrival(key, lambda: database_sync_to_async(self._inbox_change)(ask_hex))
            # Shielded, as a new ask's: this socket closing must not cancel the others' read.
            pending, html = await asyncio.shield(shared)
            if not pending:
                self.shown.discard(ask_hex)
            if html:
                await self.send(text_data=html)
            elif not pending:
                self.shown.add(ask_hex)  # it waits again (a send that could not be delivered)
            return
        pending, html = await database_sync_to_async(self._changed)(ask_hex)
        if pending:
            await self.send(text_data=html)
        elif self.ask_id is not None:
            if html:
                await self.send(text_data=html)
        else:
            self.shown.discard(ask_hex)
            html = await database_sync_to_async(self._ended)(ask_hex)
            if html:
                await self.send(text_data=html)
            else:
                self.shown.add(ask_hex)  # it waits again (a send that could not be delivered)

    # ------------------------------------------------------------------ rendering (database thread)

    def _visible(self, ask_id: uuid.UUID) -> bool:
        return Ask.objects.visible_to(self.user).filter(pk=ask_id).exists()

    def _list_now(self) -> str:
        request = cards.socket_request(self.scope, self.user)
        if self.ask_id is not None:
            ask = as_shown(Ask.objects.all()).filter(pk=self.ask_id).first()
            synced = cards.render_sync(request, None)
            if ask is None or ask.is_pending:
                return synced  # leave a form being filled alone
            return synced + cards.render_ended(request, ask, page=True)
        pending = inbox_asks(Ask.objects.inbox(self.user), self.filters)
        asks = list(as_shown(pending)[:INBOX_LIMIT])
        total = len(asks) if len(asks) < INBOX_LIMIT else pending.count()
        self.shown = {ask.id.hex for ask in asks}
        asks_shown(asks, self.user)
        return cards.render_sync(request, asks, total=total)

    def _asked(self, ask_hex: str) -> str:
        """The new ask's card with its CSRF slot, if this viewer may see it and their filters let
        it through ("" if not); noted shown to them once, for all their sockets."""
        listed = self.filters.apply(Ask.objects.inbox(self.user))
        ask = as_shown(listed).filter(pk=uuid.UUID(ask_hex)).first()
        if ask is None:
            return ""
        asks_shown([ask], self.user)
        return cards.shared_card(cards.socket_request(self.scope, self.user), ask)

    def _changed(self, ask_hex: str) -> tuple[bool, str]:
        """Whether the ask still waits, and what to send: its agent line, or (on its own page)
        its closed state."""
        ask = Ask.objects.with_people().filter(pk=uuid.UUID(ask_hex)).first()
        if ask is None:
            return False, ""
        request = cards.socket_request(self.scope, self.user)
        if ask.is_pending:
            return True, cards.render_waiting(request, ask)
        return False, self._state() if self.ask_id is not None else ""

    def _inbox_change(self, ask_hex: str) -> tuple[bool, str]:
        """For an inbox: whether the ask still waits, and its agent line or how it ended ("" when
        it ended and then waits again, or nothing is to be drawn)."""
        pending, html = self._changed(ask_hex)
        return (True, html) if pending else (False, self._ended(ask_hex))

    def _state(self) -> str:
        if self.ask_id is None:
            return ""
        ask = as_shown(Ask.objects.all()).filter(pk=self.ask_id).first()
        if ask is None:
            return ""  # deleted in the admin meanwhile
        request = cards.socket_request(self.scope, self.user)
        return cards.render_ended(request, ask, page=True)

    def _ended(self, ask_hex: str) -> str:
        ask = as_shown(Ask.objects.all()).filter(pk=uuid.UUID(ask_hex)).first()
        if ask is None:
            return cards.render_gone(ask_hex)  # deleted in the admin meanwhile
        if ask.is_pending:
            return ""
        return cards.render_ended(cards.socket_request(self.scope, self.user), ask)
