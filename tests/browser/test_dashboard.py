"""The admin dashboard in chromium: asks per day by outcome, time to answer, rates per token, the asks waiting longest.

A live daphne server with tokens required. Today's asks go through /mcp with two tokens, so
the per-token rates show that each ask kept the token it came with; the previous days' history
is written into the database directly (a chart of one day says little), as the recorder would
have left it. The screenshot is docs/answering/dashboard.png's source (test-output/dashboard.png).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from playwright.async_api import Browser, expect

from tests.support import calls
from tests.support.browser import WEB_CONFIG, Person, add_user, screenshot, signed_in
from tests.support.calls import answer_round, first_round
from tests.support.inbox_http import held_call
from tests.support.live import LiveServer, LiveServers

pytestmark = pytest.mark.asyncio(loop_scope="session")

HISTORY = """
import datetime as dt, random, uuid
from django.utils import timezone
from ask_mcp.models import ApiToken, Ask
random.seed(21)
token = ApiToken.objects.get(name="ci-bot")
now = timezone.now()
rows = []
for back in range(1, 14):
    day = now - dt.timedelta(days=back)
    for n in range(random.randint(3, 9)):
        status = random.choice(["accepted"] * 5 + ["declined", "expired", "cancelled", "withdrawn"])
        created = day.replace(hour=9 + n % 8)
        wait = dt.timedelta(seconds=random.choice([20, 45, 90, 240, 600, 1500]))
        rows.append(Ask(id=uuid.uuid4(), created=created, message=f"history {back}/{n}", schema={},
            tool="user_ask", route=random.choice(["client", "browser"]), status=status,
            credential_kind="token", credential_id=str(token.pk),
            principal=f"user:{token.user_id}", asked_by_id=token.user_id,
            answered_at=created + wait if status in ("accepted", "declined", "cancelled") else None,
            expires_at=created + dt.timedelta(minutes=10)))
