"""The ports: the small protocols transports, the relay and observers implement; knows none of them, nor the engine.

Transports implement :class:`Stream` and :class:`ResponseRouter`; the relay between worker
processes implements :class:`Relay`; the recorder implements :class:`QuestionObserver`; each way
of putting a request to the client implements :class:`InputChannel`. This module knows none of
the implementations, and nothing of the engine above it: it imports only the question it hands
observers and the claims a relay forwards. The two hooks that are handed a Context (``OnElicit``, ``AnswerUrl``) live beside
it in :mod:`ask_mcp.server.context`, since the Context is itself built on these ports. Pure.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any, Final, Protocol

from ask_mcp.server.question import Question
from ask_mcp.server.state import StateClaims


class Notifier(Protocol):
    """Where a call's notifications go: all a Context, or a round relayed from another worker, needs."""

    async def notify(self, message: dict[str, Any]) -> None: ...


class Stream(Notifier, Protocol):
    """The response of the current request (an HTTP response, stdio, a test's list).

    `allows_sse` says whether the response can carry messages before its final one (an HTTP
    client that accepts text/event-stream; stdio always): an initialize-era question goes out
    on it only then. `closed` turns true once nobody reads it any more.
    """

    @property
    def allows_sse(self) -> bool: ...

    @property
    def closed(self) -> bool: ...


class NullStream:
    """A stream for callers that want no notifications: it carries nothing and is never read."""

    __slots__ = ()

    allows_sse: Final = False
    """Nothing is read, so nothing is streamed."""
    closed: Final = False
    """Never closed: writing to it is always harmless."""

    async def notify(self, message: dict[str, Any]) -> None:
        return None


NULL_STREAM: Final = NullStream()
"""The one NullStream: it holds no state, so every caller can share it."""


class InputChannel(Protocol):
    """How a running call sends the client an input request and receives its response."""

    async def request(self, key: str, request: dict[str, Any], deadline: float) -> Any: ...


class ResponseRouter(Protocol):
    """Where an initialize-era client's responses to our requests are awaited."""

    def expect(self, request_id: str) -> asyncio.Future[dict[str, Any]]: ...

    def forget(self, request_id: str) -> None: ...


class QuestionObserver(Protocol):
    """Told when a question is put and when it ends; the Django recorder implements it."""

    async def asked(self, question: Question) -> None: ...

    def ended(self, question: Question, status: str, answer: Mapping[str, Any] | None) -> None: ...


class Relay(Protocol):
    """Forwards a retry to the worker process holding its parked call."""

    worker: str

    def attach(self, table: Any) -> None:
        """Be handed the elicitation table whose parked calls forwarded rounds resume.

        `table` is the :class:`~ask_mcp.server.elicitation.ElicitationTable`; it is typed Any
        because naming it here would make the ports depend on the table that depends on them.
        """

    def ensure_listening(self) -> None:
        """Make sure retries sent to `worker` are received (called before a state is issued)."""

    async def resume_remote(
        self,
        claims: StateClaims,
        responses: Mapping[str, Any],
        stream: Stream,
        progress_token: str | int | None,
        log_level: str | None,
    ) -> dict[str, Any]: ...


__all__ = [
    "NULL_STREAM",
    "InputChannel",
    "Notifier",
    "NullStream",
    "QuestionObserver",
    "Relay",
    "ResponseRouter",
    "Stream",
]
