"""Finishing a call from its ask's record when its parked handler is gone (ask_mcp.server.asking.recovery).

A "restart" here is a second MCPServer with the same state keys and the same record: the first
server's parked call is gone with it. The record is an in-memory AskRecords that decides each
ask once, as the database does.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from typing import Any

import pytest

from ask_mcp import MCPServer
from ask_mcp.protocol.forms import ElicitResult
from ask_mcp.server.catalog.toolkit import Toolkit, ToolResult, tool
from ask_mcp.server.errors import NO_LONGER_WAITING_TEXT, TIMED_OUT_TEXT
from ask_mcp.server.question import Ending, Question
from ask_mcp.server.request_state import InvalidState, StateSealer
from tests.support.results import text_of as text
from tests.support.scripted import call_tool
from tests.support.wire import FORM_CAPS

KEYS = [b"k" * 32]
ARGUMENTS = {
    "message": "How many replicas?",
    "questions": [{"name": "replicas", "type": "integer"}],
}


class Record:
    """AskRecords in memory: each ask decided once, its decision collected once."""

    def __init__(self) -> None:
        self.asks: dict[str, dict[str, Any]] = {}

    async def asked(self, question: Question) -> None:
        self.asks[question.id] = {"status": "pending", "reply": None, "collected": False}

    def ended(self, question: Question, status: Ending, answer: Mapping[str, Any] | None) -> None:
        row = self.asks[question.id]
        if row["status"] == "pending" and status not in ("detached", "stopped"):
            row["status"] = status

    async def decide(self, question: Question, reply: ElicitResult) -> ElicitResult:
        row = self.asks.setdefault(
            question.id, {"status": "pending", "reply": None, "collected": False}
        )
        if row["status"] == "pending":
            row.update(status="decided", reply=reply, collected=True)
            return reply
        if row["status"] == "decided" and not row["collected"]:
            row["collected"] = True
            decided: ElicitResult = row["reply"]
            return decided
        raise InvalidState("used")

    async def reattach(self, question: Question) -> None:
        raise AssertionError("URL mode is not used here")


def server(record: Record) -> MCPServer:
    return MCPServer("restartable", state_keys=KEYS, observer=record, tools={"Ask": {}})


async def parked_then_restarted() -> tuple[Record, MCPServer, dict[str, Any]]:
    record = Record()
    first = await call_tool(server(record), "user_ask", ARGUMENTS, caps=FORM_CAPS)
    return record, server(record), first["result"]


async def retry(
    to: MCPServer, first: Mapping[str, Any], reply: Mapping[str, Any] | None
) -> dict[str, Any]:
    responses = {} if reply is None else {"user_ask": reply}
    async with asyncio.timeout(5):
        return await call_tool(
            to,
            "user_ask",
            ARGUMENTS,
            caps=FORM_CAPS,
            inputResponses=responses,
            requestState=first["requestState"],
        )


async def test_a_retry_after_a_restart_is_finished_from_the_record_exactly_once() -> None:
    record, restarted, first = await parked_then_restarted()
    done = await retry(restarted, first, {"action": "accept", "content": {"replicas": 3}})
    assert text(done) == '{"replicas":3}' and done["result"]["isError"] is False
    (row,) = record.asks.values()
    assert row["status"] == "decided" and row["collected"]
    replay = await retry(server(record), first, {"action": "accept", "content": {"replicas": 9}})
    assert replay["error"]["code"] == -32602 and replay["error"]["data"] == {"reason": "used"}


async def test_a_misfit_answer_after_a_restart_is_asked_again_with_the_reason() -> None:
    record, restarted, first = await parked_then_restarted()
    again = await retry(restarted, first, {"action": "accept", "content": {"replicas": "three"}})
    result = again["result"]
    assert result["resultType"] == "input_required"
    params = result["inputRequests"]["user_ask"]["params"]
    assert "(The previous answer could not be used:" in params["message"]
    claims = StateSealer(KEYS).open(result["requestState"])
    assert claims.owner == "@record" and claims.question is not None
    assert claims.question.attempt == 2
    done = await retry(server(record), result, {"action": "accept", "content": {"replicas": 2}})
    assert text(done) == '{"replicas":2}'


async def test_an_answer_that_never_fits_ends_as_an_error_naming_it_not_a_decline() -> None:
    record, restarted, first = await parked_then_restarted()
    state: Mapping[str, Any] = first
    for _ in range(3):
        reply = await retry(restarted, state, {"action": "accept", "content": {"replicas": "x"}})
        state = reply["result"]
    assert "No valid answer came after 3 attempts" in text(reply)
    assert text(reply) != "The user declined to answer."
    assert record.asks[next(iter(record.asks))]["status"] == "pending", "nothing was decided"


async def test_a_decline_and_a_decision_made_first_are_what_the_retry_reads() -> None:
    _, restarted, first = await parked_then_restarted()
    declined = await retry(restarted, first, {"action": "decline"})
    assert text(declined) == "The user declined to answer."
    record2, restarted2, first2 = await parked_then_restarted()
    (row,) = record2.asks.values()
    row.update(status="decided", reply=ElicitResult("cancel"), collected=False)  # an admin
    late = await retry(restarted2, first2, {"action": "accept", "content": {"replicas": 1}})
    assert text(late) == "The user cancelled the request."


async def test_a_retry_that_answers_nothing_gets_the_same_question() -> None:
    _, restarted, first = await parked_then_restarted()
    again = await retry(restarted, first, None)
    assert again["result"]["resultType"] == "input_required"
    assert (
        "previous answer" not in again["result"]["inputRequests"]["user_ask"]["params"]["message"]
    )


async def test_an_expired_state_reads_as_timed_out() -> None:
    record = Record()
    first = await call_tool(
        MCPServer("short", state_keys=KEYS, observer=record, tools={"Ask": {"timeout": 5}}),
        "user_ask",
        ARGUMENTS,
        caps=FORM_CAPS,
    )
    later = server(record)
    later.table.clock = lambda: time.time() + 60  # the restarted server's clock is past it
    late = await retry(later, first["result"], {"action": "accept", "content": {}})
    assert text(late) == TIMED_OUT_TEXT


class Stateful(Toolkit):
    """A tool whose result is not a pure function of its arguments and reply."""

    default_prefix = "st"

    @tool("count", description="Asks, then counts in its own memory.")
    async def count(self, ctx: Any, arguments: dict[str, Any]) -> ToolResult:
        await ctx.elicit("Go?", {"type": "object", "properties": {"go": {"type": "boolean"}}})
        return ToolResult.text("counted")


@pytest.mark.parametrize("caps", [FORM_CAPS])
async def test_a_tool_that_does_not_declare_it_keeps_no_longer_waiting(
    caps: dict[str, Any],
) -> None:
    record = Record()

    def make() -> MCPServer:
        return MCPServer(
            "s",
            state_keys=KEYS,
            observer=record,
            tools={"tests.server.asking.test_recovery.Stateful": {}},
        )

    first = await call_tool(make(), "st_count", {}, caps=caps)
    async with asyncio.timeout(5):
        late = await call_tool(
            make(),
            "st_count",
            {},
            caps=caps,
            inputResponses={"st_count": {"action": "accept", "content": {"go": True}}},
            requestState=first["result"]["requestState"],
        )
    assert text(late) == NO_LONGER_WAITING_TEXT
