"""The ports: the null stream carries nothing, and AskRecords is recognised by shape."""

from __future__ import annotations

from typing import Any

from ask_mcp.protocol.forms import ElicitResult
from ask_mcp.server.ports import NULL_STREAM, AskRecords, NullStream, Stream
from ask_mcp.server.question import Question


async def test_the_null_stream_takes_anything_and_streams_nothing() -> None:
    stream: Stream = NULL_STREAM
    assert await stream.notify({"jsonrpc": "2.0", "method": "notifications/progress"}) is None
    assert stream.allows_sse is False and stream.closed is False
    assert NullStream.__slots__ == ()  # no state: one shared instance is enough


def test_ask_records_is_anything_that_decides_and_reattaches() -> None:
    class Recorder:
        async def decide(self, question: Question, reply: ElicitResult) -> ElicitResult:
            return reply

        async def reattach(self, question: Question) -> None:
            return None

    class OnlyObserves:
        async def asked(self, question: Question) -> None:
            return None

        def ended(self, *args: Any) -> None:
            return None

    assert isinstance(Recorder(), AskRecords)
    assert not isinstance(OnlyObserves(), AskRecords)
