"""Initialize-era sessions any worker can serve, their calls, streams and subscriptions; knows no HTTP.

Kept in the database so any worker can serve them, cached per process, with their in-flight
calls, idle expiry, and the routing of a client's responses and cancellations (which may land on
another worker) through the channel layer. One principal holds at most SESSIONS_PER_PRINCIPAL
of them on every worker together: opening one more ends its session idle longest.

Resource subscriptions are announced to every worker, so whichever one holds a session's
standalone GET stream delivers its notifications/resources/updated; they live in worker
memory (a worker started later does not know earlier subscriptions).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from ask_mcp.models import LegacySessionRecord, revoked_tokens, storable
from ask_mcp.protocol.jsonrpc import RequestId, Response, notification_message
from ask_mcp.server.eras.legacy import LegacySession
from ask_mcp.server.errors import CLIENT_CANCELLED
from ask_mcp.server.identity import TOKEN, Credential
from ask_mcp.workers.loops import alive_here, start_in_loop
from ask_mcp.workers.relay import ChannelRelay

logger = logging.getLogger("ask_mcp.workers.sessions")

RESOURCES_GROUP: Final = "askmcp.resources"
"""Every worker serving sessions: resource subscriptions and updates are announced here."""
MAX_CACHED_SESSIONS: Final = 1000
"""Sessions a worker keeps in memory; beyond it the least recently seen idle one is let go
(its row stays: the next request reloads it). Clients that never send DELETE otherwise kept one
entry each for SESSION_IDLE_SECONDS, so memory grew with churn; 1,000 sessions of at most
SESSION_STORE_BYTES each stay under 20 MB."""


def _group(session_id: str) -> str:
    return f"askmcp.session.{session_id}"


class SessionStream:
    """One standalone GET stream of a session: the messages to write on it, in order."""

    __slots__ = ("_queue",)

    def __init__(self) -> None:
        self._queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()

    def push(self, message: dict[str, Any]) -> None:
        self._queue.put_nowait(message)

    def end(self) -> None:
        self._queue.put_nowait(None)

    async def next(self) -> dict[str, Any] | None:
        """The next message to write, or None once the session has ended."""
        return await self._queue.get()


class _Cached:
    __slots__ = ("last_seen", "session", "touched")

    def __init__(self, session: LegacySession, now: float) -> None:
        self.session = session
        self.last_seen = now
        self.touched = now


class LegacySessions:
    """Every initialize-era session this process serves, and what is in flight for each."""

    def __init__(
        self, relay: ChannelRelay, *, idle_seconds: float, per_principal: int | None = None
    ) -> None:
        self.relay = relay
        self.idle_seconds = idle_seconds
        self.per_principal = per_principal
        """Sessions one principal holds on every worker together (None: no cap); see :meth:`create`."""
        self._cache: dict[str, _Cached] = {}
        """Least recently seen first (a hit moves its session to the end)."""
        self._inflight: dict[str, dict[RequestId, asyncio.Task[Any]]] = {}
        self._responses: dict[str, tuple[str, asyncio.Future[dict[str, Any]]]] = {}
        self._streams: dict[str, set[SessionStream]] = {}
        self._subscribers: dict[str, set[str]] = {}
        self._announced: asyncio.AbstractEventLoop | None = None
        self._sweeper: asyncio.Task[None] | None = None
        relay.add_handler("legacy.response", self._on_response)
        relay.add_handler("legacy.cancel", self._on_cancel)
        relay.add_handler("legacy.end", self._on_end)
        relay.add_handler("legacy.revoked", self._on_revoked)
        relay.add_handler("legacy.level", self._on_level)
        relay.add_handler("legacy.subscription", self._on_subscription)
        relay.add_handler("legacy.updated", self._on_updated)
        relay.add_handler("legacy.forget", self._on_forget)

    # ------------------------------------------------------------------ lifecycle

    async def create(
        self,
        protocol_version: str,
        capabilities: dict[str, Any],
        client_info: dict[str, Any] | None,
        principal: str | None,
        credential: Credential | None = None,
    ) -> LegacySession:
        """Open a session for `principal`, remembering the `credential` it was opened with
        (revoking that credential ends it: :func:`end_sessions_of_revoked`)."""
        session = LegacySession(
            id=secrets.token_urlsafe(32),
            protocol_version=protocol_version,
            capabilities=capabilities,
            client_info=client_info,
            principal=principal,
        )
        if principal and self.per_principal is not None:
            await self._make_room(principal, self.per_principal)
        await LegacySessionRecord.objects.acreate(
            id=session.id,
            protocol_version=protocol_version,
            capabilities=storable(capabilities),
            client_info=storable(client_info),
            principal=principal or "",
            credential_kind=credential.kind if credential is not None else "",
            credential_id=credential.id if credential is not None else "",
            last_seen_at=datetime.now(UTC),
        )
        await self._cache_session(session)
        await self._hear_resources()
        return session

    async def get(self, session_id: str) -> LegacySession | None:
        """The live session with this id, or None when it never existed, ended or went idle."""
        now = time.monotonic()
        cached = self._cache.get(session_id)
        if cached is not None:
            cached.last_seen = now
            self._cache[session_id] = self._cache.pop(session_id)  # now the most recent
            alive = True
            if now - cached.touched > self.idle_seconds / 10:
                cached.touched = now
                alive = await self._touch(session_id)
            elif self.relay.spans_processes:
                # Another worker may have ended it a moment ago: its broadcast can arrive after
                # this request, and an ended session answers 404 everywhere from the end on.
                alive = await LegacySessionRecord.objects.filter(
                    id=session_id, ended_at__isnull=True
                ).aexists()
            if not alive:
                self._end_here(session_id)  # ended elsewhere, before (or without) the broadcast
                return None
            return cached.session
        cutoff = datetime.now(UTC) - timedelta(seconds=self.idle_seconds)
        record = await LegacySessionRecord.objects.filter(
            id=session_id, ended_at__isnull=True, last_seen_at__gte=cutoff
        ).afirst()
        if record is None:
            return None
        session = LegacySession(
            id=record.id,
            protocol_version=record.protocol_version,
            capabilities=record.capabilities,
            client_info=record.client_info,
            principal=record.principal or None,
            log_level=record.log_level or None,
        )
        await self._cache_session(session)
        await self._touch(session_id)
        await self._hear_resources()
        return session

    async def _make_room(self, principal: str, cap: int) -> None:
        """End `principal`'s sessions idle longest until a new one keeps it within `cap`.

        Counted from the rows, so the cap holds across workers: one token opened 499 sessions a
        second. Idle longest is the oldest `last_seen_at` (touched at most every tenth of
        SESSION_IDLE_SECONDS, so two sessions seen within that are told apart by age only). An
        ended session's id answers 404 everywhere and its calls are cancelled, as for DELETE.
        """
        older = (
            LegacySessionRecord.objects.filter(principal=principal, ended_at__isnull=True)
            .order_by("-last_seen_at", "-created_at")
            .values_list("id", flat=True)[cap - 1 :]
        )
        async for session_id in older:
            logger.info("legacy session %s… ended: its principal opened one more", session_id[:8])
            await self.end(session_id)

    async def _cache_session(self, session: LegacySession) -> None:
        """Keep the session here, and hear when another worker ends it."""
        self._cache[session.id] = _Cached(session, time.monotonic())
        await self.relay.join(_group(session.id))
        self._ensure_sweeping()
        if len(self._cache) > MAX_CACHED_SESSIONS:
            await self._let_go_of_one()

    async def _let_go_of_one(self) -> None:
        """Drop the least recently seen session with nothing in flight from memory (not its row)."""
        for session_id in self._cache:
            if session_id not in self._inflight and session_id not in self._streams:
                del self._cache[session_id]
                await self.relay.leave(_group(session_id))
                return

    async def set_log_level(self, session: LegacySession, level: str) -> None:
        await LegacySessionRecord.objects.filter(id=session.id).aupdate(log_level=level)
        await self.relay.broadcast(
            _group(session.id), {"type": "legacy.level", "session": session.id, "level": level}
        )

    async def end(self, session_id: str) -> None:
        """End a session everywhere: its calls are cancelled and its id answers 404 from now on.

        Its row is deleted: a worker that still holds the session finds no live row on its next
        request (or hears the broadcast first) and ends it there too.
        """
        await LegacySessionRecord.objects.filter(id=session_id).adelete()
        subscribed = any(session_id in ids for ids in self._subscribers.values())
        self._end_here(session_id)
        await self.relay.broadcast(
            _group(session_id), {"type": "legacy.end", "session": session_id}
        )
        if subscribed:  # every worker keeps the subscriptions, not only the session's
            await self.relay.broadcast(
                RESOURCES_GROUP, {"type": "legacy.forget", "session": session_id}
            )

    async def _touch(self, session_id: str) -> bool:
        """Record activity; False when the session has ended meanwhile."""
        updated = await LegacySessionRecord.objects.filter(
            id=session_id, ended_at__isnull=True
        ).aupdate(last_seen_at=datetime.now(UTC))
        return updated > 0

    def _end_here(self, session_id: str, *, calls: bool = True) -> None:
        if self._cache.pop(session_id, None) is not None:
            self._leave_soon(session_id)
        for task in list(self._inflight.get(session_id, {}).values()) if calls else ():
            task.cancel()
        for stream in self._streams.pop(session_id, set()):
            stream.end()
        self._forget_here(session_id)

    # ------------------------------------------------------------------ calls in flight

    async def track(self, session_id: str, request_id: RequestId, task: asyncio.Task[Any]) -> None:
        """Remember a running request so notifications/cancelled and session end can stop it."""
        calls = self._inflight.setdefault(session_id, {})
        calls[request_id] = task
        await self.relay.join(_group(session_id))
        task.add_done_callback(lambda _: self._untrack(session_id, request_id))

    def _untrack(self, session_id: str, request_id: RequestId) -> None:
        calls = self._inflight.get(session_id, {})
        calls.pop(request_id, None)
        if not calls:
            self._inflight.pop(session_id, None)
        self._leave_soon(session_id)

    def _leave_soon(self, session_id: str) -> None:
        with contextlib.suppress(RuntimeError):  # the loop is closing
            start_in_loop(self.relay.leave(_group(session_id)), name="ask_mcp session leave")

    async def cancel(self, session_id: str, request_id: Any) -> None:
        """notifications/cancelled: stop the named request, on whichever worker runs it."""
        if self._cancel_here(session_id, request_id):
            return
        await self.relay.broadcast(
            _group(session_id),
            {"type": "legacy.cancel", "session": session_id, "request": request_id},
        )

    def _cancel_here(self, session_id: str, request_id: Any) -> bool:
        task = self._inflight.get(session_id, {}).get(request_id)
        if task is None:
            return False
        task.cancel(CLIENT_CANCELLED)  # explicit: its ask is withdrawn at once
        return True

    async def open_stream(self, session_id: str) -> SessionStream:
        """A standalone GET stream: it receives the session's notifications until it ends.

        Its worker joins the session's group, so the session ending on another worker ends it.
        """
        stream = SessionStream()
        self._streams.setdefault(session_id, set()).add(stream)
        await self.relay.join(_group(session_id))
        return stream

    async def close_stream(self, session_id: str, stream: SessionStream) -> None:
        streams = self._streams.get(session_id)
        if streams is not None:
            streams.discard(stream)
            if not streams:
                self._streams.pop(session_id, None)
        await self.relay.leave(_group(session_id))

    # ------------------------------------------------------------------ resource subscriptions

    async def set_subscription(self, session: LegacySession, uri: str, *, subscribed: bool) -> None:
        """resources/subscribe and unsubscribe: every worker learns it, so any GET stream delivers."""
        self._subscribe_here(session.id, uri, subscribed=subscribed)
        await self._hear_resources()
        await self.relay.broadcast(
            RESOURCES_GROUP,
            {
                "type": "legacy.subscription",
                "session": session.id,
                "uri": uri,
                "subscribed": subscribed,
            },
        )

    async def resource_updated(self, uri: str) -> None:
        """Send notifications/resources/updated to every session subscribed to `uri`."""
        await self._hear_resources()
        await self.relay.broadcast(RESOURCES_GROUP, {"type": "legacy.updated", "uri": uri})

    async def _hear_resources(self) -> None:
        loop = asyncio.get_running_loop()
        if self._announced is not loop:
            self._announced = loop
            await self.relay.join(RESOURCES_GROUP)

    def _subscribe_here(self, session_id: str, uri: str, *, subscribed: bool) -> None:
        if subscribed:
            self._subscribers.setdefault(uri, set()).add(session_id)
            return
        sessions = self._subscribers.get(uri)
        if sessions is not None:
            sessions.discard(session_id)
            if not sessions:
                del self._subscribers[uri]

    # ------------------------------------------------------------------ responses to our requests

    def router(self, session_id: str) -> _SessionRouter:
        return _SessionRouter(self, session_id)

    def _expect(self, session_id: str, request_id: str) -> asyncio.Future[dict[str, Any]]:
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._responses[request_id] = (session_id, future)
        return future

    def _forget(self, request_id: str) -> None:
        self._responses.pop(request_id, None)

    async def deliver(self, session_id: str, response: Response) -> None:
        """A client's JSON-RPC response: wake the call that asked, on whichever worker it waits."""
        message: dict[str, Any] = {"id": response.id}
        if response.result is not None:
            message["result"] = response.result
        else:
            message["error"] = response.error
        if self._deliver_here(session_id, message):
            return
        await self.relay.broadcast(
            _group(session_id),
            {"type": "legacy.response", "session": session_id, "response": message},
        )

    def _deliver_here(self, session_id: str, message: dict[str, Any]) -> bool:
        waiting = self._responses.get(str(message["id"]))
        if waiting is None or waiting[0] != session_id or waiting[1].done():
            return False
        waiting[1].set_result(message)
        return True

    # ------------------------------------------------------------------ messages from other workers

    def _on_response(self, message: dict[str, Any]) -> None:
        self._deliver_here(message["session"], message["response"])

    def _on_cancel(self, message: dict[str, Any]) -> None:
        self._cancel_here(message["session"], message["request"])

    def _on_end(self, message: dict[str, Any]) -> None:
        self._end_here(message["session"])

    def _on_revoked(self, message: dict[str, Any]) -> None:
        # Its calls are left to end as their asks did: the withdrawal told each the reason, and
        # cancelling one here could beat its result to the stream (the client then got none).
        self._end_here(message["session"], calls=False)

    def _on_subscription(self, message: dict[str, Any]) -> None:
        self._subscribe_here(message["session"], message["uri"], subscribed=message["subscribed"])

    def _forget_here(self, session_id: str) -> None:
        for uri in list(self._subscribers):
            self._subscribe_here(session_id, uri, subscribed=False)

    def _on_forget(self, message: dict[str, Any]) -> None:
        self._forget_here(message["session"])

    def _on_updated(self, message: dict[str, Any]) -> None:
        uri = message["uri"]
        notification = notification_message("notifications/resources/updated", {"uri": uri})
        for session_id in self._subscribers.get(uri, ()):
            for stream in self._streams.get(session_id, ()):
                stream.push(notification)

    def _on_level(self, message: dict[str, Any]) -> None:
        cached = self._cache.get(message["session"])
        if cached is not None:
            cached.session.log_level = message["level"]

    # ------------------------------------------------------------------ idle expiry

    def _ensure_sweeping(self) -> None:
        if not alive_here(self._sweeper):
            self._sweeper = start_in_loop(self._sweep(), name="ask_mcp session idle expiry")

    async def _sweep(self) -> None:
        interval = max(0.25, min(60.0, self.idle_seconds / 4))
        while self._cache:
            await asyncio.sleep(interval)
            now = time.monotonic()
            for session_id, cached in list(self._cache.items()):
                if now - cached.last_seen < self.idle_seconds:
                    continue
                cutoff = datetime.now(UTC) - timedelta(seconds=self.idle_seconds)
                seen_elsewhere = await LegacySessionRecord.objects.filter(
                    id=session_id, last_seen_at__gte=cutoff
                ).aexists()
                if seen_elsewhere:
                    continue  # another worker served it meanwhile
                logger.info(
                    "legacy session %s… ended after %.0f s idle", session_id[:8], self.idle_seconds
                )
                try:
                    await self.end(session_id)
                except Exception:
                    logger.exception("could not end idle session %s…", session_id[:8])