Ask.objects.bulk_create(rows)
"""
"""Thirteen earlier days of asks by the ci-bot token, the same each run (seeded)."""


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def dashboard_server(
    live_servers: LiveServers,
) -> AsyncIterator[tuple[LiveServer, Person, dict[str, str]]]:
    server = live_servers.start({**WEB_CONFIG, "ALLOW_ANONYMOUS_LOOPBACK": False})
    try:
        out = server.manage("quickstart", "--url", server.base_url + "/")
        username = re.search(r"Sign in as:\s+(\S+)", out)
        password = re.search(r"Password:\s+(\S+)", out)
        laptop = re.search(r"MCP token:\s+(askmcp_\S+)", out)
        assert username and password and laptop, out
        bot_out = server.manage("createtoken", username.group(1), "--name", "ci-bot")
        bot = re.search(r"(askmcp_\S+)", bot_out)
        assert bot, bot_out
        server.manage("shell", "-c", HISTORY)
        tokens = {"laptop": laptop.group(1), "ci-bot": bot.group(1)}
        yield server, Person(username.group(1), password.group(1)), tokens
    finally:
        live_servers.stop(server)


async def _ask(http: Any, url: str, token: str, reply: dict[str, Any]) -> None:
    http.headers["authorization"] = f"Bearer {token}"
    state = await first_round(http, url, "user_ask", message="dashboard?")
    await answer_round(http, url, "user_ask", state, reply, message="dashboard?")


async def test_the_dashboard_charts_asks_answer_times_and_rates_per_token(
    dashboard_server: tuple[LiveServer, Person, dict[str, str]], browser: Browser
) -> None:
    server, admin, tokens = dashboard_server
    accept = {"action": "accept", "content": {"answer": "ok"}}
    async with calls.client() as http:
        for reply in (accept, accept, accept, {"action": "decline"}):
            await _ask(http, server.mcp_url, tokens["laptop"], reply)
        for reply in ({"action": "decline"}, accept):
            await _ask(http, server.mcp_url, tokens["ci-bot"], reply)
    waiting = "Which release should the hotfix go into?"
    async with held_call(
        server.mcp_url, headers={"authorization": f"Bearer {tokens['laptop']}"}, message=waiting
    ):
        page = await signed_in(browser, server, admin, viewport={"width": 1280, "height": 900})
        try:
            await page.goto("/admin/ask_mcp/ask/")
            await page.get_by_role("link", name="Dashboard", exact=True).click()
            await expect(page).to_have_url(re.compile(r"/admin/ask_mcp/ask/dashboard/$"))
            await expect(page.locator("#figure-pending")).to_have_text("1")
            per_day = page.locator("#asks-per-day svg")
            await expect(per_day).to_have_attribute("aria-label", "Asks per day by outcome")
            # Today's bar: the six answered through /mcp, and the one still waiting.
            today = f"{dt.datetime.now(dt.UTC):%d %b}"
            await expect(per_day.locator("title", has_text=f"{today}: 4 accepted")).to_have_count(1)
            await expect(per_day.locator("title", has_text=f"{today}: 1 pending")).to_have_count(1)
            assert await page.locator("#time-to-answer svg circle").count() >= 2
            rates = page.locator("#rates-per-token svg")
            await expect(rates).to_contain_text(
                "admin · quickstart (5)"
            )  # four answered, one waiting
            await expect(
                rates.locator("title", has_text="admin · quickstart: 1 of 5 declined (20%)")
            ).to_have_count(1)
            await expect(rates).to_contain_text("admin · ci-bot")
            await expect(page.locator("#waiting-longest")).to_contain_text(waiting)
            await screenshot(page, "dashboard.png")
        finally:
            await page.context.close()


async def test_the_dashboard_is_for_staff_only(
    dashboard_server: tuple[LiveServer, Person, dict[str, str]], browser: Browser
) -> None:
    server, _, _ = dashboard_server
    context = await browser.new_context(base_url=server.base_url)
    try:
        page = await context.new_page()
        await page.goto("/admin/ask_mcp/ask/dashboard/")
        await expect(page).to_have_url(re.compile(r"/admin/login/\?next="))
    finally:
        await context.close()


def _staff(server: LiveServer, username: str, *codenames: str) -> Person:
    """A staff member holding only `codenames` (not the every-ask permission)."""
    person = add_user(server, username, staff=True, answers_all=False)
    server.manage(
        "shell",
        "-c",
        "from django.contrib.auth.models import Permission, User;"
        f"User.objects.get(username={username!r}).user_permissions.add("
        f"*Permission.objects.filter(codename__in={list(codenames)!r}))",
    )
    return person


async def test_the_dashboard_needs_the_view_permission_on_asks_and_its_style_passes_the_csp(
    dashboard_server: tuple[LiveServer, Person, dict[str, str]], browser: Browser
) -> None:
    server, _, _ = dashboard_server
    hooks = _staff(server, "hook-keeper", "view_webhook", "add_webhook", "change_webhook")
    reader = _staff(server, "ask-reader", "view_ask")
    page = await signed_in(browser, server, hooks)
    try:
        # Staff with webhook rights only: no question text, token name or rate, and no link.
        refused = await page.goto("/admin/ask_mcp/ask/dashboard/")
        assert refused is not None and refused.status == 403
        await expect(page.locator("body")).not_to_contain_text("history 1/")
        await page.goto("/admin/")
        await expect(page.get_by_role("link", name="Dashboard", exact=True)).to_have_count(0)
    finally:
        await page.context.close()
    page = await signed_in(browser, server, reader)
    refusals: list[str] = []
    page.on("console", lambda message: refusals.append(message.text))
    try:
        await page.goto("/admin/ask_mcp/ask/")
        await page.get_by_role("link", name="Dashboard", exact=True).click()
        await expect(page).to_have_url(re.compile(r"/admin/ask_mcp/ask/dashboard/$"))
        # Styled from a static file: the inline block was refused by the page's own CSP.
        grid = page.locator(".dashboard-grid")
        await expect(grid).to_have_css("display", "grid")
        await expect(page.locator(".dashboard-figures")).to_have_css("display", "flex")
        assert not [text for text in refusals if "Content Security Policy" in text], refusals
    finally:
        await page.context.close()
