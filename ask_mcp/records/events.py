"""The live events every open inbox follows (an ask appeared, an ask stopped waiting); knows no page or call.

Owns the channel-layer group and the two event names; knows nothing of pages or sockets (the
web's consumers turn the events into fragments) and nothing of the call the ask belongs to.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterable
from typing import Final

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

logger = logging.getLogger("ask_mcp.records.events")

INBOX_GROUP: Final = "askmcp.inbox"
"""The channel-layer group every open inbox and ask page listens on."""
ASKED: Final = "inbox.asked"
"""An ask appeared; the event's `ask` is its id (hex)."""
ENDED: Final = "inbox.ended"
"""An ask stopped waiting (decided, expired, withdrawn) or changed how it waits (no agent waits
on it now, a call attached, its decision was collected); the event's `ask` is its id (hex)."""


async def announce(kind: str, ask_ids: Iterable[str]) -> None:
    """Tell every open inbox that these asks appeared (ASKED) or stopped waiting (ENDED).

    Best effort: with the channel layer down, inboxes miss the live update but get the whole
    list again when their socket reconnects; the ask, its answer and the call never depend on it.
    """
    layer = get_channel_layer()
    if layer is None:
        return
    try:
        for ask_id in ask_ids:
            # `event` names this one announcement: the sockets of one process and viewer share
            # the reading of it (ask_mcp.web.consumers), as an ask ends or changes many times.
            message = {"type": kind, "ask": ask_id, "event": uuid.uuid4().hex}
            await layer.group_send(INBOX_GROUP, message)
    except Exception:
        logger.warning("could not tell the inboxes about %s", kind, exc_info=True)


def announce_sync(kind: str, ask_ids: Iterable[str]) -> None:
    """:func:`announce` from synchronous code (the admin's actions)."""
    ids = list(ask_ids)
    if ids:
        async_to_sync(announce)(kind, ids)
