"""The inbox on a phone: nothing scrolls sideways, no focused field hides under the send bar, the first card is on the first screen.

A real daphne server, the official MCP client without forms and Debian's chromium at 390x844
(and 1280x800), light and dark, with the widest content the Markdown allows: a long fenced code
line, a wide table, long links and long inline code. axe-core checks every page shown.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from playwright.async_api import Page, expect

from tests.support.axe import assert_accessible
from tests.support.browser import OpenAs, Person, card, live_inbox, open_card
from tests.support.inbox_asks import ask_form, finish
from tests.support.live import LiveServer
from tests.support.names import unique

pytestmark = pytest.mark.asyncio(loop_scope="session")

PHONE = {
    "viewport": {"width": 390, "height": 844},
    "device_scale_factor": 2,
    "is_mobile": True,
    "has_touch": True,
}
DESKTOP = {"viewport": {"width": 1280, "height": 800}}
LINK = "https://example.com/" + "a-very-long-path-segment-without-breaks/" * 6
WIDEST = f"""## Wide content check

```text
{"x = compute_the_migration_plan(orders, customers, invoices, shipments, refunds)  # 90+ chars"}
```

| column one | column two | column three | column four | column five | column six |
|---|---|---|---|---|---|
| averyveryverylongcellwithoutspaces | another_long_cell_value_here | 123456789012345 | more | and more | last |

Bare link: {LINK}

A [link with a long text that goes on and on and on]({LINK}) and `inline_code_that_is_long_and_has_no_spaces_at_all_anywhere`.
"""
LONG_FORM: dict[str, Any] = {
    "type": "object",
    "properties": {
        **{
            f"note{n}": {"type": "string", "title": f"Note {n}", "maxLength": 100}
            for n in range(1, 7)
        },
        "reason": {"type": "string", "title": "Reason", "maxLength": 100},
    },
    "required": ["reason"],
}
"""Fields enough to scroll on a phone; the required one last, so the browser's own check
focuses a field near the sticky send bar."""

_SIDEWAYS = "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"
_COVERED = """async (selector) => {
  const frame = () => new Promise((done) => requestAnimationFrame(() => done()));
  const sticky = Array.from(document.querySelectorAll("body *")).filter((el) => {
    const position = getComputedStyle(el).position;
    return (position === "sticky" || position === "fixed") && el.getClientRects().length;
  });
  const covered = [];
  for (const control of document.querySelectorAll(selector)) {
    control.focus();
    // The browser scrolls for the focus, then decide.js in the next frame: wait until the page
    // stops moving (two frames alike), at most 30 frames.
    let last = NaN;
    for (let i = 0; i < 30; i++) {
      await frame();
      if (window.scrollY === last) break;
      last = window.scrollY;
    }
    const box = control.closest(".field").getBoundingClientRect();
    for (const el of sticky) {
      if (el.contains(control)) continue;
      const over = el.getBoundingClientRect();
      if (box.bottom > over.top && box.top < over.bottom) covered.push(control.name);
    }
  }
  return covered;
}"""
"""Focus each control, as Tab does; the names of those whose field (with its help and error
text) overlaps a sticky or fixed element once the page has scrolled for the focus."""


async def no_sideways_scroll(page: Page, where: str) -> None:
    extra = await page.evaluate(_SIDEWAYS)
    assert extra <= 0, f"{where} scrolls sideways by {extra} px at 390 px"


@pytest.mark.parametrize("scheme", ["light", "dark"])
async def test_the_widest_markdown_fits_a_phone_and_no_focused_field_hides_under_the_send_bar(
    web: LiveServer, admin: Person, open_as: OpenAs, scheme: str
) -> None:
    page = await open_as(admin, color_scheme=scheme, **PHONE)
    await live_inbox(page)
    message = WIDEST + unique("fit")
    call = ask_form(web.mcp_url, message, LONG_FORM)
    await expect(card(page, "Wide content check")).to_be_visible()
    # One row of navigation at most two (44 px each), and the first card on the first screen.
    header = await page.locator("header.site").bounding_box()
    assert header is not None and header["height"] <= 2 * 44 + 8, header
    first = await page.locator("#ask-list .ask-card").first.bounding_box()
    assert first is not None and first["y"] < 844 / 3, first
    await no_sideways_scroll(page, "the inbox with a folded card")

    shown = await open_card(page, "Wide content check")
    await expect(shown.locator(".ask-message table")).to_be_visible()
    await no_sideways_scroll(page, "the inbox with the card opened")
    await assert_accessible(page, f"the phone inbox with wide content ({scheme})")
    covered = await page.evaluate(_COVERED, f"#{await shown.get_attribute('id')} .field input")
    assert covered == [], f"focused fields under the sticky send bar: {covered}"
    # The browser's own check focuses the empty required field: it too is clear of the bar.
    await shown.get_by_role("button", name="Send answer").click()
    reason = shown.get_by_label("Reason")
    await expect(reason).to_be_focused()
    box = await reason.evaluate("el => el.closest('.field').getBoundingClientRect().bottom")
    bar = await shown.locator(".actions").evaluate("el => el.getBoundingClientRect().top")
    assert box <= bar, (box, bar)

    ask_hex = await shown.get_attribute("data-ask")
    assert ask_hex is not None
    await page.goto(f"/asks/{uuid.UUID(ask_hex)}/")
    await expect(page.get_by_role("heading", level=1)).to_have_text("Wide content check")
    await no_sideways_scroll(page, "the ask's page")
    covered = await page.evaluate(_COVERED, ".ask-page .field input")
    assert covered == [], f"focused fields under the sticky send bar on the page: {covered}"
    await assert_accessible(page, f"the phone ask page with wide content ({scheme})")
    await expect(page.locator(".ask-page .ask-meta .countdown")).to_have_count(1)
    await page.get_by_role("button", name="Decline").click()
    await finish(call)
    await expect(page.locator(".ask-page .countdown")).to_have_count(0)  # it stopped waiting


async def test_a_folded_card_says_it_opens_and_an_opened_one_says_its_title_once(
    web: LiveServer, admin: Person, open_as: OpenAs
) -> None:
    page = await open_as(admin, **DESKTOP)
    missing: list[str] = []
    page.on("response", lambda response: response.status == 404 and missing.append(response.url))
    await page.reload()
    await live_inbox(page)
    message = unique("Rotate the staging keys?")
    call = ask_form(web.mcp_url, message, LONG_FORM)
    shown = card(page, message)
    await expect(shown).to_be_visible()
    summary = shown.locator("summary")
    chevron = await summary.evaluate("el => getComputedStyle(el, '::after').borderRightWidth")
    assert chevron != "0px", chevron  # a visible sign that the card opens
    await open_card(page, message)
    title = await shown.locator(".summary-title").bounding_box()
    assert title is not None and title["width"] <= 1, title  # shown once: the message says it
    await expect(shown).to_have_accessible_name(message)  # still named for screen readers
    await expect(page.locator("details.filters-fold")).not_to_have_attribute("open", "")
    await shown.get_by_role("button", name="Decline").click()
    await finish(call)
    assert missing == []  # not even a favicon
