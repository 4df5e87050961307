"""The initialize era in process: Server.initialize and Server.handle_legacy, no sockets, no Django.

A question goes out as an `elicitation/create` request on the call's stream and comes back
through the transport's ResponseRouter; results carry no resultType; capability problems are
-32600 errors or error results, since this era has no -32021.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from ask_mcp.protocol.jsonrpc import JsonRpcError, Request
from ask_mcp.server import Context, Server, Toolkit, prompt, resource, tool
from ask_mcp.server.eras.legacy import ALREADY_INITIALIZED, LegacySession
from tests.support.wire import FORM_CAPS, reply_problem

COLOUR: dict[str, Any] = {
    "type": "object",
    "properties": {"colour": {"type": "string"}},
    "required": ["colour"],
}
WAIT = 5.0
"""The longest any step of these tests may take."""


class Studio(Toolkit):
    @tool("ask")
    async def ask(self, ctx: Context, arguments: dict[str, Any]) -> str:
        """Asks for a colour."""
        reply = await ctx.elicit("Which colour?", COLOUR)
        return f"{reply.action}:{(reply.content or {}).get('colour')}"

    @tool("sample", required_capabilities={"sampling": {}})
    async def sample(self, ctx: Context, arguments: dict[str, Any]) -> str:
        """Needs sampling."""
        return "sampled"

    @prompt("sketch", required_capabilities={"sampling": {}})
    async def sketch(self, ctx: Context, arguments: dict[str, str]) -> str:
        """Needs sampling too."""
        return "a sketch"

    @resource("studio://palette")
    async def palette(self, ctx: Context, uri: str, variables: dict[str, str]) -> str:
        """The palette."""
        return "teal, ochre"


class Wire:
    """A call's stream: what the server writes on it, seen as it happens (a Stream)."""

    def __init__(self, *, allows_sse: bool = True) -> None:
        self.allows_sse = allows_sse
        self.closed = False
        self.sent: list[dict[str, Any]] = []
        self.wrote = asyncio.Event()

    async def notify(self, message: dict[str, Any]) -> None:
        self.sent.append(message)
        self.wrote.set()


class Router:
    """The transport's side of our requests: a future per id (a ResponseRouter)."""

    def __init__(self) -> None:
        self.waiting: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self.forgotten: list[str] = []

    def expect(self, request_id: str) -> asyncio.Future[dict[str, Any]]:
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.waiting[request_id] = future
        return future

    def forget(self, request_id: str) -> None:
        self.forgotten.append(request_id)


def session(version: str = "2025-11-25", capabilities: dict[str, Any] | None = None) -> Any:
    return LegacySession(
        id="s-1",
        protocol_version=version,
        capabilities=FORM_CAPS if capabilities is None else capabilities,
        client_info={"name": "sketchbook", "version": "1"},
    )


async def send(
    server: Server, method: str, params: dict[str, Any], **kw: Any
) -> dict[str, Any] | None:
    async with asyncio.timeout(WAIT):
        return await server.handle_legacy(
            Request(method, params, id=3), session=kw.pop("session", None) or session(), **kw
        )


def checked(method: str, version: str, reply: dict[str, Any] | None) -> dict[str, Any]:
    assert reply is not None
    assert "resultType" not in reply.get("result", {})
    problem = reply_problem(method, version, reply)
    assert problem is None, problem
    return reply


def test_initialize_negotiates_the_version_and_states_subscribable_resources() -> None:
    server = Server("studio", "2.0", "Paint carefully.", title="Studio").plug(Studio())
    params = {
        "protocolVersion": "2025-06-18",
        "capabilities": FORM_CAPS,
        "clientInfo": {"name": "sketchbook", "version": "1"},
    }
    result, version, capabilities, info = server.initialize(Request("initialize", params, id=0))
    assert (version, capabilities, info) == ("2025-06-18", FORM_CAPS, params["clientInfo"])
    assert result == {
        "protocolVersion": "2025-06-18",
        "capabilities": {
            "tools": {},
            "prompts": {},
            "resources": {"subscribe": True},
            "logging": {},
        },
        "serverInfo": {"name": "studio", "version": "2.0", "title": "Studio"},
        "instructions": "Paint carefully.",
    }
    unknown = {**params, "protocolVersion": "1999-01-01"}
    assert server.initialize(Request("initialize", unknown, id=0))[1] == "2025-11-25"
    with pytest.raises(JsonRpcError) as raised:
        server.initialize(Request("initialize", {"protocolVersion": 7}, id=0))
    assert raised.value.code == -32602
    assert (
        raised.value.message == "initialize: params.protocolVersion must be a string, got a number"
    )


