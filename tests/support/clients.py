"""The official MCP client as the tests drive it: a person at the client, the capabilities it declares, a bearer token, the rounds of a call, and the older protocol.

`Person` plays the human behind the client's elicitation callback; `CapsClient` declares
exactly the capabilities a test names; `authed` sends a bearer token; `Rounds` drives a
2026-07-28 call one request at a time; `legacy_call` speaks an initialize-era version;
`sampler` and `roots_lister` answer the server's sampling and roots requests. This `Person`
answers forms at the client; the one in tests/support/browser.py signs in to the inbox.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import httpx2
import mcp.client.session as client_session
from mcp import Client
from mcp.client import ClientRequestContext
from mcp.client.streamable_http import streamable_http_client
from mcp.types import (
    CallToolResult,
    ClientCapabilities,
    CreateMessageRequestParams,
    CreateMessageResult,
    ElicitRequestParams,
    ElicitResult,
    InputRequiredResult,
    ListRootsResult,
    Root,
    TextContent,
)

QUESTIONS = {
    "message": "I need a few details before I can file the ticket.",
    "questions": [
        {"name": "component", "prompt": "Which component?", "options": ["api", "ui", "docs"]},
        {"name": "severity", "prompt": "How bad is it?", "type": "number"},
        {"name": "notes", "prompt": "Anything else?", "required": False},
    ],
}
"""user_ask's arguments for the README's ticket: a choice, a number and an optional note."""

Callback = Callable[[ClientRequestContext, ElicitRequestParams], Awaitable[ElicitResult]]
"""The client's elicitation callback: a form request in, the person's reply out."""


class Person:
    """Plays the human at the client: answers each form from a script and remembers what it saw."""

    def __init__(self, *replies: ElicitResult) -> None:
        self.replies = list(replies)
        self.seen: list[dict[str, Any]] = []

    async def __call__(
        self, ctx: ClientRequestContext, params: ElicitRequestParams
    ) -> ElicitResult:
        self.seen.append(params.model_dump(by_alias=True, mode="json", exclude_none=True))
        return self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]


def accept(**content: Any) -> ElicitResult:
    return ElicitResult(action="accept", content=content)


class CapsClient(Client):
    """An SDK client declaring exactly `caps` (the SDK always declares form and url otherwise)."""

    def __init__(self, *args: Any, caps: ClientCapabilities, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._caps = caps

    async def _build_session(self, exit_stack):  # type: ignore[no-untyped-def]
        session = await super()._build_session(exit_stack)
        session._build_capabilities = lambda version: self._caps
        return session


@contextlib.asynccontextmanager
async def authed(
    url: str, token: str, callback: Any = None, mode: str = "2026-07-28"
) -> AsyncIterator[Client]:
    """The official client sending `Authorization: Bearer <token>` on every request, in `mode`;
    without a callback it shows no forms, so a user_ask waits for an answer in the inbox."""
    headers = {"authorization": f"Bearer {token}"}
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=60.0)) as http:
        transport = streamable_http_client(url, http_client=http)
        async with Client(transport, mode=mode, elicitation_callback=callback) as client:
            yield client


async def ask_with(url: str, token: str, message: str) -> CallToolResult:
    """user_ask as a token's holder, from a client without forms: returns once someone answers."""
    async with asyncio.timeout(40), authed(url, token) as client:
        return await client.call_tool("user_ask", {"message": message})


class Rounds:
    """Drives MRTR rounds one request at a time through the SDK's session."""

    def __init__(self, client: Client) -> None:
        self.session = client.session

    async def first(self, name: str, arguments: dict[str, Any]) -> InputRequiredResult:
        result = await self.session.call_tool(name, arguments, allow_input_required=True)
        assert isinstance(result, InputRequiredResult), result
        return result

    async def retry(
        self, name: str, arguments: dict[str, Any], state: str | None, responses: dict[str, Any]
    ) -> CallToolResult | InputRequiredResult:
        return await self.session.call_tool(
            name,
            arguments,
            input_responses=responses,
            request_state=state,
            allow_input_required=True,
        )


async def legacy_call(
    url: str, callback: Any, name: str, arguments: dict[str, Any], *, version: str = "2025-11-25"
) -> tuple[str, CallToolResult]:
    """One tools/call from the official client speaking `version`; returns the version spoken too."""
    patched = version != client_session.LATEST_HANDSHAKE_VERSION
    previous = client_session.LATEST_HANDSHAKE_VERSION
    if patched:  # the SDK offers LATEST_HANDSHAKE_VERSION; this is its documented way to go older
        client_session.LATEST_HANDSHAKE_VERSION = version
    try:
        async with (
            asyncio.timeout(15),
            Client(url, mode="legacy", elicitation_callback=callback) as client,
        ):
            result = await client.call_tool(name, arguments)
            return client.protocol_version, result
    finally:
        client_session.LATEST_HANDSHAKE_VERSION = previous


async def sampler(
    ctx: ClientRequestContext, params: CreateMessageRequestParams
) -> CreateMessageResult:
    """The client's model, for sampling: echoes the message and the system prompt."""
    (message,) = params.messages
    asked = message.content.text  # type: ignore[union-attr]
    return CreateMessageResult(
        role="assistant",
        content=TextContent(type="text", text=f"echo: {asked} / {params.system_prompt}"),
        model="test-model",
        stop_reason="endTurn",
    )


async def roots_lister(ctx: ClientRequestContext) -> ListRootsResult:
    """The client's roots: two folders, one of them named."""
    return ListRootsResult(roots=[Root(uri="file:///work/a", name="a"), Root(uri="file:///work/b")])
