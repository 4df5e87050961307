"""The server's own address, live: links people follow come from PUBLIC_URL alone, and a Host naming another port is refused.

Issue 28, item 1. An agent sent `Host: 127.0.0.1:<another port>` to /mcp: the link in a
teammate's mail then led to a listener on that port, which received their session and CSRF
cookies with one click (browsers send a host's cookies to every port). Here the same agent is
refused before anyone is told of its ask; mail and URL mode do not start without PUBLIC_URL;
without it the progress texts carry no link; the inbox's socket refuses such a Host too; and a
link to another port of the server's own host in an agent's Markdown is shown as text.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import uuid
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
from playwright.async_api import expect

from tests.support.browser import WEB_CONFIG, OpenAs, Person, add_user, open_card
from tests.support.inbox_http import held_call, signed_in_http
from tests.support.live import LiveServer, LiveServers
from tests.support.mailbox import Mailbox
from tests.support.ports import free_port
from tests.support.reach import QUESTIONS, REACH_CONFIG, Crew, ask, mail_env, mails_for
from tests.support.wire import headers_for, request_body

pytestmark = pytest.mark.asyncio(loop_scope="session")

NO_PUBLIC_URL: dict[str, Any] = {"PUBLIC_URL": None}
"""A server started without PUBLIC_URL (the kit gives every other its own address)."""


@pytest.fixture(scope="module")
def mailing(live_servers: LiveServers, mailbox: Mailbox) -> Iterator[LiveServer]:
    live = live_servers.start(REACH_CONFIG, extra_env=mail_env(mailbox))
    yield live
    live_servers.stop(live)


def call_body(message: str, *, progress: bool = False) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "agent", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    if progress:
        meta["progressToken"] = "p"
    arguments = {"message": message, "questions": QUESTIONS}
    return request_body("tools/call", {"name": "user_ask", "arguments": arguments}, meta=meta)


async def status_with_host(url: str, body: dict[str, Any], host: str, **headers: str) -> int:
    """The status a tools/call gets with `host` as its Host header (the headers only: a held
    call's stream is left at once)."""
    async with (
        httpx2.AsyncClient(timeout=httpx2.Timeout(30.0, read=40.0)) as http,
        http.stream(
            "POST", url, json=body, headers={**headers_for(body), **headers, "host": host}
        ) as response,
    ):
        return response.status_code


async def test_an_agent_naming_another_port_in_host_is_refused_and_mail_links_to_public_url(
    mailing: LiveServer, mailbox: Mailbox
) -> None:
    crew = Crew(mailing)
    listener = free_port()  # where the agent wanted the teammate's link to lead
    poisoned = f"Poisoned host? [{crew.tag}]"
    status = await status_with_host(
        mailing.mcp_url,
        call_body(poisoned),
        f"127.0.0.1:{listener}",
        authorization=f"Bearer {crew.token}",
    )
    assert status == 421
    # The same agent with the server's own Host: its teammates' mail leads to PUBLIC_URL.
    honest = f"Honest host? [{crew.tag}]"
    call = asyncio.create_task(ask(mailing, crew.token, honest))
    try:
        mails = await mails_for(mailbox, honest, 2)
        assert {mail.link.rpartition("/link/")[0] for mail in mails} == {mailing.base_url}
        # Nothing was planned, let alone mailed, for the refused call.
        assert not [mail for mail in mailbox.mails if poisoned in mail.text]
        assert not [mail for mail in mailbox.mails if f":{listener}" in mail.text]
    finally:
        call.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await call


@pytest.mark.parametrize(
    "config, check_id",
    [
        ({**REACH_CONFIG, **NO_PUBLIC_URL}, "ask_mcp.E033"),
        (
            {**WEB_CONFIG, **NO_PUBLIC_URL, "ANSWER_URL": "ask_mcp.web.elicit.page_url"},
            "ask_mcp.E034",
        ),
    ],
    ids=["mail", "url-mode"],
)
async def test_mail_and_url_mode_refuse_to_start_without_public_url(
    live_servers: LiveServers, mailbox: Mailbox, config: dict[str, Any], check_id: str
) -> None:
    try:
        started = await asyncio.to_thread(live_servers.start, config, extra_env=mail_env(mailbox))
    except RuntimeError as refused:
        assert "did not start" in str(refused)
        assert check_id in str(refused)
        assert "needs ASK_MCP['PUBLIC_URL'] (ASKSERVER_PUBLIC_URL)" in str(refused)
    else:
        live_servers.stop(started)
        pytest.fail("the server started without PUBLIC_URL")


@pytest.fixture(scope="module")
def bare(live_servers: LiveServers) -> Iterator[LiveServer]:
    """askserver as shipped, but started without PUBLIC_URL."""
    live = live_servers.start({**WEB_CONFIG, **NO_PUBLIC_URL})
    yield live
    live_servers.stop(live)


async def test_without_public_url_progress_names_no_link_and_host_must_name_the_listening_port(
    bare: LiveServer,
) -> None:
    own = bare.base_url.removeprefix("http://")
    body = call_body(f"Where do I answer? {uuid.uuid4().hex[:6]}", progress=True)
    async with (
        httpx2.AsyncClient(timeout=httpx2.Timeout(30.0, read=40.0)) as http,
        http.stream("POST", bare.mcp_url, json=body, headers=headers_for(body)) as response,
    ):
        assert response.status_code == 200
        async for line in response.aiter_lines():
            if line.startswith("data:") and "notifications/progress" in line:
                progress = json.loads(line[5:])["params"]
                break
    assert progress["message"] == "Waiting for an answer in the inbox"
    other = f"127.0.0.1:{free_port()}"
    assert await status_with_host(bare.mcp_url, call_body("x"), other) == 421
    ping = request_body("tools/list")
    async with httpx2.AsyncClient(timeout=10.0) as http:
        refused = await http.post(
            bare.mcp_url, json=ping, headers={**headers_for(ping), "host": other}
        )
        served = await http.post(
            bare.mcp_url, json=ping, headers={**headers_for(ping), "host": own}
        )
        page = await http.get(bare.base_url + "/accounts/login/", headers={"host": other})
    assert refused.status_code == 421 and "another port" in refused.text
    assert served.status_code == 200 and "tools" in served.json()["result"]
    assert page.status_code == 421  # the inbox's pages too, not only /mcp


def socket_status(server: LiveServer, host: str, cookie: str) -> int:
    """The HTTP status the inbox's socket answers a handshake naming `host` (its page's origin
    on that host too, as a page served there would send)."""
    port = int(server.base_url.rpartition(":")[2])
    request = (
        f"GET /ws/inbox/ HTTP/1.1\r\nHost: {host}\r\nOrigin: http://{host}\r\n"
        "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
        f"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nCookie: {cookie}\r\n\r\n"
    )
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(request.encode())
        head = b""
        while b"\r\n" not in head:
            chunk = sock.recv(4096)
            if not chunk:
                break
            head += chunk
    return int(head.split(b" ", 2)[1])


@pytest.fixture(scope="module")
def staff(web: LiveServer) -> Person:
    return add_user(web, f"port{uuid.uuid4().hex[:6]}", staff=True)


async def test_the_inbox_socket_refuses_a_host_naming_another_port(
    web: LiveServer, staff: Person
) -> None:
    async with signed_in_http(web, staff) as person:
        cookie = f"sessionid={person.client.cookies['sessionid']}"
    own = web.base_url.removeprefix("http://")
    assert await asyncio.to_thread(socket_status, web, own, cookie) == 101
    other = f"127.0.0.1:{free_port()}"
    assert await asyncio.to_thread(socket_status, web, other, cookie) == 403


async def test_an_agents_link_to_another_port_of_this_host_is_text_and_every_link_shows_its_host(
    web: LiveServer, staff: Person, open_as: OpenAs
) -> None:
    other, tag = free_port(), uuid.uuid4().hex[:6]
    message = (
        f"Check [the logs](http://127.0.0.1:{other}/steal) or http://127.0.0.1:{other}/x, "
        "[this](//evil.example/x), [your bank](https://evil.example/login) and "
        f"[my answers]({web.base_url}/mine/) {tag}"
    )
    async with held_call(web.mcp_url, message=message):
        page = await open_as(staff)
        shown = (await open_card(page, tag)).locator(".ask-message")
        await expect(shown).to_contain_text(f"the logs or http://127.0.0.1:{other}/x, this, ")
        assert await shown.locator(f'a[href*=":{other}"]').count() == 0
        assert await shown.locator('a[href^="//"]').count() == 0
        await expect(shown).to_contain_text("your bank (evil.example)")
        await expect(shown.locator('a[href="https://evil.example/login"]')).to_have_text(
            "your bank"
        )
        own = web.base_url.removeprefix("http://")
        await expect(shown).to_contain_text(f"my answers ({own})")
        await expect(shown.locator(f'a[href="{web.base_url}/mine/"]')).to_have_count(1)
