"""Answering in the browser: a client that cannot show forms asks, a person answers in the live inbox.

Everything runs for real: a daphne server configured as askserver ships, the official MCP
client without the elicitation capability, and Debian's chromium driven by Playwright.
"""

from __future__ import annotations

import asyncio
import json
import re
import uuid
from typing import Any

import httpx2
import pytest
from playwright.async_api import Browser, Page, expect

from tests.support.browser import OpenAs, Person, card, live_inbox, open_card, outcome, screenshot
from tests.support.inbox_asks import ask, ask_form, call_tool, finish, form_reply
from tests.support.live import LiveServer
from tests.support.names import unique
from tests.support.results import text_of
from tests.support.wire import headers_for, request_body

pytestmark = pytest.mark.asyncio(loop_scope="session")

TICKET = {
    "questions": [
        {"name": "component", "prompt": "Which component?", "options": ["api", "ui", "docs"]},
        {"name": "severity", "prompt": "How bad is it?", "type": "number"},
        {"name": "urgent", "prompt": "Block the release?", "type": "boolean"},
        {
            "name": "labels",
            "prompt": "Labels",
            "options": ["bug", "regression", "security"],
            "multiple": True,
            "required": False,
        },
        {"name": "notes", "prompt": "Anything else?", "required": False},
    ],
}
REGIONS = [
    {"const": "eu-west", "title": "Europe (Ireland)"},
    {"const": "eu-central", "title": "Europe (Frankfurt)"},
    {"const": "us-east", "title": "US East (Virginia)"},
    {"const": "us-west", "title": "US West (Oregon)"},
    {"const": "ap-south", "title": "Asia Pacific (Mumbai)"},
    {"const": "ap-east", "title": "Asia Pacific (Hong Kong)"},
]
RICH: dict[str, Any] = {
    "type": "object",
    "properties": {
        "title": {
            "type": "string",
            "title": "Release title",
            "description": "Shown on the release page.",
            "minLength": 3,
            "maxLength": 60,
            "default": "Spring release",
        },
        "summary": {
            "type": "string",
            "title": "Summary",
            "description": "What changed, for people who read the changelog.",
            "maxLength": 2000,
        },
        "contact": {"type": "string", "title": "Contact email", "format": "email"},
        "docs": {"type": "string", "title": "Docs link", "format": "uri"},
        "ship_on": {
            "type": "string",
            "title": "Ship on",
            "format": "date",
            "default": "2026-08-03",
        },
        "freeze_at": {"type": "string", "title": "Code freeze", "format": "date-time"},
        "replicas": {
            "type": "integer",
            "title": "Replicas",
            "minimum": 1,
            "maximum": 9,
            "default": 3,
        },
        "canary": {
            "type": "number",
            "title": "Canary share",
            "description": "Fraction of traffic, 0 to 1.",
            "minimum": 0,
            "maximum": 1,
        },
        "notify": {"type": "boolean", "title": "Notify subscribers", "default": True},
        "channel": {
            "type": "string",
            "title": "Channel",
            "enum": ["stable", "beta", "nightly"],
            "default": "beta",
        },
        "region": {"type": "string", "title": "Region", "oneOf": REGIONS},
        "tier": {
            "type": "string",
            "title": "Tier",
            "enum": ["s", "m", "l"],
            "enumNames": ["Small", "Medium", "Large"],
        },
        "platforms": {
            "type": "array",
            "title": "Platforms",
            "minItems": 1,
            "maxItems": 2,
            "items": {"type": "string", "enum": ["linux", "macos", "windows"]},
            "default": ["linux"],
        },
        "reviewers": {
            "type": "array",
            "title": "Reviewers",
            "items": {
                "anyOf": [{"const": "ana", "title": "Ana"}, {"const": "ben", "title": "Ben"}]
            },
        },
    },
    "required": ["title", "contact", "replicas", "channel", "region", "platforms"],
}


