"""Server, the engine: its settings checked, toolkits loaded by name, and the one boundary where exceptions become errors."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from ask_mcp.protocol.jsonrpc import Request
from ask_mcp.server import Context, Server, Toolkit, tool
from ask_mcp.server.catalog.registry import ToolkitConfigError
from ask_mcp.server.eras.legacy import LegacySession
from ask_mcp.server.identity import Identity
from tests.support.wire import META, assert_valid

WAIT = 5.0
"""The longest a request here may take: a hang fails, it does not stall the suite."""


class Desk(Toolkit):
    default_prefix = ""

    @tool("whoami")
    async def whoami(self, ctx: Context, arguments: dict[str, Any]) -> str:
        """Names the caller."""
        return f"{ctx.who.principal}/{ctx.era}"

    @tool("crash")
    async def crash(self, ctx: Context, arguments: dict[str, Any]) -> str:
        """Fails unexpectedly."""
        raise RuntimeError("disk on fire")


def modern(
    method: str, params: dict[str, Any] | None = None, request_id: int | None = 1
) -> Request:
    return Request(method, {**(params or {}), "_meta": META}, id=request_id)


async def answer(server: Server, request: Request, **kw: Any) -> dict[str, Any] | None:
    async with asyncio.timeout(WAIT):
        return await server.handle_modern(request, **kw)


@pytest.mark.parametrize(
    "options, words",
    [
        ({"elicitation_capacity": 0}, "elicitation_capacity must be at least 1"),
        ({"elicitation_share": 0}, "elicitation_share must be at least 1"),
        ({"elicitation_ttl": 0}, "elicitation_ttl must be a positive number"),
    ],
)
def test_a_server_with_limits_that_cannot_work_is_refused(
    options: dict[str, Any], words: str
) -> None:
    with pytest.raises(ValueError, match=words):
        Server("s", **options)


def test_toolkits_load_by_name_with_their_settings_kept_as_given() -> None:
    server = Server("s", tools={"Ask": {"prefix": "team"}})
    assert "team_ask" in server.tools
    assert server.tool_config == {"Ask": {"prefix": "team"}}
    with pytest.raises(ToolkitConfigError, match="tools must be an object"):
        Server("s", tools=["Ask"])  # type: ignore[arg-type]


async def test_a_call_reaches_its_tool_as_the_caller_it_was_admitted_as() -> None:
    server = Server("s").plug(Desk())
    reply = await answer(server, modern("tools/call", {"name": "whoami"}), who=Identity("user:4"))
    assert reply is not None
    assert assert_valid("tools/call", reply)["result"]["content"][0]["text"] == "user:4/modern"


async def test_notifications_get_no_reply_and_errors_become_json_rpc_errors(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = Server("s").plug(Desk())
    assert await answer(server, modern("notifications/cancelled", request_id=None)) is None
    unknown = await answer(server, modern("prompts/list"))  # no prompts plugged: no such method
    assert unknown is not None and unknown["error"]["code"] == -32601
    bad = await answer(server, modern("tools/call", {"name": "nope"}))
    assert bad is not None and bad["error"]["code"] == -32602 and bad["id"] == 1
    crashed = await answer(server, modern("tools/call", {"name": "crash"}))
    assert (
        crashed is not None and crashed["result"]["isError"] is True
    )  # a tool's crash is a result
    with caplog.at_level(logging.ERROR, "ask_mcp.server"):
        broken = await server.handle_modern(Request("tools/list", {"_meta": "not an object"}, id=2))
    assert broken is not None and broken["error"]["code"] in (-32600, -32602)


async def test_the_legacy_era_answers_inside_its_session_with_its_own_capabilities() -> None:
    server = Server("s", "2.0", "Be kind.").plug(Desk())
    result, version, capabilities, info = server.initialize(
        Request(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "c", "version": "1"},
            },
            id=1,
        )
    )
    assert version == "2025-06-18" and capabilities == {} and info == {"name": "c", "version": "1"}
    assert result["serverInfo"] == {"name": "s", "version": "2.0"}
    assert result["instructions"] == "Be kind." and result["capabilities"] == {
        "tools": {},
        "logging": {},
    }
    session = LegacySession(id="s1", protocol_version=version, capabilities={})
    async with asyncio.timeout(WAIT):
        reply = await server.handle_legacy(
            Request("tools/call", {"name": "whoami"}, id=2), session=session, who=Identity("user:5")
        )
    assert reply is not None and reply["result"]["content"][0]["text"] == "user:5/legacy"


async def test_resource_updates_reach_every_listener() -> None:
    server = Server("s")
    heard: list[str] = []

    async def listener(uri: str) -> None:
        heard.append(uri)

    server.add_resource_listener(listener)
    server.add_resource_listener(listener)
    await server.resource_updated("notes://1")
    assert heard == ["notes://1", "notes://1"]
