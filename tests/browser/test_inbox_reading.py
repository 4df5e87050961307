"""Reading and answering on a desk and on a phone: Markdown, who asked, urgency, labels, validation, accessibility.

A real daphne server, the official MCP client without forms, Debian's chromium at 1280x800 and
at 390x844, and axe-core's default rules (WCAG 2.0-2.2 A and AA plus best practices) on every
page a person sees: sign-in, the inbox with asks waiting, an ask's page, the answered state and
"My answers". Screenshots for the docs (docs/answering/) are taken here, light and dark.
"""

from __future__ import annotations

import asyncio
import json
import re
import uuid
from typing import Any

import pytest
from playwright.async_api import Browser, Page, expect

from tests.support.axe import assert_accessible
from tests.support.browser import OpenAs, Person, card, live_inbox, open_card, outcome, screenshot
from tests.support.clients import ask_with, authed
from tests.support.inbox_asks import ask, ask_form, finish
from tests.support.live import LiveServer
from tests.support.names import unique
from tests.support.results import text_of
from tests.support.team import Team

pytestmark = pytest.mark.asyncio(loop_scope="session")

DESKTOP = {"viewport": {"width": 1280, "height": 800}}
PHONE = {
    "viewport": {"width": 390, "height": 844},
    "device_scale_factor": 2,
    "is_mobile": True,
    "has_touch": True,
}
MARKDOWN = """## Release 4.2 is ready

The build **passed**. Run this before you approve:

```sh
make release
    --tag v4.2
```

- changelog: https://example.com/changes
- [the dashboard](https://example.com/dash)
- [a trap](javascript:alert(1))

<img src=x onerror="window.__pwned = 1"> <b>raw html</b>
"""
SHAPES: dict[str, Any] = {
    "type": "object",
    "properties": {
        "delete": {"type": "boolean", "title": "May I delete the old branch?"},
        "why": {"type": "string", "title": "Why", "maxLength": 500},
        "targets": {
            "type": "array",
            "title": "Targets",
            "items": {"type": "string", "enum": ["staging", "production"]},
        },
        "level": {"type": "string", "title": "Level", "enum": ["low", "high"]},
        "count": {"type": "integer", "title": "Count"},
        "tidy": {"type": "boolean", "title": "Tidy up afterwards"},
    },
    "required": ["delete", "why", "targets", "level"],
}


async def probe_with(url: str, token: str, message: str, timeout: float) -> Any:
    """probe_form as a token's holder, with a timeout shorter than the server's TTL."""
    schema = {"type": "object", "properties": {"note": {"type": "string", "title": "Note"}}}
    async with asyncio.timeout(40), authed(url, token) as client:
        arguments = {"message": message, "schema": schema, "timeout": timeout}
        return await client.call_tool("probe_form", arguments)


async def small_targets(page: Page, root: str) -> list[tuple[str, float]]:
    """Every option row, button, summary and link under `root` less than 44 px tall."""
    found: list[tuple[str, float]] = await page.evaluate(
        """(root) => Array.from(document.querySelectorAll(
              `${root} label.inline, ${root} button, ${root} summary, ${root} a,`
              + ` ${root} input:not([type=radio]):not([type=checkbox]):not([type=hidden]),`
              + ` ${root} select, ${root} textarea`))
            .filter((el) => el.getClientRects().length)
            .map((el) => [el.outerHTML.slice(0, 80), el.getBoundingClientRect().height])
            .filter(([, height]) => height < 44)""",
        root,
    )
    return found


async def test_markdown_renders_safely_with_code_lists_and_links(
    web: LiveServer, admin: Person, open_as: OpenAs
) -> None:
    page = await open_as(admin)
    await live_inbox(page)
    message = MARKDOWN + unique("release")
    call = ask(web.mcp_url, message)
    shown = await open_card(page, "Release 4.2 is ready")
    body = shown.locator(".ask-message")
    await expect(body.get_by_role("heading", name="Release 4.2 is ready")).to_be_visible()
    await expect(body.locator("strong")).to_have_text("passed")
    code = body.locator("pre code")
    assert await code.text_content() == "make release\n    --tag v4.2\n"  # indentation kept
    assert await code.evaluate("e => getComputedStyle(e).fontFamily.includes('monospace')")
    await expect(body.locator("li")).to_have_count(3)
    for name in ("https://example.com/changes", "the dashboard"):
        link = body.get_by_role("link", name=name)
        rel = await link.get_attribute("rel") or ""
        assert {"noopener", "nofollow"} <= set(rel.split()), rel
    await expect(body.get_by_role("link", name="a trap")).to_have_count(0)  # no javascript: href
    await expect(body.locator("img, b")).to_have_count(0)
    await expect(body).to_contain_text("<b>raw html</b>")  # shown as text, never as markup
    assert await page.evaluate("window.__pwned") is None
    await (
        (await open_card(page, "Release 4.2 is ready"))
        .get_by_role("button", name="Decline")
        .click()
    )
    assert text_of(await finish(call)) == "The user declined to answer."


