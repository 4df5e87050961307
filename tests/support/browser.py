"""A real browser for the inbox tests: Debian's chromium, headless, driven by Playwright; and people to sign in.

The browser is the system's own (`apt-get install chromium`); Playwright never downloads one.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from playwright.async_api import Browser, Page, expect

from tests.support.live import ROOT, LiveServer

CHROMIUM: Final = "/usr/bin/chromium"
CHROMIUM_ARGS: Final = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
OUTPUT: Final = ROOT / "test-output"
WEB_CONFIG: Final[dict[str, Any]] = {
    "TOOLKITS": {"Ask": {}, "tests.support.probe.Probe": {}},
    "ON_ELICIT": "ask_mcp.web.elicit.on_elicit",
    "OBSERVER": "tests.support.probe.recording_observer",
    "SWEEP_SECONDS": 0.5,
    "DETACHED_GRACE_SECONDS": 1.0,
    "ALLOW_ANONYMOUS_LOOPBACK": True,
    "ALLOW_PRIVATE_TARGETS": True,
    "UNDO_SECONDS": None,
}
"""The askserver default (browser inbox + recorder), with the probe toolkit, a quick sweeper and
a short grace for asks whose client left (the durability tests keep the default 10 minutes);
its MCP clients connect anonymously from loopback (the routing tests use tokens), and its
webhooks may reach the tests' receivers on loopback. A refusal in the inbox is told at once
(no undo window): the undo tests (tests/browser/test_inbox_undo.py) turn it on."""

expect.set_options(timeout=10_000)


OpenAs = Callable[..., Awaitable[Page]]
"""The `open_as` fixture: a page signed in as someone (extra arguments configure the context)."""


@dataclass(frozen=True)
class Person:
    username: str
    password: str


def quickstart_admin(server: LiveServer) -> Person:
    """The admin account `manage.py quickstart` creates on a fresh database, read from its output."""
    out = server.manage("quickstart", "--url", server.base_url + "/")
    username = re.search(r"Sign in as:\s+(\S+)", out)
    password = re.search(r"Password:\s+(\S+)", out)
    assert username and password, out
    return Person(username.group(1), password.group(1))


def add_user(
    server: LiveServer, username: str, *, staff: bool, answers_all: bool | None = None
) -> Person:
    """A user; staff also see and answer every ask unless `answers_all` says otherwise."""
    password = f"pw-{username}-0123456789"
    grant = staff if answers_all is None else answers_all
    code = (
        "from django.contrib.auth.models import Permission, User;"
        f"u = User.objects.create_user({username!r}, password={password!r}, is_staff={staff});"
        + (
            "u.user_permissions.add(Permission.objects.get(codename='answer_every_ask'))"
            if grant
            else ""
        )
    )
    server.manage("shell", "-c", code)
    return Person(username, password)


_SESSIONS: dict[tuple[str, str], Any] = {}
"""Cookies of people already signed in, per server: later pages skip the sign-in form."""


async def signed_in(browser: Browser, server: LiveServer, person: Person, **options: Any) -> Page:
    """A fresh browser context (its own cookies) signed in as `person`, on the inbox."""
    key = (server.base_url, person.username)
    if key in _SESSIONS:
        context = await browser.new_context(
            base_url=server.base_url, storage_state=_SESSIONS[key], **options
        )
        page = await context.new_page()
        await page.goto("/")
        return page
    context = await browser.new_context(base_url=server.base_url, **options)
    page = await context.new_page()
    await page.goto("/")
    await expect(page).to_have_url(re.compile(r"/accounts/login/"))
    await page.get_by_label("Username").fill(person.username)
    await page.get_by_label("Password").fill(person.password)
    await page.get_by_role("button", name="Sign in").click()
    await expect(page).to_have_url(server.base_url + "/")
    _SESSIONS[key] = await context.storage_state()
    return page


async def live_inbox(page: Page) -> None:
    """Wait until the inbox's socket is connected (from then on, every new ask is pushed)."""
    await expect(page.locator("#live-status")).to_have_text("live")


def card(page: Page, message: str) -> Any:
    """The inbox card of the ask whose message is `message`."""
    return page.locator(".ask-card", has=page.locator(".ask-message", has_text=message))


async def open_card(page: Page, message: str) -> Any:
    """The inbox card of `message`, unfolded to its form (cards arrive folded)."""
    shown = card(page, message)
    await expect(shown).to_be_visible()
    details = shown.locator("details.fold")
    if await details.get_attribute("open") is None:
        await shown.locator("summary").click()
    await expect(details).to_have_attribute("open", "")
    return shown


def outcome(page: Page) -> Any:
    """The card an answered ask turned into (there is at most one)."""
    return page.locator(".outcome-card")


async def screenshot(page: Page, name: str) -> Path:
    OUTPUT.mkdir(exist_ok=True)
    path = OUTPUT / name
    await page.screenshot(path=str(path), full_page=True)
    return path
