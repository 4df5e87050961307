"""Decisions held for the undo window (ask_mcp.records.held): committed when due to the call waiting on the ask, dropped by Undo, and dropped when someone answered meanwhile."""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Iterator
from typing import Final

import pytest
from channels.layers import InMemoryChannelLayer
from django.conf import settings
from django.contrib.auth.models import AnonymousUser, User
from django.test import override_settings
from django.utils import timezone

from ask_mcp.models import Ask, HeldDecision
from ask_mcp.records.decisions import ask_answer
from ask_mcp.records.held import BEFORE_EXPIRY, commit, commit_due, due_at, held_by, hold, undo
from ask_mcp.workers.relay import ChannelRelay

pytestmark = pytest.mark.django_db(transaction=True)

UNDO: Final = 30.0
"""The UNDO_SECONDS these tests hold decisions for (none falls due by itself in a test)."""
YES: Final = {"action": "accept", "content": {"ship": True}}
NO: Final = {"action": "decline"}


def undo_window(seconds: float | None) -> override_settings:
    return override_settings(ASK_MCP={**settings.ASK_MCP, "UNDO_SECONDS": seconds})


@pytest.fixture(autouse=True)
def window() -> Iterator[None]:
    with undo_window(UNDO):
        yield


@pytest.fixture
def relay() -> ChannelRelay:
    return ChannelRelay(layer=InMemoryChannelLayer())


@pytest.fixture
def alice() -> User:
    return User.objects.create_user("alice")


@pytest.fixture
def bob() -> User:
    return User.objects.create_user("bob")


async def waiting_ask(relay: ChannelRelay, *, expires_in: float = 3600) -> Ask:
    """A browser ask whose call waits in `relay`'s worker."""
    now = timezone.now()
    return await Ask.objects.acreate(
        created=now,
        message="Ship it?",
        schema={},
        tool="user_ask",
        route=Ask.Route.BROWSER,
        expires_at=now + dt.timedelta(seconds=expires_in),
        worker=relay.worker,
    )


async def fall_due(held: HeldDecision) -> None:
    """Move `held` into the past, as if its undo window had run out."""
    await HeldDecision.objects.filter(pk=held.pk).aupdate(due_at=timezone.now())


async def test_a_held_decision_waits_then_is_committed_to_the_waiting_call_when_due(
    relay: ChannelRelay, alice: User
) -> None:
    ask = await waiting_ask(relay)
    call = relay.expect(ask.id.hex)
    held = await hold(ask=ask, reply=YES, user=alice, relay=relay)
    assert held is not None and held.due_at > timezone.now() + dt.timedelta(seconds=UNDO - 5)
    assert await commit_due(relay, within=0) == 0, "not due yet"
    assert await commit_due(relay, within=UNDO + 60) == 0, "due within the sweep: left to its timer"
    assert not call.done()
    assert (await Ask.objects.aget(pk=ask.pk)).status == Ask.Status.PENDING

    await fall_due(held)
    assert await commit_due(relay, within=0) == 1
    assert call.done() and call.result() == YES
    decided = await Ask.objects.aget(pk=ask.pk)
    assert (decided.status, decided.answer, decided.answered_by_id) == (
        Ask.Status.ACCEPTED,
        {"ship": True},
        alice.pk,
    )
    assert not await HeldDecision.objects.aexists()
    assert await commit_due(relay, within=0) == 0, "committed once"


async def test_the_timer_of_the_process_that_held_it_commits_it(
    relay: ChannelRelay, alice: User
) -> None:
    ask = await waiting_ask(relay)
    call = relay.expect(ask.id.hex)
    with undo_window(0.2):
        assert await hold(ask=ask, reply=NO, user=alice, relay=relay) is not None
    assert await asyncio.wait_for(call, timeout=10) == NO
    decided = await Ask.objects.aget(pk=ask.pk)
    assert decided.status == Ask.Status.DECLINED


async def test_undo_drops_the_held_decision_and_the_ask_still_waits(
    relay: ChannelRelay, alice: User
) -> None:
    ask = await waiting_ask(relay)
    call = relay.expect(ask.id.hex)
    held = await hold(ask=ask, reply=YES, user=alice, relay=relay)
    assert held is not None
    assert not await undo(ask=ask, user=AnonymousUser())
    assert await undo(ask=ask, user=alice)
    assert not await undo(ask=ask, user=alice), "nothing left to undo"
    assert await commit(held, relay) is None
    assert await commit_due(relay, within=0) == 0
    assert not call.done()
    assert (await Ask.objects.aget(pk=ask.pk)).status == Ask.Status.PENDING


async def test_an_answer_given_meanwhile_wins_and_the_held_one_is_dropped(
    relay: ChannelRelay, alice: User, bob: User
) -> None:
    ask = await waiting_ask(relay)
    call = relay.expect(ask.id.hex)
    held = await hold(ask=ask, reply=YES, user=alice, relay=relay)
    assert held is not None
    answered = await ask_answer(ask=ask, reply=NO, user=bob, relay=relay)
    assert answered.won and call.result() == NO

    await fall_due(held)
    held.due_at = (await HeldDecision.objects.aget(pk=held.pk)).due_at
    dropped = await commit(held, relay)
    assert dropped is not None and not dropped.won and not dropped.taken
    decided = await Ask.objects.aget(pk=ask.pk)
    assert (decided.status, decided.answered_by_id) == (Ask.Status.DECLINED, bob.pk)
    assert not await HeldDecision.objects.aexists()


async def test_deciding_again_replaces_the_held_decision(
    relay: ChannelRelay, alice: User, bob: User
) -> None:
    ask = await waiting_ask(relay)
    await hold(ask=ask, reply=YES, user=alice, relay=relay)
    await hold(ask=ask, reply=NO, user=alice, relay=relay)
    await hold(ask=ask, reply=YES, user=bob, relay=relay)
    mine = await held_by(alice, [ask])
    assert list(mine) == [ask.id] and mine[ask.id].reply == NO
    assert await held_by(AnonymousUser(), [ask]) == {}
    assert await HeldDecision.objects.acount() == 2


async def test_without_a_window_or_time_left_nothing_is_held(
    relay: ChannelRelay, alice: User
) -> None:
    now = timezone.now()
    soon = await waiting_ask(relay, expires_in=1)
    assert due_at(soon, now) is None, "the ask expires before the window would end"
    later = await waiting_ask(relay, expires_in=UNDO + 60)
    assert due_at(later, now) == now + dt.timedelta(seconds=UNDO)
    close = await waiting_ask(relay, expires_in=UNDO / 2)
    assert due_at(close, now) == close.expires_at - BEFORE_EXPIRY
    with undo_window(None):
        assert due_at(later, now) is None
        assert await hold(ask=later, reply=YES, user=alice, relay=relay) is None
    assert not await HeldDecision.objects.aexists()