async def purge_idle_sessions(idle_seconds: float) -> int:
    """Delete the rows of sessions no worker has seen for `idle_seconds` (and rows ended before
    ending deleted them); returns how many.

    Each worker ends its own idle sessions; this is the backstop for the sessions of a worker
    that stopped, which nobody would end. The sweeper runs it every SWEEP_SECONDS.
    """
    cutoff = datetime.now(UTC) - timedelta(seconds=idle_seconds)
    stale = LegacySessionRecord.objects.filter(last_seen_at__lt=cutoff)
    deleted, _ = await stale.adelete()
    deleted += (await LegacySessionRecord.objects.filter(ended_at__isnull=False).adelete())[0]
    if deleted:
        logger.info("deleted %d initialize-era session(s) idle for %.0f s", deleted, idle_seconds)
    return deleted


async def end_sessions_of_revoked(relay: ChannelRelay) -> int:
    """End, on every worker, the sessions opened with a revoked token (or one whose user was
    deactivated); returns how many.

    Their rows go first, so a later request with one of their ids answers 404 on any worker;
    then each session's group hears it was revoked, so the worker holding its standalone GET
    stream closes it: a revoked token's stream otherwise stayed open for SESSION_IDLE_SECONDS,
    and its session answered the token again once un-revoked. Its calls holding asks end with
    their asks' withdrawal (run first, :func:`ask_mcp.records.sweeper.end_revoked`), saying why.
    """
    revoked = LegacySessionRecord.objects.filter(
        credential_kind=TOKEN, credential_id__in=revoked_tokens()
    )
    ended = [session_id async for session_id in revoked.values_list("id", flat=True)]
    if not ended:
        return 0
    await LegacySessionRecord.objects.filter(id__in=ended).adelete()
    for session_id in ended:
        await relay.broadcast(_group(session_id), {"type": "legacy.revoked", "session": session_id})
        await relay.broadcast(RESOURCES_GROUP, {"type": "legacy.forget", "session": session_id})
    logger.info("ended %d initialize-era session(s) of revoked tokens", len(ended))
    return len(ended)


class _SessionRouter:
    """ResponseRouter for one session's calls."""

    __slots__ = ("_session_id", "_sessions")

    def __init__(self, sessions: LegacySessions, session_id: str) -> None:
        self._sessions = sessions
        self._session_id = session_id

    def expect(self, request_id: str) -> asyncio.Future[dict[str, Any]]:
        return self._sessions._expect(self._session_id, request_id)

    def forget(self, request_id: str) -> None:
        self._sessions._forget(request_id)
