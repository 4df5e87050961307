"""Mail that does not flood: the first mail to a person at once, what follows within MAIL_DIGEST_SECONDS as one digest, never a reminder late, never an immediate mail held.

Real daphne servers with mail on, sending through real SMTP to an aiosmtpd mailbox on loopback;
alice's token asks (her agent is the official MCP client), carol is in alice's team.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.live import LiveServer, LiveServers
from tests.support.mailbox import LINK, Mail, Mailbox
from tests.support.reach import REACH_CONFIG, Crew, ask, deliveries, mail_env

pytestmark = pytest.mark.asyncio(loop_scope="session")

MARKDOWN_TITLE = "## Migration plan for `orders` **now**"
"""A first line full of Markdown: the subject must read it as plain words."""


@contextlib.contextmanager
def started(live_servers: LiveServers, mailbox: Mailbox, **config: Any) -> Iterator[LiveServer]:
    server = live_servers.start({**REACH_CONFIG, **config}, extra_env=mail_env(mailbox))
    try:
        yield server
    finally:
        live_servers.stop(server)


def planned(server: LiveServer, messages: list[str]) -> list[list[Any]]:
    return [row for message in messages for row in deliveries(server, message)]


def to(mailbox: Mailbox, address: str, tag: str) -> list[Mail]:
    return [mail for mail in mailbox.to(address) if tag in mail.text]


async def arrived(mailbox: Mailbox, address: str, tag: str, count: int, timeout: float) -> None:
    await asyncio.to_thread(
        mailbox.wait, lambda _: len(to(mailbox, address, tag)) >= count, timeout
    )


async def test_the_first_mail_goes_at_once_the_rest_as_one_digest_and_an_immediate_one_alone(
    live_servers: LiveServers, mailbox: Mailbox
) -> None:
    with started(
        live_servers, mailbox, MAIL_DIGEST_SECONDS=60, REMINDER_BEFORE_SECONDS=None
    ) as server:
        crew = Crew(server)
        carol = crew.email(crew.carol)
        messages = [f"{MARKDOWN_TITLE} [{crew.tag}] {n}" for n in range(4)]
        calls = [asyncio.create_task(ask(server, crew.token, messages[0]))]
        await arrived(mailbox, carol, crew.tag, 1, 20)
        calls += [asyncio.create_task(ask(server, crew.token, m)) for m in messages[1:]]
        # Three more for carol within the window: planned for the digest, not mailed yet.
        async with asyncio.timeout(30):
            while len(await asyncio.to_thread(planned, server, messages)) < 8:
                pass  # each look is a `manage.py shell` run (about a second): no busy loop
        mails = to(mailbox, carol, crew.tag)
        assert len(mails) == 1, (mailbox.summary(), planned(server, messages))
        first = mails[0]
        assert first.subject.strip() == (
            f"Question from mcp for {crew.alice.username}: "
            f"Migration plan for orders now [{crew.tag}] 0"
        )  # plain text, the agent named, the person it works for after it
        assert first.message["List-Unsubscribe"] == f"<{server.base_url}/settings/>"
        assert f"Choose which mails you get: {server.base_url}/settings/" in first.text
        assert "(in " in first.text and "in 0 minutes" not in first.text
        (alices,) = to(mailbox, crew.email(crew.alice), f"[{crew.tag}] 0")
        assert alices.subject.strip().startswith(
            "Question from your agent mcp: "
        )  # not "from alice"

        # A mail marked immediate (a push fallback) goes at once and alone, digest or not.
        server.manage(
            "shell",
            "-c",
            (
                "from django.utils import timezone; from django.contrib.auth.models import User;"
                "from ask_mcp.models import Ask, Delivery;"
                f"a = Ask.objects.get(message={messages[3]!r});"
                f"u = User.objects.get(username={crew.carol.username!r});"
                "Delivery.objects.create(ask=a, purpose='asked', channel='email', recipient=u,"
                f" address={carol!r}, key='urgent:' + a.id.hex, immediate=True,"
                " next_attempt_at=timezone.now())"
            ),
        )
        await arrived(mailbox, carol, crew.tag, 2, 20)
        urgent = to(mailbox, carol, crew.tag)[1]
        assert messages[3] in urgent.text and len(set(LINK.findall(urgent.text))) == 1

        await arrived(mailbox, carol, crew.tag, 3, 90)
        digest = to(mailbox, carol, crew.tag)[2]
        assert digest.subject.strip() == (
            f"3 questions are waiting for you: Migration plan for orders now [{crew.tag}] 1"
        )
        for message in messages[1:]:
            assert message.split("`")[0] in digest.text
        links = set(LINK.findall(digest.text))
        assert len(links) == 3 and all(
            link.startswith(server.base_url + "/link/") for link in links
        )
        assert digest.message["List-Unsubscribe"] == f"<{server.base_url}/settings/>"
        assert len(re.findall(r"/link/", digest.html)) >= 3
        rows = [row for row in planned(server, messages) if row[2] == carol]
        assert len(rows) == 5 and all(row[3] == "sent" for row in rows), rows
        assert len(to(mailbox, carol, crew.tag)) == 3  # 5 notifications, 3 mails
        for call in calls:
            call.cancel()
        await asyncio.gather(*calls, return_exceptions=True)


async def test_a_reminder_is_never_held_by_the_digest_and_carries_it_along(
    live_servers: LiveServers, mailbox: Mailbox
) -> None:
    config = {"MAIL_DIGEST_SECONDS": 600, "ELICITATION_TTL": 14, "REMINDER_BEFORE_SECONDS": 7}
    with started(live_servers, mailbox, **config) as server:
        crew = Crew(server)
        carol = crew.email(crew.carol)
        first, second = f"Deploy now? [{crew.tag}] A", f"Roll back? [{crew.tag}] B"
        calls = [asyncio.create_task(ask(server, crew.token, first))]
        await arrived(mailbox, carol, f"[{crew.tag}] A", 1, 20)
        calls.append(asyncio.create_task(ask(server, crew.token, second)))
        # B's new-question mail waits for a digest ten minutes off; the reminders fall due
        # 7 s before expiry and go then, with B's waiting mail in the same digest.
        await arrived(mailbox, carol, crew.tag, 2, 25)
        reminder = to(mailbox, carol, crew.tag)[1]
        assert "Reminder" in reminder.text and second in reminder.text
        assert "in 0 minutes" not in reminder.text
        assert len(set(LINK.findall(reminder.text))) >= 2
        for call in calls:
            call.cancel()
        await asyncio.gather(*calls, return_exceptions=True)
