"""user_ask through a scripted on_elicit: every question shape, default, multi-select and argument error."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from ask_mcp import Ask, MCPServer
from ask_mcp.protocol.forms import ElicitResult
from ask_mcp.server.errors import REASON_LIMIT, TIMED_OUT_TEXT, ElicitationTimedOut, with_reason
from tests.support.results import text_of as text
from tests.support.scripted import NEVER, ScriptedElicit, call_tool

FORM = {"elicitation": {"form": {}}}


def server_with(hook: ScriptedElicit) -> MCPServer:
    return MCPServer("test", on_elicit=hook).plug(Ask())


async def schema_for(questions: Any) -> dict[str, Any]:
    hook = ScriptedElicit(ElicitResult("decline"))
    arguments: dict[str, Any] = {"message": "Tell me"}
    if questions is not ...:
        arguments["questions"] = questions
    reply = await call_tool(server_with(hook), "user_ask", arguments)
    assert text(reply) == "The user declined to answer."
    (question,) = hook.questions
    return dict(question.schema)


async def test_the_original_example_becomes_exactly_its_schema() -> None:
    schema = await schema_for(
        [
            {"name": "component", "prompt": "Which component?", "options": ["api", "ui", "docs"]},
            {"name": "severity", "prompt": "How bad is it?", "type": "number"},
            {"name": "notes", "prompt": "Anything else?", "required": False},
        ]
    )
    assert schema == {
        "type": "object",
        "properties": {
            "component": {
                "type": "string",
                "description": "Which component?",
                "enum": ["api", "ui", "docs"],
            },
            "severity": {"type": "number", "description": "How bad is it?"},
            "notes": {"type": "string", "description": "Anything else?"},
        },
        "required": ["component", "severity"],
    }


@pytest.mark.parametrize("questions", [..., None, []])
async def test_no_questions_means_one_required_answer_field(questions: Any) -> None:
    assert await schema_for(questions) == {
        "type": "object",
        "properties": {"answer": {"type": "string"}},
        "required": ["answer"],
    }


@pytest.mark.parametrize(
    "question, field",
    [
        ({"name": "n", "type": "integer"}, {"type": "integer"}),
        ({"name": "b", "type": "boolean", "default": True}, {"type": "boolean", "default": True}),
        ({"name": "x", "type": "number", "default": 2.5}, {"type": "number", "default": 2.5}),
        ({"name": "i", "type": "integer", "default": 3}, {"type": "integer", "default": 3}),
        ({"name": "s", "default": "hi"}, {"type": "string", "default": "hi"}),
        (
            {"name": "e", "options": ["a", "b"], "default": "b"},
            {"type": "string", "enum": ["a", "b"], "default": "b"},
        ),
        (
            {"name": "m", "prompt": "Pick", "options": ["a", "b", "c"], "multiple": True},
            {
                "type": "array",
                "description": "Pick",
                "items": {"type": "string", "enum": ["a", "b", "c"]},
            },
        ),
        (
            {"name": "m", "options": ["a", "b"], "multiple": True, "default": ["a"]},
            {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}, "default": ["a"]},
        ),
    ],
)
async def test_each_question_shape_becomes_its_field(question: dict, field: dict) -> None:
    schema = await schema_for([question])
    assert schema["properties"] == {question["name"]: field}
    assert schema["required"] == [question["name"]]


async def test_all_optional_questions_leave_out_required() -> None:
    schema = await schema_for([{"name": "a", "required": False}, {"name": "b", "required": False}])
    assert "required" not in schema


@pytest.mark.parametrize(
    "arguments, fragments",
    [
        ({}, ["`message` is missing"]),
        ({"message": 3}, ["`message` must be a string, got a number"]),
        ({"message": "   "}, ["`message` is empty"]),
        ({"message": "m", "extra": 1}, ["Unknown argument(s) 'extra'"]),
        ({"message": "m", "questions": "which?"}, ["`questions` must be a list", "a string"]),
        ({"message": "m", "questions": [{"name": "a"}, 7]}, ["questions[1] must be an object"]),
        ({"message": "m", "questions": [{"prompt": "x"}]}, ["questions[0] has no `name`"]),
        ({"message": "m", "questions": [{"name": ""}]}, ["questions[0] has no `name`"]),
        (
            {"message": "m", "questions": [{"name": "a"}, {"name": "a"}]},
            ["questions[1] ('a')", "already used"],
        ),
        (
            {"message": "m", "questions": [{"name": "a", "type": "float"}]},
            [
                "questions[0] ('a')",
                "type 'float' is not supported",
                "string, number, integer, boolean",
            ],
        ),
        (
            {"message": "m", "questions": [{"name": "n", "type": "number", "options": ["1"]}]},
            ["questions[0] ('n')", "`options` only work on string questions"],
        ),
        (
            {"message": "m", "questions": [{"name": "o", "options": []}]},
            ["questions[0] ('o')", "`options` is empty"],
        ),
        (
            {"message": "m", "questions": [{"name": "o", "options": ["a", 1]}]},
            ["`options` must be a list of strings"],
        ),
        (
            {"message": "m", "questions": [{"name": "r", "required": "yes"}]},
            ["questions[0] ('r')", "`required` must be true or false"],
        ),
        (
            {"message": "m", "questions": [{"name": "k", "label": "K"}]},
            [
                "questions[0] ('k')",
                "unknown key(s) 'label'",
                "name, prompt, type, options, required, default, multiple",
            ],
        ),
        (
            {"message": "m", "questions": [{"name": "d", "type": "integer", "default": "3"}]},
            ["questions[0] ('d')", "`default` must be an integer, got a string"],
        ),
        (
            {"message": "m", "questions": [{"name": "d", "type": "boolean", "default": 1}]},
            ["`default` must be a boolean"],
        ),
        (
            {"message": "m", "questions": [{"name": "d", "options": ["a"], "default": "z"}]},
            ["`default` 'z' is not one of the options"],
        ),
        (
            {"message": "m", "questions": [{"name": "d", "multiple": True}]},
            ["`multiple` needs `options`"],
        ),
        (
            {
                "message": "m",
                "questions": [{"name": "d", "options": ["a"], "multiple": True, "default": ["b"]}],
            },
            ["`default` must be a list of the options"],
        ),
        (
            {"message": "m", "questions": [{"name": "p", "prompt": 5}]},
            ["`prompt` must be a string"],
        ),
    ],
)
async def test_argument_mistakes_are_error_results_naming_what_to_fix(
    arguments: dict, fragments: list[str]
) -> None:
    hook = ScriptedElicit(ElicitResult("accept", {"answer": "unused"}))
    reply = await call_tool(server_with(hook), "user_ask", arguments)
    assert reply["result"]["isError"] is True
    for fragment in fragments:
        assert fragment in text(reply)
    assert hook.questions == []


async def test_answers_come_back_sorted_compact_and_limited_to_the_form() -> None:
    hook = ScriptedElicit(ElicitResult("accept", {"zeta": "é", "alpha": [], "stray": 1}))
    reply = await call_tool(
        server_with(hook),
        "user_ask",
        {
            "message": "m",
            "questions": [
                {"name": "zeta"},
                {"name": "alpha", "options": ["x"], "multiple": True},
            ],
        },
    )
    assert text(reply) == '{"alpha":[],"zeta":"é"}'
    assert reply["result"]["isError"] is False


@pytest.mark.parametrize(
    "reply, expected",
    [
        (ElicitResult("decline"), "The user declined to answer."),
        (ElicitResult("cancel"), "The user cancelled the request."),
        ({"action": "cancel"}, "The user cancelled the request."),
        ({"action": "sure"}, "The user declined to answer."),
        ("yes", "The user declined to answer."),
    ],
)
async def test_refusals_and_unreadable_replies_are_plain_results(reply: Any, expected: str) -> None:
    result = await call_tool(server_with(ScriptedElicit(reply)), "user_ask", {"message": "m"})
    assert text(result) == expected
    assert result["result"]["isError"] is False


async def test_a_mismatched_answer_is_asked_again_with_the_reason() -> None:
    hook = ScriptedElicit(ElicitResult("accept", {"n": "three"}), ElicitResult("accept", {"n": 3}))
    reply = await call_tool(
        server_with(hook),
        "user_ask",
        {"message": "Count?", "questions": [{"name": "n", "type": "integer"}]},
    )
    assert text(reply) == '{"n":3}'
    assert [q.attempt for q in hook.questions] == [1, 2]
    assert hook.questions[1].message == (
        "Count?\n\n(The previous answer could not be used: n: must be a whole number.)"
    )


async def test_three_mismatched_answers_end_the_call_without_an_error() -> None:
    hook = ScriptedElicit(ElicitResult("accept", {}))
    reply = await call_tool(server_with(hook), "user_ask", {"message": "m"})
    assert len(hook.questions) == 3
    assert text(reply).startswith(
        "No valid answer came after 3 attempts (last problem: answer: an answer is required)"
    )
    assert reply["result"]["isError"] is False


async def test_the_timeout_option_ends_the_call_with_a_plain_result() -> None:
    server = MCPServer("test", on_elicit=ScriptedElicit(NEVER)).plug(Ask(timeout=0.05))
    async with asyncio.timeout(5):
        reply = await call_tool(server, "user_ask", {"message": "Anyone?"})
    assert text(reply) == TIMED_OUT_TEXT
    assert reply["result"]["isError"] is False
    assert server.table.waiting == 0


async def test_a_full_table_refuses_the_next_question_with_an_error_result() -> None:
    hook = ScriptedElicit(NEVER)
    server = MCPServer("test", on_elicit=hook, elicitation_capacity=1).plug(Ask())
    async with asyncio.timeout(5):
        first = asyncio.create_task(call_tool(server, "user_ask", {"message": "one"}))
        await hook.asked.wait()
        refused = await call_tool(server, "user_ask", {"message": "two"})
        first.cancel()
    assert refused["result"]["isError"] is True
    assert text(refused).startswith("1 question is already waiting for answers")


async def test_with_no_client_forms_and_no_on_elicit_the_call_fails_with_32021() -> None:
    server = MCPServer("test").plug(Ask())
    reply = await call_tool(server, "user_ask", {"message": "m"})
    assert reply["error"]["code"] == -32021
    assert reply["error"]["data"] == {"requiredCapabilities": {"elicitation": {"form": {}}}}


async def test_a_client_that_shows_forms_is_preferred_over_on_elicit() -> None:
    hook = ScriptedElicit(ElicitResult("accept", {"answer": "hook"}))
    reply = await call_tool(server_with(hook), "user_ask", {"message": "m"}, caps=FORM)
    assert reply["result"]["resultType"] == "input_required"
    assert hook.questions == []


@pytest.mark.parametrize("prefix, name", [(None, "user_ask"), ("team", "team_ask"), ("", "ask")])
def test_the_prefix_names_the_tool(prefix: str | None, name: str) -> None:
    server = MCPServer("test")
    server.plug(Ask()) if prefix is None else server.plug(Ask(), prefix=prefix)
    assert list(server.tools) == [name]


def test_plugging_two_toolkits_under_one_prefix_is_refused() -> None:
    server = MCPServer("test").plug(Ask())
    with pytest.raises(ValueError, match="'user_ask' from Ask is already registered"):
        server.plug(Ask())


@pytest.mark.parametrize("timeout", [0, -1, "10", True])
def test_a_bad_timeout_setting_is_refused(timeout: Any) -> None:
    with pytest.raises(ValueError, match="timeout must be a positive number of seconds"):
        Ask(timeout=timeout)


async def test_an_admins_reason_follows_the_cancel_and_the_timeout_on_one_capped_line() -> None:
    hook = ScriptedElicit(ElicitResult("cancel", reason="the  release\nis off"))
    reply = await call_tool(server_with(hook), "user_ask", {"message": "Ship?"})
    assert text(reply) == "The user cancelled the request: the release is off."
    assert reply["result"].get("isError") is not True  # a cancel stays a plain result
    long = "x" * (REASON_LIMIT + 50)
    timed_out = ElicitationTimedOut(long).text
    assert timed_out == with_reason(TIMED_OUT_TEXT, long)
    said = timed_out.removeprefix("The user did not answer in time: ").partition(". ")[0]
    assert said == "x" * REASON_LIMIT
    assert ElicitationTimedOut().text == TIMED_OUT_TEXT == with_reason(TIMED_OUT_TEXT, "  ")
