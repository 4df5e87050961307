"""The access log: one line per request naming method, tool, principal and outcome, never what the request carried."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from ask_mcp.transports.access_log import ANONYMOUS, Exchange


def ended(reply: dict[str, Any] | None = None, status: int | None = None) -> str:
    exchange = Exchange("POST")
    exchange.reply, exchange.status = reply, status
    return exchange.outcome()


def test_the_outcome_is_read_off_the_reply_or_the_http_status() -> None:
    assert ended({"result": {"content": []}}) == "ok"
    assert ended({"result": {"resultType": "input_required"}}) == "input_required"
    assert ended({"result": {"isError": True}}) == "tool_error"
    assert ended({"error": {"code": -32602}}) == "error -32602"
    assert ended(status=202) == "accepted"
    assert ended(status=200) == "ok"
    assert ended(status=413) == "http 413"
    assert ended() == "disconnected"


def test_a_call_or_a_prompt_names_its_tool_cut_to_128_characters() -> None:
    exchange = Exchange("POST")
    exchange.read("tools/call", {"name": "x" * 300, "arguments": {"secret": "s3"}})
    assert exchange.method == "tools/call" and exchange.tool == "x" * 128
    listing = Exchange("POST")
    listing.read("tools/list", {"name": "ignored"})
    assert listing.tool is None
    odd = Exchange("POST")
    odd.read("prompts/get", ["not", "an", "object"])
    assert odd.tool is None and odd.principal == ANONYMOUS


def test_the_line_says_who_did_what_and_how_it_ended_but_never_the_content(
    caplog: pytest.LogCaptureFixture,
) -> None:
    exchange = Exchange("POST")
    exchange.read("tools/call", {"name": "user_ask", "arguments": {"message": "pin 4921?"}})
    exchange.principal = "user:7"
    exchange.reply = {"result": {"content": [{"type": "text", "text": "answer 4921"}]}}
    with caplog.at_level(logging.INFO, "ask_mcp.requests"):
        exchange.finish()
    (record,) = caplog.records
    assert record.getMessage().startswith("tools/call user_ask by user:7: ok in ")
    assert "4921" not in record.getMessage()
    assert (record.method, record.tool, record.outcome) == ("tools/call", "user_ask", "ok")  # type: ignore[attr-defined]


def test_nothing_is_logged_below_info(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, "ask_mcp.requests"):
        Exchange("GET").finish()
    assert caplog.records == []
