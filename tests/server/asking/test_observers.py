"""A forwarding observer passes every call on, and without a record behind it the question is no longer waiting."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from ask_mcp.protocol.forms import ElicitResult
from ask_mcp.server.asking.observers import ForwardingObserver
from ask_mcp.server.errors import QuestionNoLongerWaiting
from ask_mcp.server.identity import Identity
from ask_mcp.server.question import Ending, Question

QUESTION = Question("a1", "Go?", {}, "user_ask", Identity.ANONYMOUS, "client", 0.0, 60.0)


class Recorder:
    """An observer with a durable record: it keeps what it hears."""

    queued = 3

    def __init__(self) -> None:
        self.heard: list[tuple[Any, ...]] = []

    async def asked(self, question: Question) -> None:
        self.heard.append(("asked", question.id))

    def ended(self, question: Question, status: Ending, answer: Mapping[str, Any] | None) -> None:
        self.heard.append(("ended", question.id, status, answer))

    async def flush(self) -> None:
        self.heard.append(("flush",))

    async def decide(self, question: Question, reply: ElicitResult) -> ElicitResult:
        self.heard.append(("decide", reply.action))
        return ElicitResult("decline")

    async def reattach(self, question: Question) -> None:
        self.heard.append(("reattach", question.id))


async def test_every_call_reaches_the_inner_observer_and_its_answer_comes_back() -> None:
    inner = Recorder()
    outer = ForwardingObserver(inner)
    await outer.asked(QUESTION)
    outer.ended(QUESTION, "accepted", {"ok": True})
    await outer.flush()
    assert await outer.decide(QUESTION, ElicitResult("accept", {})) == ElicitResult("decline")
    await outer.reattach(QUESTION)
    assert outer.queued == 3
    assert inner.heard == [
        ("asked", "a1"),
        ("ended", "a1", "accepted", {"ok": True}),
        ("flush",),
        ("decide", "accept"),
        ("reattach", "a1"),
    ]


async def test_without_an_inner_record_nothing_is_on_record() -> None:
    outer = ForwardingObserver()
    await outer.asked(QUESTION)
    outer.ended(QUESTION, "expired", None)
    await outer.flush()
    assert outer.queued == 0
    with pytest.raises(QuestionNoLongerWaiting):
        await outer.decide(QUESTION, ElicitResult("accept", {}))
    with pytest.raises(QuestionNoLongerWaiting):
        await outer.reattach(QUESTION)


async def test_a_subclass_adds_its_work_and_still_passes_on() -> None:
    seen: list[str] = []

    class Counting(ForwardingObserver):
        async def asked(self, question: Question) -> None:
            seen.append(question.id)
            await super().asked(question)

    inner = Recorder()
    await Counting(inner).asked(QUESTION)
    assert seen == ["a1"] and inner.heard == [("asked", "a1")]
