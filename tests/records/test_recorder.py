"""The recorder writes every ask, whichever way it travelled, and how it ended.

Questions sent to the client as MRTR are recorded from the background writer; the probe's
`records` tool waits for it to catch up (no sleeping) before reading the table.
"""

from __future__ import annotations

import asyncio
import json
import re
import uuid
from typing import Any

import httpx2
from mcp import Client
from mcp.client import ClientRequestContext
from mcp.types import ElicitRequestParams, ElicitResult

from tests.support.inbox_asks import call_tool
from tests.support.live import LiveServer
from tests.support.results import text_of
from tests.support.wire import headers_for, request_body


async def records(server: LiveServer) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = json.loads(
        text_of(await call_tool(server.mcp_url, "probe_records", {}))
    )
    return rows


async def test_questions_sent_to_the_client_are_recorded_with_how_they_ended(
    web: LiveServer,
) -> None:
    replies = {"accept me": ElicitResult(action="accept", content={"answer": "yes"})}
    replies["decline me"] = ElicitResult(action="decline")

    async def person(ctx: ClientRequestContext, params: ElicitRequestParams) -> ElicitResult:
        return replies[params.message.split(" [")[0]]

    tag = uuid.uuid4().hex[:8]
    async with (
        asyncio.timeout(30),
        Client(web.mcp_url, mode="2026-07-28", elicitation_callback=person) as client,
    ):
        for message in replies:
            await client.call_tool("user_ask", {"message": f"{message} [{tag}]"})
    rows = {row["message"]: row for row in await records(web) if tag in row["message"]}
    accepted, declined = rows[f"accept me [{tag}]"], rows[f"decline me [{tag}]"]
    assert accepted["route"] == "client" and accepted["status"] == "accepted"
    assert accepted["answer"] == {"answer": "yes"}
    assert accepted["tool"] == "user_ask" and accepted["toolkit"] == "Ask"
    assert accepted["call_id"] and accepted["client_name"] == "mcp"
    assert declined["route"] == "client" and declined["status"] == "declined"
    assert declined["answer"] is None
    # Time-ordered ids: the one asked second sorts after the first (its index appends).
    first, second = uuid.UUID(str(accepted["id"])), uuid.UUID(str(declined["id"]))
    assert first.version == second.version == 7
    assert first < second


async def test_a_browser_question_whose_client_leaves_stays_answerable_with_no_agent_waiting(
    web: LiveServer,
) -> None:
    """The 2026-07-28 call ends with its connection; its ask does not (DETACHED_GRACE_SECONDS)."""
    body = request_body(
        "tools/call",
        {"name": "user_ask", "arguments": {"message": "Anyone there?"}},
        meta={
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "leaver", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {},
            "progressToken": 1,
        },
    )
    async with (
        asyncio.timeout(20),
        httpx2.AsyncClient(timeout=20) as http,
        http.stream("POST", web.mcp_url, json=body, headers=headers_for(body)) as response,
    ):
        async for line in response.aiter_lines():
            found = re.search(r"/asks/([0-9a-f-]{36})/", line)
            if found:
                break
    assert found is not None  # the client read where to answer, then closed the stream
    ask_hex = uuid.UUID(found.group(1)).hex
    ended = await call_tool(web.mcp_url, "probe_wait", {"kind": "ended", "key": ask_hex})
    assert json.loads(text_of(ended))["fired"] is True
    (row,) = [row for row in await records(web) if row["id"] == ask_hex]
    assert row["route"] == "browser" and row["status"] == "pending"
    assert row["worker"] == "" and row["detached_at"] is not None, "no agent waits on it now"
    assert row["client_name"] == "leaver" and row["call_id"] == ""