async def ask_id_of(page: Page, message: str) -> str:
    shown = card(page, message)
    await expect(shown).to_be_visible()
    value = await shown.get_attribute("data-ask")
    assert value is not None
    return value


def ask_path(ask_hex: str) -> str:
    return f"/asks/{uuid.UUID(ask_hex)}/"


async def test_a_question_appears_live_and_the_inline_answer_reaches_the_client(
    web: LiveServer, admin: Person, open_as: OpenAs
) -> None:
    page = await open_as(admin)
    await live_inbox(page)
    message = "I need a few details before I can file the ticket."  # as in the README
    call = ask(web.mcp_url, message, **TICKET)

    shown = card(page, message)
    await expect(shown).to_be_visible()  # pushed over the socket: the page was never reloaded
    await expect(page).to_have_title(re.compile(r"^\(1\) Inbox"))
    await open_card(page, message)
    await expect(shown.get_by_text("Which component?")).to_be_visible()
    await screenshot(page, "inbox.png")

    await shown.get_by_label("ui").check()
    await shown.get_by_label("How bad is it?").fill("3")
    # A required boolean is an explicit Yes/No: leaving it alone is not "no".
    await shown.get_by_role("group", name="Block the release?").get_by_label("Yes").check()
    await shown.get_by_label("bug").check()
    await shown.get_by_label("regression").check()
    await shown.get_by_role("button", name="Send answer").click()

    result = await finish(call)
    assert text_of(result) == (
        '{"component":"ui","labels":["bug","regression"],"severity":3,"urgent":true}'
    )
    assert result.is_error is False
    await expect(shown).to_have_count(0)
    await expect(outcome(page)).to_contain_text("✓ Sent")
    await expect(outcome(page)).to_contain_text(f"Answered by {admin.username}")
    await expect(outcome(page)).to_be_focused()
    await expect(page).to_have_title(re.compile(r"^Inbox"))


async def test_every_field_kind_renders_from_the_schema_and_reads_back_as_json(
    web: LiveServer, admin: Person, open_as: OpenAs
) -> None:
    # Summer in Paris is UTC+2: the date-time answer must carry the browser's offset.
    page = await open_as(admin, timezone_id="Europe/Paris")
    await live_inbox(page)
    message = "Before I cut the release, a few choices only you can make."
    call = ask_form(web.mcp_url, message, RICH)
    ask_hex = await ask_id_of(page, message)
    await (await open_card(page, message)).get_by_role("link", name="Open on its own page").click()
    await expect(page).to_have_url(web.base_url + ask_path(ask_hex))
    await expect(page.locator("#live-status")).to_have_text("live")

    form = page.locator("form.ask-form")
    title = form.get_by_label("Release title")
    await expect(title).to_have_value("Spring release")  # defaults are pre-filled
    await expect(title).to_have_attribute("minlength", "3")
    await expect(title).to_have_attribute("maxlength", "60")
    await expect(title).to_have_attribute("required", "")
    await expect(form.get_by_text("Shown on the release page.")).to_be_visible()
    assert await form.get_by_label("Summary").evaluate("e => e.tagName") == "TEXTAREA"
    await expect(form.get_by_label("Contact email")).to_have_attribute("type", "email")
    await expect(form.get_by_label("Docs link")).to_have_attribute("type", "url")
    await expect(form.get_by_label("Ship on")).to_have_attribute("type", "date")
    await expect(form.get_by_label("Ship on")).to_have_value("2026-08-03")
    await expect(form.get_by_label("Code freeze")).to_have_attribute("type", "datetime-local")
    replicas = form.get_by_label("Replicas")
    await expect(replicas).to_have_attribute("type", "number")
    await expect(replicas).to_have_attribute("min", "1")
    await expect(replicas).to_have_attribute("max", "9")
    await expect(replicas).to_have_attribute("step", "1")
    await expect(form.get_by_label("Canary share")).to_have_attribute("step", "any")
    await expect(form.get_by_label("Notify subscribers")).to_be_checked()
    await expect(form.get_by_label("beta")).to_be_checked()  # few options: radios
    region = form.get_by_label("Region")
    assert await region.evaluate("e => e.tagName") == "SELECT"  # many options: a select
    await expect(region.locator("option", has_text="Asia Pacific (Mumbai)")).to_have_count(1)
    await expect(form.get_by_label("Large")).to_have_attribute("value", "l")  # enumNames
    await expect(form.get_by_label("linux")).to_be_checked()
    await expect(form.get_by_text("Choose 1 to 2.")).to_be_visible()
    await expect(form.get_by_label("Ben")).to_have_attribute("value", "ben")  # anyOf titles
    await expect(form.locator("abbr.required")).to_have_count(6)
    await screenshot(page, "form.png")

    await form.get_by_label("Summary").fill("Faster builds.\nFewer <surprises>.")
    await form.get_by_label("Contact email").fill("ops@example.com")
    await form.get_by_label("Docs link").fill("https://example.com/release")
    await form.get_by_label("Code freeze").fill("2026-07-30T18:00")
    await replicas.fill("5")
    await form.get_by_label("Canary share").fill("0.25")
    await form.get_by_label("Notify subscribers").uncheck()
    await form.get_by_label("stable").check()
    await region.select_option("ap-south")
    await form.get_by_label("Large").check()
    await form.get_by_label("windows").check()
    await form.get_by_label("Ben").check()
    await form.get_by_role("button", name="Send answer").click()

    reply = form_reply(await finish(call))
    assert reply == {
        "action": "accept",
        "content": {
            "canary": 0.25,
            "channel": "stable",
            "contact": "ops@example.com",
            "docs": "https://example.com/release",
            "freeze_at": "2026-07-30T18:00:00+02:00",
            "notify": False,
            "platforms": ["linux", "windows"],
            "region": "ap-south",
            "replicas": 5,
            "reviewers": ["ben"],
            "ship_on": "2026-08-03",
            "summary": "Faster builds.\nFewer <surprises>.",
            "tier": "l",
            "title": "Spring release",
        },
    }
    await expect(page.get_by_text("✓ Sent: the agent has your reply.")).to_be_visible()
    await expect(page.locator("dl.answer")).to_contain_text("Asia Pacific (Mumbai)")


