"""Behind Debian's nginx over TLS, configured by the docs' block: two workers, every way in.

The ```nginx block of docs/deploy/workers.md runs as written, changed only in its port,
certificate paths (a self-signed certificate made here), upstream addresses and `server_name`
(tests/support/nginx.py), in front of two daphne workers on Redis and PostgreSQL that read that
page's proxy variables (ASKSERVER_TRUST_FORWARDED_PROTO, ASKSERVER_SECURE_COOKIES,
ASKSERVER_TRUSTED_PROXIES). Every
client talks TLS to nginx only: the official SDK client, raw HTTP for a held stream and the body
limit, and a real browser signing in, holding the inbox's socket and answering.

Skipped with a reason when nginx, Redis or PostgreSQL is missing; ASKSERVER_REQUIRE_SERVICES=1
(set by CI) turns the skip into a failure.
"""

from __future__ import annotations

import asyncio
import json
import re
import ssl
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult, InputRequiredResult
from playwright.async_api import Browser, BrowserContext, expect

from tests.support.browser import WEB_CONFIG, add_user, card, live_inbox, open_card
from tests.support.browser import Person as Account
from tests.support.clients import Person, Rounds, accept
from tests.support.live import LiveServer, LiveServers
from tests.support.nginx import (
    Nginx,
    documented_block,
    localised,
    require_nginx,
    self_signed,
    start,
)
from tests.support.ports import free_port
from tests.support.results import text_of
from tests.support.services import require_services
from tests.support.wire import assert_valid, headers_for, request_body
from tests.support.workers import shared_services, started

pytestmark = pytest.mark.asyncio(loop_scope="session")  # the browser lives in the session's loop

HOST: Final = "localhost"
"""The test's `server_name` and the certificate's name (loopback, so no resolver is involved)."""
PROXIED_CONFIG: Final = {**WEB_CONFIG, "ALLOW_ANONYMOUS_LOOPBACK": False}
"""The inbox configuration with tokens required: behind nginx every request comes from loopback
(ask_mcp.E070 refuses anonymous loopback there)."""
MAX_BODY_BYTES: Final = 1024 * 1024
"""The default MAX_BODY_BYTES, which the block's `client_max_body_size 1m` equals."""


@dataclass
class Front:
    """nginx on https://localhost:<port> in front of workers `a` and `b`."""

    url: str
    certificate: Path
    nginx: Nginx
    a: LiveServer
    b: LiveServer
    person: Account
    token: str

    @property
    def mcp_url(self) -> str:
        return self.url + "/mcp"

    def tls(self) -> ssl.SSLContext:
        """Trusts the test's certificate only: every request is checked as a client would."""
        return ssl.create_default_context(cafile=str(self.certificate))

    def http(self) -> httpx2.AsyncClient:
        return httpx2.AsyncClient(
            verify=self.tls(),
            headers={"authorization": f"Bearer {self.token}"},
            timeout=httpx2.Timeout(30.0, read=60.0),
        )


@pytest.fixture(scope="module")
def front(live_servers: LiveServers, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Front]:
    require_nginx()
    require_services()
    prefix = tmp_path_factory.mktemp("nginx")
    certificate, key = self_signed(prefix, HOST)
    port = free_port()
    behind_nginx = {
        "ASKSERVER_PUBLIC_URL": f"https://{HOST}:{port}",  # the proxy's origin, as people use it
        "ASKSERVER_ALLOWED_HOSTS": HOST,
        "ASKSERVER_TRUST_FORWARDED_PROTO": "1",
        "ASKSERVER_SECURE_COOKIES": "1",
        "ASKSERVER_TRUSTED_PROXIES": "127.0.0.1",
    }
    with (
        shared_services(live_servers, env=behind_nginx) as services,
        started(live_servers, PROXIED_CONFIG, services.env) as (a, b),
    ):
        nginx: Nginx | None = None
        try:
            block = localised(
                documented_block(),
                port=port,
                certificate=certificate,
                key=key,
                upstreams=[a.base_url.removeprefix("http://"), b.base_url.removeprefix("http://")],
                server_name=HOST,
            )
            nginx = start(prefix, block, port)
            person = add_user(a, f"tls{uuid.uuid4().hex[:6]}", staff=True)
            token = a.manage("createtoken", person.username, "--name", "nginx").strip()
            yield Front(f"https://{HOST}:{port}", certificate, nginx, a, b, person, token)
        finally:
            if nginx is not None:
                nginx.stop()


