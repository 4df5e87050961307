"""A parked call: one multi round-trip call's state and its input channel, as the table holds it; knows no wire.

Plain state plus the call's :class:`~ask_mcp.server.ports.InputChannel`: a handler's input request
is queued here for the current round, and the table is told (:meth:`CallTable.cut`) once the
round's requests are all queued. How rounds are answered, resumed, expired and dropped is the
table's (:mod:`ask_mcp.server.asking.table`); this module does not know the wire. Pure asyncio.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from ask_mcp.server.context import Context
from ask_mcp.server.question import Ending
from ask_mcp.server.request_state import QuestionClaims

Finish = Callable[[Any, BaseException | None], dict[str, Any]]
"""Turns a finished handler's value (or exception) into the method's wire result.

It runs in the worker that holds the call, so a round forwarded from another worker comes back
already on the wire. It may raise the protocol errors the dispatch boundary maps.
"""


class CallTable(Protocol):
    """What a parked call tells its table: the round's input requests are all queued."""

    def cut(self, call: ParkedCall) -> None: ...


@dataclass(slots=True)
class Pending:
    """One input request of the current round, and the future its answer resolves."""

    request: dict[str, Any]
    future: asyncio.Future[Any]
    deadline: float


@dataclass(slots=True, eq=False)
class ParkedCall:
    """A call whose handler task may be suspended waiting for the client's input."""

    table: CallTable
    id: str
    ctx: Context
    binding: str
    principal: str
    preset: dict[str, Any] | None
    finish: Finish
    task: asyncio.Task[Any] | None = None
    round: int = 1
    pending: dict[str, Pending] = field(default_factory=dict)
    overrides: dict[str, Any] = field(default_factory=dict)
    wake: asyncio.Future[None] | None = None
    """Set while a request waits for the handler (running); None while the call is parked."""
    cut_handle: asyncio.Handle | None = None
    timer: asyncio.TimerHandle | None = None
    holds_slot: bool = False
    deadline: float = 0.0
    end_reason: Ending = "withdrawn"
    """How its question ends when the table drops the call while its handler runs."""
    question: QuestionClaims | None = None
    """The question this round waits on, sealed into its state so the call can be finished from
    the ask's record if its handler is gone."""

    async def request(self, key: str, request: dict[str, Any], deadline: float) -> Any:
        """InputChannel for MRTR: queue the request for this round and wait for the retry."""
        if self.preset is not None and key in self.preset:
            return self.preset.pop(key)  # answered up front by the first request
        if key in self.pending:
            raise ValueError(f"two input requests in one round share the key {key!r}")
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        self.pending[key] = Pending(request, future, deadline)
        if self.cut_handle is None:
            # call_soon runs after sibling tasks started by the same gather() have queued theirs
            self.cut_handle = loop.call_soon(self.table.cut, self)
        return await future