async def test_a_field_without_a_label_gets_a_sensible_one_and_blank_answers_are_refused(
    web: LiveServer, admin: Person, open_as: OpenAs
) -> None:
    page = await open_as(admin)
    await live_inbox(page)
    message = unique("Name the incident")
    call = ask(web.mcp_url, message)
    shown = await open_card(page, message)
    field = shown.get_by_label("Your answer")  # not the raw key "answer"
    await field.fill("   ")
    await shown.get_by_role("button", name="Send answer").click()
    # The browser refuses it first...
    assert await field.evaluate("e => e.validationMessage") == "Type more than spaces."
    # ...and the server too, when the browser's checks are bypassed.
    await shown.locator("form").evaluate("form => { form.noValidate = true; }")
    await shown.get_by_role("button", name="Send answer").click()
    shown = card(page, message)
    field = shown.get_by_label("Your answer")
    await expect(field).to_have_attribute("aria-invalid", "true")
    error = shown.locator(".error")
    await expect(error).to_contain_text("type more than spaces")
    described = await field.get_attribute("aria-describedby") or ""
    assert await error.get_attribute("id") in described.split()
    await expect(field).to_be_focused()
    assert not call.done()
    await field.fill("INC-7")
    await shown.get_by_role("button", name="Send answer").click()
    assert json.loads(text_of(await finish(call))) == {"answer": "INC-7"}


async def test_every_shape_answers_on_a_phone_with_44px_targets_and_an_explicit_yes_no(
    web: LiveServer, admin: Person, open_as: OpenAs
) -> None:
    page = await open_as(admin, **PHONE)
    await live_inbox(page)
    message = unique("Clean up after the release?")
    call = ask_form(web.mcp_url, message, SHAPES)
    shown = await open_card(page, message)
    assert await small_targets(page, f"#{await shown.get_attribute('id')}") == []
    yes_no = shown.get_by_role("group", name="May I delete the old branch?")
    await expect(yes_no.get_by_role("radio")).to_have_count(2)  # Yes and No, neither chosen
    await expect(yes_no.get_by_label("Yes")).not_to_be_checked()
    await expect(yes_no.get_by_label("No")).not_to_be_checked()
    await expect(shown.get_by_text("Decline: you will not answer this.")).to_be_visible()
    await expect(shown.get_by_role("button", name="Decline")).to_have_accessible_description(
        re.compile("should not have been asked")
    )
    await screenshot(page, "inbox-phone.png")

    # Nothing ticked in a required multiple choice: the server says so, at the input.
    await shown.locator("form").evaluate("form => { form.noValidate = true; }")
    await yes_no.get_by_label("No").check()
    await shown.get_by_label("Why").fill("kept for audits")
    await shown.get_by_label("high").check()
    await shown.get_by_role("button", name="Send answer").click()
    shown = card(page, message)
    await expect(shown.get_by_role("group", name="Targets")).to_have_accessible_description(
        re.compile("choose at least one")
    )
    await expect(shown.get_by_label("Why")).to_have_value("kept for audits")
    await shown.get_by_label("staging").check()
    await shown.get_by_label("Count").fill("2")
    await shown.get_by_role("button", name="Send answer").click()
    reply = json.loads(text_of(await finish(call)))
    assert reply == {
        "action": "accept",
        "content": {
            "count": 2,
            "delete": False,  # chosen, not assumed
            "level": "high",
            "targets": ["staging"],
            "tidy": False,
            "why": "kept for audits",
        },
    }
    await expect(outcome(page)).to_be_in_viewport()
    await expect(outcome(page)).to_be_focused()


