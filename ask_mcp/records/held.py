"""Decisions held for an undo window: a refusal or one-tap answer given in the inbox waits UNDO_SECONDS, then is committed (or dropped when someone answered first); Undo deletes it.

Held in the database (:class:`ask_mcp.models.HeldDecision`), so a restart loses none: the
process that took it commits it when it falls due (a timer in its event loop), and every
sweep commits whatever is overdue, which is how a decision held across a restart is committed
by the next server. Committing runs the ordinary browser answer
(:func:`ask_mcp.records.decisions.ask_answer`): one conditional UPDATE, so an answer given
elsewhere meanwhile wins and the held one is dropped (the inbox was told when that ask ended).
Only one worker commits a row: it deletes the row first, and only the one that deleted it goes on.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from django.utils import timezone

from ask_mcp import conf
from ask_mcp.models import Ask, HeldDecision
from ask_mcp.records.decisions import Answered, ask_answer
from ask_mcp.workers.loops import start_in_loop
from ask_mcp.workers.relay import ChannelLayerUnavailable, ChannelRelay

if TYPE_CHECKING:
    from django.contrib.auth.models import AnonymousUser, User

logger = logging.getLogger("ask_mcp.records.held")

BEFORE_EXPIRY: Final = dt.timedelta(seconds=2)
"""How long before its ask's expiry a held decision is committed at the latest: the worker
holding the call ends the ask at the expiry itself, and committing takes a few milliseconds."""
RETRY: Final = dt.timedelta(seconds=5)
"""When a commit that could not reach the call's worker (Redis down) is tried again."""
_timers: dict[int, asyncio.TimerHandle] = {}
"""The commits this process has scheduled, by row: one timer per held decision."""


def due_at(ask: Ask, now: dt.datetime) -> dt.datetime | None:
    """When a decision made `now` on `ask` is committed; None: at once (no window, or no time)."""
    seconds = conf.values().undo_seconds
    if seconds is None:
        return None
    due = min(now + dt.timedelta(seconds=seconds), ask.expires_at - BEFORE_EXPIRY)
    return due if due > now else None


async def hold(
    *, ask: Ask, reply: Mapping[str, Any], user: User, relay: ChannelRelay
) -> HeldDecision | None:
    """Keep `user`'s decision on `ask` for the undo window, replacing one they held before.

    None when there is no window (UNDO_SECONDS is None, or the ask expires too soon): the caller
    answers at once.
    """
    now = timezone.now()
    due = due_at(ask, now)
    if due is None:
        return None
    held, _ = await HeldDecision.objects.aupdate_or_create(
        ask=ask, user=user, defaults={"reply": dict(reply), "due_at": due}
    )
    schedule(held, relay)
    return held


async def undo(*, ask: Ask, user: User | AnonymousUser) -> bool:
    """Forget `user`'s held decision on `ask`; False when there was none left (it was committed)."""
    if not user.is_authenticated:
        return False
    deleted, _ = await HeldDecision.objects.filter(ask=ask, user=user).adelete()
    return bool(deleted)


async def held_by(user: User | AnonymousUser, asks: list[Ask]) -> dict[Any, HeldDecision]:
    """`user`'s held decisions on `asks`, by ask id."""
    if not user.is_authenticated or not asks:
        return {}
    rows = HeldDecision.objects.filter(user=user, ask__in=asks)
    return {held.ask_id: held async for held in rows}


def schedule(held: HeldDecision, relay: ChannelRelay) -> None:
    """Commit `held` in this event loop when it falls due (once per row and process)."""
    previous = _timers.pop(held.pk, None)
    if previous is not None:
        previous.cancel()
    delay = max(0.0, (held.due_at - timezone.now()).total_seconds())
    loop = asyncio.get_running_loop()
    _timers[held.pk] = loop.call_later(
        delay, lambda: start_in_loop(_commit_at(held.pk, relay), name="ask_mcp held decision")
    )


async def _commit_at(pk: int, relay: ChannelRelay) -> None:
    _timers.pop(pk, None)
    try:
        held = await HeldDecision.objects.select_related("user").aget(pk=pk)
    except HeldDecision.DoesNotExist:
        return  # undone, or committed by a sweep
    if held.due_at > timezone.now():  # decided again (a later due time): its own timer runs
        return
    await commit(held, relay)


async def commit(held: HeldDecision, relay: ChannelRelay) -> Answered | None:
    """Tell the agent `held`'s decision, if the ask still waits; None if another worker took the
    row first, or the call's worker could not be reached (then it is tried again in RETRY)."""
    deleted, _ = await HeldDecision.objects.filter(pk=held.pk, due_at=held.due_at).adelete()
    if not deleted:
        return None
    ask = await Ask.objects.with_people().aget(pk=held.ask_id)
    if not ask.awaits_browser_answer:
        return Answered(ask, won=False, taken=False)  # someone answered first; it is dropped
    try:
        return await ask_answer(ask=ask, reply=held.reply, user=held.user, relay=relay)
    except ChannelLayerUnavailable:
        again = timezone.now() + RETRY
        await HeldDecision.objects.aupdate_or_create(
            ask=ask, user=held.user, defaults={"reply": held.reply, "due_at": again}
        )
        logger.warning("held decision on %s not committed: channel layer unavailable", ask.id)
        return None


async def commit_due(relay: ChannelRelay, *, within: float) -> int:
    """Commit every held decision that is due; schedule those due in the next `within` seconds
    (the sweep's interval) in this loop. Returns how many were committed."""
    now = timezone.now()
    soon = now + dt.timedelta(seconds=within)
    rows = HeldDecision.objects.filter(due_at__lte=soon).select_related("user").order_by("due_at")
    committed = 0
    async for held in rows:
        if held.due_at <= now:
            committed += (await commit(held, relay)) is not None
        elif held.pk not in _timers:
            schedule(held, relay)
    return committed
