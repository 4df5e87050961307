"""The stdio transport, driven as a subprocess: the official client in every mode, and raw lines.

The servers are started the ways a person starts them: a one-shot script calling `.run()`, and
`python -m ask_mcp.cli`. The client plays the person with an elicitation callback.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, MCPError, StdioServerParameters

from tests.support.clients import QUESTIONS, Person, accept
from tests.support.results import text_of
from tests.support.wire import META, assert_valid

ROOT = Path(__file__).resolve().parents[2]
ONE_SHOT = ROOT / "tests" / "support" / "oneshot_server.py"


def environment(**extra: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), **extra}


def one_shot() -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable, args=[str(ONE_SHOT)], env=environment(), cwd=str(ROOT)
    )


def cli(*args: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable, args=["-m", "ask_mcp.cli", *args], env=environment(), cwd=str(ROOT)
    )


@pytest.mark.parametrize("mode", ["2026-07-28", "auto"])
async def test_a_modern_client_gets_the_form_as_a_multi_round_trip_request(mode: str) -> None:
    person = Person(accept(severity=2, component="api", notes=""))
    async with (
        asyncio.timeout(30),
        Client(one_shot(), mode=mode, elicitation_callback=person) as client,
    ):
        assert client.protocol_version == "2026-07-28"
        first = await client.session.call_tool(
            "user_ask", {"message": "Proceed?"}, allow_input_required=True
        )
        assert first.result_type == "input_required"
        result = await client.call_tool("user_ask", QUESTIONS)
    assert text_of(result) == '{"component":"api","notes":"","severity":2}'
    assert result.is_error is False
    (form,) = person.seen
    assert form["mode"] == "form" and form["message"] == QUESTIONS["message"]
    assert form["requestedSchema"]["required"] == ["component", "severity"]


async def test_a_legacy_client_gets_the_question_pushed_on_stdout_and_answers_on_stdin() -> None:
    person = Person(accept(answer="stage it first"))
    async with (
        asyncio.timeout(30),
        Client(one_shot(), mode="legacy", elicitation_callback=person) as client,
    ):
        assert client.protocol_version == "2025-11-25"
        result = await client.call_tool("user_ask", {"message": "Deploy now?"})
        tools = await client.list_tools()
    assert text_of(result) == '{"answer":"stage it first"}'
    assert [tool.name for tool in tools.tools] == ["user_ask"]
    (form,) = person.seen
    assert form["message"] == "Deploy now?"


async def test_without_a_way_to_ask_each_era_names_what_is_missing() -> None:
    async with asyncio.timeout(30), Client(one_shot(), mode="2026-07-28") as client:
        with pytest.raises(MCPError) as raised:
            await client.call_tool("user_ask", {"message": "Anyone?"})
    assert raised.value.error.code == -32021
    assert raised.value.error.data == {"requiredCapabilities": {"elicitation": {"form": {}}}}
    async with asyncio.timeout(30), Client(one_shot(), mode="legacy") as client:
        result = await client.call_tool("user_ask", {"message": "Anyone?"})
    assert result.is_error is True
    assert "on_elicit" in text_of(result)


async def test_the_cli_serves_stdio_with_toolkits_from_flags(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("ship it on friday\n")
    params = cli(
        "--tool",
        'Ask={"timeout":120,"prefix":"team"}',
        "--tool",
        json.dumps({"root": str(tmp_path)}).join(["FileSystem=", ""]),
    )
    async with asyncio.timeout(30), Client(params, mode="2026-07-28") as client:
        tools = await client.list_tools()
        found = await client.call_tool("fs_search", {"query": "FRIDAY"})
    assert [tool.name for tool in tools.tools] == ["team_ask", "fs_list", "fs_read", "fs_search"]
    assert json.loads(text_of(found))["matches"] == [
        {"path": "notes.md", "line": 1, "text": "ship it on friday"}
    ]


class RawStdio:
    """A stdio server subprocess spoken to line by line."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process

    @classmethod
    async def start(cls, *args: str) -> RawStdio:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            *args,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=environment(),
            cwd=str(ROOT),
        )
        return cls(process)

    async def send(self, line: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line + b"\n")
        await self.process.stdin.drain()

    async def receive(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = await self.process.stdout.readline()
        assert line.endswith(b"\n"), line
        return json.loads(line)

    async def close(self) -> tuple[int, bytes, bytes]:
        assert self.process.stdin is not None
        self.process.stdin.close()
        stdout, stderr = await self.process.communicate()
        assert self.process.returncode is not None
        return self.process.returncode, stdout, stderr


def modern(method: str, id: int, params: dict[str, Any] | None = None) -> bytes:
    body = {"jsonrpc": "2.0", "id": id, "method": method, "params": {**(params or {})}}
    body["params"]["_meta"] = META
    return json.dumps(body).encode()


async def test_every_malformed_line_gets_an_error_and_the_server_keeps_serving() -> None:
    async with asyncio.timeout(30):
        server = await RawStdio.start(str(ONE_SHOT))
        bad_lines = [
            (b"this is not json", -32700, None),
            (b"[]", -32600, None),
            (b'"a string"', -32600, None),
            (b'{"jsonrpc":"1.0","id":7,"method":"tools/list"}', -32600, 7),
            (b'{"jsonrpc":"2.0","id":8}', -32600, 8),
            (b'{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{}}', -32602, 9),
            (b'{"jsonrpc":"2.0","id":10,"method":"ping","params":{"_meta":{}}}', -32602, 10),
            (b"\xff\xfe", -32700, None),
        ]
        for line, code, request_id in bad_lines:
            await server.send(line)
            reply = await server.receive()
            assert reply["error"]["code"] == code, (line, reply)
            assert reply.get("id") == request_id
        await server.send(b"")  # blank lines are skipped, not answered
        await server.send(modern("server/discover", 11))
        discovered = assert_valid("server/discover", await server.receive())
        await server.send(modern("tools/call", 12, {"name": "nope"}))
        unknown = await server.receive()
        returncode, rest, stderr = await server.close()
    assert discovered["id"] == 11
    assert discovered["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == (
        "assistant"
    )
    assert unknown["error"]["code"] == -32602 and "user_ask" in unknown["error"]["message"]
    assert returncode == 0, stderr
    assert rest == b""  # nothing but replies was ever written to stdout


async def test_end_of_input_cancels_a_call_that_waits_and_exits_cleanly() -> None:
    async with asyncio.timeout(30):
        server = await RawStdio.start(str(ONE_SHOT))
        await server.send(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 0,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": "2025-11-25",
                        "capabilities": {"elicitation": {}},
                    },
                }
            ).encode()
        )
        assert (await server.receive())["result"]["protocolVersion"] == "2025-11-25"
        await server.send(
            b'{"jsonrpc":"2.0","id":1,"method":"tools/call",'
            b'"params":{"name":"user_ask","arguments":{"message":"Still there?"}}}'
        )
        pushed = await server.receive()
        returncode, rest, stderr = await server.close()
    assert pushed["method"] == "elicitation/create"
    assert pushed["params"]["message"] == "Still there?"
    assert returncode == 0, stderr
    # The abandoned call wrote no result after its question, only the notice that withdraws
    # the form it had asked for.
    assert [json.loads(line) for line in rest.splitlines()] == [
        {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": pushed["id"], "reason": "the question was ended on the server"},
        }
    ]


