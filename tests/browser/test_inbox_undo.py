"""No irreversible slips: a refusal or a one-tap answer given in the inbox is held for UNDO_SECONDS with Undo, survives a restart, and loses to an answer given elsewhere.

Real daphne servers with the undo window on (WEB_CONFIG turns it off for the other suites), the
official MCP client without forms asking, Debian's chromium answering, a second person over
plain HTTP answering elsewhere, axe-core on the held card, and a SIGKILL and restart on the same
port and database while a decision is held.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import signal
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest
import pytest_asyncio
from playwright.async_api import Browser, Page, expect

from tests.support import calls
from tests.support.axe import assert_accessible
from tests.support.browser import (
    OUTPUT,
    WEB_CONFIG,
    Person,
    add_user,
    card,
    live_inbox,
    open_card,
    quickstart_admin,
    signed_in,
)
from tests.support.inbox_asks import ask_form, finish, form_reply
from tests.support.inbox_http import signed_in_http
from tests.support.live import LiveServer, LiveServers
from tests.support.names import unique
from tests.support.results import text_of

pytestmark = pytest.mark.asyncio(loop_scope="session")

UNDO_CONFIG = {**WEB_CONFIG, "UNDO_SECONDS": 6}
"""Six seconds: time to see the held card, check the ask still waits and press Undo."""
RESTART_CONFIG = {**WEB_CONFIG, "UNDO_SECONDS": 40, "DETACHED_GRACE_SECONDS": 600}
"""Long enough to kill and restart the server inside the window."""
COMMITTED_MS = 30_000
"""Bound on seeing a held decision committed (its window, a sweep, a loaded machine)."""
NOTE: dict[str, Any] = {
    "type": "object",
    "properties": {"note": {"type": "string", "title": "Note", "minLength": 1}},
    "required": ["note"],
}
YES_NO: dict[str, Any] = {
    "type": "object",
    "properties": {"ok": {"type": "boolean", "title": "Delete the branch?"}},
    "required": ["ok"],
}
THREE: dict[str, Any] = {
    "type": "object",
    "properties": {
        "size": {"type": "string", "title": "Size", "enum": ["small", "medium", "large"]}
    },
    "required": ["size"],
}
FIVE: dict[str, Any] = {
    "type": "object",
    "properties": {"n": {"type": "string", "title": "N", "enum": ["1", "2", "3", "4", "5"]}},
    "required": ["n"],
}


@pytest.fixture(scope="module")
def server(live_servers: LiveServers) -> Iterator[LiveServer]:
    started = live_servers.start(UNDO_CONFIG)
    yield started
    live_servers.stop(started)


@pytest.fixture(scope="module")
def people(server: LiveServer) -> tuple[Person, Person]:
    return quickstart_admin(server), add_user(server, "bea", staff=True)


@pytest_asyncio.fixture(loop_scope="session")
async def page_of(browser: Browser) -> AsyncIterator[Any]:
    pages: list[Page] = []

    async def open_page(live: LiveServer, person: Person, **options: Any) -> Page:
        page = await signed_in(browser, live, person, **options)
        pages.append(page)
        return page

    yield open_page
    for page in pages:
        await page.context.close()


async def status_of(live: LiveServer, message: str) -> str:
    async with calls.client() as http:
        return str(calls.by_message(await calls.records(http, live.mcp_url), message)["status"])


@pytest.mark.parametrize("scheme", ["light", "dark"])
async def test_a_refusal_waits_with_undo_and_undo_gives_the_question_back(
    server: LiveServer, people: tuple[Person, Person], page_of: Any, scheme: str
) -> None:
    admin, _ = people
    page = await page_of(server, admin, color_scheme=scheme)
    await live_inbox(page)
    message = unique("Ship the hotfix tonight?")
    call = ask_form(server.mcp_url, message, NOTE)
    shown = await open_card(page, message)
    stop = shown.get_by_role("button", name="Stop this question")
    # Ending the ask is out of the sticky send bar, its explanation before it.
    await expect(
        shown.locator(".actions").get_by_role("button", name="Stop this question")
    ).to_have_count(0)
    await expect(stop).to_have_accessible_description(re.compile("should not have been asked"))
    await expect(shown.get_by_role("button", name="Cancel", exact=True)).to_have_count(0)
    await stop.click()

    held = page.locator(".ask-card.held", has_text=message)
    await expect(held).to_contain_text("You stopped this question")
    await expect(held.get_by_role("button", name="Undo")).to_be_focused()
    await expect(held.locator(".undo-countdown")).to_have_text(re.compile(r"in \d+ s"))
    await assert_accessible(page, f"the inbox with a held decision ({scheme})")
    OUTPUT.mkdir(exist_ok=True)
    await held.screenshot(path=str(OUTPUT / f"inbox-held-{scheme}.png"))  # docs/answering/
    assert await status_of(server, message) == "pending"  # every other surface still sees it
    assert not call.done()

    await held.get_by_role("button", name="Undo").click()
    back = card(page, message)
    await expect(back.locator("summary")).to_be_focused()
    await expect(back.locator("details.fold")).to_have_count(1)
    assert await status_of(server, message) == "pending"

    await (await open_card(page, message)).get_by_role("button", name="Decline").click()
    await expect(held).to_contain_text("You declined this question")
    await expect(held).to_contain_text("Sent: the agent has been told.", timeout=COMMITTED_MS)
    assert text_of(await finish(call)) == '{"action":"decline"}'
    assert await status_of(server, message) == "declined"


async def test_one_tap_answers_a_folded_yes_no_or_short_choice_after_the_window(
    server: LiveServer, people: tuple[Person, Person], page_of: Any
) -> None:
    admin, _ = people
    page = await page_of(server, admin, viewport={"width": 390, "height": 844}, is_mobile=True)
    await live_inbox(page)
    tag = uuid.uuid4().hex[:6]
    yes_no = ask_form(server.mcp_url, f"Delete branch fix-{tag}?", YES_NO)
    three = ask_form(server.mcp_url, f"Which size {tag}?", THREE)
    five = ask_form(server.mcp_url, f"Pick a number {tag}", FIVE)
    for message in (f"Delete branch fix-{tag}?", f"Which size {tag}?", f"Pick a number {tag}"):
        await expect(card(page, message)).to_be_visible()
    # Five options are too many for one row: that card has no one-tap buttons.
    await expect(card(page, f"Pick a number {tag}").locator("form.quick")).to_have_count(0)
    folded = card(page, f"Which size {tag}")
    await expect(folded.locator("details.fold")).not_to_have_attribute("open", "")
    await folded.get_by_role("button", name="medium").click()
    await expect(page.locator(".ask-card.held", has_text=f"Which size {tag}")).to_contain_text(
        "You answered: medium."
    )
    await card(page, f"Delete branch fix-{tag}?").get_by_role("button", name="Yes").click()
    await assert_accessible(page, "the phone inbox with one-tap cards and held answers")
    assert form_reply(await finish(three)) == {"action": "accept", "content": {"size": "medium"}}
    assert form_reply(await finish(yes_no)) == {"action": "accept", "content": {"ok": True}}
    await (
        (await open_card(page, f"Pick a number {tag}"))
        .get_by_role("button", name="Decline")
        .click()
    )
    await finish(five)


async def test_an_answer_given_elsewhere_during_the_window_wins_and_the_person_is_told(
    server: LiveServer, people: tuple[Person, Person], page_of: Any
) -> None:
    admin, bea = people
    page = await page_of(server, admin)
    await live_inbox(page)
    message = unique("Restart the queue workers?")
    call = ask_form(server.mcp_url, message, NOTE)
    shown = await open_card(page, message)
    ask_hex = await shown.get_attribute("data-ask")
    assert ask_hex is not None
    await shown.get_by_role("button", name="Decline").click()
    held = page.locator(".ask-card.held", has_text=message)
    await expect(held.get_by_role("button", name="Undo")).to_be_visible()
    async with signed_in_http(server, bea) as other:
        response = await other.answer(ask_hex, "accept", note="done already")
        assert response.status_code == 200, response.text
    assert form_reply(await finish(call)) == {
        "action": "accept",
        "content": {"note": "done already"},
    }
    await expect(held).to_contain_text("Your decision was not sent")
    await expect(held.locator(".ask-status")).to_contain_text(f"Answered by {bea.username}")
    await expect(held.get_by_role("button", name="Undo")).to_have_count(0)
    # When the window ends the held decline is dropped, never told.
    await expect(page.locator(".undo-countdown")).to_have_count(0)
    assert await status_of(server, message) == "accepted"


def _port(live: LiveServer) -> int:
    port = urlsplit(live.base_url).port
    assert port is not None
    return port


async def test_a_held_decision_survives_a_restart_and_is_committed_when_due(
    live_servers: LiveServers, page_of: Any
) -> None:
    first = live_servers.start(RESTART_CONFIG)
    second: LiveServer | None = None
    admin = quickstart_admin(first)
    message = unique("Rotate the signing key?")
    call = ask_form(first.mcp_url, message, NOTE)
    try:
        page = await page_of(first, admin)
        await live_inbox(page)
        await (await open_card(page, message)).get_by_role("button", name="Decline").click()
        await expect(page.locator(".ask-card.held", has_text=message)).to_be_visible()
        first.process.send_signal(signal.SIGKILL)  # nothing gets to commit or record anything
        first.process.wait(timeout=10)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(call, 15)  # its connection died with the server
        second = live_servers.start(RESTART_CONFIG, db=first.db, port=_port(first))
        assert await status_of(second, message) == "pending"  # still held, not yet due
        await page.reload()
        held = page.locator(".ask-card.held", has_text=message)
        await expect(held).to_contain_text("You declined this question")
        await expect(held.get_by_role("button", name="Undo")).to_be_visible()
        # Committed by the restarted server when due: the record says so, and the card.
        await expect(held).to_contain_text("Sent: the agent has been told.", timeout=60_000)
        async with calls.client() as http:
            row = calls.by_message(await calls.records(http, second.mcp_url), message)
        assert row["status"] == "declined"
        await page.goto(f"/asks/{uuid.UUID(row['id'])}/")
        await expect(page.locator(".history")).to_contain_text(f"Declined by {admin.username}")
    finally:
        live_servers.stop(first)
        if second is not None:
            live_servers.stop(second)
