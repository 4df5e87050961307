"""When a person's mail goes (ask_mcp.reach.digest): the first at once, the next within MAIL_DIGEST_SECONDS with the waiting digest or a window after the last, reminders and immediate rows never held; what a reminder pulls in and how claimed rows group into sends."""

from __future__ import annotations

import datetime as dt
import itertools
from collections.abc import Iterator
from typing import Any, Final

import pytest
from django.conf import settings
from django.test import override_settings
from django.utils import timezone

from ask_mcp.models import Ask, Delivery
from ask_mcp.reach.digest import grouped, pull_in, slot
from tests.support.rows import waiting_ask

pytestmark = pytest.mark.django_db

WINDOW: Final = 60
"""The MAIL_DIGEST_SECONDS these tests run with."""
ALICE: Final = "alice@example.test"
BOB: Final = "bob@example.test"
_keys = itertools.count()


@pytest.fixture(autouse=True)
def digest_window() -> Iterator[None]:
    with override_settings(ASK_MCP={**settings.ASK_MCP, "MAIL_DIGEST_SECONDS": WINDOW}):
        yield


@pytest.fixture
def ask() -> Ask:
    return waiting_ask()


def mail(ask: Ask, address: str = ALICE, **fields: Any) -> Delivery:
    row: dict[str, Any] = {
        "purpose": Delivery.Purpose.ASKED,
        "channel": Delivery.Channel.EMAIL,
        "next_attempt_at": timezone.now(),
        **fields,
    }
    return Delivery.objects.create(ask=ask, address=address, key=f"k{next(_keys)}", **row)


def test_the_first_mail_in_a_while_goes_at_once(ask: Ask) -> None:
    now = timezone.now()
    assert slot(ALICE, Delivery.Purpose.ASKED, now) == now
    long_ago = now - dt.timedelta(seconds=WINDOW + 5)
    mail(ask, state=Delivery.State.SENT, sent_at=long_ago, next_attempt_at=long_ago)
    assert slot(ALICE, Delivery.Purpose.ASKED, now) == now, "a mail older than the window"


def test_the_next_mail_within_the_window_waits_a_window_after_the_last(ask: Ask) -> None:
    now = timezone.now()
    sent = now - dt.timedelta(seconds=10)
    mail(ask, state=Delivery.State.SENT, sent_at=sent, next_attempt_at=sent)
    assert slot(ALICE, Delivery.Purpose.ASKED, now) == sent + dt.timedelta(seconds=WINDOW)
    assert slot(BOB, Delivery.Purpose.ASKED, now) == now, "another address is not held"


def test_a_mail_going_now_holds_the_next_back_too(ask: Ask) -> None:
    now = timezone.now()
    mail(ask, state=Delivery.State.SENDING, next_attempt_at=now)
    assert slot(ALICE, Delivery.Purpose.ASKED, now) == now + dt.timedelta(seconds=WINDOW)


def test_a_mail_joins_the_digest_already_waiting(ask: Ask) -> None:
    now = timezone.now()
    waiting_at = now + dt.timedelta(seconds=25)
    mail(ask, next_attempt_at=waiting_at)
    later = now + dt.timedelta(seconds=3)
    assert slot(ALICE, Delivery.Purpose.ASKED, later) == waiting_at
    assert slot(ALICE, Delivery.Purpose.ESCALATED, later) == waiting_at


def test_reminders_and_immediate_mails_are_never_held(ask: Ask) -> None:
    now = timezone.now()
    mail(ask, next_attempt_at=now + dt.timedelta(seconds=25))
    mail(ask, state=Delivery.State.SENT, sent_at=now, next_attempt_at=now)
    assert slot(ALICE, Delivery.Purpose.REMINDER, now) == now
    assert slot(ALICE, Delivery.Purpose.FALLBACK, now, immediate=True) == now
    assert slot(ALICE, Delivery.Purpose.ASKED, now) > now, "while an ordinary mail waits"


def test_an_immediate_mail_sent_holds_no_later_mail_back(ask: Ask) -> None:
    now = timezone.now()
    mail(ask, state=Delivery.State.SENT, sent_at=now, next_attempt_at=now, immediate=True)
    assert slot(ALICE, Delivery.Purpose.ASKED, now) == now


def test_without_a_window_every_mail_goes_at_once(ask: Ask) -> None:
    now = timezone.now()
    mail(ask, state=Delivery.State.SENT, sent_at=now, next_attempt_at=now)
    mail(ask, next_attempt_at=now + dt.timedelta(seconds=25))
    with override_settings(ASK_MCP={**settings.ASK_MCP, "MAIL_DIGEST_SECONDS": None}):
        assert slot(ALICE, Delivery.Purpose.ASKED, now) == now


def test_a_reminder_pulls_in_the_digest_waiting_for_its_address_only(ask: Ask) -> None:
    now = timezone.now()
    reminder = mail(ask, purpose=Delivery.Purpose.REMINDER, state=Delivery.State.SENDING)
    waiting = mail(ask, next_attempt_at=now + dt.timedelta(seconds=25))
    other = mail(ask, BOB, next_attempt_at=now + dt.timedelta(seconds=25))
    urgent = mail(ask, immediate=True, next_attempt_at=now + dt.timedelta(seconds=25))
    lease = now + dt.timedelta(seconds=30)
    pulled = pull_in([reminder], "worker-1", lease)
    assert [each.pk for each in pulled] == [waiting.pk]
    waiting.refresh_from_db()
    assert (waiting.state, waiting.claim, waiting.attempts) == (
        Delivery.State.SENDING,
        "worker-1",
        1,
    )
    other.refresh_from_db()
    urgent.refresh_from_db()
    assert other.state == urgent.state == Delivery.State.PENDING


def test_a_first_mail_pulls_nothing_in(ask: Ask) -> None:
    now = timezone.now()
    first = mail(ask, state=Delivery.State.SENDING)
    mail(ask, next_attempt_at=now + dt.timedelta(seconds=WINDOW))
    assert pull_in([first], "worker-1", now + dt.timedelta(seconds=30)) == []


def test_claimed_rows_go_as_one_mail_per_address_and_alone_when_immediate() -> None:
    def row(address: str, channel: str = Delivery.Channel.EMAIL, **fields: Any) -> Delivery:
        return Delivery(address=address, channel=channel, **fields)

    a1, a2, b1 = row(ALICE), row(ALICE), row(BOB)
    urgent = row(ALICE, immediate=True)
    hook1 = row("https://hooks.example.test/a", Delivery.Channel.WEBHOOK)
    hook2 = row("https://hooks.example.test/a", Delivery.Channel.WEBHOOK)
    sends = grouped([a1, hook1, b1, urgent, a2, hook2])
    assert sends == [[hook1], [urgent], [hook2], [a1, a2], [b1]]


def test_with_no_digest_window_mails_due_together_still_go_one_by_one() -> None:
    # MAIL_DIGEST_SECONDS None promises one mail each: three escalations falling due at once for
    # one person (their colleague is away) are three mails, not a digest.
    rows = [Delivery(address=ALICE, channel=Delivery.Channel.EMAIL) for _ in range(3)]
    with override_settings(ASK_MCP={"MAIL_DIGEST_SECONDS": None}):
        assert grouped(rows) == [[row] for row in rows]
