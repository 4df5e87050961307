"""A person's own account, live in a real browser: the auth pages mounted, an email change confirmed by a mailed link, signed-in browsers ended.

Issue 28, item 2. `/settings/` changed a person's address with no password and no
confirmation (one stolen session became a permanent takeover, and anyone could make the server
mail any address), nothing listed or ended a person's other sessions, and Django's whole
`auth.urls` was mounted, password reset included (open, unthrottled, its link following the
request's Host). Mail goes through a real SMTP server on loopback.
"""

from __future__ import annotations

import asyncio
import re
import uuid
from collections.abc import AsyncIterator, Iterator

import httpx2
import pytest
import pytest_asyncio
from playwright.async_api import Browser, Page, expect

from tests.support.browser import Person, add_user
from tests.support.live import LiveServer, LiveServers
from tests.support.mailbox import Mailbox
from tests.support.reach import REACH_CONFIG, mail_env
from tests.support.shell import shell

pytestmark = pytest.mark.asyncio(loop_scope="session")

CONFIRM_LINK = re.compile(r"https?://[^\s\"<>]+/settings/email/[^\s\"<>]+/")


@pytest.fixture(scope="module")
def server(live_servers: LiveServers, mailbox: Mailbox) -> Iterator[LiveServer]:
    live = live_servers.start(REACH_CONFIG, extra_env=mail_env(mailbox))
    yield live
    live_servers.stop(live)


@pytest.fixture
def person(server: LiveServer) -> Person:
    someone = add_user(server, f"eve{uuid.uuid4().hex[:6]}", staff=False)
    set_email(server, someone, f"{someone.username}@old.test")
    return someone


def set_email(server: LiveServer, person: Person, address: str) -> None:
    """What an administrator does (the admin, createsuperuser): the address counts as confirmed."""
    shell(
        server,
        "import json; from django.contrib.auth.models import User;"
        f"u = User.objects.get(username={person.username!r}); u.email = {address!r}; u.save();"
        "print(json.dumps(u.email))",
    )


def email_of(server: LiveServer, person: Person) -> str:
    return str(
        shell(
            server,
            "import json; from django.contrib.auth.models import User;"
            f"print(json.dumps(User.objects.get(username={person.username!r}).email))",
        )
    )


@pytest_asyncio.fixture(loop_scope="session")
async def browsers(browser: Browser, server: LiveServer) -> AsyncIterator[list[Page]]:
    """Pages of browser contexts the test signs in with; all closed afterwards."""
    pages: list[Page] = []
    yield pages
    for page in pages:
        await page.context.close()


async def sign_in(
    browser: Browser, server: LiveServer, person: Person, pages: list[Page], agent: str
) -> Page:
    """A new browser (its own cookies, its own User-Agent) signed in through the form."""
    context = await browser.new_context(base_url=server.base_url, user_agent=agent)
    page = await context.new_page()
    pages.append(page)
    await page.goto("/accounts/login/")
    await page.get_by_label("Username").fill(person.username)
    await page.get_by_label("Password").fill(person.password)
    await page.get_by_role("button", name="Sign in").click()
    await expect(page).to_have_url(server.base_url + "/")
    return page


async def signed_out(page: Page) -> None:
    await page.goto("/settings/")
    await expect(page).to_have_url(re.compile(r"/accounts/login/\?next=/settings/"))


async def test_only_the_account_pages_the_product_uses_are_mounted(server: LiveServer) -> None:
    async with httpx2.AsyncClient(base_url=server.base_url, timeout=10.0) as http:
        for gone in ("/accounts/password_reset/", "/accounts/reset/x/y/"):
            assert (await http.get(gone)).status_code == 404, gone
        assert (await http.get("/accounts/login/")).status_code == 200
        moved = await http.get("/accounts/password_change/")
        assert moved.status_code == 302 and "/accounts/login/" in moved.headers["location"]


