"""The admin's view of asks: the list, its filters and search, read-only answers, and the cancel and expire actions.

The actions reach the call wherever it waits: a call held for the browser resumes at once,
a call parked for an MRTR client resumes with the admin's decision when the client retries, an
initialize-era call whose form waits on the client's stream ends at once. The reason staff give
on the confirmation page reaches the model in each of those results, and is shown as text.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import uuid
from typing import Any
from urllib.parse import urlsplit

import pytest
from mcp import Client
from mcp.client import ClientRequestContext
from mcp.types import CallToolResult, ElicitRequestParams, ElicitResult
from playwright.async_api import Page, expect

from ask_mcp.server.errors import REASON_LIMIT, TIMED_OUT_TEXT
from ask_mcp.toolkits.ask import CANCELLED_TEXT
from tests.support.axe import assert_accessible
from tests.support.browser import OpenAs, Person, card, live_inbox, open_card
from tests.support.inbox_asks import call_tool
from tests.support.live import LiveServer
from tests.support.names import unique
from tests.support.results import text_of
from tests.support.wire import assert_valid

pytestmark = pytest.mark.asyncio(loop_scope="session")

CHANGELIST = "/admin/ask_mcp/ask/"


async def run_action(page: Page, message: str, action: str, also: str = "") -> None:
    """Find the ask by its message in the admin list (`also`: more of the query string, such as
    a filter) and apply an action to it."""
    await page.goto(f"{CHANGELIST}?q={message.split(' [')[1].rstrip(']')}{also}")
    row = page.locator("#result_list tbody tr", has_text=message)
    await expect(row).to_have_count(1)
    await row.locator("input[name=_selected_action]").check()
    await page.locator("select[name=action]").select_option(action)
    await page.get_by_role("button", name="Run", exact=True).click()
    # A confirmation page names the asks first; nothing is decided until it is confirmed.
    await expect(page.locator("#content li", has_text=message)).to_have_count(1)
    await assert_accessible(page, "the admin's bulk confirmation, with its reason field")
    await page.get_by_role("button", name=re.compile(r"^Yes, (cancel|expire) them$")).click()


async def test_cancelling_a_browser_ask_resumes_the_held_call_with_cancelled(
    web: LiveServer, admin: Person, open_as: OpenAs
) -> None:
    inbox = await open_as(admin)
    await live_inbox(inbox)
    message = unique("Rotate the keys tonight?")
    call = asyncio.create_task(call_tool(web.mcp_url, "user_ask", {"message": message}))
    await expect(card(inbox, message)).to_be_visible()

    page = await open_as(admin)
    await page.goto(f"{CHANGELIST}?status__exact=pending")
    row = page.locator("#result_list tbody tr", has_text=message)
    await expect(row.locator("td.field-status")).to_have_text("Pending")
    await expect(row.locator("td.field-tool")).to_have_text("user_ask")
    await expect(row.locator("td.field-who_asked")).to_have_text(re.compile(r"^mcp \S+$"))
    # From the Pending filter, which no longer sees the ask once it is cancelled.
    await run_action(page, message, "cancel_asks", also="&status__exact=pending")
    await expect(page.locator(".messagelist")).to_contain_text("1 ask(s) cancelled.")
    await expect(page.locator(".messagelist")).not_to_contain_text("no longer pending")

    async with asyncio.timeout(15):
        result = await call
    assert text_of(result) == "The user cancelled the request."
    await expect(card(inbox, message)).to_have_count(0)
    await page.goto(f"{CHANGELIST}?status__exact=cancelled")
    row = page.locator("#result_list tbody tr", has_text=message)
    await expect(row.locator("td.field-decided_by")).to_have_text(admin.username)


async def test_expiring_a_browser_ask_ends_the_call_as_not_answered_in_time(
    web: LiveServer, admin: Person, open_as: OpenAs
) -> None:
    inbox = await open_as(admin)
    await live_inbox(inbox)
    message = unique("Renew the certificate?")
    call = asyncio.create_task(call_tool(web.mcp_url, "user_ask", {"message": message}))
    await expect(card(inbox, message)).to_be_visible()

    page = await open_as(admin)
    await run_action(page, message, "expire_asks")
    await expect(page.locator(".messagelist")).to_contain_text("1 ask(s) expired.")
    async with asyncio.timeout(15):
        result = await call
    assert text_of(result).startswith("The user did not answer in time.")
    await expect(card(inbox, message)).to_have_count(0)

    await run_action(page, message, "expire_asks")  # a second time: nothing is pending
    await expect(page.locator(".messagelist")).to_contain_text(
        "0 ask(s) expired. 1 were no longer pending"
    )


async def test_cancelling_an_mrtr_ask_answers_the_parked_call_when_its_client_retries(
    web: LiveServer, admin: Person, open_as: OpenAs
) -> None:
    page = await open_as(admin)
    message = unique("Merge the release branch?")

    async def slow_person(ctx: ClientRequestContext, params: ElicitRequestParams) -> ElicitResult:
        # While this person hesitates, the call is parked in the server; an admin cancels it.
        await call_tool(web.mcp_url, "probe_records", {})  # the recorder has written the row
        await run_action(page, message, "cancel_asks")
        await expect(page.locator(".messagelist")).to_contain_text("1 ask(s) cancelled.")
        return ElicitResult(action="accept", content={"answer": "too late"})

    async with (
        asyncio.timeout(30),
        Client(web.mcp_url, mode="2026-07-28", elicitation_callback=slow_person) as client,
    ):
        result = await client.call_tool("user_ask", {"message": message})
    assert text_of(result) == "The user cancelled the request."
    await page.goto(f"{CHANGELIST}?route__exact=client&status__exact=cancelled")
    await expect(page.locator("#result_list tbody tr", has_text=message)).to_have_count(1)


REASON = 'The <b>release</b> is off & "staging" stays; redeploy Monday'
"""Staff's reason as typed: markup and quotes, to be shown as text and told to the model as typed."""