async def test_cards_are_compact_soonest_first_searchable_and_say_who_asked_in_words(
    web: LiveServer, team: Team, open_as: OpenAs
) -> None:
    page = await open_as(team.dora, timezone_id="Asia/Tokyo", locale="en-US")
    await live_inbox(page)
    tag = uuid.uuid4().hex[:8]
    later = asyncio.create_task(ask_with(web.mcp_url, team.token, f"Later one {tag}"))
    await expect(card(page, f"Later one {tag}")).to_be_visible()
    sooner = asyncio.create_task(probe_with(web.mcp_url, team.token, f"Sooner one {tag}", 300))
    await expect(card(page, f"Sooner one {tag}")).to_be_visible()
    titles = await page.locator("#ask-list .ask-card .summary-title").all_text_contents()
    assert titles.index(f"Sooner one {tag}") < titles.index(f"Later one {tag}")
    await expect(page.locator("#announcer")).to_contain_text(f"New question: Sooner one {tag}")

    shown = await open_card(page, f"Later one {tag}")
    await expect(shown.locator(".asker-for")).to_have_text(team.dora.username)
    await expect(shown.locator(".asker-team")).to_have_text(team.team)
    await expect(shown.locator(".asker-token")).to_have_text(re.compile(r"^askmcp_\S{4}…$"))
    await expect(shown.locator(".asker-agent")).to_have_text(re.compile(r"^mcp \S+$"))  # + version
    await expect(shown.locator(".summary-meta")).to_contain_text(f"(team {team.team})")
    await expect(shown.locator(".summary-meta .countdown")).to_have_text(re.compile(r"expires in"))
    await expect(shown.locator("time.local").first).to_contain_text("GMT+9")  # local, to the second
    await expect(shown.locator("time.ago")).to_have_text(re.compile(r"now|second|minute"))

    await page.goto(f"/?q=Sooner+one+{tag}")
    await live_inbox(page)
    await expect(page.locator("#ask-list .ask-card")).to_have_count(1)
    await expect(card(page, f"Sooner one {tag}")).to_be_visible()
    await page.goto(f"/?team={team.team}&q={tag}")
    await expect(page.locator("#ask-list .ask-card")).to_have_count(2)  # both asked for the team
    await page.goto(f"/?asker=nobody-{tag}&q={tag}")
    await expect(page.locator("#ask-list .ask-card")).to_have_count(0)
    await expect(page.get_by_text("No waiting question matches these filters.")).to_be_visible()

    for message, task in ((f"Later one {tag}", later), (f"Sooner one {tag}", sooner)):
        await page.goto(f"/?q={tag}")
        await (await open_card(page, message)).get_by_role("button", name="Decline").click()
        await expect(outcome(page)).to_contain_text("Declined")
        result = text_of(await finish(task))  # user_ask's sentence, or the probe's raw reply
        assert result in ("The user declined to answer.", '{"action":"decline"}')

    await page.goto("/mine/")  # a person who is not staff has a history of their own
    await expect(page.get_by_role("heading", name="My answers", level=1)).to_be_visible()
    await expect(page.locator(".history-row", has_text=f"Later one {tag}")).to_contain_text(
        f"Declined by {team.dora.username}"
    )
    await page.goto("/mine/?status=accepted")
    await expect(page.locator(".history-row", has_text=tag)).to_have_count(0)


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
@pytest.mark.parametrize("scheme", ["light", "dark"])
async def test_every_page_passes_axe_on_desktop_and_phone_in_light_and_dark(
    web: LiveServer, admin: Person, browser: Browser, open_as: OpenAs, viewport: Any, scheme: str
) -> None:
    form = "phone" if viewport is PHONE else "desktop"
    signed_out = await browser.new_context(base_url=web.base_url, color_scheme=scheme, **viewport)
    try:
        login = await signed_out.new_page()
        await login.goto("/accounts/login/")
        await assert_accessible(login, "the sign-in page")
    finally:
        await signed_out.close()

    page = await open_as(admin, color_scheme=scheme, **viewport)
    await live_inbox(page)
    message = MARKDOWN + unique("axe")
    call = ask_form(web.mcp_url, message, SHAPES)
    await open_card(page, "Release 4.2 is ready")
    await assert_accessible(page, "the inbox with an ask waiting")
    await screenshot(page, f"inbox-{form}-{scheme}.png")

    shown = card(page, "Release 4.2 is ready")
    ask_hex = await shown.get_attribute("data-ask")
    assert ask_hex is not None
    await page.goto(f"/asks/{uuid.UUID(ask_hex)}/")
    await expect(page.get_by_role("heading", level=1)).to_have_text("Release 4.2 is ready")
    await assert_accessible(page, "an ask's page")
    await page.get_by_role("button", name="Stop this question").click()
    await expect(page.locator(".page-outcome")).to_be_focused()
    await assert_accessible(page, "an ask's page, answered")
    assert json.loads(text_of(await finish(call))) == {"action": "cancel"}
    await screenshot(page, f"ask-{form}-{scheme}.png")

    await page.goto("/mine/")
    await assert_accessible(page, "My answers")
