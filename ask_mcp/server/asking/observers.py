"""An observer that wraps another: every call passed on to the inner one; knows no Django and no records.

Subclasses add their own work to `asked` or `ended` and call up. The durable path
(:class:`~ask_mcp.server.ports.AskRecords`: `decide`, `reattach`), `refused` and `flush` pass straight on,
so wrapping the recorder (for the metrics, or a test's probe) never costs an ask its record.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ask_mcp.protocol.forms import ElicitResult
from ask_mcp.server.errors import QuestionNoLongerWaiting
from ask_mcp.server.ports import AskRecords, AskWithdrawals, QuestionObserver, RefusalCounter
from ask_mcp.server.question import Ending, Question


class ForwardingObserver:
    """`inner` (maybe None), with every observer and AskRecords call passed on to it."""

    def __init__(self, inner: QuestionObserver | None = None) -> None:
        self.inner = inner

    @property
    def queued(self) -> int:
        """The inner observer's queue (the recorder's writes not yet made), else 0."""
        return int(getattr(self.inner, "queued", 0))

    async def asked(self, question: Question) -> None:
        if self.inner is not None:
            await self.inner.asked(question)

    def ended(self, question: Question, status: Ending, answer: Mapping[str, Any] | None) -> None:
        if self.inner is not None:
            self.inner.ended(question, status, answer)

    def refused(self, question: Question, limit: str, message: str) -> None:
        if isinstance(self.inner, RefusalCounter):
            self.inner.refused(question, limit, message)

    async def flush(self) -> None:
        flush = getattr(self.inner, "flush", None)
        if flush is not None:
            await flush()

    async def decide(self, question: Question, reply: ElicitResult) -> ElicitResult:
        """The record's decision (without a record behind it, nothing is on record)."""
        if not isinstance(self.inner, AskRecords):
            raise QuestionNoLongerWaiting
        return await self.inner.decide(question, reply)

    async def reattach(self, question: Question) -> None:
        if not isinstance(self.inner, AskRecords):
            raise QuestionNoLongerWaiting
        await self.inner.reattach(question)

    async def withdraw(self, question: Question, reason: str = "") -> bool:
        """The record's withdrawal; without a record behind it, the ending is only told."""
        if isinstance(self.inner, AskWithdrawals):
            return await self.inner.withdraw(question, reason)
        self.ended(question, "withdrawn", None)
        return True
