"""The /mcp endpoint in process, through Channels' own testing communicators: HTTP's checks, JSON replies, and SSE once a call streams.

No socket: `channels.testing.HttpCommunicator` and `ApplicationCommunicator` play the ASGI
server, so every refusal of the validation ladder that only HTTP shows, and the switch from a
JSON reply to an event stream, is seen as a client would see it.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from channels.testing import ApplicationCommunicator, HttpCommunicator

from ask_mcp.protocol import mcp
from ask_mcp.server import Context, Server, Toolkit, tool
from ask_mcp.transports.http import STOPPING_TEXT, McpEndpoint
from tests.support.wire import META, assert_valid, headers_for, request_body, sse_messages

WAIT = 5.0
"""The longest a response may take to arrive: a hang fails, it does not stall the suite."""
HEADERS = {
    "host": "127.0.0.1:8000",
    "content-type": "application/json",
    "accept": "application/json, text/event-stream",
}


class Desk(Toolkit):
    default_prefix = ""

    def __init__(self) -> None:
        self.release = asyncio.Event()

    @tool("echo")
    async def echo(self, ctx: Context, arguments: dict[str, Any]) -> str:
        """Says what it was given."""
        return str(arguments.get("text", ""))

    @tool("progress")
    async def progress(self, ctx: Context, arguments: dict[str, Any]) -> str:
        """Reports progress, then waits to be released."""
        await ctx.report_progress(1, 2)
        await self.release.wait()
        return "released"


def endpoint() -> tuple[McpEndpoint, Desk]:
    desk = Desk()
    return McpEndpoint(Server("desk").plug(desk)), desk


def body(method: str, params: dict[str, Any] | None = None) -> bytes:
    return json.dumps(request_body(method, params)).encode()


def communicator(
    app: McpEndpoint, method: str = "POST", data: bytes = b"", **headers: str
) -> ApplicationCommunicator:
    """A request from a loopback client, as daphne would hand it over."""
    message = json.loads(data) if data.startswith(b"{") and data.endswith(b"}") else {}
    merged = {
        **HEADERS,
        **(headers_for(message) if "method" in message else {}),
        **{name.replace("_", "-"): value for name, value in headers.items()},
    }
    scope = {
        "type": "http",
        "http_version": "1.1",
        "method": method,
        "path": "/mcp",
        "raw_path": b"/mcp",
        "query_string": b"",
        "scheme": "http",
        "headers": [(k.encode(), v.encode()) for k, v in merged.items()],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
    }
    talk = ApplicationCommunicator(app, scope)
    talk.data = data  # type: ignore[attr-defined]
    return talk


async def respond(talk: ApplicationCommunicator) -> dict[str, Any]:
    """Send the request's body and read the whole response: status, headers and body."""
    await talk.send_input({"type": "http.request", "body": talk.data})  # type: ignore[attr-defined]
    start = await talk.receive_output(WAIT)
    assert start["type"] == "http.response.start"
    content = b""
    while True:
        chunk = await talk.receive_output(WAIT)
        content += chunk["body"]
        if not chunk.get("more_body", False):
            break
    return {"status": start["status"], "headers": dict(start["headers"]), "body": content}


async def test_a_call_is_answered_as_json_with_its_length() -> None:
    app, _ = endpoint()
    reply = await respond(
        communicator(app, data=body("tools/call", {"name": "echo", "arguments": {"text": "hi"}}))
    )
    assert reply["status"] == 200
    assert reply["headers"][b"content-type"] == b"application/json"
    assert int(reply["headers"][b"content-length"]) == len(reply["body"])
    result = assert_valid("tools/call", json.loads(reply["body"]))["result"]
    assert result["content"][0]["text"] == "hi"


async def test_a_request_without_a_loopback_client_or_token_is_unauthorized() -> None:
    app, _ = endpoint()
    headers = [(k.encode(), v.encode()) for k, v in HEADERS.items()]
    talk = HttpCommunicator(app, "POST", "/mcp", body=body("tools/list"), headers=headers)
    reply = await talk.get_response(timeout=WAIT)
    assert reply["status"] == 401
    assert dict(reply["headers"])[b"www-authenticate"].startswith(b"Bearer")
    assert b"Authorization: Bearer" in reply["body"]


