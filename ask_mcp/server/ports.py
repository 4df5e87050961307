"""The ports: the small protocols transports, the relay and observers implement; knows none of them, nor the engine.

Transports implement :class:`Stream` and :class:`ResponseRouter`; the relay between worker
processes implements :class:`Relay`; the recorder implements :class:`QuestionObserver` and
:class:`AskRecords`; each way
of putting a request to the client implements :class:`InputChannel`. This module knows none of
the implementations, and nothing of the engine above it: it imports only the question it hands
observers and the claims a relay forwards. The two hooks that are handed a Context (``OnElicit``, ``AnswerUrl``) live beside
it in :mod:`ask_mcp.server.context`, since the Context is itself built on these ports. Pure.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any, Final, Protocol, runtime_checkable

from ask_mcp.protocol.forms import ElicitResult
from ask_mcp.server.question import Ending, Question
from ask_mcp.server.request_state import StateClaims


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

    def ended(
        self, question: Question, status: Ending, answer: Mapping[str, Any] | None
    ) -> None: ...


@runtime_checkable
class RefusalCounter(Protocol):
    """Told of every question the table refused (its capacity, a principal's share), to count
    them for staff; the Django recorder implements it beside :class:`QuestionObserver`."""

    def refused(self, question: Question, limit: str, message: str) -> None:
        """Count `question`, refused by `limit` ("capacity" or "share"), told `message`."""
        ...


@runtime_checkable
class AskWithdrawals(Protocol):
    """The record's withdrawal of an ask, decided against every other decision in one write."""

    async def withdraw(self, question: Question, reason: str = "") -> bool:
        """Withdraw `question`'s ask (saying `reason`) unless it was decided first.

        Returns whether it is withdrawn now (by this or earlier); False: a decision came first
        (an answer, a cancel, the clock), and the caller ends as that decision says.
        """
        ...


@runtime_checkable
class AskRecords(Protocol):
    """The asks' durable record, which finishes a call whose parked handler is gone; the Django
    recorder implements it beside :class:`QuestionObserver`.

    Each method decides or attaches exactly once across workers and restarts (the record's row
    is the one place an ask is decided) and raises what the call should read:
    :class:`~ask_mcp.server.request_state.InvalidState` ``"used"`` when a call already collected the
    decision, :class:`~ask_mcp.server.errors.ElicitationTimedOut` when the ask expired
    unanswered, :class:`~ask_mcp.server.errors.QuestionNoLongerWaiting` when it was withdrawn.
    """

    async def decide(self, question: Question, reply: ElicitResult) -> ElicitResult:
        """Decide `question`'s ask with `reply` and mark it collected by ``question.collector``.

        Returns the decision the call takes: `reply`, or one an admin or a person made first
        and no call collected yet. A row the crash lost is written anew.
        """

    async def reattach(self, question: Question) -> None:
        """Attach this worker's call to `question`'s existing ask (by id), to wait on it.

        Sets ``question.settled`` when the ask is decided and not yet collected.
        """


class Relay(Protocol):
    """Forwards a retry to the worker process holding its parked call."""

    worker: str

    def attach(self, table: Any) -> None:
        """Be handed the elicitation table whose parked calls forwarded rounds resume.

        `table` is the :class:`~ask_mcp.server.asking.table.ElicitationTable`; it is typed Any
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

    def waits_for(self, ask_id: str) -> bool:
        """Whether a call in this worker still waits on `ask_id` (another attached to it)."""

    def expect(self, ask_id: str) -> Any:
        """Register that a call here waits for `ask_id` to be settled (by an admin, say)."""

    async def wait_settled(self, ask_id: str) -> Mapping[str, Any]:
        """Wait for `ask_id`'s settlement; raises ElicitationTimedOut when an admin expires it."""
        ...

    async def settle(
        self, worker: str, ask_id: str, reply: Mapping[str, Any], call_id: str | None = None
    ) -> bool:
        """Deliver a decision on `ask_id` to the calls waiting on it in `worker` (and to those
        in the workers they attached from); whether a call was there to take it."""
        ...


__all__ = [
    "NULL_STREAM",
    "AskRecords",
    "AskWithdrawals",
    "InputChannel",
    "Notifier",
    "NullStream",
    "QuestionObserver",
    "RefusalCounter",
    "Relay",
    "ResponseRouter",
    "Stream",
]