@pytest.mark.parametrize(
    "button, text",
    [
        ("Decline", "The user declined to answer."),
        ("Stop this question", "The user cancelled the request."),
    ],
)
async def test_decline_and_cancel_reach_the_client_as_the_same_plain_results(
    web: LiveServer, admin: Person, open_as: OpenAs, button: str, text: str
) -> None:
    page = await open_as(admin)
    await live_inbox(page)
    message = unique("Deploy to production now?")
    call = ask(web.mcp_url, message)
    await ask_id_of(page, message)
    # Declining needs no valid answer: the empty required field does not block it.
    await (await open_card(page, message)).get_by_role("button", name=button, exact=True).click()
    result = await finish(call)
    assert text_of(result) == text
    assert result.is_error is False
    await expect(card(page, message)).to_have_count(0)
    verb = "Declined" if button == "Decline" else "Cancelled"
    await expect(outcome(page)).to_contain_text(f"{verb} by {admin.username}")


async def test_an_answer_that_does_not_fit_is_refused_inline_by_the_server(
    web: LiveServer, admin: Person, open_as: OpenAs
) -> None:
    page = await open_as(admin)
    await live_inbox(page)
    message = unique("Which platforms, and how many replicas?")
    schema = {
        "type": "object",
        "properties": {
            "platforms": {
                "type": "array",
                "title": "Platforms",
                "maxItems": 2,
                "items": {"type": "string", "enum": ["linux", "macos", "windows"]},
            },
            "replicas": {"type": "integer", "title": "Replicas", "maximum": 9},
        },
        "required": ["platforms", "replicas"],
    }
    call = ask_form(web.mcp_url, message, schema)
    shown = await open_card(page, message)
    for platform in ("linux", "macos", "windows"):  # no browser rule limits a checkbox group
        await shown.get_by_label(platform).check()
    replicas = shown.get_by_label("Replicas")
    await replicas.evaluate("input => input.removeAttribute('max')")  # never trust the browser
    await replicas.fill("12")
    await shown.get_by_role("button", name="Send answer").click()

    await expect(shown.get_by_text("allows at most 2 choice(s)")).to_be_visible()
    await expect(shown.get_by_text("must be at most 9")).to_be_visible()
    await expect(shown.get_by_label("windows")).to_be_checked()  # what was typed is kept
    await expect(shown.get_by_label("Replicas")).to_have_value("12")
    assert not call.done()

    await shown.get_by_label("macos").uncheck()
    await shown.get_by_label("Replicas").fill("4")
    await shown.get_by_role("button", name="Send answer").click()
    reply = form_reply(await finish(call))
    assert reply == {
        "action": "accept",
        "content": {"platforms": ["linux", "windows"], "replicas": 4},
    }


