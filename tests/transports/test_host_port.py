"""The Host port guard in front of the whole application, in process: which ports a Host may name, for HTTP and sockets."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import override_settings

from ask_mcp.transports.host_port import MISDIRECTED, OwnPortOnly

pytestmark = pytest.mark.asyncio


async def served(scope: dict[str, Any]) -> list[dict[str, Any]]:
    """What the guard sends for `scope` (the application behind it answers 200)."""
    sent: list[dict[str, Any]] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})

    async def receive() -> dict[str, Any]:
        return {"type": "websocket.connect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await OwnPortOnly(app)(scope, receive, send)
    return sent


def scope_for(
    host: str | None, *, kind: str = "http", scheme: str = "http", server: Any = ("127.0.0.1", 8001)
) -> dict[str, Any]:
    headers = [] if host is None else [(b"host", host.encode())]
    return {"type": kind, "scheme": scheme, "headers": headers, "server": server}


@pytest.mark.parametrize(
    "host, status",
    [
        ("ask.example.com", 200),  # a proxy's `Host $host`: https's 443, PUBLIC_URL's port
        ("ask.example.com:443", 200),
        ("127.0.0.1:8001", 200),  # the worker's own port: a probe or a scrape reaching it directly
        ("ask.example.com:8443", MISDIRECTED),
        ("127.0.0.1:9000", MISDIRECTED),
        (None, 200),  # no Host at all: Django's to refuse
    ],
)
@override_settings(ASK_MCP={"PUBLIC_URL": "https://ask.example.com"})
async def test_behind_a_proxy_public_urls_port_and_the_workers_own_are_served(
    host: str | None, status: int
) -> None:
    (start, *_) = await served(scope_for(host))
    assert start["status"] == status


@override_settings(ASK_MCP={})
async def test_without_public_url_only_the_listening_port_is_served_and_a_socket_is_closed() -> (
    None
):
    assert (await served(scope_for("127.0.0.1:8001")))[0]["status"] == 200
    assert (await served(scope_for("127.0.0.1")))[0]["status"] == MISDIRECTED  # port 80
    refused = await served(scope_for("127.0.0.1:9000", kind="websocket", scheme="ws"))
    assert refused == [{"type": "websocket.close", "code": 1008}]
    # A Unix socket has no port to compare: nothing is refused for its port.
    assert (await served(scope_for("127.0.0.1:9000", server=("/run/a.sock", None))))[0][
        "status"
    ] == 200
