"""`ask-mcp` and `manage.py ask_mcp` run as commands: config files, flags, mistakes, and HTTP through daphne."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import httpx2
import pytest
from mcp import Client

from ask_mcp.cli import terminal
from tests.support.clients import Person, accept, legacy_call
from tests.support.results import text_of

ROOT = Path(__file__).resolve().parents[2]


def environment(tmp_path: Path, settings: str = "askserver.settings") -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "DJANGO_SETTINGS_MODULE": settings,
        "ASKSERVER_VAR_DIR": str(tmp_path / "var"),
    }


async def run(tmp_path: Path, *args: str, stdin: bytes = b"") -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        *args,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=environment(tmp_path),
        cwd=str(ROOT),
    )
    async with asyncio.timeout(60):
        stdout, stderr = await process.communicate(stdin)
    assert process.returncode is not None
    return process.returncode, stdout.decode(), stderr.decode()


DISCOVER = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "server/discover",
        "params": {
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
            }
        },
    }
).encode()


async def test_a_config_file_names_the_server_and_its_toolkits(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    config = tmp_path / "assistant.json"
    config.write_text(
        json.dumps(
            {
                "name": "assistant",
                "version": "1.0",
                "instructions": "Ask before guessing.",
                "tools": {"Ask": {"timeout": 120}, "FileSystem": {"root": str(notes)}},
            }
        )
    )
    code, stdout, stderr = await run(
        tmp_path, "-m", "ask_mcp.cli", f"--config={config}", stdin=DISCOVER + b"\n"
    )
    assert code == 0, stderr
    result = json.loads(stdout)["result"]
    assert result["instructions"] == "Ask before guessing."
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"] == {
        "name": "assistant",
        "version": "1.0",
    }


@pytest.mark.parametrize(
    "config_text, flags, message",
    [
        (
            '{\n  "name": "assistant",\n  "tools": {"Ask": {"timeout": 120,}}\n}',
            [],
            "assistant.json: invalid JSON at line 3 column 36: Expecting property name enclosed "
            "in double quotes",
        ),
        (
            '{"name": "a", "tool": {}, "port": 1}',
            [],
            "assistant.json: unknown key(s) 'port', 'tool'; valid keys: name, version, "
            "instructions, tools",
        ),
        ('["Ask"]', [], "the config must be a JSON object"),
        (
            '{"tools": {"Nope": {}}}',
            [],
            "Unknown toolkit 'Nope'; available: Ask, FileSystem",
        ),
        (
            '{"tools": {"Ask": {"timout": 1}}}',
            [],
            "Toolkit 'Ask' has no setting(s) 'timout'; valid settings: prefix, timeout",
        ),
        (None, ["--tool", 'Ask={"timeout":}'], "--tool Ask: invalid JSON at column 12"),
        (None, ["--tool", "Ask=[1]"], "--tool Ask: settings must be a JSON object"),
        (
            None,
            ["--tool", "FileSystem"],
            "Toolkit 'FileSystem' needs the setting(s) 'root'; valid settings: prefix, root",
        ),
        (None, ["--transport", "http", "--inbox"], "--inbox goes with --transport=stdio"),
        (None, ["--inbox", "--host", "0.0.0.0"], "--inbox serves on loopback only"),
    ],
)
async def test_mistakes_exit_2_with_a_message_saying_where(
    tmp_path: Path, config_text: str | None, flags: list[str], message: str
) -> None:
    args = ["-m", "ask_mcp.cli", *flags]
    if config_text is not None:
        (tmp_path / "assistant.json").write_text(config_text)
        args.append(f"--config={tmp_path / 'assistant.json'}")
    code, stdout, stderr = await run(tmp_path, *args)
    assert code == 2
    assert message in stderr
    assert stdout == ""


async def test_help_lists_every_option(tmp_path: Path) -> None:
    code, stdout, _ = await run(tmp_path, "-m", "ask_mcp.cli", "--help")
    assert code == 0
    for option in ("--config", "--tool", "--transport", "--host", "--port", "--inbox", "--name"):
        assert option in stdout
    assert "usage: ask-mcp" in stdout


async def test_the_manage_py_command_takes_the_same_options(tmp_path: Path) -> None:
    code, stdout, stderr = await run(
        tmp_path,
        "manage.py",
        "ask_mcp",
        "--name=crew",
        '--tool=Ask={"prefix":"team"}',
        stdin=DISCOVER + b"\n",
    )
    assert code == 0, stderr
    assert json.loads(stdout)["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == (
        "crew"
    )
    code, _, stderr = await run(tmp_path, "manage.py", "ask_mcp", "--tool=Nope")
    assert code == 2 and "Unknown toolkit 'Nope'" in stderr


class HttpCommand:
    """`ask-mcp --transport=http` as a subprocess, and the URL it printed."""

    def __init__(self, process: asyncio.subprocess.Process, url: str) -> None:
        self.process = process
        self.url = url


async def serve_http(
    tmp_path: Path, *args: str, settings: str = "askserver.settings"
) -> AsyncIterator[HttpCommand]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        *args,
        "--transport=http",
        "--port=0",
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=environment(tmp_path, settings),
        cwd=str(ROOT),
    )
    assert process.stderr is not None
    try:
        async with asyncio.timeout(60):
            line = (await process.stderr.readline()).decode()
        assert line.startswith("ask-mcp: serving MCP at http://127.0.0.1:"), line
        yield HttpCommand(process, line.split(" at ", 1)[1].strip())
    finally:
        if process.returncode is None:
            process.send_signal(signal.SIGTERM)
        async with asyncio.timeout(30):
            await process.wait()


@pytest.fixture
async def http_command(tmp_path: Path) -> AsyncIterator[HttpCommand]:
    async for command in serve_http(tmp_path, "-m", "ask_mcp.cli", '--tool=Ask={"timeout":60}'):
        yield command


async def test_http_transport_serves_both_eras_through_the_django_project(
    http_command: HttpCommand,
) -> None:
    assert http_command.url.endswith("/mcp")
    person = Person(accept(answer="yes"))
    async with (
        asyncio.timeout(30),
        Client(http_command.url, mode="auto", elicitation_callback=person) as client,
    ):
        assert client.protocol_version == "2026-07-28"
        result = await client.call_tool("user_ask", {"message": "Go?"})
    assert text_of(result) == '{"answer":"yes"}'
    spoken, legacy = await legacy_call(
        http_command.url, Person(accept(answer="later")), "user_ask", {"message": "When?"}
    )
    assert spoken == "2025-11-25"
    assert text_of(legacy) == '{"answer":"later"}'
    http_command.process.send_signal(signal.SIGTERM)
    async with asyncio.timeout(30):
        assert await http_command.process.wait() == 0
    assert http_command.process.stdout is not None
    assert await http_command.process.stdout.read() == b""


async def test_manage_py_ask_mcp_inside_another_project_serves_that_projects_application(
    tmp_path: Path,
) -> None:
    from tests.support.embedding import MARK, OWN_PATH

    async for command in serve_http(
        tmp_path, "manage.py", "ask_mcp", settings="tests.support.embedding.settings"
    ):
        base = command.url.removesuffix("/mcp")
        async with httpx2.AsyncClient(timeout=30) as http:
            own = await http.get(base + OWN_PATH)
        assert own.status_code == 200 and own.content == MARK
        async with asyncio.timeout(30), Client(command.url, mode="2026-07-28") as client:
            tools = await client.list_tools()
        assert [tool.name for tool in tools.tools] == ["user_ask"]


async def test_the_one_shot_run_http_serves_hand_plugged_toolkits(tmp_path: Path) -> None:
    script = tmp_path / "served.py"
    script.write_text(
        "from ask_mcp import Ask, MCPServer\n"
        "MCPServer('hand', version='2.0').plug(Ask(timeout=5), prefix='team')"
        ".run('http', port=0)\n"
    )
    async for command in serve_http(tmp_path, str(script)):
        async with asyncio.timeout(30), Client(command.url, mode="2026-07-28") as client:
            tools = await client.list_tools()
        assert [tool.name for tool in tools.tools] == ["team_ask"]


async def test_the_readme_one_shot_and_config_file_are_the_ones_that_run(tmp_path: Path) -> None:
    # The README's "Three ways to start a server" is now its own page, docs/library/servers.md.
    page = (ROOT / "docs" / "library" / "servers.md").read_text()
    section = page.split("# Three ways to start a server\n", 1)[1]
    one_shot = section.split("```python\n", 1)[1].split("```", 1)[0]
    served = (ROOT / "tests" / "support" / "oneshot_server.py").read_text()
    assert one_shot.split("\n\n")[1].split("#")[0].strip() in served
    config = json.loads(section.split("```json\n", 1)[1].split("```", 1)[0])
    config["tools"]["FileSystem"]["root"] = str(tmp_path)  # /srv/notes is not on this machine
    (tmp_path / "assistant.json").write_text(json.dumps(config))
    code, stdout, stderr = await run(
        tmp_path,
        "-m",
        "ask_mcp.cli",
        f"--config={tmp_path / 'assistant.json'}",
        stdin=DISCOVER + b"\n",
    )
    assert code == 0, stderr
    assert json.loads(stdout)["result"]["instructions"] == "Ask before guessing."


@pytest.mark.parametrize("typed", ["1e999", "inf", "-Infinity", "nan"])
def test_the_terminal_takes_only_finite_numbers(typed: str) -> None:
    assert terminal._read_value({"type": "number"}, typed) == (None, "type a finite number")
