"""Two workers sharing a channel layer: a retry landing on the wrong worker reaches the parked call.

Both "workers" run in this process with one InMemoryChannelLayer between them; the team-server
tests repeat this with two daphne processes on Redis.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from channels.layers import InMemoryChannelLayer

from ask_mcp import Ask, MCPServer
from ask_mcp.protocol.jsonrpc import Request
from ask_mcp.server import Context, Toolkit, ToolResult, tool
from ask_mcp.server.request_state import derive_key
from ask_mcp.workers.relay import ChannelRelay
from tests.support.wire import META, assert_valid

KEYS = [derive_key("shared-secret-of-the-team-server-0123456789")]
FORM = {"elicitation": {"form": {}}}


class Steps(Toolkit):
    default_prefix = "steps"

    def __init__(self) -> None:
        self.blocked = asyncio.Event()
        self.cancelled = asyncio.Event()

    @tool("ask_then_report")
    async def ask_then_report(self, ctx: Context, arguments: dict[str, Any]) -> ToolResult:
        """Asks, then reports progress, then finishes."""
        reply = await ctx.elicit(
            "Go?", {"type": "object", "properties": {"go": {"type": "boolean"}}}
        )
        await ctx.report_progress(1, 1, "relayed")
        return ToolResult.text(f"go={reply.content}")

    @tool("ask_then_block")
    async def ask_then_block(self, ctx: Context, arguments: dict[str, Any]) -> str:
        """Asks, then blocks until cancelled."""
        await ctx.elicit("Go?", {"type": "object", "properties": {"go": {"type": "boolean"}}})
        self.blocked.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled.set()
            raise
        return "unreachable"


class Collected:
    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []

    async def notify(self, message: dict[str, Any]) -> None:
        self.messages.append(message)


def worker(layer: InMemoryChannelLayer, steps: Steps, **relay_options: Any) -> MCPServer:
    relay = ChannelRelay(layer=layer, **relay_options)
    return MCPServer("team", state_keys=KEYS, relay=relay).plug(Ask()).plug(steps)


async def tools_call(
    server: MCPServer, params: dict[str, Any], stream: Any = None
) -> dict[str, Any]:
    meta = {**META, "io.modelcontextprotocol/clientCapabilities": FORM, "progressToken": "p"}
    reply = await server.handle_modern(
        Request(method="tools/call", params={**params, "_meta": meta}, id=1), stream=stream
    )
    assert reply is not None
    return assert_valid("tools/call", reply)


@pytest.fixture
def layer() -> InMemoryChannelLayer:
    return InMemoryChannelLayer()


async def test_a_retry_on_another_worker_resumes_the_parked_handler(
    layer: InMemoryChannelLayer,
) -> None:
    steps = Steps()
    a, b = worker(layer, steps), worker(layer, Steps())
    call = {"name": "steps_ask_then_report", "arguments": {}}
    async with asyncio.timeout(5):
        first = (await tools_call(a, call))["result"]
        stream = Collected()
        retry = {
            **call,
            "requestState": first["requestState"],
            "inputResponses": {
                "steps_ask_then_report": {"action": "accept", "content": {"go": True}}
            },
        }
        final = (await tools_call(b, retry, stream))["result"]
    assert final["content"] == [{"type": "text", "text": "go={'go': True}"}]
    assert [m["params"]["message"] for m in stream.messages] == ["relayed"]
    assert a.table.waiting == 0 and b.table.waiting == 0


async def test_a_replayed_state_is_refused_by_the_owner(layer: InMemoryChannelLayer) -> None:
    a, b = worker(layer, Steps()), worker(layer, Steps())
    call = {"name": "user_ask", "arguments": {"message": "m"}}
    async with asyncio.timeout(5):
        first = (await tools_call(a, call))["result"]
        retry = {
            **call,
            "requestState": first["requestState"],
            "inputResponses": {"user_ask": {"action": "accept", "content": {"answer": "x"}}},
        }
        assert (await tools_call(b, retry))["result"]["content"][0]["text"] == '{"answer":"x"}'
        replay = await tools_call(b, retry)
    assert replay["error"]["code"] == -32602 and replay["error"]["data"] == {"reason": "used"}


async def test_a_retry_for_a_worker_that_is_gone_gets_the_no_longer_waiting_result(
    layer: InMemoryChannelLayer,
) -> None:
    a = worker(layer, Steps())
    b = worker(layer, Steps(), ack_timeout=0.2)
    call = {"name": "user_ask", "arguments": {"message": "m"}}
    async with asyncio.timeout(5):
        first = (await tools_call(a, call))["result"]
        assert a.table.relay is not None
        a.table.relay._listener.cancel()  # type: ignore[attr-defined]  # worker A stops listening
        retry = {
            **call,
            "requestState": first["requestState"],
            "inputResponses": {"user_ask": {"action": "accept", "content": {"answer": "x"}}},
        }
        late = (await tools_call(b, retry))["result"]
    assert late["isError"] is False
    assert late["content"][0]["text"].startswith("That question is no longer waiting")


async def test_cancelling_a_forwarded_round_cancels_the_owners_handler(
    layer: InMemoryChannelLayer,
) -> None:
    steps = Steps()
    a, b = worker(layer, steps), worker(layer, Steps())
    call = {"name": "steps_ask_then_block", "arguments": {}}
    async with asyncio.timeout(5):
        first = (await tools_call(a, call))["result"]
        retry = {
            **call,
            "requestState": first["requestState"],
            "inputResponses": {"steps_ask_then_block": {"action": "accept", "content": {}}},
        }
        forwarded = asyncio.create_task(tools_call(b, retry))
        await steps.blocked.wait()
        forwarded.cancel()
        await steps.cancelled.wait()
    assert a.table.waiting == 0


async def test_settling_an_ask_wakes_the_worker_holding_it(layer: InMemoryChannelLayer) -> None:
    holder, answerer = ChannelRelay(layer=layer), ChannelRelay(layer=layer)
    async with asyncio.timeout(5):
        holder.expect("ask-1")
        waiting = asyncio.create_task(holder.wait_settled("ask-1"))
        await answerer.settle(holder.worker, "ask-1", {"action": "accept", "content": {"a": 1}})
        assert await waiting == {"action": "accept", "content": {"a": 1}}


async def test_expiring_an_ask_ends_the_held_wait_with_a_timeout(
    layer: InMemoryChannelLayer,
) -> None:
    from ask_mcp.server.errors import ElicitationTimedOut

    holder, admin = ChannelRelay(layer=layer), ChannelRelay(layer=layer)
    async with asyncio.timeout(5):
        holder.expect("ask-2")
        waiting = asyncio.create_task(holder.wait_settled("ask-2"))
        await admin.expire(holder.worker, "ask-2")
        with pytest.raises(ElicitationTimedOut):
            await waiting
