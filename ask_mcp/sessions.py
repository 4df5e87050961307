"""Initialize-era sessions for the HTTP endpoint: kept in the database so any worker can serve them,
cached per process, with their in-flight calls, idle expiry, and the routing of a client's
responses and cancellations (which may land on another worker) through the channel layer.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from datetime import UTC, datetime, timedelta
from typing import Any

from ask_mcp.models import LegacySessionRecord
from ask_mcp.protocol.jsonrpc import RequestId, Response
from ask_mcp.relay import ChannelRelay
from ask_mcp.server.legacy import LegacySession

logger = logging.getLogger("ask_mcp.sessions")


def _group(session_id: str) -> str:
    return f"askmcp.session.{session_id}"


class _Cached:
    __slots__ = ("last_seen", "session", "touched")

    def __init__(self, session: LegacySession, now: float) -> None:
        self.session = session
        self.last_seen = now
        self.touched = now


class LegacySessions:
    """Every initialize-era session this process serves, and what is in flight for each."""

    def __init__(self, relay: ChannelRelay, *, idle_seconds: float) -> None:
        self.relay = relay
        self.idle_seconds = idle_seconds
        self._cache: dict[str, _Cached] = {}
        self._inflight: dict[str, dict[RequestId, asyncio.Task[Any]]] = {}
        self._responses: dict[str, tuple[str, asyncio.Future[dict[str, Any]]]] = {}
        self._streams: dict[str, set[asyncio.Event]] = {}
        self._sweeper: asyncio.Task[None] | None = None
        self._chores: set[asyncio.Task[None]] = set()
        relay.add_handler("legacy.response", self._on_response)
        relay.add_handler("legacy.cancel", self._on_cancel)
        relay.add_handler("legacy.end", self._on_end)
        relay.add_handler("legacy.level", self._on_level)

    # ------------------------------------------------------------------ lifecycle

    async def create(
        self,
        protocol_version: str,
        capabilities: dict[str, Any],
        client_info: dict[str, Any] | None,
        principal: str | None,
        team: str | None = None,
    ) -> LegacySession:
        session = LegacySession(
            id=secrets.token_urlsafe(32),
            protocol_version=protocol_version,
            capabilities=capabilities,
            client_info=client_info,
            principal=principal,
            team=team,
        )
        await LegacySessionRecord.objects.acreate(
            id=session.id,
            protocol_version=protocol_version,
            capabilities=capabilities,
            client_info=client_info,
            principal=principal or "",
            team=team or "",
            last_seen_at=datetime.now(UTC),
        )
        await self._cache_session(session)
        return session

    async def get(self, session_id: str) -> LegacySession | None:
        """The live session with this id, or None when it never existed, ended or went idle."""
        now = time.monotonic()
        cached = self._cache.get(session_id)
        if cached is not None:
            cached.last_seen = now
            if now - cached.touched > self.idle_seconds / 10:
                cached.touched = now
                if not await self._touch(session_id):
                    self._end_here(session_id)  # ended elsewhere and the broadcast never came
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
            team=record.team or None,
            log_level=record.log_level or None,
        )
        await self._cache_session(session)
        await self._touch(session_id)
        return session

    async def _cache_session(self, session: LegacySession) -> None:
        """Keep the session here, and hear when another worker ends it."""
        self._cache[session.id] = _Cached(session, time.monotonic())
        await self.relay.join(_group(session.id))
        self._ensure_sweeping()

    async def set_log_level(self, session: LegacySession, level: str) -> None:
        await LegacySessionRecord.objects.filter(id=session.id).aupdate(log_level=level)
        await self.relay.broadcast(
            _group(session.id), {"type": "legacy.level", "session": session.id, "level": level}
        )

    async def end(self, session_id: str) -> None:
        """End a session everywhere: its calls are cancelled and its id answers 404 from now on."""
        await LegacySessionRecord.objects.filter(id=session_id, ended_at__isnull=True).aupdate(
            ended_at=datetime.now(UTC)
        )
        self._end_here(session_id)
        await self.relay.broadcast(
            _group(session_id), {"type": "legacy.end", "session": session_id}
        )

    async def _touch(self, session_id: str) -> bool:
        """Record activity; False when the session has ended meanwhile."""
        updated = await LegacySessionRecord.objects.filter(
            id=session_id, ended_at__isnull=True
        ).aupdate(last_seen_at=datetime.now(UTC))
        return updated > 0

    def _end_here(self, session_id: str) -> None:
        if self._cache.pop(session_id, None) is not None:
            self._leave_soon(session_id)
        for task in list(self._inflight.get(session_id, {}).values()):
            task.cancel()
        for closed in self._streams.pop(session_id, set()):
            closed.set()

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
            task = asyncio.get_running_loop().create_task(self.relay.leave(_group(session_id)))
            self._chores.add(task)  # the loop holds tasks only weakly
            task.add_done_callback(self._chores.discard)

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
        task.cancel()
        return True

    def open_stream(self, session_id: str) -> asyncio.Event:
        """A standalone GET stream: the event is set when the session ends."""
        closed = asyncio.Event()
        self._streams.setdefault(session_id, set()).add(closed)
        return closed

    def close_stream(self, session_id: str, closed: asyncio.Event) -> None:
        streams = self._streams.get(session_id)
        if streams is not None:
            streams.discard(closed)
            if not streams:
                self._streams.pop(session_id, None)

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

    def _on_level(self, message: dict[str, Any]) -> None:
        cached = self._cache.get(message["session"])
        if cached is not None:
            cached.session.log_level = message["level"]

    # ------------------------------------------------------------------ idle expiry

    def _ensure_sweeping(self) -> None:
        sweeper = self._sweeper
        if (
            sweeper is None
            or sweeper.done()
            or sweeper.get_loop() is not asyncio.get_running_loop()
        ):
            self._sweeper = asyncio.get_running_loop().create_task(self._sweep())

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
