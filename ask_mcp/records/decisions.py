"""Deciding asks from outside the call: a person's browser answer, an admin's cancel or expire.

Each decision is one conditional UPDATE (the ask must still be pending), so the first one wins
however many tabs, people or workers race; the winner then wakes the worker holding the call
through the relay it is handed (the caller's, from :mod:`ask_mcp.runtime`) and tells the
inboxes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Final

from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from django.contrib.auth.models import AnonymousUser
from django.utils import timezone

from ask_mcp.models import Ask, AskEvent, event_for_status, storable
from ask_mcp.records.events import ENDED, announce, announce_sync
from ask_mcp.workers.relay import ChannelLayerUnavailable, ChannelRelay

if TYPE_CHECKING:
    from django.contrib.auth.models import User


STATUS_FOR_ACTION: Final[Mapping[str, Ask.Status]] = {
    "accept": Ask.Status.ACCEPTED,
    "decline": Ask.Status.DECLINED,
    "cancel": Ask.Status.CANCELLED,
}


def _decision(reply: Mapping[str, Any], user: User | AnonymousUser | None) -> dict[str, Any]:
    return {
        "status": STATUS_FOR_ACTION[reply["action"]],
        "answer": storable(reply.get("content")),
        "answered_by": user if user is not None and user.is_authenticated else None,
        "answered_at": timezone.now(),
    }


def _undo(ask: Ask, status: str, answered_at: Any) -> None:
    """Put back to pending an ask whose decision never reached its call (Redis was down)."""
    decided = Ask.objects.filter(pk=ask.pk, status=status)
    if answered_at is not None:
        decided = decided.filter(answered_at=answered_at)
    decided.update(status=Ask.Status.PENDING, answer=None, answered_by=None, answered_at=None)


async def ask_answer(
    *, ask: Ask, reply: Mapping[str, Any], user: User | AnonymousUser, relay: ChannelRelay
) -> bool:
    """Record a browser answer if the ask still waits for one, and wake its call.

    False when it came too late: someone else decided first, the ask expired, or the call had
    already ended (its client left, its worker stopped); the answer is then kept, marked
    withdrawn, so nothing the person typed is lost.

    Raises:
        ChannelLayerUnavailable: the worker holding the call could not be reached (Redis is
            down); the decision is undone, so the ask still waits and may be answered again.
    """
    now = timezone.now()
    decision = _decision(reply, user)
    won = await (
        Ask.objects.pending().in_browser().filter(pk=ask.pk, expires_at__gt=now).aupdate(**decision)
    )
    if not won:
        return False
    actor = user if user.is_authenticated else None
    try:
        taken = await relay.settle(ask.worker, ask.id.hex, reply)
    except ChannelLayerUnavailable:
        # The call never heard of it: leave no answer on record that the model never got.
        await Ask.objects.filter(
            pk=ask.pk, status=decision["status"], answered_at=decision["answered_at"]
        ).aupdate(status=Ask.Status.PENDING, answer=None, answered_by=None, answered_at=None)
        raise
    if taken:
        await _record(ask, event_for_status(STATUS_FOR_ACTION[reply["action"]]), actor, "")
    else:
        await Ask.objects.filter(pk=ask.pk).aupdate(status=Ask.Status.WITHDRAWN)
        await _record(ask, AskEvent.Kind.WITHDRAWN, actor, "answered after the call had ended")
    await announce(ENDED, [ask.id.hex])
    return taken


def ask_cancel(*, ask: Ask, user: User | AnonymousUser, relay: ChannelRelay) -> bool:
    """An admin's cancel: the held call resumes with the cancelled result (a parked MRTR call on retry).

    Raises:
        ChannelLayerUnavailable: the worker holding the call could not be reached; the ask is
            left pending, as it was.
    """
    reply = {"action": "cancel"}
    decision = _decision(reply, user)
    if not Ask.objects.pending().filter(pk=ask.pk).update(**decision):
        return False
    if ask.worker:
        try:
            async_to_sync(relay.settle)(ask.worker, ask.id.hex, reply, ask.call_id or None)
        except ChannelLayerUnavailable:
            _undo(ask, decision["status"], decision["answered_at"])
            raise
    actor = user if user.is_authenticated else None
    async_to_sync(_record)(ask, AskEvent.Kind.CANCELLED, actor, "admin")
    if ask.route != Ask.Route.CLIENT:
        announce_sync(ENDED, [ask.id.hex])
    return True


def ask_expire(*, ask: Ask, relay: ChannelRelay, user: User | AnonymousUser | None = None) -> bool:
    """An admin's expire: the held call ends with the "did not answer in time" result.

    Raises:
        ChannelLayerUnavailable: the worker holding the call could not be reached; the ask is
            left pending, as it was.
    """
    if not Ask.objects.pending().filter(pk=ask.pk).update(status=Ask.Status.EXPIRED):
        return False
    if ask.worker:
        try:
            async_to_sync(relay.expire)(ask.worker, ask.id.hex, ask.call_id or None)
        except ChannelLayerUnavailable:
            _undo(ask, Ask.Status.EXPIRED, None)
            raise
    actor = user if user is not None and user.is_authenticated else None
    async_to_sync(_record)(ask, AskEvent.Kind.EXPIRED, actor, "admin")
    if ask.route != Ask.Route.CLIENT:
        announce_sync(ENDED, [ask.id.hex])
    return True


async def ask_shown(*, ask: Ask, user: User | AnonymousUser) -> None:
    """Note, once per person, that someone opened an ask waiting for them."""
    await database_sync_to_async(asks_shown)([ask], user)


def asks_shown(asks: Iterable[Ask], user: User | AnonymousUser) -> None:
    """Note, once per person and ask, that pending asks were put in front of someone."""
    pending = [ask for ask in asks if ask.is_pending]
    if not user.is_authenticated or not pending:
        return
    seen = set(
        AskEvent.objects.filter(ask__in=pending, kind=AskEvent.Kind.SHOWN, actor=user).values_list(
            "ask_id", flat=True
        )
    )
    now = timezone.now()
    AskEvent.objects.bulk_create(
        AskEvent(ask=ask, kind=AskEvent.Kind.SHOWN, at=now, actor=user, route=ask.route)
        for ask in pending
        if ask.pk not in seen
    )


async def _record(ask: Ask, kind: str, actor: User | None, label: str) -> None:
    await AskEvent.objects.acreate(
        ask=ask, kind=kind, at=timezone.now(), actor=actor, actor_label=label, route=ask.route
    )