@asynccontextmanager
async def sdk_client(front: Front, person: Person) -> AsyncIterator[Client]:
    async with front.http() as http:
        transport = streamable_http_client(front.mcp_url, http_client=http)
        async with Client(transport, mode="2026-07-28", elicitation_callback=person) as client:
            yield client


async def test_an_mrtr_round_goes_through_nginx_over_tls(front: Front) -> None:
    arguments = {"message": "Deploy behind nginx?"}
    async with asyncio.timeout(30), sdk_client(front, Person(accept(answer="x"))) as client:
        rounds = Rounds(client)
        first = await rounds.first("user_ask", arguments)
        ((key, request),) = first.input_requests.items()
        assert request.params.message == "Deploy behind nginx?"
        final = await rounds.retry(
            "user_ask", arguments, first.request_state, {key: accept(answer="yes")}
        )
    assert isinstance(final, CallToolResult) and not isinstance(final, InputRequiredResult)
    assert final.is_error is False and text_of(final) == '{"answer":"yes"}'


async def test_mcp_checks_host_and_origin_as_nginx_passes_them(front: Front) -> None:
    body = request_body("tools/list")
    async with asyncio.timeout(30), front.http() as http:
        own = await http.post(
            front.mcp_url, json=body, headers={**headers_for(body), "origin": front.url}
        )
        foreign = await http.post(
            front.mcp_url,
            json=body,
            headers={**headers_for(body), "origin": "https://pages.example"},
        )
    assert own.status_code == 200, own.text
    assert [tool["name"] for tool in assert_valid("tools/list", own.json())["result"]["tools"]]
    assert foreign.status_code == 403 and "pages.example" in foreign.json()["error"]["message"]


async def test_a_body_past_the_limit_is_refused_by_nginx_and_one_at_it_reaches_a_worker(
    front: Front,
) -> None:
    def listing(size: int) -> bytes:
        empty = json.dumps(request_body("tools/list", {"padding": ""}))
        padded = empty.replace('"padding": ""', '"padding": "' + "x" * (size - len(empty)) + '"')
        assert len(padded) == size
        return padded.encode()

    headers = headers_for({"method": "tools/list"})
    async with asyncio.timeout(30), front.http() as http:
        over = await http.post(front.mcp_url, content=listing(MAX_BODY_BYTES + 1), headers=headers)
        at = await http.post(front.mcp_url, content=listing(MAX_BODY_BYTES), headers=headers)
    assert over.status_code == 413
    assert over.headers["server"].startswith("nginx") and "<center>nginx" in over.text
    assert at.status_code == 200, at.text  # the same limit: the largest body nginx passes is served
    assert_valid("tools/list", at.json())


async def test_a_held_call_streams_through_nginx_and_the_inbox_answer_over_tls_reaches_it(
    front: Front, browser: Browser
) -> None:
    message = f"Answer me through nginx ({uuid.uuid4().hex[:6]})"
    body = request_body(
        "tools/call",
        {"name": "user_ask", "arguments": {"message": message}},
        meta={
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "behind-nginx", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {},
            "progressToken": "tls",
        },
    )
    context = await signed_in_through_the_admin(browser, front)
    try:
        page = await context.new_page()
        await page.goto("/")
        await live_inbox(page)  # the inbox's WebSocket, opened through nginx
        async with (
            asyncio.timeout(30),
            front.http() as http,
            http.stream("POST", front.mcp_url, json=body, headers=headers_for(body)) as response,
        ):
            assert response.headers["content-type"] == "text/event-stream"
            lines = response.aiter_lines()
            # Unbuffered: the progress event is here while the call still waits for a person.
            progress = assert_progress(await next_message(lines))
            found = re.search(r"https://\S+/asks/[0-9a-f-]{36}/", progress["params"]["message"])
            assert found and found.group(0).startswith(front.url + "/"), progress
            shown = await open_card(page, message)  # pushed over the socket, not reloaded
            await shown.get_by_label("answer").fill("through nginx")
            await card(page, message).get_by_role("button", name="Send answer").click()
            final = await next_message(lines)
            while final.get("method") == "notifications/progress":  # "Seen by admin at ..."
                final = await next_message(lines)
        assert_valid("tools/call", final)
        assert final["result"]["content"] == [
            {"type": "text", "text": '{"answer":"through nginx"}'}
        ]
    finally:
        await context.close()


