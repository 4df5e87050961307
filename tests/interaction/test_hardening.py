"""Hardening, round two (issue 20), shown through the surfaces an attacker or a careless agent uses.

A page of another port of the same host, in a real browser with the person's session cookie,
tries the inbox socket; one token floods the elicitation table while another still asks; the
embedded default's files are checked for their modes. The daphne limits (body size, slow
headers, connections per address) are in tests/transports/test_daphne_limits.py.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from playwright.async_api import Page

from tests.support import calls
from tests.support.browser import OpenAs, Person, live_inbox
from tests.support.live import LiveServer, LiveServers
from tests.team.test_auth import SECURED

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


# ---------------------------------------------------------------- a fair share of the table

FLOODED = {**SECURED, "ELICITATION_TTL": 120}
"""Tokens required, the default capacity (64) and share (16); its own server, as the flood
leaves parked calls behind until their TTL."""


def issue_tokens(server: LiveServer, *names: str) -> dict[str, str]:
    script = (
        "import json; from django.contrib.auth.models import User;"
        "from ask_mcp.team.auth import issue_token;"
        "print(json.dumps({name: issue_token(User.objects.get_or_create(username=name)[0],"
        f" name='hardening')[1] for name in {names!r}}}))"
    )
    issued: dict[str, str] = json.loads(server.manage("shell", "-c", script).splitlines()[-1])
    return issued


async def test_one_token_that_floods_the_table_gets_its_share_and_others_still_ask(
    live_servers: LiveServers,
) -> None:
    server = live_servers.get(FLOODED)
    tokens = issue_tokens(server, "noisy", "quiet")
    as_noisy = {"authorization": f"Bearer {tokens['noisy']}"}
    as_quiet = {"authorization": f"Bearer {tokens['quiet']}"}
    async with calls.client() as http, asyncio.timeout(60):
        flood = await asyncio.gather(
            *(
                calls.rpc(
                    http,
                    server.mcp_url,
                    calls.call_body("user_ask", {"message": f"{n}?"}),
                    as_noisy,
                )
                for n in range(64)
            )
        )
        parked = [
            reply for _, reply in flood if reply["result"].get("resultType") == "input_required"
        ]
        refused = [reply["result"] for _, reply in flood if reply["result"].get("isError")]
        status, other = await calls.rpc(
            http, server.mcp_url, calls.call_body("user_ask", {"message": "Mine?"}), as_quiet
        )
    assert len(parked) == 16 and len(refused) == 48
    assert refused[0]["content"][0]["text"] == (
        "You already have 16 questions waiting for answers, your share of this server "
        "(ASK_MCP['ELICITATION_PER_PRINCIPAL']); other people can still ask. Wait for some to "
        "be answered, or carry on without asking."
    )
    assert status == 200 and other["result"]["resultType"] == "input_required"
