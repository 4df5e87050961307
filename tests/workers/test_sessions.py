"""Initialize-era sessions across workers and disconnects, driven in-process at the ASGI edge.

Two endpoints with their own servers, relays and session caches share one channel layer and
one database: the in-process picture of two daphne workers.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from channels.layers import InMemoryChannelLayer

from ask_mcp import Ask, MCPServer
from ask_mcp.server.request_state import derive_key
from ask_mcp.transports.http import McpEndpoint
from ask_mcp.workers.relay import ChannelRelay
from ask_mcp.workers.sessions import LegacySessions
from tests.support.asgi_client import AsgiRequest
from tests.support.probe import EVENTS, Probe

pytestmark = pytest.mark.django_db(transaction=True)
KEYS = [derive_key("team-secret-for-two-workers-0123456789abcdef")]
HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}


def worker(layer: InMemoryChannelLayer) -> McpEndpoint:
    relay = ChannelRelay(layer=layer)
    server = MCPServer("team", state_keys=KEYS, relay=relay).plug(Ask()).plug(Probe())
    return McpEndpoint(server, LegacySessions(relay, idle_seconds=60))


async def initialize(endpoint: McpEndpoint) -> dict[str, str]:
    request = AsgiRequest(
        endpoint,
        "POST",
        HEADERS,
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {"elicitation": {}},
                "clientInfo": {"name": "t", "version": "1"},
            },
        },
    )
    start = await request.start()
    await request.body()
    session = dict(start["headers"])[b"mcp-session-id"].decode()
    return {**HEADERS, "mcp-session-id": session, "mcp-protocol-version": "2025-11-25"}


def call(name: str, arguments: dict[str, Any], id: Any = 1) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": id,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }


async def test_a_response_posted_to_another_worker_reaches_the_waiting_call() -> None:
    layer = InMemoryChannelLayer()
    a, b = worker(layer), worker(layer)
    async with asyncio.timeout(10):
        headers = await initialize(a)
        held = AsgiRequest(a, "POST", headers, call("user_ask", {"message": "Which worker?"}))
        await held.start()
        pushed = await held.event()
        assert pushed["method"] == "elicitation/create"
        answer = AsgiRequest(
            b,
            "POST",
            headers,
            {
                "jsonrpc": "2.0",
                "id": pushed["id"],
                "result": {"action": "accept", "content": {"answer": "B"}},
            },
        )
        assert (await answer.start())["status"] == 202
        final = await held.event()
    assert final["result"]["content"][0]["text"] == '{"answer":"B"}'


async def test_notifications_cancelled_on_another_worker_stops_the_call() -> None:
    layer = InMemoryChannelLayer()
    a, b = worker(layer), worker(layer)
    async with asyncio.timeout(10):
        headers = await initialize(a)
        held = AsgiRequest(a, "POST", headers, call("probe_hang", {"key": "two-workers"}, id=9))
        await held.start()
        pushed = await held.event()
        AsgiRequest(
            a,
            "POST",
            headers,
            {
                "jsonrpc": "2.0",
                "id": pushed["id"],
                "result": {"action": "accept", "content": {"answer": "x"}},
            },
        )
        assert await EVENTS.wait("blocked", "two-workers", 5)
        cancel = AsgiRequest(
            b,
            "POST",
            headers,
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 9}},
        )
        assert (await cancel.start())["status"] == 202
        assert await EVENTS.wait("cancelled", "two-workers", 5)


async def test_in_the_initialize_era_a_dropped_stream_does_not_cancel_the_call() -> None:
    endpoint = worker(InMemoryChannelLayer())
    async with asyncio.timeout(10):
        headers = await initialize(endpoint)
        held = AsgiRequest(endpoint, "POST", headers, call("probe_hang", {"key": "dropped"}))
        await held.start()
        pushed = await held.event()
        AsgiRequest(
            endpoint,
            "POST",
            headers,
            {
                "jsonrpc": "2.0",
                "id": pushed["id"],
                "result": {"action": "accept", "content": {"answer": "go"}},
            },
        )
        assert await EVENTS.wait("blocked", "dropped", 5)
        held.leave()
        await held.task  # the edge has seen the disconnect and let go of the stream
        sessions = endpoint.sessions
        (running,) = sessions._inflight[headers["mcp-session-id"]].values()
        assert not running.done()
        await sessions.end(headers["mcp-session-id"])  # ending the session does cancel it
        assert await EVENTS.wait("cancelled", "dropped", 5)


async def test_in_the_modern_era_a_dropped_stream_cancels_the_call() -> None:
    endpoint = worker(InMemoryChannelLayer())
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "probe_hang",
            "arguments": {"key": "modern-drop"},
            "inputResponses": {"probe_hang": {"action": "accept", "content": {"answer": "go"}}},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
            },
        },
    }
    headers = {
        **HEADERS,
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": "probe_hang",
    }
    async with asyncio.timeout(10):
        held = AsgiRequest(endpoint, "POST", headers, body)
        assert await EVENTS.wait("blocked", "modern-drop", 5)
        held.leave()
        assert await EVENTS.wait("cancelled", "modern-drop", 5)
        await held.task
    assert endpoint.server.table.waiting == 0


async def test_a_resource_update_reaches_the_get_stream_another_worker_holds() -> None:
    from tests.support.features import Features

    layer = InMemoryChannelLayer()
    servers, endpoints = [], []
    for _ in range(2):
        relay = ChannelRelay(layer=layer)
        server = MCPServer("team", state_keys=KEYS, relay=relay).plug(Features())
        sessions = LegacySessions(relay, idle_seconds=60)
        server.add_resource_listener(sessions.resource_updated)
        servers.append(server)
        endpoints.append(McpEndpoint(server, sessions))
    a, b = endpoints
    async with asyncio.timeout(10):
        headers = await initialize(a)
        listening = AsgiRequest(b, "GET", {**headers, "accept": "text/event-stream"})
        assert (await listening.start())["status"] == 200
        subscribe = AsgiRequest(
            a,
            "POST",
            headers,
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "resources/subscribe",
                "params": {"uri": "features://note"},
            },
        )
        await subscribe.start()
        assert (await subscribe.body())["result"] == {}
        await servers[0].resource_updated("features://logo")  # nobody subscribed to it
        await servers[0].resource_updated("features://note")
        assert await listening.event() == {
            "jsonrpc": "2.0",
            "method": "notifications/resources/updated",
            "params": {"uri": "features://note"},
        }
        ended = AsgiRequest(a, "DELETE", headers)
        assert (await ended.start())["status"] == 204
        # Ending the session on A ends B's stream: the body closes without another message.
        while (message := await listening.messages.get()).get("more_body"):
            assert message["body"] in (b"", b":\n\n")


async def test_a_worker_keeps_at_most_its_cache_of_sessions_and_reloads_one_it_let_go(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from ask_mcp.workers import sessions

    monkeypatch.setattr(sessions, "MAX_CACHED_SESSIONS", 3)
    endpoint = worker(InMemoryChannelLayer())
    async with asyncio.timeout(10):
        opened = [await initialize(endpoint) for _ in range(5)]
        assert len(endpoint.sessions._cache) == 3  # the two least recently seen were let go
        first = opened[0]["mcp-session-id"]
        assert first not in endpoint.sessions._cache
        again = AsgiRequest(
            endpoint, "POST", opened[0], {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        )
        assert (await again.start())["status"] == 200  # its row stayed: reloaded
        await again.body()
    assert len(endpoint.sessions._cache) == 3 and first in endpoint.sessions._cache
