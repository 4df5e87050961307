"""Fixtures any suite may ask for: live servers per configuration, the browser inbox and the people who sign in to it, a team, a mailbox.

What suites share besides fixtures are plain modules in tests/support/, each named for what it
holds; a test module imports from there, never from another test module.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING, Any

import pytest
import pytest_asyncio

from tests.support.live import PROBE_CONFIG, LiveServer, LiveServers

if TYPE_CHECKING:
    from playwright.async_api import Browser, Page

    from tests.support.browser import OpenAs, Person
    from tests.support.mailbox import Mailbox
    from tests.support.team import Team


@pytest.fixture(scope="session")
def live_servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServers]:
    servers = LiveServers(tmp_path_factory.mktemp("live"))
    yield servers
    servers.close()


@pytest.fixture(scope="session")
def live(live_servers: LiveServers) -> LiveServer:
    """The default live server: user_ask plus the probe toolkit."""
    return live_servers.get(PROBE_CONFIG)


@pytest.fixture(scope="session")
def mcp_url(live: LiveServer) -> str:
    return live.mcp_url


# ---------------------------------------------------------------- the browser inbox


@pytest.fixture(scope="session")
def web(live_servers: LiveServers) -> LiveServer:
    """A live server configured as askserver ships (browser inbox, recorder), plus the probe."""
    from tests.support.browser import WEB_CONFIG

    return live_servers.get(WEB_CONFIG)


@pytest.fixture(scope="session")
def admin(web: LiveServer) -> Person:
    """The account `manage.py quickstart` creates."""
    from tests.support.browser import quickstart_admin

    return quickstart_admin(web)


@pytest.fixture(scope="session")
def bea(web: LiveServer) -> Person:
    """A second staff member."""
    from tests.support.browser import add_user

    return add_user(web, "bea", staff=True)


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def browser() -> AsyncIterator[Browser]:
    from playwright.async_api import async_playwright

    from tests.support.browser import CHROMIUM, CHROMIUM_ARGS

    async with async_playwright() as playwright:
        chromium = await playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        await chromium.close()


@pytest_asyncio.fixture(loop_scope="session")
async def open_as(browser: Browser, web: LiveServer) -> AsyncIterator[OpenAs]:
    """Sign someone in, in a browser context of their own; every context closes after the test."""
    from tests.support.browser import signed_in

    pages: list[Page] = []

    async def open_page(person: Person, **options: Any) -> Page:
        page = await signed_in(browser, web, person, **options)
        pages.append(page)
        return page

    yield open_page
    for page in pages:
        await page.context.close()


@pytest.fixture
def team(web: LiveServer) -> Team:
    """dora, eli and finn on the web server, new for each test (tests/support/team.py)."""
    from tests.support.team import Team

    return Team(web)


@pytest.fixture(scope="module")
def mailbox() -> Iterator[Mailbox]:
    """A real SMTP server on loopback for the module's servers to mail to (tests/support/mailbox.py)."""
    from tests.support.mailbox import Mailbox

    with Mailbox() as box:
        yield box
