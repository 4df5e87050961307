"""No ask stays pending past its expiry; a crash never ends one (it stays answerable).

The worker holding a call ends its ask itself; these tests cover what it cannot: a server
that crashed with questions waiting, and asks nobody holds any more.
"""

from __future__ import annotations

import asyncio
import re
import uuid

import httpx2
import pytest
from playwright.async_api import Browser, expect

from tests.support.browser import WEB_CONFIG, OpenAs, Person, quickstart_admin, signed_in
from tests.support.live import LiveServer, LiveServers
from tests.support.wire import headers_for, request_body

pytestmark = pytest.mark.asyncio(loop_scope="session")


def held_ask(message: str) -> dict[str, object]:
    """A tools/call from a client without forms that asks for progress (so it learns the URL)."""
    return request_body(
        "tools/call",
        {"name": "user_ask", "arguments": {"message": message}},
        meta={
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "crashing", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {},
            "progressToken": "p",
        },
    )


async def test_asks_left_by_a_server_that_crashed_stay_pending_on_the_next_one(
    live_servers: LiveServers, browser: Browser
) -> None:
    first = live_servers.start(WEB_CONFIG)
    try:
        admin = quickstart_admin(first)
        body = held_ask("Left behind?")
        async with (
            asyncio.timeout(20),
            httpx2.AsyncClient(timeout=20) as http,
            http.stream("POST", first.mcp_url, json=body, headers=headers_for(body)) as response,
        ):
            async for line in response.aiter_lines():
                if found := re.search(r"http://\S+/asks/[0-9a-f-]{36}/", line):
                    break
            assert found is not None
            first.process.kill()  # a crash while the call waits: nothing records its end
            first.process.wait(timeout=10)
    finally:
        live_servers.stop(first)

    second = live_servers.start(WEB_CONFIG, db=first.db)
    try:
        page = await signed_in(browser, second, admin)
        await expect(page.locator("#live-status")).to_have_text("live")
        card = page.locator(".ask-card")
        await expect(card).to_have_count(1)  # nothing lost: a crash does not end an ask
        await expect(card.get_by_text("No agent is waiting right now")).to_be_visible()
        await page.goto(found.group(0).replace(first.base_url, second.base_url))
        await expect(page.get_by_text("No agent is waiting right now")).to_be_visible()
        await page.context.close()
    finally:
        live_servers.stop(second)


async def test_a_pending_ask_past_its_expiry_is_expired_by_the_sweeper(
    web: LiveServer, admin: Person, open_as: OpenAs
) -> None:
    ask_id = uuid.uuid4()
    web.manage(
        "shell",
        "-c",
        "import datetime as dt; from ask_mcp.models import Ask;"
        "now = dt.datetime.now(dt.UTC);"
        f"Ask.objects.create(id={str(ask_id)!r}, created=now - dt.timedelta(hours=2),"
        "message='Nobody holds me', schema={'type': 'object', 'properties': {}},"
        "tool='user_ask', route='browser', expires_at=now - dt.timedelta(hours=1),"
        "worker='askmcp.worker.gone')",
    )
    page = await open_as(admin)
    await page.goto(f"/asks/{ask_id}/")
    # Only an expired ask reads like this without anyone submitting: the sweeper closed it.
    await expect(page.get_by_text("nobody answered in time")).to_be_visible()
    await expect(page.locator("form.ask-form")).to_have_count(0)