async def test_sign_in_over_tls_gives_secure_cookies_and_a_post_without_its_token_is_refused(
    front: Front, browser: Browser
) -> None:
    context = await signed_in_through_the_admin(browser, front)
    try:
        cookies = {cookie["name"]: cookie for cookie in await context.cookies()}
        assert cookies["sessionid"]["secure"] is True
        assert cookies["csrftoken"]["secure"] is True
        page = await context.new_page()
        await page.goto("/admin/")  # the admin, signed in by its own form's POST
        await expect(page.get_by_role("heading", name="Site administration")).to_be_visible()
        forged = await context.request.post(
            front.url + "/admin/logout/", headers={"origin": front.url}
        )
        assert forged.status == 403  # CSRF still holds: a POST without the form's token
    finally:
        await context.close()


async def test_wrong_passwords_from_one_client_lock_out_that_client_only_behind_nginx(
    front: Front,
) -> None:
    # Every client reached the workers as nginx's 127.0.0.1: ten wrong passwords from anyone
    # locked the real person out. Clients here come from other loopback addresses, as clients on
    # other hosts would.
    target = add_user(front.a, f"lock{uuid.uuid4().hex[:6]}", staff=True)

    def client(address: str) -> httpx2.AsyncClient:
        transport = httpx2.AsyncHTTPTransport(verify=front.tls(), local_address=address)
        return httpx2.AsyncClient(
            base_url=front.url, transport=transport, timeout=30, headers={"origin": front.url}
        )

    async def sign_in(http: httpx2.AsyncClient, password: str) -> int:
        await http.get("/accounts/login/")
        answer = await http.post(
            "/accounts/login/",
            data={
                "username": target.username,
                "password": password,
                "csrfmiddlewaretoken": str(http.cookies["csrftoken"]),
            },
        )
        return answer.status_code

    async with asyncio.timeout(60), client("127.0.0.2") as guesser, client("127.0.0.3") as owner:
        guesser.headers["x-forwarded-for"] = "127.0.0.3"  # nginx replaces it with the real one
        wrong = [await sign_in(guesser, f"guess-{n}") for n in range(10)]
        assert wrong == [200] * 9 + [429]
        assert await sign_in(guesser, target.password) == 429
        assert await sign_in(owner, target.password) == 302


async def signed_in_through_the_admin(browser: Browser, front: Front) -> BrowserContext:
    """A browser context (accepting the test's certificate) signed in by the admin's login POST."""
    context = await browser.new_context(base_url=front.url, ignore_https_errors=True)
    page = await context.new_page()
    await page.goto("/admin/login/?next=/admin/")
    await page.locator("#id_username").fill(front.person.username)
    await page.locator("#id_password").fill(front.person.password)
    await page.get_by_role("button", name="Log in").click()
    await expect(page).to_have_url(front.url + "/admin/")  # a refused CSRF check stays on a 403
    await page.close()
    return context


def assert_progress(message: dict[str, Any]) -> dict[str, Any]:
    assert message.get("method") == "notifications/progress", message
    assert message["params"]["progressToken"] == "tls"
    return message


async def next_message(lines: AsyncIterator[str]) -> dict[str, Any]:
    async for line in lines:
        if line.startswith("data:") and line[5:].strip():
            message: dict[str, Any] = json.loads(line[5:])
            return message
    raise AssertionError("the stream ended")
