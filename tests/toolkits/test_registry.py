"""Toolkits by name: built-ins, a third-party distribution's entry point, dotted paths, and clear mistakes."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from ask_mcp import MCPServer
from ask_mcp.toolkits import ToolkitConfigError, available
from tests.support.results import text_of as text
from tests.support.scripted import call_tool


@pytest.fixture
def installed_distribution(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A tiny distribution on sys.path, as pip leaves one: a module and its dist-info metadata.

    importlib.metadata finds it the way it finds any installed package, so the registry's
    entry-point lookup runs for real.
    """
    (tmp_path / "echo_toolkit.py").write_text(
        textwrap.dedent(
            '''
            from ask_mcp import Toolkit, tool

            class Echo(Toolkit):
                default_prefix = "echo"

                def __init__(self, *, shout: bool = False) -> None:
                    self.shout = shout

                @tool("say", input_schema={"type": "object", "properties": {"text": {"type": "string"}}})
                async def say(self, ctx, arguments):
                    """Say the text back."""
                    text = arguments["text"]
                    return text.upper() if self.shout else text
            '''
        )
    )
    info = tmp_path / "echo_toolkit-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: echo-toolkit\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[ask_mcp.toolkits]\nEcho = echo_toolkit:Echo\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


async def test_a_third_party_toolkit_is_loaded_by_its_entry_point_name(
    installed_distribution: Path,
) -> None:
    assert available()["Echo"] == "echo_toolkit:Echo"
    server = MCPServer(name="assistant", tools={"Echo": {"shout": True}})
    assert list(server.tools) == ["echo_say"]
    assert text(await call_tool(server, "echo_say", {"text": "hi"})) == "HI"


def test_the_builtins_are_ask_and_filesystem() -> None:
    assert {"Ask", "FileSystem"} <= set(available())


def test_prefix_sits_beside_the_settings_and_an_empty_one_registers_bare_names() -> None:
    assert list(MCPServer("s", tools={"Ask": {"prefix": "team"}}).tools) == ["team_ask"]
    assert list(MCPServer("s", tools={"Ask": {"prefix": ""}}).tools) == ["ask"]
    assert list(MCPServer("s", tools={"Ask": None}).tools) == ["user_ask"]
    dotted = MCPServer("s", tools={"ask_mcp.toolkits.ask:Ask": {"timeout": 3}})
    assert list(dotted.tools) == ["user_ask"]
    assert dotted.tool_config == {"ask_mcp.toolkits.ask:Ask": {"timeout": 3}}


@pytest.mark.parametrize(
    "tools, message",
    [
        (
            {"Nope": {}},
            "Unknown toolkit 'Nope'; available: Ask, FileSystem (or a dotted path such as "
            "'mypackage.tools:MyToolkit')",
        ),
        (
            {"Ask": {"timout": 120}},
            "Toolkit 'Ask' has no setting(s) 'timout'; valid settings: prefix, timeout",
        ),
        ({"Ask": {"timeout": -1}}, "Toolkit 'Ask': Ask: timeout must be a positive number"),
        ({"Ask": {"prefix": 7}}, "Toolkit 'Ask': prefix must be a string, got 7"),
        ({"Ask": ["timeout"]}, "Settings for toolkit 'Ask' must be an object, got list"),
        ({"no.such.module:Kit": {}}, "Toolkit 'no.such.module:Kit' could not be loaded"),
        ({"ask_mcp.server:Context": {}}, "is not a Toolkit subclass"),
    ],
)
def test_mistakes_name_the_toolkit_and_the_choices(tools: dict[str, object], message: str) -> None:
    with pytest.raises(ToolkitConfigError) as raised:
        MCPServer("s", tools=tools)  # type: ignore[arg-type]
    assert message in str(raised.value)


def test_the_same_tool_name_twice_is_refused() -> None:
    with pytest.raises(ValueError, match="'user_ask' from Ask is already registered"):
        MCPServer("s", tools={"Ask": {}, "ask_mcp.toolkits.ask:Ask": {}})
