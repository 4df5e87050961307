"""The LLM tool bridge: tool definitions in both dialects, and tool calls run with results in the same dialect."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from ask_mcp import MCPServer
from ask_mcp.protocol.forms import ElicitResult
from ask_mcp.toolkits.ask import INPUT_SCHEMA
from ask_mcp.transports.bridge import NOBODY_TO_ASK
from tests.support.scripted import ScriptedElicit


def openai_call(call_id: str, name: str, arguments: Any) -> dict[str, Any]:
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": raw}}


def tool_use(call_id: str, name: str, arguments: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": name, "input": arguments}


def test_tool_definitions_in_both_dialects(tmp_path: Path) -> None:
    server = MCPServer("bridge", tools={"Ask": {}, "FileSystem": {"root": str(tmp_path)}})
    openai = server.tool_definitions("openai")
    anthropic = server.tool_definitions(dialect="anthropic")
    assert [d["function"]["name"] for d in openai] == [
        "user_ask",
        "fs_list",
        "fs_read",
        "fs_search",
    ]
    assert openai[0] == {
        "type": "function",
        "function": {
            "name": "user_ask",
            "description": server.tools["user_ask"].description,
            "parameters": INPUT_SCHEMA,
        },
    }
    assert anthropic[0] == {
        "name": "user_ask",
        "description": server.tools["user_ask"].description,
        "input_schema": INPUT_SCHEMA,
    }
    with pytest.raises(ValueError, match="dialect must be one of openai, anthropic"):
        server.tool_definitions("gemini")


async def test_openai_tool_calls_get_tool_messages_and_questions_go_to_on_elicit() -> None:
    hook = ScriptedElicit(ElicitResult("accept", {"answer": "blue"}))
    server = MCPServer("bridge", tools={"Ask": {}}, on_elicit=hook)
    messages = await server.execute_tool_calls(
        [
            openai_call("call_1", "user_ask", {"message": "Favourite colour?"}),
            openai_call("call_2", "user_ask", '{"message": '),
            openai_call("call_3", "delete_everything", {}),
            openai_call("call_4", "user_ask", "[1, 2]"),
        ]
    )
    assert messages == [
        {"role": "tool", "tool_call_id": "call_1", "content": '{"answer":"blue"}'},
        {
            "role": "tool",
            "tool_call_id": "call_2",
            "content": "Error: The arguments of 'user_ask' are not valid JSON (Expecting value "
            "at line 1 column 13); send them as one JSON object.",
        },
        {
            "role": "tool",
            "tool_call_id": "call_3",
            "content": "Error: Unknown tool 'delete_everything'; this server offers user_ask.",
        },
        {
            "role": "tool",
            "tool_call_id": "call_4",
            "content": "Error: The arguments of 'user_ask' must be a JSON object, got an array.",
        },
    ]
    (question,) = hook.questions
    assert question.message == "Favourite colour?" and question.route == "browser"


async def test_anthropic_tool_use_blocks_get_one_user_message_of_tool_results() -> None:
    hook = ScriptedElicit(ElicitResult("decline"))
    server = MCPServer("bridge", tools={"Ask": {}}, on_elicit=hook)
    messages = await server.execute_tool_calls(
        [
            tool_use("toolu_1", "user_ask", {"message": "Ship it?"}),
            tool_use("toolu_2", "user_ask", {"message": ""}),
        ]
    )
    assert messages == [
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_1",
                    "content": [{"type": "text", "text": "The user declined to answer."}],
                },
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_2",
                    "content": [
                        {
                            "type": "text",
                            "text": "`message` is empty: say what you need from the person "
                            "and why.",
                        }
                    ],
                    "is_error": True,
                },
            ],
        }
    ]


async def test_without_on_elicit_user_ask_is_an_error_naming_what_is_missing() -> None:
    server = MCPServer("bridge", tools={"Ask": {}})
    (message,) = await server.execute_tool_calls(
        [tool_use("toolu_1", "user_ask", {"message": "Anyone?"})]
    )
    (block,) = message["content"]
    assert block["is_error"] is True
    assert block["content"][0]["text"] == NOBODY_TO_ASK
    assert "on_elicit" in NOBODY_TO_ASK


class SdkToolCall(BaseModel):
    """Stands in for the OpenAI SDK's pydantic ChatCompletionMessageToolCall."""

    id: str
    type: str
    function: dict[str, str]


async def test_sdk_objects_and_junk_calls_are_answered_not_raised(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha\n")
    server = MCPServer("bridge", tools={"FileSystem": {"root": str(tmp_path)}})
    messages = await server.execute_tool_calls(
        [
            SdkToolCall(
                id="call_1",
                type="function",
                function={"name": "fs_read", "arguments": '{"path": "a.txt"}'},
            ),
            "not a call",
            openai_call("call_3", "fs_read", {"path": "../etc/passwd"}),
        ]
    )
    assert messages[0] == {"role": "tool", "tool_call_id": "call_1", "content": "alpha\n"}
    assert messages[1]["content"].startswith("Error: The tool call has no `function` object")
    assert "contains '..'; paths only go down from the file root" in messages[2]["content"]


async def test_arguments_with_a_number_past_the_largest_double_are_refused_by_name() -> None:
    server = MCPServer("bridge")
    (message,) = await server.execute_tool_calls(
        [
            openai_call(
                "call_1",
                "user_ask",
                '{"message": "m", "questions": [{"name": "n", '
                '"type": "number", "default": 1e999}]}',
            )
        ]
    )
    assert message["content"] == (
        "Error: The arguments of 'user_ask' are not usable JSON: the number 1e999 is too large "
        "to be a finite number (it reads as infinity); send a number between "
        "-1.7976931348623157e308 and 1.7976931348623157e308, or the value as a string."
    )
