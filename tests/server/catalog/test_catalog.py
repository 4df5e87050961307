"""The Catalog: what plugged toolkits offer, who registered each entry, and how a request's name, URI or ref resolves."""

from __future__ import annotations

from typing import Any

import pytest

from ask_mcp.protocol.jsonrpc import INVALID_PARAMS, RESOURCE_NOT_FOUND, JsonRpcError
from ask_mcp.server import Context, Toolkit, completion, prompt, resource, resource_template, tool
from ask_mcp.server.catalog import Catalog, offered, require
from ask_mcp.server.errors import MissingClientCapability


class Notes(Toolkit):
    default_prefix = "notes"

    @tool("count")
    async def count(self, ctx: Context, arguments: dict[str, Any]) -> str:
        """Counts notes."""
        return "0"

    @prompt("summary", arguments=["topic"])
    async def summary(self, ctx: Context, arguments: dict[str, str]) -> str:
        """Summarises notes."""
        return "..."

    @resource("notes://index")
    async def index(self, ctx: Context, uri: str, variables: dict[str, str]) -> str:
        """All notes."""
        return ""

    @resource_template("notes://{id}", name="note")
    async def note(self, ctx: Context, uri: str, variables: dict[str, str]) -> str:
        return variables["id"]

    @completion("id", template="notes://{id}")
    async def ids(self, ctx: Context, value: str, context: dict[str, str]) -> list[str]:
        return []


class Bare(Toolkit):
    @tool("count")
    async def count(self, ctx: Context, arguments: dict[str, Any]) -> str:
        """Counts."""
        return "1"


def invalid(call: Any, *args: Any) -> JsonRpcError:
    with pytest.raises(JsonRpcError) as refused:
        call(*args)
    assert refused.value.code in (INVALID_PARAMS, RESOURCE_NOT_FOUND)
    return refused.value


def test_capabilities_follow_what_is_plugged_and_logging_is_always_there() -> None:
    catalog = Catalog("demo", "1.0", title="Demo")
    assert catalog.capabilities() == {"logging": {}}
    assert catalog.server_info == {"name": "demo", "version": "1.0", "title": "Demo"}
    catalog.plug(Bare(), prefix="")
    assert catalog.capabilities() == {"tools": {}, "logging": {}}
    catalog.plug(Notes())
    assert catalog.capabilities() == {
        "tools": {},
        "prompts": {},
        "resources": {},
        "completions": {},
        "logging": {},
    }
    catalog.capabilities()["tools"]["changed"] = True  # a copy: the shared offers stay as they are
    assert catalog.offers()["tools"] == {}


def test_each_entry_knows_its_toolkit_and_a_taken_name_is_refused() -> None:
    catalog = Catalog("demo").plug(Notes()).plug(Bare(), prefix="")
    assert catalog.toolkit_of(catalog.tools["notes_count"]) == "Notes"
    assert catalog.toolkit_of(catalog.tools["count"]) == "Bare"
    assert catalog.toolkit_of(catalog.resource_templates["notes://{id}"]) == "Notes"
    with pytest.raises(ValueError, match="Tool 'count' from Bare is already registered"):
        catalog.plug(Bare(), prefix="")
    with pytest.raises(TypeError, match="prefix must be a string"):
        catalog.plug(Bare(), prefix=3)
    assert list(catalog.tools) == ["notes_count", "count"]


def test_listing_gives_each_method_its_field() -> None:
    catalog = Catalog("demo").plug(Notes())
    assert [t["name"] for t in catalog.listing("tools/list")["tools"]] == ["notes_count"]
    assert [p["name"] for p in catalog.listing("prompts/list")["prompts"]] == ["notes_summary"]
    assert [r["uri"] for r in catalog.listing("resources/list")["resources"]] == ["notes://index"]
    templates = catalog.listing("resources/templates/list")["resourceTemplates"]
    assert [t["uriTemplate"] for t in templates] == ["notes://{id}"]


def test_a_request_names_a_tool_a_prompt_or_a_resource_or_is_told_what_exists() -> None:
    catalog = Catalog("demo").plug(Notes())
    tool_, arguments = catalog.tool_named({"name": "notes_count"})
    assert tool_.name == "notes_count" and arguments == {}
    assert "this server offers notes_count" in invalid(catalog.tool_named, {"name": "x"}).message
    assert "got a number" in invalid(catalog.tool_named, {"name": 5}).message
    assert (
        "got an array"
        in invalid(catalog.tool_named, {"name": "notes_count", "arguments": []}).message
    )
    prompt_, given = catalog.prompt_named({"name": "notes_summary", "arguments": {"topic": "t"}})
    assert prompt_.name == "notes_summary" and given == {"topic": "t"}
    assert "Unknown prompt: 'x'" in invalid(catalog.prompt_named, {"name": "x"}).message
    uri, entry, variables = catalog.resource_named({"uri": "notes://42"})
    assert (uri, variables) == ("notes://42", {"id": "42"}) and entry is catalog.resource_templates[
        "notes://{id}"
    ]
    assert catalog.resource_named({"uri": "notes://index"})[2] == {}
    assert invalid(catalog.resource_named, {"uri": "other://x"}).data == {"uri": "other://x"}


def test_a_completion_request_is_checked_and_resolved_to_its_completer() -> None:
    catalog = Catalog("demo").plug(Notes())
    ask = catalog.completion_for(
        {
            "ref": {"type": "ref/resource", "uri": "notes://{id}"},
            "argument": {"name": "id", "value": "4"},
            "context": {"arguments": {"x": "y"}},
        }
    )
    assert (ask.target, ask.toolkit, ask.value, ask.filled) == (
        "notes://{id}",
        "Notes",
        "4",
        {"x": "y"},
    )
    assert ask.completion is not None
    none = catalog.completion_for(
        {
            "ref": {"type": "ref/prompt", "name": "notes_summary"},
            "argument": {"name": "topic", "value": ""},
        }
    )
    assert none.completion is None  # a known prompt without a completer completes nothing
    for bad, words in [
        ({"ref": {"type": "ref/tool"}}, "params.ref must be"),
        ({"ref": {"type": "ref/prompt", "name": "x"}}, "params.argument must be"),
        (
            {"ref": {"type": "ref/prompt", "name": "x"}, "argument": {"name": "a", "value": "b"}},
            "Unknown prompt: 'x'",
        ),
        (
            {
                "ref": {"type": "ref/prompt", "name": "notes_summary"},
                "argument": {"name": "a", "value": "b"},
                "context": {"arguments": {"n": 1}},
            },
            "object of strings",
        ),
    ]:
        assert words in invalid(catalog.completion_for, bad).message


def test_methods_of_features_not_offered_do_not_exist_and_missing_client_capabilities_are_named() -> (
    None
):
    assert offered("tools/call", {"tools": {}}) and not offered("prompts/get", {"tools": {}})
    assert offered("server/discover", {})  # belongs to no feature
    assert not offered("resources/subscribe", {"resources": {}})
    assert offered("resources/subscribe", {"resources": {"subscribe": True}})
    require({"sampling": {}}, {"sampling": {}}, "the prompt")
    with pytest.raises(MissingClientCapability) as missing:
        require({"sampling": {}}, {"sampling": {}, "roots": {}}, "the prompt 'p'")
    assert missing.value.required == {"roots": {}}
    assert missing.value.message.startswith("the prompt 'p' needs the client capabilities roots")