def checked_text(result: CallToolResult) -> str:
    """The result's text, once the result as the client read it validates against mcp-types."""
    reply = {
        "jsonrpc": "2.0",
        "id": 1,
        "result": result.model_dump(by_alias=True, exclude_none=True),
    }
    assert_valid("tools/call", reply)
    assert result.is_error is False, "a cancel or an expire is a plain result, not an error"
    return text_of(result)


async def decide_from_row(page: Page, message: str, verb: str, reason: str) -> None:
    """Open the ask's row action, check the confirmation page with axe, give the reason, confirm."""
    await page.goto(f"{CHANGELIST}?q={message.split(' [')[1].rstrip(']')}")
    row = page.locator("#result_list tbody tr", has_text=message)
    await row.get_by_role("link", name=f"{verb.capitalize()} {message}").click()
    field = page.get_by_label("Reason for the agent (optional)")
    await expect(field).to_have_attribute("maxlength", str(REASON_LIMIT))
    await field.fill(reason)
    await assert_accessible(page, f"the admin's {verb} confirmation with a reason")
    await page.get_by_role("button", name=f"Yes, {verb} this ask").click()
    await expect(page.locator(".messagelist")).to_contain_text(f"1 ask(s) {verb}")


async def shows_reason_as_text(page: Page, message: str, status: str) -> None:
    """The ask's admin page shows the reason as typed, escaped (no <b> element made of it)."""
    await page.goto(f"{CHANGELIST}?q={message.split(' [')[1].rstrip(']')}&status__exact={status}")
    await page.locator("#result_list tbody tr th a").first.click()
    await expect(page.locator(".field-reason .readonly")).to_have_text(REASON)
    assert await page.evaluate("document.querySelector('.field-reason b')") is None
    # The ask's own page in the inbox says why it ended, in the same words, as text.
    ask_id = uuid.UUID(urlsplit(page.url).path.rstrip("/").split("/")[-2])  # …/<id>/change/
    await page.goto(f"/asks/{ask_id}/")
    await expect(page.locator(".ask-closed .reason")).to_have_text(f"Reason: {REASON}")
    assert await page.evaluate("document.querySelector('.ask-closed b')") is None
    await assert_accessible(page, "an ask's page that says why staff ended it")


