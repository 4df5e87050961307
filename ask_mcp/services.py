"""Deciding asks from outside the call: a person's browser answer, an admin's cancel or expire.

Each decision is one conditional UPDATE (the ask must still be pending), so the first one wins
however many tabs, people or workers race; the winner then wakes the worker holding the call
through the relay and tells the inboxes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from asgiref.sync import async_to_sync
from django.contrib.auth.models import AnonymousUser
from django.utils import timezone

from . import conf
from .inbox import ENDED, announce, announce_sync
from .models import Ask
from .relay import ChannelRelay

if TYPE_CHECKING:
    from django.contrib.auth.models import User


STATUS_FOR_ACTION: Final[Mapping[str, Ask.Status]] = {
    "accept": Ask.Status.ACCEPTED,
    "decline": Ask.Status.DECLINED,
    "cancel": Ask.Status.CANCELLED,
}


def relay() -> ChannelRelay:
    """This process's relay (a bare one when the server was built without a channel layer)."""
    held = conf.get_server().table.relay
    return held if isinstance(held, ChannelRelay) else ChannelRelay()


def _decision(reply: Mapping[str, Any], user: User | AnonymousUser | None) -> dict[str, Any]:
    return {
        "status": STATUS_FOR_ACTION[reply["action"]],
        "answer": reply.get("content"),
        "answered_by": user if user is not None and user.is_authenticated else None,
        "answered_at": timezone.now(),
    }


async def ask_answer(*, ask: Ask, reply: Mapping[str, Any], user: User | AnonymousUser) -> bool:
    """Record a browser answer if the ask still waits for one, and wake its call; False if too late."""
    now = timezone.now()
    won = await (
        Ask.objects.pending()
        .in_browser()
        .filter(pk=ask.pk, expires_at__gt=now)
        .aupdate(**_decision(reply, user))
    )
    if not won:
        return False
    await relay().settle(ask.worker, ask.id.hex, reply)
    await announce(ENDED, [ask.id.hex])
    return True


def ask_cancel(*, ask: Ask, user: User | AnonymousUser) -> bool:
    """An admin's cancel: the held call resumes with the cancelled result (a parked MRTR call on retry)."""
    reply = {"action": "cancel"}
    if not Ask.objects.pending().filter(pk=ask.pk).update(**_decision(reply, user)):
        return False
    if ask.worker:
        async_to_sync(relay().settle)(ask.worker, ask.id.hex, reply, ask.call_id or None)
    if ask.route != Ask.Route.CLIENT:
        announce_sync(ENDED, [ask.id.hex])
    return True


def ask_expire(*, ask: Ask) -> bool:
    """An admin's expire: the held call ends with the "did not answer in time" result."""
    if not Ask.objects.pending().filter(pk=ask.pk).update(status=Ask.Status.EXPIRED):
        return False
    if ask.worker:
        async_to_sync(relay().expire)(ask.worker, ask.id.hex, ask.call_id or None)
    if ask.route != Ask.Route.CLIENT:
        announce_sync(ENDED, [ask.id.hex])
    return True