async def test_a_new_address_needs_the_password_and_the_mailed_link_and_ends_other_browsers(
    server: LiveServer, mailbox: Mailbox, browser: Browser, browsers: list[Page], person: Person
) -> None:
    old, new = f"{person.username}@old.test", f"{person.username}@new.test"
    here = await sign_in(browser, server, person, browsers, "Here/1.0")
    thief = await sign_in(browser, server, person, browsers, "Elsewhere/2.0")
    await here.goto("/settings/")
    await here.get_by_label("Email address").fill(new)
    await here.get_by_role("button", name="Save").click()
    await expect(here.get_by_role("alert")).to_contain_text("Your current password is needed")
    await here.get_by_label("Email address").fill(new)
    await here.get_by_label("Current password").fill("not-the-password")
    await here.get_by_role("button", name="Save").click()
    await expect(here.get_by_role("alert")).to_contain_text("Your current password is needed")
    assert email_of(server, person) == old and not mailbox.to(new)

    await here.get_by_label("Email address").fill(new)
    await here.get_by_label("Current password").fill(person.password)
    await here.get_by_role("button", name="Save").click()
    await expect(here.get_by_role("status")).to_contain_text(f"A link was mailed to {new}")
    await expect(here.locator("#pending-email")).to_contain_text(new)
    assert email_of(server, person) == old  # only a confirmed address is ever mailed

    (mail,) = await asyncio.to_thread(mailbox.wait, lambda mails: mailbox.to(new), 20.0)
    (link,) = set(CONFIRM_LINK.findall(mail.text))
    assert link.startswith(server.base_url + "/settings/email/")  # PUBLIC_URL, not a Host
    await here.goto(link)  # the link's GET changes nothing (mail scanners open every link)
    assert email_of(server, person) == old
    await here.get_by_role("button", name="Confirm").click()
    await expect(here.get_by_role("status")).to_contain_text(f"Your address is now {new}")
    assert email_of(server, person) == new
    await signed_out(thief)  # the other browser's session ended with the change
    await here.goto(link)  # a followed link is spent
    await expect(here.locator("main")).to_contain_text("There is no address change waiting")
    await expect(here.get_by_role("button", name="Confirm")).to_have_count(0)
    await here.goto("/settings/")
    await expect(here).to_have_url(server.base_url + "/settings/")


async def test_settings_list_the_signed_in_browsers_and_end_the_others_as_a_password_change_does(
    server: LiveServer, browser: Browser, browsers: list[Page], person: Person
) -> None:
    here = await sign_in(browser, server, person, browsers, "Here/1.0")
    there = await sign_in(browser, server, person, browsers, "Laptop/2.0")
    async with there.expect_websocket() as opened:
        await there.goto("/")  # the inbox, live: its socket was signed in when it opened
    inbox = await opened.value
    await here.goto("/settings/")
    listed = here.locator(".browser-list li")
    await expect(listed).to_have_count(2)
    await expect(listed.first).to_contain_text("Here/1.0")
    await expect(listed.first).to_contain_text("(this browser)")
    await expect(listed.nth(1)).to_contain_text("Laptop/2.0")
    # The signed-out browser's open inbox is closed too: no new ask reaches it.
    async with inbox.expect_event("close"):
        await here.get_by_role("button", name="Sign out everywhere else").click()
    await expect(here.get_by_role("status")).to_contain_text("Signed out of 1 other browser.")
    await expect(listed).to_have_count(1)
    await signed_out(there)

    again = await sign_in(browser, server, person, browsers, "Phone/3.0")
    async with again.expect_websocket() as opened:
        await again.goto("/")
    phone_inbox = await opened.value
    await here.goto("/settings/")
    await expect(listed).to_have_count(2)
    await here.get_by_role("link", name="Change your password").click()
    await here.locator("#id_old_password").fill(person.password)
    await here.locator("#id_new_password1").fill("a-new-pass-phrase-9876")
    await here.locator("#id_new_password2").fill("a-new-pass-phrase-9876")
    async with phone_inbox.expect_event("close"):
        await here.get_by_role("button", name="Change my password").click()
    await expect(here).to_have_url(re.compile(r"/accounts/password_change/done/$"))
    await signed_out(again)
    await here.goto("/settings/")
    await expect(listed).to_have_count(1)
    await expect(listed.first).to_contain_text("(this browser)")
