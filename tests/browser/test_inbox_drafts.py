"""Nothing a person types is lost: asks that end under them, reconnects, reloads, failed sends, blocked sockets.

A real daphne server, the official MCP client without forms, Debian's chromium: the person is
typing into a card when the ask ends in each of the ways it can (someone else answers, it
expires, its client leaves), when the live socket reconnects, when the page reloads, when the
server cannot be reached, and when WebSockets are refused altogether.
"""

from __future__ import annotations

import asyncio
import json
import re
import uuid
from typing import Any

import pytest
from playwright.async_api import Page, Route, WebSocketRoute, expect

from tests.support.browser import OpenAs, Person, card, live_inbox, open_card, outcome
from tests.support.inbox_asks import ask, ask_form, finish
from tests.support.live import LiveServer
from tests.support.names import unique
from tests.support.results import text_of

pytestmark = pytest.mark.asyncio(loop_scope="session")

DRAFT = "half a thought I do not want to lose"
NOTE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"note": {"type": "string", "title": "Note"}},
    "required": ["note"],
}
# Captures the live socket's wrapper so a test can make it reconnect like a network blip does.
GRAB_SOCKET = """document.addEventListener("htmx:wsOpen", (e) => {
  window.__sockets = (window.__sockets || 0) + 1; window.__ws = e.detail.socketWrapper; });"""


async def typed(page: Page, message: str, label: str = "answer") -> Any:
    """Open the card of `message` and type the draft into its field."""
    shown = await open_card(page, message)
    await shown.get_by_label(label).fill(DRAFT)
    return shown


async def assert_kept_greyed(shown: Any, reason: str, label: str = "answer") -> None:
    await expect(shown.locator(".ask-status")).to_contain_text(reason)
    await expect(shown).to_have_class(re.compile(r"\bended\b"))
    field = shown.get_by_label(label)
    await expect(field).to_have_value(DRAFT)  # still there, to copy
    await expect(field).to_have_attribute("readonly", "")
    await expect(shown.get_by_role("button", name="Send answer")).to_be_disabled()
    await shown.get_by_role("button", name="Dismiss").click()
    await expect(shown).to_have_count(0)


async def test_a_draft_stays_when_someone_else_answers_and_says_who(
    web: LiveServer, admin: Person, bea: Person, open_as: OpenAs
) -> None:
    page = await open_as(admin)
    await live_inbox(page)
    message = unique("Which bucket holds the backups?")
    call = ask(web.mcp_url, message)
    shown = await typed(page, message)
    ask_hex = await shown.get_attribute("data-ask")
    assert ask_hex is not None

    other = await open_as(bea)
    await other.goto(f"/asks/{uuid.UUID(ask_hex)}/")
    await other.get_by_label("answer").fill("s3://backups")
    await other.get_by_role("button", name="Send answer").click()
    assert json.loads(text_of(await finish(call))) == {"answer": "s3://backups"}
    await expect(page.locator("#announcer")).to_contain_text("Answered by bea")
    await assert_kept_greyed(shown, "Answered by bea")


async def test_a_draft_stays_when_the_ask_expires(
    web: LiveServer, admin: Person, open_as: OpenAs
) -> None:
    page = await open_as(admin)
    await live_inbox(page)
    message = unique("Quick, before it expires?")
    call = ask_form(web.mcp_url, message, NOTE_SCHEMA, timeout=3)
    shown = await typed(page, message, "Note")
    await expect(shown).to_have_class(re.compile(r"\bexpiring\b"))  # warned in its last minute
    assert text_of(await finish(call)).startswith("The user did not answer in time.")
    await assert_kept_greyed(shown, "Expired: nobody answered in time.", "Note")


async def test_a_draft_stays_when_the_client_leaves(
    web: LiveServer, admin: Person, open_as: OpenAs
) -> None:
    page = await open_as(admin)
    await live_inbox(page)
    message = unique("Are you still there?")
    call = ask(web.mcp_url, message)
    shown = await typed(page, message)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    await assert_kept_greyed(shown, "Withdrawn: the agent stopped waiting")


async def test_an_untouched_card_simply_leaves_when_its_ask_ends(
    web: LiveServer, admin: Person, open_as: OpenAs
) -> None:
    page = await open_as(admin)
    await live_inbox(page)
    message = unique("Nobody is typing here")
    call = ask(web.mcp_url, message)
    await expect(card(page, message)).to_be_visible()
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    await expect(card(page, message)).to_have_count(0)
    await expect(page.locator("#announcer")).to_contain_text("Withdrawn")


async def test_a_reconnect_keeps_every_card_and_its_values_and_a_reload_restores_the_draft(
    web: LiveServer, admin: Person, open_as: OpenAs
) -> None:
    page = await open_as(admin)
    await page.add_init_script(GRAB_SOCKET)
    await page.reload()
    await live_inbox(page)
    message = unique("Describe the outage")
    call = ask(web.mcp_url, message)
    shown = await typed(page, message)
    await shown.evaluate("card => { card.__same = true; }")

    await page.evaluate("window.__ws.reconnect()")  # the server sends the whole list again
    await page.wait_for_function("() => window.__sockets === 2")
    await live_inbox(page)
    assert await shown.evaluate("card => card.__same === true")  # the very same element
    await expect(shown.get_by_label("answer")).to_have_value(DRAFT)
    await expect(shown.get_by_label("answer")).to_be_editable()

    await page.reload()  # a reload draws the card anew: the draft comes back from the session
    await live_inbox(page)
    reloaded = card(page, message)
    await expect(reloaded.locator("details.fold")).to_have_attribute("open", "")
    await expect(reloaded.get_by_label("answer")).to_have_value(DRAFT)
    await reloaded.get_by_role("button", name="Send answer").click()
    assert json.loads(text_of(await finish(call))) == {"answer": DRAFT}
    await expect(outcome(page)).to_be_focused()


