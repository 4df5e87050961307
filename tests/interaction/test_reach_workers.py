"""Two daphne workers on Redis and PostgreSQL, both running the reach task: every notification is sent once.

Skipped with a reason when Redis or PostgreSQL is not running (ASKSERVER_REQUIRE_SERVICES=1
turns the skip into a failure).
"""

from __future__ import annotations

import asyncio
import collections
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.live import LiveServers
from tests.support.mailbox import Mailbox
from tests.support.reach import REACH_CONFIG, Crew, ask, deliveries, mail_env, mails_for
from tests.support.shell import shell
from tests.support.workers import SharedWorkers as Pair
from tests.support.workers import shared_workers

pytestmark = pytest.mark.asyncio(loop_scope="session")

ROWS = 60
"""Deliveries put in the queue at once: about two batches, so both workers find work."""


@pytest.fixture(scope="module")
def pair(live_servers: LiveServers, mailbox: Mailbox) -> Iterator[Pair]:
    config: dict[str, Any] = {
        **REACH_CONFIG,
        "REACH_SECONDS": 0.1,
        "ELICITATION_TTL": 10,
        "REMINDER_BEFORE_SECONDS": 5,
    }
    with shared_workers(live_servers, config, env=mail_env(mailbox)) as pair:
        yield pair


async def test_a_queue_of_deliveries_is_sent_once_by_two_workers_racing_for_it(
    pair: Pair, mailbox: Mailbox
) -> None:
    tag = uuid.uuid4().hex[:6]
    message = f"Sent once? [{tag}]"
    pair.a.manage(
        "shell",
        "-c",
        (
            "import datetime as dt; from django.utils import timezone;"
            "from ask_mcp.models import Ask, AskReach, Delivery;"
            "now = timezone.now();"
            f"a = Ask.objects.create(created=now, message={message!r}, schema={{}}, tool='user_ask',"
            " route='browser', expires_at=now + dt.timedelta(minutes=10));"
            f"AskReach.objects.create(ask=a, link_base={pair.a.base_url!r});"
            "u = __import__('django.contrib.auth.models', fromlist=['User']).User.objects.create("
            f"username='many{tag}', email='many{tag}@mail.test');"
            "Delivery.objects.bulk_create(Delivery(ask=a, purpose='asked', channel='email',"
            f" recipient=u, address=f'person{{i}}-{tag}@mail.test', key=f'{tag}:{{i}}',"
            f" next_attempt_at=now) for i in range({ROWS}))"
        ),
    )
    arrived = await mails_for(mailbox, message, ROWS)
    rows = shell(
        pair.a,
        (
            "import json; from ask_mcp.models import Delivery;"
            f"print(json.dumps([[d.state, d.attempts, d.claim.split('-')[0]]"
            f" for d in Delivery.objects.filter(ask__message={message!r})]))"
        ),
    )
    assert len(rows) == ROWS
    assert {(state, attempts) for state, attempts, _ in rows} == {("sent", 1)}
    per_address = collections.Counter(address for mail in arrived for address in mail.to)
    assert len(per_address) == ROWS and set(per_address.values()) == {1}
    assert len([m for m in mailbox.mails if message in m.text]) == ROWS
    claimed_by = collections.Counter(pid for _, _, pid in rows)
    print(f"claims per worker process: {dict(claimed_by)}")


async def test_an_ask_on_a_is_mailed_and_reminded_once_though_both_workers_look(
    pair: Pair, mailbox: Mailbox
) -> None:
    crew = Crew(pair.a)
    message = f"Once across workers? [{crew.tag}]"
    call = asyncio.create_task(ask(pair.a, crew.token, message))
    async with asyncio.timeout(30):
        result = await call  # nobody answers: it expires after 10 s, past its reminder at 5 s
    assert result.content[0].text.startswith("The user did not answer in time")
    mails = await mails_for(mailbox, message, 4)
    expected = sorted([crew.email(crew.alice), crew.email(crew.carol)] * 2)  # asked + reminder
    assert sorted(a for m in mails for a in m.to) == expected
    rows = deliveries(pair.b, message)
    assert sorted(row[0] for row in rows) == ["asked", "asked", "reminder", "reminder"]
    assert {(row[3], row[4]) for row in rows} == {("sent", 1)}
