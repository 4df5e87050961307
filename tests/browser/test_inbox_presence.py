"""Who is answering, in real Chromium with two people: a card one of them unfolds (or the ask's page they open) says so on the other's card, live, and stops saying it when they fold it or leave.

The presence goes over the inbox's own socket (ask_mcp.web.presence); nothing is stored, and a
person never sees their own.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from playwright.async_api import expect

from tests.support.axe import assert_accessible
from tests.support.browser import OpenAs, Person, card, live_inbox, open_card
from tests.support.inbox_asks import ask, finish
from tests.support.live import LiveServer
from tests.support.names import unique
from tests.support.results import text_of

pytestmark = pytest.mark.asyncio(loop_scope="session")

PHONE: dict[str, Any] = {"viewport": {"width": 390, "height": 844}, "is_mobile": True}
"""A phone's screen (390 by 844 CSS pixels)."""


async def test_a_card_unfolded_by_one_person_says_they_are_answering_on_the_others_until_folded_or_left(
    web: LiveServer, admin: Person, bea: Person, open_as: OpenAs
) -> None:
    watcher = await open_as(admin, **PHONE, color_scheme="light")
    await live_inbox(watcher)
    message = unique("Who rotates the signing key?")
    call = ask(web.mcp_url, message)
    watched = card(watcher, message)
    await expect(watched).to_be_visible()
    line = watched.locator(".presence")
    await expect(line).to_be_hidden()  # nobody has it open yet

    answerer = await open_as(bea)
    await live_inbox(answerer)
    hers = await open_card(answerer, message)
    await expect(line).to_have_text(f"{bea.username} is answering")
    await expect(line).to_be_visible()
    await assert_accessible(watcher, "the inbox at 390x844 (light) with someone answering a card")
    # Never to the person themself, in this tab or another of hers.
    await expect(hers.locator(".presence")).to_have_text("")
    second = await open_as(bea)
    await live_inbox(second)
    await expect(card(second, message).locator(".presence")).to_have_text("")

    # An inbox opened later learns it at once, not at the next heartbeat (20 s).
    late = await open_as(admin, **PHONE, color_scheme="dark")
    await live_inbox(late)
    await expect(card(late, message).locator(".presence")).to_have_text(
        f"{bea.username} is answering"
    )
    await assert_accessible(late, "the inbox at 390x844 (dark) with someone answering a card")

    await hers.locator("summary").click()  # folded: she is no longer answering
    await expect(line).to_have_text("")
    await expect(line).to_be_hidden()

    await open_card(answerer, message)
    await expect(line).to_have_text(f"{bea.username} is answering")
    await answerer.context.close()  # she leaves the page: her socket closes
    await expect(line).to_have_text("")
    await expect(card(late, message).locator(".presence")).to_have_text("")

    # Her own page of the ask, open to answer, says it too; leaving it ends it.
    ask_hex = await watched.get_attribute("data-ask")
    assert ask_hex is not None
    await second.goto(f"/asks/{uuid.UUID(ask_hex)}/")
    await expect(line).to_have_text(f"{bea.username} is answering")
    await second.goto("/")
    await expect(line).to_have_text("")

    mine = await open_card(watcher, message)
    await mine.get_by_label("answer").fill("ops")
    await mine.get_by_role("button", name="Send answer").click()
    assert json.loads(text_of(await finish(call)))["answer"] == "ops"