async def test_two_people_submitting_at_once_one_wins_and_the_other_sees_who(
    web: LiveServer, admin: Person, bea: Person, open_as: OpenAs
) -> None:
    inbox = await open_as(admin)
    await live_inbox(inbox)
    message = unique("Who signs off the budget?")
    call = ask(web.mcp_url, message)
    path = ask_path(await ask_id_of(inbox, message))
    tabs = {admin.username: await open_as(admin), bea.username: await open_as(bea)}
    for name, tab in tabs.items():
        await tab.goto(path)
        await expect(tab.locator("#live-status")).to_have_text("live")
        await tab.get_by_label("answer").fill(f"signed by {name}")
    sends = [tab.get_by_role("button", name="Send answer") for tab in tabs.values()]
    # Both at once, with no actionability retries: a retried click can land after the other
    # person's answer was pushed to this tab and disabled its button, and then never happens.
    await asyncio.gather(*(send.dispatch_event("click") for send in sends))

    answer = json.loads(text_of(await finish(call)))["answer"]
    winner = answer.removeprefix("signed by ")
    assert winner in tabs
    (loser,) = set(tabs) - {winner}
    for tab in tabs.values():
        await expect(tab.locator(".decided")).to_contain_text(f"Answered by {winner}")
    await expect(tabs[loser].locator("dl.answer")).to_contain_text(f"signed by {winner}")
    rows = json.loads(text_of(await call_tool(web.mcp_url, "probe_records", {})))
    (row,) = [row for row in rows if row["id"] == uuid.UUID(path.split("/")[2]).hex]
    assert row["status"] == "accepted" and row["answer"] == {"answer": answer}


async def test_a_client_that_leaves_is_shown_then_withdrawn_after_the_grace_window(
    web: LiveServer, admin: Person, open_as: OpenAs
) -> None:
    """The card says no agent waits, keeps what is typed, and goes once DETACHED_GRACE_SECONDS
    (1 s here) pass with no call asking the same again."""
    inbox = await open_as(admin)
    await live_inbox(inbox)
    message = unique("Still there?")
    call = ask(web.mcp_url, message)
    path = ask_path(await ask_id_of(inbox, message))
    # A page without JavaScript keeps its form: it will submit after the client left.
    plain = await open_as(admin, java_script_enabled=False)
    await plain.goto(path)
    await plain.get_by_label("answer").fill("too late")

    shown = await open_card(inbox, message)
    typed = shown.get_by_label("answer")
    await typed.fill("a draft")
    call.cancel()  # the client closes its stream
    with pytest.raises(asyncio.CancelledError):
        await call
    await expect(shown.get_by_text("No agent is waiting right now")).to_be_visible()
    await expect(typed).to_have_value("a draft")  # redrawn live without touching the form
    # Withdrawn by the sweeper, live: the card says so and keeps the draft to copy.
    await expect(shown.locator('.ask-status[data-ended="withdrawn"]')).to_be_visible()
    await expect(typed).to_have_value("a draft")

    await plain.get_by_role("button", name="Send answer").click()
    await expect(plain.get_by_text("Your reply was not sent.")).to_be_visible()
    await expect(plain.get_by_text("the client stopped waiting")).to_be_visible()