async def test_a_legacy_call_can_be_cancelled_and_another_proceeds() -> None:
    async with asyncio.timeout(30):
        server = await RawStdio.start(str(ONE_SHOT))
        await server.send(
            b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":'
            b'"2025-06-18","capabilities":{"elicitation":{}}}}'
        )
        assert (await server.receive())["result"]["protocolVersion"] == "2025-06-18"
        await server.send(
            b'{"jsonrpc":"2.0","id":1,"method":"tools/call",'
            b'"params":{"name":"user_ask","arguments":{"message":"First?"}}}'
        )
        first = await server.receive()
        assert "mode" not in first["params"]  # 2025-06-18 had no modes
        await server.send(
            b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}'
        )
        await server.send(
            b'{"jsonrpc":"2.0","id":2,"method":"tools/call",'
            b'"params":{"name":"user_ask","arguments":{"message":"Second?"}}}'
        )
        # The cancelled call's form is withdrawn first (its handler was cancelled on the server).
        withdrawn = await server.receive()
        assert withdrawn["method"] == "notifications/cancelled"
        assert withdrawn["params"]["requestId"] == first["id"]
        second = await server.receive()
        assert second["params"]["message"] == "Second?"
        answer = {"jsonrpc": "2.0", "id": second["id"], "result": {"action": "decline"}}
        await server.send(json.dumps(answer).encode())
        reply = await server.receive()
        returncode, rest, _ = await server.close()
    assert reply["id"] == 2
    assert reply["result"]["content"][0]["text"] == "The user declined to answer."
    assert_valid("tools/call", reply, "2025-06-18")
    assert returncode == 0 and rest == b""
