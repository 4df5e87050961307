"""A parked call's input channel: answers given up front, one request per key a round, one cut per round."""

from __future__ import annotations

import asyncio
from typing import Any, cast

import pytest

from ask_mcp.server.asking.parked import ParkedCall
from ask_mcp.server.context import Context


class Table:
    """A CallTable that counts its cuts and what was pending at each."""

    def __init__(self) -> None:
        self.cuts: list[list[str]] = []

    def cut(self, call: ParkedCall) -> None:
        self.cuts.append(sorted(call.pending))


def parked(table: Table, preset: dict[str, Any] | None = None) -> ParkedCall:
    return ParkedCall(
        table=table,
        id="c1",
        ctx=cast(Context, None),  # the channel never reads its context
        binding="b",
        principal="user:1",
        preset=preset,
        finish=lambda value, error: {"value": value},
    )


async def test_an_answer_given_up_front_is_taken_once_without_a_round() -> None:
    table = Table()
    call = parked(table, preset={"name": {"action": "accept"}})
    assert await call.request("name", {"method": "elicitation/create"}, 10.0) == {
        "action": "accept"
    }
    assert call.preset == {} and call.pending == {} and table.cuts == []


async def test_requests_queued_together_are_cut_once_and_resolved_by_their_futures() -> None:
    table = Table()
    call = parked(table)
    waiting = asyncio.gather(
        call.request("a", {"method": "roots/list"}, 10.0),
        call.request("b", {"method": "sampling/createMessage"}, 20.0),
    )
    while len(call.pending) < 2:  # both siblings queue before the cut runs
        await asyncio.sleep(0)  # one turn of the loop (a yield, not a wait)
    assert table.cuts == []
    await asyncio.sleep(0)  # one turn of the loop (a yield, not a wait)
    assert table.cuts == [["a", "b"]]
    assert call.pending["b"].deadline == 20.0
    call.pending["a"].future.set_result({"roots": []})
    call.pending["b"].future.set_result({"model": "m"})
    assert await waiting == [{"roots": []}, {"model": "m"}]


async def test_two_requests_with_one_key_in_a_round_are_refused_by_name() -> None:
    call = parked(Table())
    first = asyncio.ensure_future(call.request("ask", {}, 1.0))
    await asyncio.sleep(0)  # one turn of the loop (a yield, not a wait)
    with pytest.raises(ValueError, match="share the key 'ask'"):
        await call.request("ask", {}, 1.0)
    first.cancel()
    with pytest.raises(asyncio.CancelledError):
        await first
