"""The Context a handler gets: what it reports and logs, and what it sends the table to ask, sample or list roots."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from ask_mcp.protocol.forms import ElicitResult
from ask_mcp.server.context import Caller, Context, client_name, client_version
from ask_mcp.server.errors import PeopleOnly, ToolError
from ask_mcp.server.identity import Identity
from ask_mcp.server.ports import Relay


class Heard:
    """A stream that keeps what it is told."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []

    async def notify(self, message: dict[str, Any]) -> None:
        self.messages.append(message)


class Table:
    """An Asker that answers input requests from a script and keeps what it was asked."""

    relay: Relay | None = None
    waiting = 0

    def __init__(self, replies: Mapping[str, Any] | None = None) -> None:
        self.replies = dict(replies or {})
        self.asked: list[tuple[str, Any]] = []

    async def elicit(
        self,
        ctx: Context,
        message: str,
        schema: Mapping[str, Any],
        *,
        timeout: float | None,
        key: str,
    ) -> ElicitResult:
        self.asked.append(("elicit", (message, timeout, key)))
        return ElicitResult("accept", {"ok": True})

    async def request_inputs(
        self, ctx: Context, requests: Mapping[str, Mapping[str, Any]]
    ) -> dict[str, Any]:
        self.asked.append(("inputs", dict(requests)))
        return {key: self.replies.get(key) for key in requests}


def context(table: Table, stream: Heard | None = None, **caller: Any) -> Context:
    caller.setdefault("protocol_version", "2026-07-28")
    caller.setdefault("capabilities", {})
    if stream is not None:
        caller["stream"] = stream
    return Context(table, Caller(**caller), method="tools/call", name="deploy", arguments={})


async def test_progress_is_sent_only_when_the_request_asked_for_it() -> None:
    heard = Heard()
    await context(Table(), heard).report_progress(1)
    await context(Table(), heard, progress_token="t1").report_progress(50, 100, "half")
    assert heard.messages == [
        {
            "jsonrpc": "2.0",
            "method": "notifications/progress",
            "params": {"progressToken": "t1", "progress": 50, "total": 100, "message": "half"},
        }
    ]


async def test_log_messages_go_out_at_or_above_the_requested_level_only() -> None:
    heard = Heard()
    ctx = context(Table(), heard, log_level="warning")
    for level in ("info", "warning", "error", "nonsense"):
        await ctx.log(level, {"said": level}, logger="deploy")
    await context(Table(), heard).log("emergency", "no level set")
    assert [m["params"] for m in heard.messages] == [
        {"level": "warning", "data": {"said": "warning"}, "logger": "deploy"},
        {"level": "error", "data": {"said": "error"}, "logger": "deploy"},
    ]


async def test_elicit_goes_to_the_table_keyed_by_the_call_name_unless_given_a_key() -> None:
    table = Table()
    ctx = context(table)
    assert await ctx.elicit("Go?", {"type": "object"}) == ElicitResult("accept", {"ok": True})
    await ctx.elicit("Again?", {"type": "object"}, timeout=5, key="second")
    assert table.asked == [("elicit", ("Go?", None, "deploy")), ("elicit", ("Again?", 5, "second"))]


async def test_sampling_and_roots_are_input_requests_whose_replies_are_checked() -> None:
    table = Table({"sampling": {"model": "m"}, "roots": {"roots": [{"uri": "file:///a"}]}})
    ctx = context(table)
    assert await ctx.create_message([{"role": "user"}], max_tokens=5, temperature=0) == {
        "model": "m"
    }
    assert await ctx.list_roots() == [{"uri": "file:///a"}]
    _, requests = table.asked[0]
    assert requests == {
        "sampling": {
            "method": "sampling/createMessage",
            "params": {"messages": [{"role": "user"}], "maxTokens": 5, "temperature": 0},
        }
    }
    broken = context(Table({"sampling": "text", "roots": {"roots": ["file:///a"]}}))
    with pytest.raises(ToolError, match="not return a sampling result"):
        await broken.create_message([], max_tokens=1)
    with pytest.raises(ToolError, match="not return a list of roots"):
        await broken.list_roots()


async def test_a_people_only_caller_cannot_send_its_client_a_form_but_may_sample() -> None:
    table = Table({"s": {"model": "m"}})
    ctx = context(table, who=Identity("user:1", people_only=True))
    with pytest.raises(PeopleOnly, match="'ask'"):
        await ctx.request_inputs({"ask": {"method": "elicitation/create", "params": {}}})
    assert table.asked == []
    assert await ctx.request_inputs({"s": {"method": "sampling/createMessage"}}) == {
        "s": {"model": "m"}
    }


def test_the_context_reads_its_caller_and_knows_when_the_client_shows_forms() -> None:
    who = Identity("user:9")
    ctx = context(Table(), protocol_version="2025-11-25", capabilities={"elicitation": {}}, who=who)
    assert ctx.era == "legacy" and ctx.who is who
    assert ctx.client_shows_forms is False  # no input channel: nothing to send a form on
    ctx.input_channel = object()  # type: ignore[assignment]
    assert ctx.client_shows_forms is True


def test_the_clients_name_and_version_are_read_only_when_they_are_text() -> None:
    assert client_name({"name": "claude", "version": "1.2"}) == "claude"
    assert client_version({"name": "claude", "version": "1.2"}) == "1.2"
    assert client_name({"name": 3}) is None and client_version(None) is None
