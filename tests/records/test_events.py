"""The inbox's live events: each announcement reaches the group every open inbox listens on, and a layer that fails costs nothing."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from channels.layers import InMemoryChannelLayer

from ask_mcp.records import events
from ask_mcp.records.events import ASKED, ENDED, INBOX_GROUP, announce, announce_sync


@pytest.fixture
def layer(monkeypatch: pytest.MonkeyPatch) -> InMemoryChannelLayer:
    layer = InMemoryChannelLayer()
    monkeypatch.setattr(events, "get_channel_layer", lambda: layer)
    return layer


async def heard(layer: InMemoryChannelLayer, channel: str, count: int) -> list[dict[str, Any]]:
    async with asyncio.timeout(5):
        return [await layer.receive(channel) for _ in range(count)]


async def test_every_ask_is_announced_to_the_inbox_group_each_as_its_own_event(
    layer: InMemoryChannelLayer,
) -> None:
    inbox = await layer.new_channel()
    await layer.group_add(INBOX_GROUP, inbox)
    await announce(ASKED, ["a1", "a2"])
    first, second = await heard(layer, inbox, 2)
    assert (first["type"], first["ask"], second["ask"]) == (ASKED, "a1", "a2")
    assert first["event"] != second["event"] and len(first["event"]) == 32


def test_synchronous_code_announces_too_and_nothing_is_sent_for_no_asks(
    layer: InMemoryChannelLayer,
) -> None:
    async def listen() -> str:
        inbox = await layer.new_channel()
        await layer.group_add(INBOX_GROUP, inbox)
        return inbox

    inbox = asyncio.run(listen())
    announce_sync(ENDED, [])
    announce_sync(ENDED, iter(["a3"]))
    (message,) = asyncio.run(heard(layer, inbox, 1))
    assert (message["type"], message["ask"]) == (ENDED, "a3")


async def test_a_layer_that_fails_is_logged_and_the_ask_goes_on(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    class Down:
        async def group_send(self, group: str, message: dict[str, Any]) -> None:
            raise ConnectionError("redis is down")

    monkeypatch.setattr(events, "get_channel_layer", Down)
    with caplog.at_level(logging.WARNING, "ask_mcp.records.events"):
        await announce(ASKED, ["a1"])
    assert "could not tell the inboxes about inbox.asked" in caplog.text
    monkeypatch.setattr(events, "get_channel_layer", lambda: None)
    await announce(ASKED, ["a1"])  # no layer configured: nothing to tell
