"""The deadline a request body must meet (a minimum rate), and the ASGI wrapper that holds it where the server does not; knows nothing of MCP.

One local process held every connection allowed per address by sending complete headers and then
one body byte every 25 s: Twisted's idle timeout (60 s) restarts with each byte, and uvicorn has
no bound on a body at all. A body must now arrive within BODY_TIMEOUT_SECONDS of its headers,
plus one second for every BODY_MIN_BYTES_PER_SECOND bytes it has sent so far: a trickle is cut
after BODY_TIMEOUT_SECONDS, a 1 MiB upload at 16 KiB/s still arrives, and a client that
stops sending is cut however much it sent before.

Under daphne the guard's channel holds it (:mod:`ask_mcp.transports.guard`), before the
application sees the request. Under any other server (uvicorn) :class:`BodyDeadline` wraps the
application: a timer holds the same deadline while it waits for the body, and a body that
misses it gets `408` with `Connection: close` (the server then closes the connection, its body
unread, and the application's wait ends); the application reads a disconnect.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any, Final

from ask_mcp import conf

Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Message, Receive, Send], Awaitable[None]]

TIMEOUT_SETTING: Final = "ASK_MCP['BODY_TIMEOUT_SECONDS']"
RATE_SETTING: Final = "ASK_MCP['BODY_MIN_BYTES_PER_SECOND']"


def body_deadline(started: float, seen: int) -> float:
    """When a body whose headers ended at `started` must be complete, having sent `seen` bytes."""
    values = conf.values()
    return started + values.body_timeout_seconds + seen / values.body_min_bytes_per_second


def too_slow_text() -> bytes:
    """The `408`'s body: which bound the body missed, and its settings."""
    values = conf.values()
    return (
        f"Request Timeout: the request's body did not arrive within "
        f"{values.body_timeout_seconds:g} s plus 1 s per {values.body_min_bytes_per_second} "
        f"bytes sent ({TIMEOUT_SETTING}, {RATE_SETTING})\n"
    ).encode()


class BodyDeadline:
    """ASGI middleware: an HTTP request's body meets :func:`body_deadline`, or gets `408`."""

    def __init__(self, app: App) -> None:
        self.app = app

    async def __call__(self, scope: Message, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        reading = _Reading(receive, send)
        await self.app(scope, reading.receive, reading.send)


class _Reading:
    """One request's body as it arrives: how much, since when, and whether it was cut.

    One timer per request watches the deadline, armed on the first wait for the body and
    re-armed when bytes moved it: a timeout around every wait cost more than the request's own
    handling on the MRTR path, where (under daphne) the first wait returns the whole body.
    """

    __slots__ = (
        "_cutting",
        "_receive",
        "_send",
        "_timer",
        "cut",
        "done",
        "responded",
        "seen",
        "started",
    )

    def __init__(self, receive: Receive, send: Send) -> None:
        self._receive = receive
        self._send = send
        self._timer: asyncio.TimerHandle | None = None
        self._cutting: asyncio.Task[None] | None = None  # held: a task nobody holds may vanish
        self.started = time.monotonic()
        self.seen = 0
        self.done = False
        self.cut = False
        self.responded = False

    async def receive(self) -> Message:
        if self.done:
            return await self._receive()
        if self._timer is None:
            self._arm()
        message = await self._receive()
        if self.cut:
            return {"type": "http.disconnect"}
        if message["type"] == "http.request":
            self.seen += len(message.get("body", b""))
            self.done = not message.get("more_body", False)
        else:
            self.done = True
        if self.done and self._timer is not None:
            self._timer.cancel()
        return message

    def _arm(self) -> None:
        loop = asyncio.get_running_loop()
        delay = body_deadline(self.started, self.seen) - time.monotonic()
        self._timer = loop.call_later(max(0.0, delay), self._due)

    def _due(self) -> None:
        """The deadline as it stood when armed: re-armed if bytes since moved it, else cut."""
        if self.done:
            return
        if body_deadline(self.started, self.seen) > time.monotonic():
            self._arm()
            return
        self.done = self.cut = True
        if not self.responded:  # the server closes the connection after it: the wait ends
            self.responded = True
            self._cutting = asyncio.get_running_loop().create_task(self._too_slow())

    async def _too_slow(self) -> None:
        body = too_slow_text()
        await self._send(
            {
                "type": "http.response.start",
                "status": 408,
                "headers": [
                    (b"content-type", b"text/plain; charset=utf-8"),
                    (b"content-length", str(len(body)).encode()),
                    (b"connection", b"close"),
                ],
            }
        )
        await self._send({"type": "http.response.body", "body": body})

    async def send(self, message: Message) -> None:
        if self.cut:
            return  # the 408 was the answer: what the application says after it goes nowhere
        if message["type"] == "http.response.start":
            self.responded = True
        await self._send(message)


__all__ = ["BodyDeadline", "body_deadline", "too_slow_text"]
