"""Hardening, round two (issue 20), shown through the surfaces an attacker or a careless agent uses.

A page of another port of the same host, in a real browser with the person's session cookie,
tries the inbox socket; one token floods the elicitation table while another still asks; the
embedded default's files are checked for their modes. The daphne limits (body size, slow
headers, connections per address) are in tests/transports/test_daphne_limits.py.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from playwright.async_api import Page

from tests.support.browser import OpenAs, Person, live_inbox
from tests.support.live import LiveServer

pytestmark = pytest.mark.asyncio(loop_scope="session")

OPEN_SOCKET = """(url) => new Promise((resolve) => {
    const socket = new WebSocket(url);
    socket.onmessage = (event) => { resolve("read: " + event.data.length + " bytes"); socket.close(); };
    socket.onclose = (event) => resolve(event.code);
})"""
"""Open the inbox socket from the page; resolves to what came of it (read, or the close code)."""


class _Page(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"<!doctype html><title>another server on this host</title>"
        self.send_response(200)
        self.send_header("content-type", "text/html")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        return None


@pytest.fixture
def other_port() -> Iterator[str]:
    """A plain web server on another port of 127.0.0.1: what a neighbour on the machine runs."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Page)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def socket_url(web: LiveServer) -> str:
    return web.base_url.replace("http://", "ws://") + "/ws/inbox/"


async def test_a_page_on_another_port_of_the_same_host_cannot_open_the_inbox_socket(
    web: LiveServer, admin: Person, open_as: OpenAs, other_port: str
) -> None:
    page: Page = await open_as(admin)
    await live_inbox(page)  # the inbox's own page opens it: same scheme, host and port
    own = await page.evaluate(OPEN_SOCKET, socket_url(web))
    assert isinstance(own, str) and own.startswith("read: ")

    # The same signed-in context (its session cookie is sent: cookies ignore ports) on a page
    # served by another port of 127.0.0.1.
    neighbour = await page.context.new_page()
    await neighbour.goto(other_port + "/")
    outcome = await neighbour.evaluate(OPEN_SOCKET, socket_url(web))
    await neighbour.close()
    assert outcome == 1006  # the handshake was refused (403): nothing was pushed
    assert '"GET /ws/inbox/" 403' in web.log() or "WSREJECT /ws/inbox/" in web.log()
