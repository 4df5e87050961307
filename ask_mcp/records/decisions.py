"""Deciding asks from outside the call (a browser answer, an admin's cancel or expire); knows no page or form.

Each decision is one conditional UPDATE (the ask must still be pending), so the first one wins
however many tabs, people or workers race; the winner then wakes the worker holding the call
through the relay it is handed (the caller's, from :mod:`ask_mcp.runtime`) and tells the
inboxes.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from django.contrib.auth.models import AnonymousUser
from django.utils import timezone

from ask_mcp.models import (
    Ask,
    AskEvent,
    AskQuerySet,
    event_for_status,
    revoked_tokens,
    storable,
)
from ask_mcp.protocol.forms import REASON_KEY
from ask_mcp.records.choices import STATUS_FOR_ACTION
from ask_mcp.records.events import ENDED, announce, announce_sync
from ask_mcp.server.errors import REASON_LIMIT
from ask_mcp.server.identity import TOKEN
from ask_mcp.workers.relay import ChannelLayerUnavailable, ChannelRelay

if TYPE_CHECKING:
    from django.contrib.auth.models import User


PENDING_AGAIN: Final[Mapping[str, Any]] = {
    "status": Ask.Status.PENDING,
    "answer": None,
    "answered_by": None,
    "answered_at": None,
}
"""The columns of an ask whose decision was undone: waiting, as if nobody had answered."""
NOBODY_WAITING: Final = "no agent was waiting: kept until a call collects it"
"""The history's label for a browser answer that won the row but found no call to take it."""


@dataclass(frozen=True, slots=True)
class Answered:
    """What a browser answer came to: the ask as it now stands, and whether its call took it."""

    ask: Ask
    """Decided by this answer (accepted, declined, cancelled, or withdrawn when no call was left
    to take it), or, when someone came first, as they left it."""
    won: bool
    """Whether this answer decided the ask (nobody, and not the clock, came first)."""
    taken: bool
    """Whether a waiting call took this answer (for URL mode: the call waiting for its client
    to check back, which then collects it)."""

    @property
    def delivered(self) -> bool:
        """Whether the agent has the answer now: a browser call returns it as it takes it; a
        URL-mode call only when its client checks back (the history then says delivered)."""
        return self.taken and self.ask.route == Ask.Route.BROWSER


def _decision(reply: Mapping[str, Any], user: User | AnonymousUser | None) -> dict[str, Any]:
    return {
        "status": STATUS_FOR_ACTION[reply["action"]],
        "answer": storable(reply.get("content")),
        "answered_by": user if user is not None and user.is_authenticated else None,
        "answered_at": timezone.now(),
    }


def _decided(ask: Ask, status: str, answered_at: Any) -> AskQuerySet:
    """The ask, while it still holds the decision just made (status and, if any, its time)."""
    decided = Ask.objects.filter(pk=ask.pk, status=status)
    return decided if answered_at is None else decided.filter(answered_at=answered_at)


def _as_decided(ask: Ask, decision: Mapping[str, Any], status: str) -> Ask:
    """A copy of `ask` as its row now reads after `decision` (read back without a query)."""
    decided = copy.copy(ask)
    for name, value in decision.items():
        setattr(decided, name, value)
    decided.status = status
    return decided