async def test_a_send_that_cannot_reach_the_server_says_so_keeps_the_values_and_retries(
    web: LiveServer, admin: Person, open_as: OpenAs
) -> None:
    page = await open_as(admin)
    await live_inbox(page)
    message = unique("Send while the server is down")
    call = ask(web.mcp_url, message)
    shown = await typed(page, message)

    async def down(route: Route) -> None:
        await route.abort("connectionrefused")

    await page.route(re.compile(r"/asks/[0-9a-f-]+/$"), down)
    await shown.get_by_role("button", name="Send answer").click()
    retry = shown.get_by_role("button", name="Try again")
    await expect(shown.get_by_role("alert")).to_contain_text("the server could not be reached")
    await expect(retry).to_be_focused()
    await expect(shown.get_by_label("answer")).to_have_value(DRAFT)
    assert not call.done()

    await page.unroute(re.compile(r"/asks/[0-9a-f-]+/$"))
    await retry.click()
    assert json.loads(text_of(await finish(call))) == {"answer": DRAFT}
    await expect(outcome(page)).to_contain_text("✓ Sent")


async def test_answering_several_cards_leaves_one_dismissible_outcome_in_place(
    web: LiveServer, admin: Person, open_as: OpenAs
) -> None:
    page = await open_as(admin)
    await live_inbox(page)
    messages = [unique(f"Question {n} of three") for n in range(3)]
    calls = [ask(web.mcp_url, message) for message in messages]
    for message in messages:
        await expect(card(page, message)).to_be_visible()
    for message, call in zip(reversed(messages), reversed(calls), strict=True):
        shown = await open_card(page, message)
        await shown.get_by_label("answer").fill("yes")
        await shown.get_by_role("button", name="Send answer").click()
        await finish(call)
        await expect(outcome(page)).to_have_count(1)  # the last one only: no pile-up
        await expect(outcome(page)).to_contain_text(message)
        await expect(outcome(page)).to_be_focused()
        await expect(outcome(page)).to_be_in_viewport()
    await outcome(page).get_by_role("button", name="Dismiss").click()
    await expect(outcome(page)).to_have_count(0)


async def test_with_websockets_refused_the_inbox_polls_and_says_so(
    web: LiveServer, admin: Person, open_as: OpenAs
) -> None:
    page = await open_as(admin)

    async def refuse(socket: WebSocketRoute) -> None:
        await socket.close(code=1008, reason="blocked by a proxy")

    await page.route_web_socket(re.compile(r"/ws/"), refuse)
    await page.reload()
    await expect(page.locator("#connection-note")).to_contain_text("checks for changes every 5")
    await expect(page.locator("#live-status")).to_contain_text("checking every 5 s")

    message = unique("Seen without a socket?")
    call = ask(web.mcp_url, message)
    shown = await typed(page, message)  # arrived by polling
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    # The next poll says the ask ended; the draft stays.
    await assert_kept_greyed(shown, "Withdrawn")

    answered = unique("Answered without a socket")
    call = ask(web.mcp_url, answered)
    shown = await open_card(page, answered)
    await shown.get_by_label("answer").fill("polled")
    await shown.get_by_role("button", name="Send answer").click()
    assert json.loads(text_of(await finish(call))) == {"answer": "polled"}
    await expect(outcome(page)).to_contain_text("✓ Sent")


async def test_an_ask_page_without_websockets_polls_and_keeps_the_draft_when_the_ask_ends(
    web: LiveServer, admin: Person, bea: Person, open_as: OpenAs
) -> None:
    inbox = await open_as(bea)
    await live_inbox(inbox)
    message = unique("Answered elsewhere while my socket is blocked")
    call = ask(web.mcp_url, message)
    ask_hex = await card(inbox, message).get_attribute("data-ask")
    assert ask_hex is not None

    page = await open_as(admin)

    async def refuse(socket: WebSocketRoute) -> None:
        await socket.close(code=1008, reason="blocked by a proxy")

    await page.route_web_socket(re.compile(r"/ws/"), refuse)
    await page.goto(f"/asks/{uuid.UUID(ask_hex)}/")
    await expect(page.locator("#connection-note")).to_contain_text("checks for changes every 5")
    await page.get_by_label("answer").fill(DRAFT)

    shown = await open_card(inbox, message)
    await shown.get_by_label("answer").fill("from bea")
    await shown.get_by_role("button", name="Send answer").click()
    assert json.loads(text_of(await finish(call))) == {"answer": "from bea"}

    status = page.locator(".ask-status")
    await expect(status).to_contain_text("Answered by bea")  # found by polling
    await expect(page.get_by_label("answer")).to_have_value(DRAFT)
    await expect(page.get_by_role("button", name="Send answer")).to_be_disabled()
