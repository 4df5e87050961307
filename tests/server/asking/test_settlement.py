"""Settlement from outside a call: the client's reply or an admin's cancel or expire, whichever comes first."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any, cast

import pytest

from ask_mcp.protocol.forms import ElicitResult
from ask_mcp.server.asking.settlement import AdminExpired, first_of
from ask_mcp.server.errors import ElicitationTimedOut
from ask_mcp.server.ports import Relay


class Admin:
    """The relay's settling half: an admin's decision arrives when the test says."""

    def __init__(self) -> None:
        self.expected: list[str] = []
        self.decision: asyncio.Future[Mapping[str, Any]] = (
            asyncio.get_running_loop().create_future()
        )

    def expect(self, ask_id: str) -> None:
        self.expected.append(ask_id)

    async def wait_settled(self, ask_id: str) -> Mapping[str, Any]:
        return await self.decision


async def test_the_clients_reply_wins_when_no_admin_acts() -> None:
    admin = Admin()

    async def client() -> ElicitResult:
        return ElicitResult("accept", {"ok": True})

    reply = await first_of(client(), cast(Relay, admin), "a1")
    assert reply == ElicitResult("accept", {"ok": True})
    assert admin.expected == ["a1"]  # registered before the form went out


async def test_an_admins_cancel_ends_the_form_and_keeps_the_reason() -> None:
    admin = Admin()
    client_gave_up = asyncio.Event()

    async def client() -> ElicitResult:
        try:
            await asyncio.Event().wait()
        finally:
            client_gave_up.set()
        raise AssertionError("never answered")

    admin.decision.set_result({"action": "cancel", "reason": "wrong repo"})
    reply = await first_of(client(), cast(Relay, admin), "a1")
    assert reply is not None and (reply.action, reply.reason) == ("cancel", "wrong repo")
    assert client_gave_up.is_set()  # the form's sender was told to drop it first


async def test_an_admins_expire_is_raised_as_the_timeout_with_its_reason() -> None:
    admin = Admin()
    admin.decision.set_exception(ElicitationTimedOut("nobody is on call"))

    async def client() -> ElicitResult:
        await asyncio.Event().wait()
        raise AssertionError("never answered")

    with pytest.raises(ElicitationTimedOut) as expired:
        await first_of(client(), cast(Relay, admin), "a1")
    assert expired.value.reason == "nobody is on call"


def test_admin_expired_calls_are_remembered_with_their_reasons_oldest_forgotten_first() -> None:
    expired = AdminExpired(kept=2)
    expired.note("c1", "first")
    expired.note("c2", "")
    assert expired.reason("c1") == "first" and expired.reason("c2") == ""
    expired.note("c3", "third")
    assert expired.reason("c1") is None and expired.reason("c3") == "third"
    assert expired.reason("never") is None
