"""One reading of an inbox event per process and viewer: shared by their sockets, never reused for another event."""

from __future__ import annotations

import asyncio

import pytest

from ask_mcp.web.consumers import arrival
from ask_mcp.web.listing import Filters

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def test_sockets_of_one_viewer_share_one_reading_of_one_announcement() -> None:
    loop = asyncio.get_running_loop()
    reads: list[str] = []
    release = asyncio.Event()

    async def read(event: str) -> str:
        reads.append(event)
        await release.wait()  # every socket has asked for it before the reading ends
        return f"card for {event}"

    key = (loop, "inbox.asked", "event-1", 7, Filters())
    sockets = [arrival(key, lambda: read("event-1")) for _ in range(100)]
    release.set()
    async with asyncio.timeout(5):
        cards = await asyncio.gather(*sockets)
    assert reads == ["event-1"] and set(cards) == {"card for event-1"}
    # The same ask announced again (an escalation to new people) is read again, and so is the
    # same announcement for another viewer.
    again = (loop, "inbox.asked", "event-2", 7, Filters())
    other = (loop, "inbox.asked", "event-1", 8, Filters())
    async with asyncio.timeout(5):
        await arrival(again, lambda: read("event-2"))
        await arrival(other, lambda: read("event-1"))
    assert reads == ["event-1", "event-2", "event-1"]


async def test_a_failed_reading_is_not_kept() -> None:
    loop = asyncio.get_running_loop()
    key = (loop, "inbox.ended", "event-3", 7, Filters())
    tries = 0

    async def read() -> str:
        nonlocal tries
        tries += 1
        if tries == 1:
            raise ConnectionError("the database went away")
        return "status"

    with pytest.raises(ConnectionError):
        # The reading forgets itself in a done callback added before this await's own wakeup,
        # so it is gone by the time the error reaches here.
        await arrival(key, read)
    async with asyncio.timeout(5):
        assert await arrival(key, read) == "status"
