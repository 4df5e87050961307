"""Counts a person can trust: the badge, the tab title and the note count every waiting ask they may answer, not the cards drawn.

A real daphne server, 23 asks waiting for one person (more than the 20 cards an inbox draws),
Debian's chromium, and one more ask pushed live from the official MCP client.
"""

from __future__ import annotations

import asyncio

import pytest
from playwright.async_api import expect

from tests.support.browser import OpenAs, card, live_inbox
from tests.support.clients import ask_with
from tests.support.live import LiveServer
from tests.support.team import Team

pytestmark = pytest.mark.asyncio(loop_scope="session")

WAITING = 23
"""More than INBOX_LIMIT (20) asks waiting for the one person."""


def leave_waiting(web: LiveServer, username: str, count: int, tag: str) -> None:
    """`count` pending inbox asks addressed to `username`, as if their calls had stopped."""
    web.manage(
        "shell",
        "-c",
        (
            "import datetime as dt, uuid; from django.utils import timezone;"
            "from django.contrib.auth.models import User; from ask_mcp.models import Ask;"
            f"u = User.objects.get(username={username!r}); now = timezone.now();"
            "Ask.objects.bulk_create([Ask(id=uuid.uuid4(), message=f'Waiting {n} "
            + tag
            + "', schema={'type': 'object', 'properties': {}}, tool='user_ask',"
            " route=Ask.Route.BROWSER, asked_by=u, created=now,"
            " expires_at=now + dt.timedelta(hours=1))"
            f" for n in range({count})])"
        ),
    )


async def test_the_badge_title_and_note_count_every_waiting_ask_also_as_one_is_pushed_live(
    web: LiveServer, team: Team, open_as: OpenAs
) -> None:
    leave_waiting(web, team.dora.username, WAITING, team.team)
    page = await open_as(team.dora)
    await live_inbox(page)
    await expect(page.locator("#ask-list .ask-card")).to_have_count(20)
    await expect(page.locator("#ask-count")).to_have_text(str(WAITING))
    await expect(page).to_have_title(f"({WAITING}) Inbox · askserver")
    note = page.locator("#more-note")
    await expect(note).to_have_text(
        f"Showing the 20 that expire soonest of {WAITING} waiting. "
        "Search or filter to find the others."
    )

    message = f"One more {team.team}"
    call = asyncio.create_task(ask_with(web.mcp_url, team.token, message))
    await expect(card(page, message)).to_be_visible()
    await expect(page.locator("#ask-count")).to_have_text(str(WAITING + 1))
    await expect(page).to_have_title(f"({WAITING + 1}) Inbox · askserver")
    await expect(note.locator(".shown")).to_have_text("21")
    await expect(note.locator(".total")).to_have_text(str(WAITING + 1))
    await (card(page, message)).locator("summary").click()
    await card(page, message).get_by_role("button", name="Decline").click()
    await call
    await expect(page.locator("#ask-count")).to_have_text(str(WAITING))