@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25"])
async def test_a_pushed_question_is_answered_through_the_response_router(version: str) -> None:
    server = Server("studio").plug(Studio())
    wire, router = Wire(), Router()
    handling = asyncio.ensure_future(
        send(
            server,
            "tools/call",
            {"name": "ask", "arguments": {}},
            session=session(version),
            stream=wire,
            responses=router,
        )
    )
    async with asyncio.timeout(WAIT):
        await wire.wrote.wait()
    (pushed,) = wire.sent
    assert pushed["method"] == "elicitation/create"
    expected = {"message": "Which colour?", "requestedSchema": COLOUR}
    if version == "2025-11-25":
        expected = {"mode": "form", **expected}  # 2025-06-18 had no mode field
    assert pushed["params"] == expected
    router.waiting[pushed["id"]].set_result(
        {"id": pushed["id"], "result": {"action": "accept", "content": {"colour": "teal"}}}
    )
    async with asyncio.timeout(WAIT):
        reply = checked("tools/call", version, await handling)
    assert reply["result"]["content"] == [{"type": "text", "text": "accept:teal"}]
    assert router.forgotten == [pushed["id"]]
    assert server.table.waiting == 0


async def test_a_stream_that_cannot_carry_a_request_leaves_nobody_to_ask() -> None:
    server = Server("studio").plug(Studio())
    reply = await send(
        server,
        "tools/call",
        {"name": "ask", "arguments": {}},
        stream=Wire(allows_sse=False),
        responses=Router(),
    )
    result = checked("tools/call", "2025-11-25", reply)["result"]
    assert result["isError"] is True
    assert result["content"][0]["text"].startswith(
        "This tool needs to ask the user a question, and nobody can be asked"
    )


async def test_initialize_inside_a_session_and_unknown_methods_are_refused() -> None:
    server = Server("studio").plug(Studio())
    again = await send(server, "initialize", {"protocolVersion": "2025-11-25"})
    assert again is not None
    assert again["error"] == {"code": -32600, "message": ALREADY_INITIALIZED}
    assert ALREADY_INITIALIZED == (
        "Invalid request: this session is already initialized; start a new one by sending "
        "initialize without an Mcp-Session-Id header"
    )
    for method in ("server/discover", "nope/never"):
        reply = await send(server, method, {})
        assert reply is not None
        assert reply["error"] == {"code": -32601, "message": f"Method not found: {method!r}"}
    bare = Server("bare")
    listing = await send(bare, "prompts/list", {})
    assert listing is not None and listing["error"]["code"] == -32601


async def test_a_missing_client_capability_maps_to_this_eras_answers() -> None:
    server = Server("studio").plug(Studio())
    tool_reply = checked(
        "tools/call", "2025-11-25", await send(server, "tools/call", {"name": "sample"})
    )
    assert tool_reply["result"] == {
        "content": [
            {
                "type": "text",
                "text": "sample needs the client capabilities sampling, which the client did "
                "not declare",
            }
        ],
        "isError": True,
    }
    prompt_reply = await send(server, "prompts/get", {"name": "sketch"})
    assert prompt_reply is not None
    assert prompt_reply["error"] == {
        "code": -32600,
        "message": "sketch needs the client capabilities sampling, which the client did not "
        "declare",
        "data": {"requiredCapabilities": {"sampling": {}}},
    }


async def test_lists_carry_no_caching_hints_and_unknown_resources_are_32002() -> None:
    server = Server("studio").plug(Studio())
    listing = checked("tools/list", "2025-11-25", await send(server, "tools/list", {}))
    assert set(listing["result"]) == {"tools"}
    read = checked(
        "resources/read",
        "2025-11-25",
        await send(server, "resources/read", {"uri": "studio://palette"}),
    )
    assert read["result"] == {"contents": [{"uri": "studio://palette", "text": "teal, ochre"}]}
    missing = await send(server, "resources/subscribe", {"uri": "studio://nothing"})
    assert missing is not None
    assert missing["error"] == {
        "code": -32002,
        "message": "Resource not found: 'studio://nothing'",
        "data": {"uri": "studio://nothing"},
    }


async def test_subscriptions_and_the_log_level_are_kept_on_the_session() -> None:
    server = Server("studio").plug(Studio())
    held = session()
    assert await send(server, "resources/subscribe", {"uri": "studio://palette"}, session=held)
    assert held.subscriptions == {"studio://palette"}
    assert await send(server, "logging/setLevel", {"level": "warning"}, session=held)
    assert held.log_level == "warning"
    bad = await send(server, "logging/setLevel", {"level": "loud"}, session=held)
    assert bad is not None and bad["error"]["code"] == -32602
    ping = checked("ping", "2025-11-25", await send(server, "ping", {}, session=held))
    assert ping["result"] == {}
