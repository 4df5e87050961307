"""`ask-mcp --inbox`: stdio for the protocol, the inbox over HTTP on loopback in the same process.

The official client spawns the command over stdio; the test plays the person's browser on the
HTTP side (the stand-in inbox's submit tool, on the same server's /mcp). The inbox is whatever
ASK_MCP["ON_ELICIT"] names; here the stand-in from tests/support/inbox_stub.py.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters
from mcp.client import ClientRequestContext
from mcp.client.stdio import stdio_client
from mcp.types import (
    ClientCapabilities,
    ElicitationCapability,
    ElicitRequestParams,
    ElicitResult,
    UrlElicitationCapability,
)

from tests.support.clients import CapsClient
from tests.support.ports import free_port
from tests.support.results import text_of
from tests.support.wire import post, request_body

ROOT = Path(__file__).resolve().parents[2]
STUB = {
    "ON_ELICIT": "tests.support.inbox_stub.on_elicit",
    "ANSWER_URL": "tests.support.inbox_stub.answer_url",
}


def inbox_command(tmp_path: Path, port: int) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "ask_mcp.cli",
            "--inbox",
            f"--port={port}",
            "--tool=Ask",
            "--tool=tests.support.inbox_stub.InboxProbe",
        ],
        env={
            **os.environ,
            "PYTHONPATH": str(ROOT),
            "DJANGO_SETTINGS_MODULE": "tests.settings",
            "ASKSERVER_TEST_CONFIG": json.dumps(STUB),
            "ASKSERVER_VAR_DIR": str(tmp_path / "var"),
            "ASKSERVER_TEST_DB": str(tmp_path / "db.sqlite3"),
        },
        cwd=str(ROOT),
    )


async def submit_in_browser(base_url: str, content: dict[str, Any], question: str | None = None):
    """What the person's browser does: answer on the HTTP side (from a thread: the client is sync)."""
    arguments: dict[str, Any] = {"content": content}
    if question is not None:
        arguments["id"] = question
    body = request_body("tools/call", {"name": "inbox_submit", "arguments": arguments})
    response = await asyncio.to_thread(post, f"{base_url}/mcp", body)
    assert response.status_code == 200, response.text
    return json.loads(response.json()["result"]["content"][0]["text"])


async def test_a_question_over_stdio_is_answered_through_the_inbox_on_loopback(
    tmp_path: Path,
) -> None:
    port = free_port()
    base_url = f"http://127.0.0.1:{port}"
    errlog = tmp_path / "stderr.txt"
    with errlog.open("w") as log:
        async with (
            asyncio.timeout(60),
            Client(
                stdio_client(inbox_command(tmp_path, port), errlog=log), mode="2026-07-28"
            ) as client,
        ):
            await client.list_tools()  # stdio answers once the HTTP side listens
            asking = asyncio.ensure_future(client.call_tool("user_ask", {"message": "Which way?"}))
            seen = await submit_in_browser(base_url, {"answer": "left"})
            result = await asking
    assert text_of(result) == '{"answer":"left"}'
    assert seen["base_urls"] == [base_url]  # the question knew where the inbox is served
    assert f"ask-mcp: inbox at {base_url}/" in errlog.read_text()


async def test_a_url_only_client_is_sent_the_inbox_page_and_gets_the_answer_after_consent(
    tmp_path: Path,
) -> None:
    port = free_port()
    base_url = f"http://127.0.0.1:{port}"
    opened: list[str] = []

    async def person(ctx: ClientRequestContext, params: ElicitRequestParams) -> ElicitResult:
        assert params.mode == "url"
        url = params.url  # type: ignore[union-attr]
        opened.append(url)
        question = url.rstrip("/").rsplit("/", 1)[1]
        await submit_in_browser(base_url, {"answer": "the staging key"}, question)
        return ElicitResult(action="accept")

    caps = ClientCapabilities(elicitation=ElicitationCapability(url=UrlElicitationCapability()))
    with (tmp_path / "stderr.txt").open("w") as log:
        async with (
            asyncio.timeout(60),
            CapsClient(
                stdio_client(inbox_command(tmp_path, port), errlog=log),
                mode="2026-07-28",
                elicitation_callback=person,
                caps=caps,
            ) as client,
        ):
            result = await client.call_tool("user_ask", {"message": "Which key?"})
    assert text_of(result) == '{"answer":"the staging key"}'
    (url,) = opened
    assert url.startswith(f"{base_url}/asks/")