async def test_a_question_past_its_timeout_expires_and_leaves_the_inbox(
    web: LiveServer, admin: Person, open_as: OpenAs
) -> None:
    page = await open_as(admin)
    await live_inbox(page)
    message = unique("Quick: yes or no?")
    call = ask_form(
        web.mcp_url,
        message,
        {"type": "object", "properties": {"ok": {"type": "boolean"}}},
        timeout=1,
    )
    await expect(card(page, message)).to_be_visible()
    result = await finish(call)
    assert text_of(result).startswith("The user did not answer in time.")
    await expect(card(page, message)).to_have_count(0)


async def test_model_supplied_text_is_shown_as_text_never_run(
    web: LiveServer, admin: Person, open_as: OpenAs
) -> None:
    page = await open_as(admin)
    await live_inbox(page)
    attack = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">'
    message = unique(f"Look: {attack}")
    call = ask(
        web.mcp_url,
        message,
        questions=[
            {
                "name": "pick",
                "prompt": '<b onmouseover="window.__pwned = 3">bold?</b>',
                "options": ["<i>x</i>", "y"],
            }
        ],
    )
    shown = await open_card(page, message)  # arrived over the socket
    await expect(shown.locator(".ask-message")).to_contain_text(attack)
    await expect(
        shown.locator("legend").get_by_text('<b onmouseover="window.__pwned = 3">bold?</b>')
    ).to_be_visible()
    await expect(shown.locator(".ask-message img, .ask-message script, legend b")).to_have_count(0)
    ask_hex = await shown.get_attribute("data-ask")
    assert ask_hex is not None

    detail = await open_as(admin)  # the same ask, rendered by the server
    await detail.goto(ask_path(ask_hex))
    await expect(detail.locator(".ask-message")).to_contain_text(attack)
    await detail.get_by_label("<i>x</i>").check()
    await detail.get_by_role("button", name="Send answer").click()
    assert text_of(await finish(call)) == '{"pick":"<i>x</i>"}'
    await expect(detail.locator("dl.answer")).to_contain_text("<i>x</i>")
    for each in (page, detail):
        assert await each.evaluate("window.__pwned") is None


async def test_every_form_carries_a_csrf_token_and_a_post_without_one_is_refused(
    web: LiveServer, admin: Person, open_as: OpenAs
) -> None:
    page = await open_as(admin)
    await live_inbox(page)
    message = unique("Is this request forged?")
    call = ask(web.mcp_url, message)
    ask_hex = await ask_id_of(page, message)
    token = "input[name=csrfmiddlewaretoken]"
    # The sign-out form and the card pushed over the socket (the filters are a GET form).
    pushed = page.locator("form[method=post]")
    for index in range(await pushed.count()):
        await expect(pushed.nth(index).locator(token)).to_have_count(1)

    cookies = {c["name"]: c["value"] for c in await page.context.cookies()}
    forged = httpx2.post(
        web.base_url + ask_path(ask_hex),
        data={"action": "accept", "f:answer": "forged"},
        cookies={"sessionid": cookies["sessionid"]},
        timeout=10,
    )
    assert forged.status_code == 403
    assert not call.done()

    await (await open_card(page, message)).get_by_label("answer").fill("genuine")
    await card(page, message).get_by_role("button", name="Send answer").click()
    assert text_of(await finish(call)) == '{"answer":"genuine"}'