@pytest.mark.parametrize("verb", ["cancel", "expire"])
async def test_a_held_call_ended_from_its_row_reads_the_admins_reason(
    web: LiveServer, admin: Person, open_as: OpenAs, verb: str
) -> None:
    """Cancel reads the cancel text with the reason; expire reads the timeout text with it."""
    inbox = await open_as(admin)
    await live_inbox(inbox)
    message = unique(f"Tag the release ({verb})?")
    call = asyncio.create_task(call_tool(web.mcp_url, "user_ask", {"message": message}))
    await expect(card(inbox, message)).to_be_visible()

    page = await open_as(admin)
    await decide_from_row(page, message, verb, REASON)
    async with asyncio.timeout(15):
        result = await call
    if verb == "cancel":
        assert checked_text(result) == f"The user cancelled the request: {REASON}."
    else:
        rest = TIMED_OUT_TEXT.partition(". ")[2]
        assert checked_text(result) == f"The user did not answer in time: {REASON}. {rest}"
    await shows_reason_as_text(page, message, "cancelled" if verb == "cancel" else "expired")


@pytest.mark.parametrize("verb", ["cancel", "expire"])
@pytest.mark.parametrize("mode", ["2026-07-28", "legacy"], ids=["mrtr-retry", "2025-elicitation"])
async def test_a_call_asking_the_client_reads_the_admins_reason(
    web: LiveServer, admin: Person, open_as: OpenAs, verb: str, mode: str
) -> None:
    """A 2026-07-28 call parked in the server reads the decision on its retry; an initialize-era
    call, whose form waits on the client's stream, is ended by it at once."""
    page = await open_as(admin)
    message = unique(f"Vacuum the database ({verb}, {mode})?")

    returned = withdrawn = False
    still_open = asyncio.Event()  # never set: the form stays open until the server withdraws it

    async def slow_person(ctx: ClientRequestContext, params: ElicitRequestParams) -> ElicitResult:
        nonlocal withdrawn
        # While this person hesitates, the call waits in the server; an admin decides it.
        await call_tool(web.mcp_url, "probe_records", {})  # the recorder has written the row
        try:
            await decide_from_row(page, message, verb, "  too late:\n the window closed  ")
            if mode == "legacy":  # the form is on the client: the server tells it to drop it
                await still_open.wait()  # bounded by the call's 30 s
        except asyncio.CancelledError:
            withdrawn = not returned  # by the server's notice, not by the client closing
            raise
        return ElicitResult(action="accept", content={"answer": "too late"})

    async with (
        asyncio.timeout(30),
        Client(web.mcp_url, mode=mode, elicitation_callback=slow_person) as client,  # type: ignore[arg-type]
    ):
        result = await client.call_tool("user_ask", {"message": message})
        returned = True
    said = "too late: the window closed"  # one line, trimmed, as the model reads it
    # notifications/cancelled for the server's elicitation request cancelled the callback
    # before the call's result arrived.
    assert withdrawn == (mode == "legacy")
    if verb == "cancel":
        assert checked_text(result) == f"{CANCELLED_TEXT.rstrip('.')}: {said}."
    else:
        rest = TIMED_OUT_TEXT.partition(". ")[2]
        assert checked_text(result) == f"The user did not answer in time: {said}. {rest}"


async def test_a_cancel_without_a_reason_reads_as_before(
    web: LiveServer, admin: Person, open_as: OpenAs
) -> None:
    inbox = await open_as(admin)
    await live_inbox(inbox)
    message = unique("Rotate the logs?")
    call = asyncio.create_task(call_tool(web.mcp_url, "user_ask", {"message": message}))
    await expect(card(inbox, message)).to_be_visible()
    page = await open_as(admin)
    await decide_from_row(page, message, "cancel", "")
    async with asyncio.timeout(15):
        assert checked_text(await call) == CANCELLED_TEXT


async def test_the_admin_finds_asks_by_message_and_shows_answers_read_only(
    web: LiveServer, admin: Person, open_as: OpenAs
) -> None:
    message = unique("Which <b>database</b>?")

    async def person(ctx: ClientRequestContext, params: ElicitRequestParams) -> ElicitResult:
        return ElicitResult(action="accept", content={"answer": "postgres <16>"})

    async with (
        asyncio.timeout(30),
        Client(web.mcp_url, mode="2026-07-28", elicitation_callback=person) as client,
    ):
        await client.call_tool("user_ask", {"message": message})
    rows: list[dict[str, Any]] = json.loads(
        text_of(await call_tool(web.mcp_url, "probe_records", {}))
    )
    (recorded,) = [row for row in rows if row["answer"] == {"answer": "postgres <16>"}]

    page = await open_as(admin)
    await page.goto(f"{CHANGELIST}?q=database&status__exact=accepted")
    row = page.locator("#result_list tbody tr", has_text=message)  # escaped, shown as text
    await expect(row).to_have_count(1)
    await page.goto(f"{CHANGELIST}{uuid.UUID(recorded['id'])}/change/")
    await expect(page.locator(".field-shown_answer pre")).to_have_text(
        '{\n  "answer": "postgres <16>"\n}'
    )
    await expect(page.locator("input[name=status], textarea[name=answer]")).to_have_count(0)
    assert await page.evaluate("document.querySelector('.field-message b')") is None


