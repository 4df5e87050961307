"""The tool boundary: a value becomes its result, an ending a plain result, a ToolError an error result, a crash a vague one."""

from __future__ import annotations

import logging

import pytest

from ask_mcp.protocol.jsonrpc import JsonRpcError, invalid_params
from ask_mcp.server.catalog.results import finish_tool_call, tool_failure, tool_outcome
from ask_mcp.server.catalog.toolkit import ToolResult
from ask_mcp.server.errors import MissingClientCapability, QuestionNoLongerWaiting, ToolError


def test_text_and_results_are_the_tools_result() -> None:
    assert finish_tool_call("t", "done", None) == {
        "content": [{"type": "text", "text": "done"}],
        "isError": False,
    }
    structured = ToolResult([], structured_content={"n": 1})
    assert tool_outcome("t", structured, None) is structured
    assert finish_tool_call("t", structured, None)["structuredContent"] == {"n": 1}


def test_a_question_that_ended_is_a_plain_result_and_a_tool_error_one_the_model_can_fix() -> None:
    ended = tool_failure(QuestionNoLongerWaiting(), "t")
    assert ended["isError"] is False and "no longer waiting" in ended["content"][0]["text"]
    fixable = tool_failure(ToolError("path must be relative"), "t")
    assert fixable == {
        "content": [{"type": "text", "text": "path must be relative"}],
        "isError": True,
    }


def test_protocol_errors_propagate_to_the_dispatch_boundary() -> None:
    with pytest.raises(JsonRpcError):
        tool_failure(invalid_params("bad"), "t")
    with pytest.raises(MissingClientCapability):
        finish_tool_call("t", None, MissingClientCapability("m", {"roots": {}}))


def test_a_crash_or_a_wrong_return_gives_nothing_away_and_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.ERROR, "ask_mcp.server"):
        crashed = tool_failure(KeyError("secret-key-name"), "deploy")
        wrong = finish_tool_call("deploy", 3, None)
    for result in (crashed, wrong):
        assert result["isError"] is True
        assert result["content"][0]["text"] == (
            "The tool deploy failed with an internal error; the server log has the details."
        )
    assert "secret-key-name" in caplog.text and "returned int" in caplog.text
