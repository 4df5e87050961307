"""What a toolkit contributes when plugged: prefixed tools and prompts, absolute resources, completions, capabilities."""

from __future__ import annotations

import re
from typing import Any

import pytest

from ask_mcp import MCPServer
from ask_mcp.protocol.forms import ElicitResult
from ask_mcp.server import (
    Context,
    PromptArgument,
    Toolkit,
    completion,
    prompt,
    resource,
    resource_template,
    tool,
)
from ask_mcp.toolkits.ask import AskToolkit


class Notes(Toolkit):
    default_prefix = "notes"

    @tool("count")
    async def count(self, ctx: Context, arguments: dict[str, Any]) -> str:
        """Counts notes."""
        return "0"

    @prompt("summary", arguments=["topic", PromptArgument("length", required=True)])
    async def summary(self, ctx: Context, arguments: dict[str, str]) -> str:
        """Summarises notes."""
        return "..."

    @resource("notes://index", mime_type="text/plain")
    async def index(self, ctx: Context, uri: str, variables: dict[str, str]) -> str:
        """All notes."""
        return ""

    @resource_template("notes://{id}", name="note")
    async def note(self, ctx: Context, uri: str, variables: dict[str, str]) -> str:
        return variables["id"]

    @completion("topic", prompt="summary")
    @completion("id", template="notes://{id}")
    async def suggest(self, ctx: Context, value: str, context: dict[str, str]) -> list[str]:
        return []


def test_prefixes_apply_to_tool_and_prompt_names_but_not_to_resource_uris() -> None:
    server = MCPServer("t").plug(Notes(), prefix="team")
    assert list(server.tools) == ["team_count"]
    assert list(server.prompts) == ["team_summary"]
    assert list(server.resources) == ["notes://index"]
    assert list(server.resource_templates) == ["notes://{id}"]
    assert sorted(server.completions) == [
        ("ref/prompt", "team_summary", "topic"),
        ("ref/resource", "notes://{id}", "id"),
    ]


def test_listings_default_names_and_descriptions_from_the_methods() -> None:
    server = MCPServer("t").plug(Notes())
    assert server.prompts["notes_summary"].listing() == {
        "name": "notes_summary",
        "description": "Summarises notes.",
        "arguments": [
            {"name": "topic", "required": False},
            {"name": "length", "required": True},
        ],
    }
    assert server.resources["notes://index"].listing() == {
        "uri": "notes://index",
        "name": "index",
        "description": "All notes.",
        "mimeType": "text/plain",
    }
    assert server.resource_templates["notes://{id}"].listing() == {
        "uriTemplate": "notes://{id}",
        "name": "note",
    }


def test_capabilities_name_only_what_is_registered() -> None:
    assert MCPServer("t").capabilities() == {"logging": {}}
    assert MCPServer("t").plug(AskToolkit()).capabilities() == {"tools": {}, "logging": {}}
    assert MCPServer("t").plug(Notes()).capabilities() == {
        "tools": {},
        "prompts": {},
        "resources": {},
        "completions": {},
        "logging": {},
    }


def test_a_caller_cannot_change_the_servers_capabilities_through_the_returned_dict() -> None:
    server = MCPServer("t").plug(Notes())
    server.capabilities()["resources"]["subscribe"] = True
    assert server.capabilities()["resources"] == {}


def test_plugging_the_same_names_twice_is_refused() -> None:
    server = MCPServer("t").plug(Notes())
    with pytest.raises(ValueError, match="Tool 'notes_count' from Notes is already registered"):
        server.plug(Notes())
    # Under another prefix the names differ, but resource URIs are absolute and still clash.
    with pytest.raises(ValueError, match="Resource 'notes://index' from Notes"):
        server.plug(Notes(), prefix="other")


def test_a_completion_for_something_the_toolkit_does_not_register_is_refused() -> None:
    class Stray(Toolkit):
        @completion("x", prompt="missing")
        async def suggest(self, ctx: Context, value: str, context: dict[str, str]) -> list[str]:
            return []

    with pytest.raises(ValueError, match="completes 'x' of 'missing', which it does not register"):
        MCPServer("t").plug(Stray())


def test_completion_names_exactly_one_target() -> None:
    with pytest.raises(TypeError, match="exactly one of prompt= or template="):
        completion("x")
    with pytest.raises(TypeError, match="exactly one of prompt= or template="):
        completion("x", prompt="p", template="t://{x}")


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: prompt("has space"), "Prompt name 'has space' is not allowed"),
        (lambda: prompt("p", arguments=["a", "a"]), "declares the same argument twice"),
        (lambda: resource("no-scheme"), "is not an absolute URI"),
        (lambda: resource("x://y", ttl_ms=-1), "ttl_ms must be a non-negative integer"),
        (lambda: resource("x://y", cache_scope="shared"), "cache_scope must be"),  # type: ignore[arg-type]
        (lambda: resource_template("x://fixed"), "has no {variable}"),
        (lambda: resource_template("x://{a}/{a}"), "repeats a variable"),
        (lambda: resource_template("x://{a}/{+b}"), "only simple {name} variables"),
    ],
)
def test_bad_declarations_fail_when_the_toolkit_is_plugged(make: Any, message: str) -> None:
    class Bad(Toolkit):
        @make()
        async def handler(self, ctx: Context, *args: Any) -> str:
            """Bad."""
            return ""

    with pytest.raises(ValueError, match=re.escape(message)):
        MCPServer("t").plug(Bad())


class Recorded(Toolkit):
    """A tool finishable from its record, with the key its form is then offered under left to
    the default."""

    default_prefix = "rec"

    @tool("pick", from_record=("form_of", "result_of"))
    async def pick(self, ctx: Context, arguments: dict[str, Any]) -> str:
        """Picks."""
        return ""

    def form_of(self, arguments: Any) -> tuple[str, dict[str, Any]]:
        return "Pick one", {"type": "object", "properties": {}}

    def result_of(self, arguments: Any, reply: ElicitResult) -> str:
        return reply.action


def test_the_toolkit_names_the_key_a_record_tasks_form_is_offered_under() -> None:
    server = MCPServer("t").plug(Recorded(), prefix="team").plug(AskToolkit(), prefix="desk")
    picked = server.tools["team_pick"].from_record
    asked = server.tools["desk_ask"].from_record
    assert picked is not None and asked is not None
    # By default the tool's own name, as ctx.elicit's key; user_ask's whatever its prefix.
    assert [picked.input_key(n) for n in (1, 2, 3)] == ["team_pick", "team_pick.2", "team_pick.3"]
    assert [asked.input_key(n) for n in (1, 2)] == ["user_ask", "user_ask.2"]
