"""Prompts as data: the names and arguments a prompt may declare, prompts/get's arguments checked, and its result."""

from __future__ import annotations

import logging

import pytest

from ask_mcp.protocol.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, JsonRpcError
from ask_mcp.server.catalog.prompts import (
    Prompt,
    PromptArgument,
    PromptResult,
    finish_prompt,
    prompt_arguments,
)
from ask_mcp.server.context import Context
from ask_mcp.server.errors import ElicitationTimedOut, MissingClientCapability, ToolError


async def render(ctx: Context, arguments: dict[str, str]) -> str:
    return "hi"


def test_a_prompt_lists_its_title_description_and_arguments() -> None:
    greet = Prompt(
        "greet",
        "Greets someone.",
        render,
        prompt_arguments(["tone", PromptArgument("name", "Who", required=True, title="Name")]),
        title="Greeting",
    )
    assert greet.listing() == {
        "name": "greet",
        "title": "Greeting",
        "description": "Greets someone.",
        "arguments": [
            {"name": "tone", "required": False},
            {"name": "name", "title": "Name", "description": "Who", "required": True},
        ],
    }
    assert Prompt("bare", "B.", render).listing() == {"name": "bare", "description": "B."}


@pytest.mark.parametrize(
    "name, description, arguments, words",
    [
        ("has space", "D.", (), "is not allowed"),
        ("x" * 129, "D.", (), "is not allowed"),
        ("ok", "  ", (), "needs a description"),
        ("ok", "D.", (PromptArgument("a"), PromptArgument("a")), "the same argument twice"),
    ],
)
def test_a_prompt_that_clients_could_not_show_is_refused(
    name: str, description: str, arguments: tuple[PromptArgument, ...], words: str
) -> None:
    with pytest.raises(ValueError, match=words):
        Prompt(name, description, render, arguments)


def test_the_arguments_of_prompts_get_are_strings_and_the_required_ones_are_there() -> None:
    greet = Prompt(
        "greet", "G.", render, (PromptArgument("name", required=True), PromptArgument("tone"))
    )
    assert greet.read_arguments({"name": "Ada"}) == {"name": "Ada"}
    for value, words in [
        (None, "needs the argument(s) name"),
        ([], "must be an object, got an array"),
        ({"name": 3}, "argument 'name' must be a string, got a number"),
    ]:
        with pytest.raises(JsonRpcError) as refused:
            greet.read_arguments(value)
        assert refused.value.code == INVALID_PARAMS and words in refused.value.message
    with pytest.raises(JsonRpcError) as missing:
        greet.read_arguments({"tone": "warm"})
    assert missing.value.data == {"missing": ["name"]}


def test_a_finished_prompt_renders_text_a_result_or_what_its_failure_means(
    caplog: pytest.LogCaptureFixture,
) -> None:
    assert finish_prompt("p", "Hello", None) == {
        "messages": [{"role": "user", "content": {"type": "text", "text": "Hello"}}]
    }
    described = PromptResult(PromptResult.text("Hi", role="assistant").messages, "Greeting")
    assert finish_prompt("p", described, None)["description"] == "Greeting"
    timed_out = finish_prompt("p", None, ElicitationTimedOut())
    assert timed_out["messages"][0]["content"]["text"].startswith("The user did not answer in time")
    with pytest.raises(JsonRpcError) as mistake:
        finish_prompt("p", None, ToolError("no such topic"))
    assert (mistake.value.code, mistake.value.message) == (INVALID_PARAMS, "no such topic")
    with pytest.raises(MissingClientCapability):
        finish_prompt("p", None, MissingClientCapability("m", {"sampling": {}}))
    with caplog.at_level(logging.ERROR, "ask_mcp.server"), pytest.raises(JsonRpcError) as crash:
        finish_prompt("p", 42, None)  # neither text nor a PromptResult
    assert (crash.value.code, crash.value.message) == (INTERNAL_ERROR, "Internal error")
    assert "prompt p failed" in caplog.text and "returned int" in caplog.text