@pytest.mark.parametrize(
    "method, headers, data, status, words",
    [
        ("POST", {"host": "evil.example"}, b"{}", 403, b"not in ALLOWED_HOSTS"),
        ("POST", {"origin": "http://evil.example"}, b"{}", 403, b"Origin"),
        ("PUT", {}, b"{}", 405, b"send each message as a POST"),
        ("POST", {"content-type": "text/plain"}, b"{}", 415, b"application/json"),
        ("POST", {"accept": "text/html"}, b"{}", 406, b"Not Acceptable"),
        ("POST", {}, b"{not json", 400, b"Parse error"),
        (
            "POST",
            {"mcp-protocol-version": "2026-07-28"},
            b'{"jsonrpc":"2.0","id":5,"result":{}}',
            400,
            b"only accepted inside",
        ),
    ],
)
async def test_http_refusals_come_in_the_ladders_order_and_say_why(
    method: str, headers: dict[str, str], data: bytes, status: int, words: bytes
) -> None:
    app, _ = endpoint()
    reply = await respond(communicator(app, method, data, **headers))
    assert reply["status"] == status
    assert words in reply["body"]


async def test_a_method_error_carries_its_http_status_and_a_notification_is_202() -> None:
    app, _ = endpoint()
    unknown = await respond(communicator(app, data=body("prompts/list")))  # no prompts plugged
    assert unknown["status"] == 404 and json.loads(unknown["body"])["error"]["code"] == -32601
    note = json.dumps(
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"_meta": META}}
    )
    accepted = await respond(communicator(app, data=note.encode()))
    assert (accepted["status"], accepted["body"]) == (202, b"")


async def test_a_call_that_reports_progress_becomes_an_event_stream_ending_with_its_reply() -> None:
    app, desk = endpoint()
    meta = {**META, mcp.META_PROGRESS_TOKEN: "p1"}
    message = request_body("tools/call", {"name": "progress", "arguments": {}}, meta=meta)
    talk = communicator(app, data=json.dumps(message).encode())
    await talk.send_input({"type": "http.request", "body": talk.data})  # type: ignore[attr-defined]
    start = await talk.receive_output(WAIT)
    assert start["status"] == 200
    assert dict(start["headers"])[b"content-type"] == b"text/event-stream"
    first = await talk.receive_output(WAIT)
    assert sse_messages(first["body"].decode())[0]["params"] == {
        "progressToken": "p1",
        "progress": 1,
        "total": 2,
    }
    desk.release.set()
    content = b""
    while True:
        chunk = await talk.receive_output(WAIT)
        content += chunk["body"]
        if not chunk.get("more_body", False):
            break
    (final,) = sse_messages(content.decode())
    assert final["result"]["content"][0]["text"] == "released"


async def test_a_client_that_leaves_cancels_its_call() -> None:
    app, desk = endpoint()
    cancelled = asyncio.Event()
    original = desk.release.wait

    async def waiting() -> bool:
        try:
            return await original()
        except asyncio.CancelledError:
            cancelled.set()
            raise

    desk.release.wait = waiting  # type: ignore[method-assign]
    message = body("tools/call", {"name": "progress", "arguments": {}})
    talk = communicator(app, data=message, accept="application/json")
    await talk.send_input({"type": "http.request", "body": message})
    await talk.send_input({"type": "http.disconnect"})
    async with asyncio.timeout(WAIT):
        await cancelled.wait()
    await talk.wait(WAIT)


async def test_a_stopping_worker_answers_503_with_retry_after() -> None:
    app, _ = endpoint()
    app.server.table.stopping = True
    reply = await respond(communicator(app, data=body("tools/list")))
    assert reply["status"] == 503 and reply["headers"][b"retry-after"] == b"1"
    assert reply["body"].decode().find(STOPPING_TEXT[:40]) >= 0


def test_the_endpoint_serves_http_only() -> None:
    app, _ = endpoint()
    with pytest.raises(ValueError, match="HTTP only, not 'websocket'"):
        asyncio.run(app({"type": "websocket"}, None, None))  # type: ignore[arg-type]