async def test_one_pending_ask_is_cancelled_from_its_row_after_a_confirmation(
    web: LiveServer, admin: Person, open_as: OpenAs
) -> None:
    inbox = await open_as(admin)
    await live_inbox(inbox)
    message = unique("Drop the staging database?")
    call = asyncio.create_task(call_tool(web.mcp_url, "user_ask", {"message": message}))
    await expect(card(inbox, message)).to_be_visible()

    page = await open_as(admin)
    await page.goto(f"{CHANGELIST}?q={message.split(' [')[1].rstrip(']')}")
    row = page.locator("#result_list tbody tr", has_text=message)
    await expect(row.locator("td.field-time_left")).to_have_text(re.compile(r"^expires in \d+ min"))
    await expect(row.locator("td.field-asked_at time")).to_have_attribute(
        "datetime", re.compile(r"T\d\d:\d\d:\d\d")
    )
    await row.get_by_role("link", name=f"Cancel {message}").click()
    await expect(page.get_by_role("heading", name="Cancel this ask?")).to_be_visible()
    await expect(page.locator("#content")).to_contain_text("the waiting call gets “cancelled”")
    assert not call.done()  # nothing happens before the confirmation
    await assert_accessible(page, "the admin's cancel confirmation")
    await page.get_by_role("button", name="Yes, cancel this ask").click()
    await expect(page.locator(".messagelist")).to_contain_text("1 ask(s) cancelled.")
    async with asyncio.timeout(15):
        assert text_of(await call) == "The user cancelled the request."


async def test_an_ask_record_is_read_only_with_times_to_the_second_and_answers_as_fields(
    web: LiveServer, admin: Person, open_as: OpenAs
) -> None:
    inbox = await open_as(admin)
    await live_inbox(inbox)
    message = unique("Which **region**?")
    call = asyncio.create_task(call_tool(web.mcp_url, "user_ask", {"message": message}))
    shown = await open_card(inbox, message.split(" [")[1].rstrip("]"))
    await shown.get_by_label("answer").fill("eu-west")
    await shown.get_by_role("button", name="Send answer").click()
    async with asyncio.timeout(15):
        await call

    page = await open_as(admin)
    await page.goto(f"{CHANGELIST}?q={message.split(' [')[1].rstrip(']')}")
    await assert_accessible(page, "the admin's ask list")
    await page.locator("#result_list tbody tr th a").first.click()
    await expect(page.locator("input[type=submit]")).to_have_count(0)  # no Save of any kind
    await expect(page.get_by_role("link", name="Delete")).to_have_count(0)
    await expect(page.locator(".field-shown_answer dl")).to_contain_text("Your answer")
    await expect(page.locator(".field-shown_answer dl")).to_contain_text("eu-west")
    asked = page.locator(".field-asked_at time")
    assert re.search(r"\d\d:\d\d:\d\d", await asked.inner_text())  # local time, to the second
    await expect(page.locator(".field-decided_by .readonly")).to_have_text(admin.username)
    await assert_accessible(page, "the admin's ask page")


async def test_the_admin_list_names_an_ask_in_plain_words_not_raw_markdown(
    web: LiveServer, admin: Person, open_as: OpenAs
) -> None:
    message = unique("## Migrate `orders` **now**")
    call = asyncio.create_task(call_tool(web.mcp_url, "user_ask", {"message": message}))
    page = await open_as(admin)
    tag = message.split(" [")[1].rstrip("]")
    await page.goto(f"{CHANGELIST}?q={tag}&status__exact=pending")
    row = page.locator("#result_list tbody tr", has_text=tag)
    await expect(row.locator("th.field-summary, td.field-summary")).to_have_text(
        f"Migrate orders now [{tag}]"
    )
    call.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await call