async def ask_answer(
    *, ask: Ask, reply: Mapping[str, Any], user: User | AnonymousUser, relay: ChannelRelay
) -> Answered:
    """Record a browser answer if the ask still waits for one, and wake its call.

    Not taken when it came too late (someone else decided first, the ask expired), or when no
    call waits on the ask right now (its client left, its worker stopped): then the answer is
    kept as decided and not collected, and the next call asking the same, or the client's
    retry, collects it (docs/agents/nothing-lost.md).

    Raises:
        ChannelLayerUnavailable: the worker holding the call could not be reached (Redis is
            down); the decision is undone, so the ask still waits and may be answered again.
    """
    decision = _decision(reply, user)
    won = await (
        Ask.objects.pending()
        .in_browser()
        .filter(pk=ask.pk, expires_at__gt=decision["answered_at"])
        .exclude(
            credential_kind=TOKEN, credential_id__in=revoked_tokens()
        )  # no answer reaches a revoked call
        .aupdate(**decision)
    )
    if not won:  # someone (or the clock) decided first: show the ask as they left it
        return Answered(await Ask.objects.with_people().aget(pk=ask.pk), won=False, taken=False)
    actor = decision["answered_by"]
    try:
        taken = await relay.settle(ask.worker, ask.id.hex, reply)
    except ChannelLayerUnavailable:
        # The call never heard of it: leave no answer on record that the model never got.
        await _decided(ask, decision["status"], decision["answered_at"]).aupdate(**PENDING_AGAIN)
        raise
    status = decision["status"]
    await _record(ask, event_for_status(status), actor, "" if taken else NOBODY_WAITING)
    await announce(ENDED, [ask.id.hex])
    answered = Answered(_as_decided(ask, decision, status), won=True, taken=taken)
    if answered.delivered:
        # The call returns it as it takes it; the recorder writes that it did a moment later.
        answered.ask.collected_at = decision["answered_at"]
    return answered


def ask_cancel(
    *, ask: Ask, user: User | AnonymousUser, relay: ChannelRelay, reason: str = ""
) -> bool:
    """An admin's cancel: the held call resumes with the cancelled result (a parked MRTR call on retry).

    `reason` (cut to REASON_LIMIT) is kept with the ask and told to the model with the result,
    however the call collects it (held, parked, from the record, as a task).

    Raises:
        ChannelLayerUnavailable: the worker holding the call could not be reached; the ask is
            left pending, as it was.
    """
    said = _said(reason)
    reply: dict[str, Any] = {"action": "cancel", **({REASON_KEY: said} if said else {})}
    decision = {**_decision(reply, user), "reason": said}
    if not Ask.objects.pending().filter(pk=ask.pk).update(**decision):
        return False
    if ask.worker:
        try:
            async_to_sync(relay.settle)(ask.worker, ask.id.hex, reply, ask.call_id or None)
        except ChannelLayerUnavailable:
            _decided(ask, decision["status"], decision["answered_at"]).update(
                **PENDING_AGAIN, reason=""
            )
            raise
    actor = user if user.is_authenticated else None
    async_to_sync(_record)(ask, AskEvent.Kind.CANCELLED, actor, "admin")
    if ask.route != Ask.Route.CLIENT:
        announce_sync(ENDED, [ask.id.hex])
    return True


def ask_expire(
    *,
    ask: Ask,
    relay: ChannelRelay,
    user: User | AnonymousUser | None = None,
    reason: str = "",
) -> bool:
    """An admin's expire: the held call ends with the "did not answer in time" result.

    `reason` (cut to REASON_LIMIT) is kept with the ask and follows that result's first sentence.

    Raises:
        ChannelLayerUnavailable: the worker holding the call could not be reached; the ask is
            left pending, as it was.
    """
    said = _said(reason)
    if not Ask.objects.pending().filter(pk=ask.pk).update(status=Ask.Status.EXPIRED, reason=said):
        return False
    if ask.worker:
        try:
            async_to_sync(relay.expire)(ask.worker, ask.id.hex, ask.call_id or None, said)
        except ChannelLayerUnavailable:
            _decided(ask, Ask.Status.EXPIRED, None).update(**PENDING_AGAIN, reason="")
            raise
    actor = user if user is not None and user.is_authenticated else None
    async_to_sync(_record)(ask, AskEvent.Kind.EXPIRED, actor, "admin")
    if ask.route != Ask.Route.CLIENT:
        announce_sync(ENDED, [ask.id.hex])
    return True


def _said(reason: str) -> str:
    """Staff's reason as it is kept and told: one line, at most REASON_LIMIT characters."""
    return " ".join(reason.split())[:REASON_LIMIT]


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
