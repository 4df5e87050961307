"""The deadline a request body must meet under servers without one (ask_mcp.transports.deadlines): BodyDeadline answers a slow body 408 with Connection: close and tells the application it left; a prompt body, and a response held after it, are untouched.

In process: the middleware wraps a small application and channels' ApplicationCommunicator plays
the server, so the application's view (what it received, what of its answer went out) is checked
too.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any, Final

import pytest
from channels.testing import ApplicationCommunicator
from django.conf import settings
from django.test import override_settings

from ask_mcp.transports.deadlines import (
    RATE_SETTING,
    TIMEOUT_SETTING,
    BodyDeadline,
    Message,
    Receive,
    Send,
    body_deadline,
    too_slow_text,
)

TIMEOUT: Final = 0.3
"""The BODY_TIMEOUT_SECONDS these tests run with: short, so a body that stops is cut soon."""
RATE: Final = 1000
"""The BODY_MIN_BYTES_PER_SECOND: a millisecond more per byte sent."""
WAIT: Final = 10.0
"""The most any step waits for what it expects (it comes within TIMEOUT)."""
SCOPE: Final[Message] = {"type": "http", "method": "POST", "path": "/mcp", "headers": []}


@pytest.fixture(autouse=True)
def deadline() -> Iterator[None]:
    config = {
        **settings.ASK_MCP,
        "BODY_TIMEOUT_SECONDS": TIMEOUT,
        "BODY_MIN_BYTES_PER_SECOND": RATE,
    }
    with override_settings(ASK_MCP=config):
        yield


class Echo:
    """An application that reads the whole body, waits for `release` when given one, answers
    200 with the body's length, and keeps every message it received."""

    def __init__(self, release: asyncio.Event | None = None) -> None:
        self.release = release
        self.received: list[Message] = []

    async def __call__(self, scope: Message, receive: Receive, send: Send) -> None:
        size = 0
        while True:
            message = await receive()
            self.received.append(message)
            if message["type"] != "http.request":
                break
            size += len(message.get("body", b""))
            if not message.get("more_body", False):
                break
        if self.release is not None:
            await self.release.wait()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": str(size).encode()})


def chunk(body: bytes, *, more: bool) -> dict[str, Any]:
    return {"type": "http.request", "body": body, "more_body": more}


async def answer(server: ApplicationCommunicator) -> tuple[Message, bytes]:
    start = await server.receive_output(WAIT)
    body = await server.receive_output(WAIT)
    return start, body["body"]


async def test_a_body_that_stops_arriving_gets_408_with_connection_close() -> None:
    app = Echo()
    server = ApplicationCommunicator(BodyDeadline(app), SCOPE)
    await server.send_input(chunk(b"{", more=True))
    start, body = await answer(server)
    assert start["status"] == 408
    headers = dict(start["headers"])
    assert headers[b"connection"] == b"close"
    assert headers[b"content-length"] == str(len(body)).encode()
    assert body == too_slow_text()
    assert TIMEOUT_SETTING.encode() in body and RATE_SETTING.encode() in body

    # The server closes the connection: the application's wait ends with a disconnect, and
    # what it says after the 408 goes nowhere.
    await server.send_input(chunk(b"}", more=False))
    await server.wait(WAIT)
    assert app.received == [chunk(b"{", more=True), {"type": "http.disconnect"}]
    assert server.output_queue.empty()


async def test_a_prompt_body_in_pieces_reaches_the_application_whole() -> None:
    app = Echo()
    server = ApplicationCommunicator(BodyDeadline(app), SCOPE)
    await server.send_input(chunk(b'{"a":', more=True))
    await server.send_input(chunk(b"1}", more=False))
    start, body = await answer(server)
    assert (start["status"], body) == (200, b"7")
    assert [message["body"] for message in app.received] == [b'{"a":', b"1}"]
    await server.wait(WAIT)


async def test_a_response_held_long_after_its_body_arrived_is_not_cut() -> None:
    release = asyncio.Event()
    server = ApplicationCommunicator(BodyDeadline(Echo(release)), SCOPE)
    await server.send_input(chunk(b"{}", more=False))
    # A held call waits for its person well past the body's deadline: nothing may go out.
    await server.receive_nothing(timeout=TIMEOUT * 4)
    release.set()
    start, body = await answer(server)
    assert (start["status"], body) == (200, b"2")
    await server.wait(WAIT)


async def test_other_scopes_pass_through_untouched() -> None:
    seen: list[Message] = []

    async def app(scope: Message, receive: Receive, send: Send) -> None:
        seen.append(await receive())
        await send({"type": "lifespan.startup.complete"})

    server = ApplicationCommunicator(BodyDeadline(app), {"type": "lifespan"})
    await server.send_input({"type": "lifespan.startup"})
    assert await server.receive_output(WAIT) == {"type": "lifespan.startup.complete"}
    assert seen == [{"type": "lifespan.startup"}]
    await server.wait(WAIT)


def test_the_deadline_grows_a_second_per_rate_of_bytes_sent() -> None:
    assert body_deadline(100.0, 0) == pytest.approx(100.0 + TIMEOUT)
    assert body_deadline(100.0, 2 * RATE) == pytest.approx(100.0 + TIMEOUT + 2)
