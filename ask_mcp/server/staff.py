"""Staff deciding a question that waits on its client: the first of its reply and an admin's, and the expired; knows no Django or wire.

An initialize-era call's form waits on the client's stream, where no retry comes for a decision
to be handed to; an admin's cancel or expire must end it there and then. A 2026-07-28 call an
admin expired is dropped from the table, and its client's retry must read the timeout (with
the admin's reason), not "used". Pure asyncio.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, Final

from ask_mcp.protocol.forms import ElicitResult, read_settled
from ask_mcp.server.errors import ElicitationTimedOut
from ask_mcp.server.parked import ParkedCall
from ask_mcp.server.ports import InputChannel, Relay

STAFF_EXPIRED_KEPT: Final = 1024
"""Parked calls an admin expired, remembered with their reasons: a retry comes within its
client's next loop turn, so far fewer than this many expire between an admin's click and the
retry; the oldest are forgotten first."""


async def first_of(
    asking: Coroutine[Any, Any, Any], channel: InputChannel, relay: Relay | None, ask_id: str
) -> Any:
    """The client's reply to a form sent on its stream, unless an admin settles the ask first:
    a cancel (read with staff's reason) or an expire (raised as the timeout). A parked call's
    form is settled on its retry instead (ElicitationTable.answer_parked)."""
    if isinstance(channel, ParkedCall) or relay is None:
        return await asking
    relay.expect(ask_id)  # before the form goes out: an admin may act at once
    reply = asyncio.ensure_future(asking)
    settled = asyncio.ensure_future(relay.wait_settled(ask_id))
    try:
        await asyncio.wait((reply, settled), return_when=asyncio.FIRST_COMPLETED)
    finally:
        pending = [waiting for waiting in (reply, settled) if not waiting.done()]
        for waiting in pending:
            waiting.cancel()
        if pending:  # the form's sender tells the client to drop it before the result goes out
            await asyncio.wait(pending)
    if settled.done() and not settled.cancelled():
        return read_settled(settled.result())  # raises the admin's expire
    return reply.result()


def from_hook(reply: Any) -> ElicitResult:
    """A reply from the server's own hook (the inbox): a settlement that may carry staff's
    reason; anything that is not a reply is a refusal, as from a client."""
    return read_settled(reply) or ElicitResult("decline")


class StaffExpired:
    """The parked calls an admin expired, by call id, with the reason they gave (maybe "")."""

    def __init__(self, kept: int = STAFF_EXPIRED_KEPT) -> None:
        self.kept = kept
        self._reasons: dict[str, str] = {}

    def note(self, call_id: str, reason: str) -> None:
        if len(self._reasons) >= self.kept:
            self._reasons.pop(next(iter(self._reasons)))
        self._reasons[call_id] = reason

    def check(self, call_id: str) -> None:
        """Raise the timeout, with the admin's reason, if an admin expired the call.

        Raises:
            ElicitationTimedOut: an admin expired it.
        """
        if (reason := self._reasons.get(call_id)) is not None:
            raise ElicitationTimedOut(reason)
