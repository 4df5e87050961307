"""A question settled from outside its call: an admin's cancel or expire racing the client's reply.

An initialize-era call's form waits on the client's stream, where no retry comes for a decision
to be handed to; an admin's cancel or expire must end it there and then. A 2026-07-28 call an
admin expired is dropped from the table, and its client's retry must read the timeout (with
the admin's reason), not "used". It knows no Django and no wire. Pure asyncio.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, Final

from ask_mcp.protocol.forms import read_settled
from ask_mcp.server.ports import Relay

ADMIN_EXPIRED_KEPT: Final = 1024
"""Parked calls an admin expired, remembered with their reasons: a retry comes within its
client's next loop turn, so far fewer than this many expire between an admin's click and the
retry; the oldest are forgotten first."""


async def first_of(asking: Coroutine[Any, Any, Any], relay: Relay, ask_id: str) -> Any:
    """The client's reply to a form sent on its stream, unless an admin settles the ask first:
    a cancel (read with the admin's reason) or an expire (raised as the timeout)."""
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


class AdminExpired:
    """The parked calls an admin expired, by call id, with the reason they gave (maybe "")."""

    def __init__(self, kept: int = ADMIN_EXPIRED_KEPT) -> None:
        self.kept = kept
        self._reasons: dict[str, str] = {}

    def note(self, call_id: str, reason: str) -> None:
        if len(self._reasons) >= self.kept:
            self._reasons.pop(next(iter(self._reasons)))
        self._reasons[call_id] = reason

    def reason(self, call_id: str) -> str | None:
        """The admin's reason if an admin expired the call (None if not)."""
        return self._reasons.get(call_id)
