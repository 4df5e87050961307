"""The inbox over plain HTTP, without a browser: signed-in form posts, and calls held open for an answer.

For tests that need many people or many asks at once (a browser per person would be too slow),
or bytes a browser would never send. The forms are posted exactly as the inbox's own form does:
the same field names, the CSRF token from the cookie, the session cookie.
"""

from __future__ import annotations

import contextlib
import json
import re
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from html import unescape
from typing import Any

import httpx2

from tests.support.browser import Person
from tests.support.live import LiveServer
from tests.support.wire import headers_for, request_body

_ASK_URL = re.compile(r"/asks/([0-9a-f-]{36})/")
_TAGS = re.compile(r"<[^>]+>")


def page_text(html: str) -> str:
    """What a person reads on a page: tags dropped, entities decoded, whitespace collapsed."""
    return " ".join(unescape(_TAGS.sub(" ", html)).split())


class SignedIn:
    """One person's HTTP session with the inbox: their cookies, and their CSRF token."""

    def __init__(self, server: LiveServer, client: httpx2.AsyncClient) -> None:
        self.server = server
        self.client = client

    @property
    def csrf(self) -> str:
        return str(self.client.cookies["csrftoken"])

    async def answer(
        self, ask_id: str, action: str = "accept", *, csrf: str | None = None, **fields: str
    ) -> httpx2.Response:
        """Post the ask's form as its Send/Decline/Cancel button does; `csrf=""` sends none."""
        data = {"action": action, **{f"f:{name}": value for name, value in fields.items()}}
        token = self.csrf if csrf is None else csrf
        if token:
            data["csrfmiddlewaretoken"] = token
        return await self.client.post(f"/asks/{uuid.UUID(ask_id)}/", data=data)


@contextlib.asynccontextmanager
async def signed_in_http(server: LiveServer, person: Person) -> AsyncIterator[SignedIn]:
    """Sign `person` in through the login form; the client keeps their session cookie."""
    async with httpx2.AsyncClient(base_url=server.base_url, timeout=30.0) as client:
        login = await client.get("/accounts/login/")
        assert login.status_code == 200, login.text
        done = await client.post(
            "/accounts/login/",
            data={
                "username": person.username,
                "password": person.password,
                "csrfmiddlewaretoken": str(client.cookies["csrftoken"]),
                "next": "/",
            },
        )
        assert done.status_code == 302 and done.headers["location"] == "/", done.text
        yield SignedIn(server, client)


@dataclass
class HeldCall:
    """A tools/call from a client that cannot show forms, held open until the ask is settled."""

    ask_id: str
    lines: AsyncIterator[str]

    async def result(self) -> dict[str, Any]:
        """The call's final JSON-RPC response (the rest of its SSE stream)."""
        async for line in self.lines:
            if line.startswith("data:") and line[5:].strip():
                reply: dict[str, Any] = json.loads(line[5:])
                if "id" in reply:  # not a notification
                    return reply
        raise AssertionError("the held call's stream ended without a response")


@contextlib.asynccontextmanager
async def held_call(
    url: str,
    tool: str = "user_ask",
    headers: dict[str, str] | None = None,
    http: httpx2.AsyncClient | None = None,
    meta: dict[str, Any] | None = None,
    **arguments: Any,
) -> AsyncIterator[HeldCall]:
    """Start a held call and yield once the server reported where to answer it.

    The request carries a progressToken, so the server's first progress notification names the
    ask's page. Leaving the block closes the connection: the client went away. Many calls at
    once should share one `http` client.
    """
    body = request_body(
        "tools/call",
        {"name": tool, "arguments": arguments},
        meta={
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "held", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {},
            "progressToken": "p",
            **(meta or {}),
        },
    )
    async with contextlib.AsyncExitStack() as stack:
        if http is None:
            http = await stack.enter_async_context(
                httpx2.AsyncClient(timeout=httpx2.Timeout(30.0, read=60.0))
            )
        response = await stack.enter_async_context(
            http.stream("POST", url, json=body, headers={**headers_for(body), **(headers or {})})
        )
        assert response.status_code == 200, await response.aread()
        lines = response.aiter_lines()
        async for line in lines:
            if found := _ASK_URL.search(line):
                break
        else:
            raise AssertionError("the held call ended before it reported its ask")
        yield HeldCall(uuid.UUID(found.group(1)).hex, lines)
