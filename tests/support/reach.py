"""Reaching people from a live server: a team whose members have mail addresses, asks addressed to it, and what was sent.

`Crew` is a team on a server configured with `REACH_CONFIG` whose mail goes to a test's
mailbox (`mail_env`, and the `mailbox` fixture in tests/conftest.py); `deliveries` reads the
server's delivery rows and `mails_for` waits for the mails an ask caused.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

from tests.support.browser import WEB_CONFIG, Person, add_user
from tests.support.clients import authed
from tests.support.live import LiveServer
from tests.support.mailbox import Mailbox
from tests.support.shell import shell

REACH_CONFIG: dict[str, Any] = {
    **WEB_CONFIG,
    "EMAIL": True,
    "REACH_SECONDS": 0.2,
    "MAIL_DIGEST_SECONDS": None,
}
"""askserver with mail on, and a reach task that looks often (new asks are sent at once anyway);
every notification is its own mail, as the suites here count them (the digest's own suite,
tests/interaction/test_reach_digest.py, turns MAIL_DIGEST_SECONDS on)."""
QUESTIONS = [
    {"name": "component", "prompt": "Which component?", "options": ["api", "ui", "docs"]},
    {"name": "severity", "prompt": "How bad is it?", "type": "number"},
]
"""The questions of every ask `ask` makes: what a mail lists and the form a link opens."""


class Crew:
    """alice asks (her token's team is ops); carol and dave are in ops, dave chose no mail."""

    def __init__(self, server: LiveServer) -> None:
        tag = uuid.uuid4().hex[:6]
        self.team = f"ops-{tag}"
        self.alice = add_user(server, f"alice{tag}", staff=False)
        self.carol = add_user(server, f"carol{tag}", staff=False)
        self.dave = add_user(server, f"dave{tag}", staff=False)
        self.tag = tag
        server.manage(
            "shell",
            "-c",
            (
                "from django.contrib.auth.models import Group, User;"
                "from ask_mcp.models import ReachPreference;"
                f"g = Group.objects.create(name={self.team!r});"
                + "".join(
                    f"u = User.objects.get(username={p.username!r}); u.email = {self.email(p)!r};"
                    "u.save();"
                    for p in (self.alice, self.carol, self.dave)
                )
                + f"[g.user_set.add(User.objects.get(username=n)) for n in "
                f"({self.carol.username!r}, {self.dave.username!r})];"
                f"ReachPreference.objects.create(user=User.objects.get(username={self.dave.username!r}),"
                " email_asks=False, email_reminders=False)"
            ),
        )
        self.token = server.manage("createtoken", self.alice.username, "--team", self.team).strip()

    @staticmethod
    def email(person: Person) -> str:
        return f"{person.username}@mail.test"


def mail_env(mailbox: Mailbox) -> dict[str, str]:
    """The environment that sends a server's mail to `mailbox`."""
    return {"ASKSERVER_EMAIL_URL": mailbox.url, "ASKSERVER_EMAIL_FROM": "askserver@mail.test"}


async def ask(server: LiveServer, token: str, message: str) -> Any:
    """user_ask from a client that shows no forms: it waits for a browser answer."""
    async with asyncio.timeout(60), authed(server.mcp_url, token) as client:
        return await client.call_tool("user_ask", {"message": message, "questions": QUESTIONS})


def deliveries(server: LiveServer, message: str) -> list[list[Any]]:
    return shell(
        server,
        (
            "import json; from ask_mcp.models import Delivery;"
            f"print(json.dumps([[d.purpose, d.channel, d.address, d.state, d.attempts, d.last_error]"
            f" for d in Delivery.objects.filter(ask__message={message!r}).order_by('pk')]))"
        ),
    )


async def mails_for(mailbox: Mailbox, message: str, count: int) -> list[Any]:
    def arrived(mails: list[Any]) -> bool:
        return len([m for m in mails if message in m.text]) >= count

    await asyncio.to_thread(mailbox.wait, arrived, 20.0)
    return [mail for mail in mailbox.mails if message in mail.text]