async def test_progress_notifications_tell_the_client_where_to_answer(
    web: LiveServer, admin: Person, open_as: OpenAs
) -> None:
    message = unique("Where do I answer this?")
    body = request_body(
        "tools/call",
        {"name": "user_ask", "arguments": {"message": message}},
        meta={
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "raw-test", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {},
            "progressToken": "where",
        },
    )
    page = await open_as(admin)
    async with (
        asyncio.timeout(20),
        httpx2.AsyncClient(timeout=20) as client,
        client.stream("POST", web.mcp_url, json=body, headers=headers_for(body)) as response,
    ):
        assert response.headers["content-type"] == "text/event-stream"
        assert response.headers["x-accel-buffering"] == "no"
        lines = response.aiter_lines()
        progress = await _next_message(lines)
        assert progress["method"] == "notifications/progress"
        assert progress["params"]["progressToken"] == "where"
        found = re.search(r"http://\S+/asks/[0-9a-f-]{36}/", progress["params"]["message"])
        assert found and found.group(0).startswith(web.base_url)

        await page.goto(found.group(0))  # the person follows the link the client showed
        await expect(page.locator(".ask-message")).to_have_text(message)
        await page.get_by_label("answer").fill("here")
        await page.get_by_role("button", name="Send answer").click()
        final = await _next_message(lines)
        while "id" not in final:  # progress: the page was seen ("Seen by … at …", phone.md)
            final = await _next_message(lines)
    assert final["result"]["content"] == [{"type": "text", "text": '{"answer":"here"}'}]


async def _next_message(lines: Any) -> dict[str, Any]:
    async for line in lines:
        if line.startswith("data:") and line[5:].strip():
            message: dict[str, Any] = json.loads(line[5:])
            return message
    raise AssertionError("the stream ended")


async def test_people_see_only_what_is_addressed_to_them(
    web: LiveServer, admin: Person, open_as: OpenAs
) -> None:
    from tests.support.browser import add_user

    outsider = add_user(web, f"carl{uuid.uuid4().hex[:6]}", staff=False)
    page = await open_as(admin)
    await live_inbox(page)
    message = unique("For staff only")
    call = ask(web.mcp_url, message)
    ask_hex = await ask_id_of(page, message)

    theirs = await open_as(outsider)
    await live_inbox(theirs)
    await expect(theirs.locator(".ask-card")).to_have_count(0)
    response = await theirs.goto(ask_path(ask_hex))
    assert response is not None and response.status == 403  # someone else's: refused, not hidden

    await (await open_card(page, message)).get_by_role("button", name="Decline").click()
    assert text_of(await finish(call)) == "The user declined to answer."


async def test_the_live_socket_refuses_visitors_who_are_not_signed_in(
    web: LiveServer, browser: Browser
) -> None:
    context = await browser.new_context(base_url=web.base_url)
    try:
        page = await context.new_page()
        await page.goto("/accounts/login/")
        outcome = await page.evaluate(
            """() => new Promise((resolve) => {
                const socket = new WebSocket(`ws://${location.host}/ws/inbox/`);
                socket.onmessage = () => resolve("pushed");
                socket.onclose = (event) => resolve(event.code);
            })"""
        )
    finally:
        await context.close()
    assert outcome == 1006  # the handshake was refused: nothing was ever pushed


async def test_new_questions_raise_a_browser_notification_once_opted_in(
    web: LiveServer, admin: Person, open_as: OpenAs
) -> None:
    page = await open_as(admin)
    await page.context.grant_permissions(["notifications"])
    # The page is in the background, and notifications are recorded instead of shown.
    await page.add_init_script(
        """
        document.hasFocus = () => false;
        window.__notes = [];
        window.Notification = class {
          static permission = "granted";
          static requestPermission() { return Promise.resolve("granted"); }
          constructor(title, options) { window.__notes.push([title, options.body]); }
        };
        """
    )
    await page.reload()
    await live_inbox(page)
    toggle = page.get_by_role("button", name="Notify me of new questions")
    await toggle.click()
    await expect(page.get_by_role("button", name="Stop notifications")).to_be_visible()

    message = unique("Ping?")
    call = ask(web.mcp_url, message)
    await expect(card(page, message)).to_be_visible()
    notes = await page.evaluate("window.__notes")
    assert notes == [["A question is waiting for you", message]]
    await (await open_card(page, message)).get_by_role("button", name="Stop this question").click()
    assert text_of(await finish(call)) == "The user cancelled the request."
