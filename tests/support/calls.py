"""Raw async MCP calls for the fault and load tests: rounds driven by hand, probes, replies checked.

Many calls at once, or calls cut off mid-way, are easier by hand than through the SDK client;
every reply is still validated against mcp-types (wire.assert_valid).
"""

from __future__ import annotations

import json
from typing import Any

import httpx2

from tests.support.results import text_of
from tests.support.wire import FORM_CAPS, assert_valid, headers_for, request_body


def client(timeout: float = 30.0) -> httpx2.AsyncClient:
    """An HTTP client for loopback calls (plain HTTP: no certificate store to load)."""
    return httpx2.AsyncClient(
        timeout=httpx2.Timeout(timeout, read=60.0),
        verify=False,
        limits=httpx2.Limits(max_connections=None, max_keepalive_connections=50),
    )


async def rpc(
    http: httpx2.AsyncClient,
    url: str,
    body: dict[str, Any],
    headers: dict[str, str] | None = None,
) -> tuple[int, dict[str, Any]]:
    """POST one request; its HTTP status and its validated JSON-RPC reply (SSE unwrapped)."""
    response = await http.post(url, json=body, headers={**headers_for(body), **(headers or {})})
    if response.headers.get("content-type") == "text/event-stream":
        data = [line[5:] for line in response.text.splitlines() if line.startswith("data:")]
        reply = json.loads(data[-1])
    else:
        reply = response.json()
    return response.status_code, assert_valid(body["method"], reply)


def call_body(
    tool: str,
    arguments: dict[str, Any],
    *,
    state: str | None = None,
    responses: dict[str, Any] | None = None,
    forms: bool = True,
) -> dict[str, Any]:
    params: dict[str, Any] = {"name": tool, "arguments": arguments}
    if state is not None:
        params["requestState"] = state
    if responses is not None:
        params["inputResponses"] = responses
    return request_body("tools/call", params, caps=FORM_CAPS if forms else {})


async def first_round(http: httpx2.AsyncClient, url: str, tool: str, **arguments: Any) -> str:
    """Start a call from a client that shows forms; returns the requestState it parked with."""
    status, reply = await rpc(http, url, call_body(tool, arguments))
    assert status == 200 and reply["result"]["resultType"] == "input_required", reply
    state: str = reply["result"]["requestState"]
    return state


async def answer_round(
    http: httpx2.AsyncClient,
    url: str,
    tool: str,
    state: str,
    reply: dict[str, Any],
    **arguments: Any,
) -> dict[str, Any]:
    """Retry with `reply` for the round's question; returns the JSON-RPC reply."""
    _, answer = await rpc(
        http, url, call_body(tool, arguments, state=state, responses={tool: reply})
    )
    return answer


async def probe(http: httpx2.AsyncClient, url: str, name: str, **arguments: Any) -> Any:
    """Call a probe tool (tests/support/probe.py) and return its JSON."""
    _, reply = await rpc(http, url, call_body(f"probe_{name}", arguments, forms=False))
    return json.loads(text_of(reply))


async def records(http: httpx2.AsyncClient, url: str) -> dict[str, dict[str, Any]]:
    """Every recorded ask by id, once the recorder has written everything."""
    return {row["id"]: row for row in await probe(http, url, "records")}


def by_message(rows: dict[str, dict[str, Any]], message: str) -> dict[str, Any]:
    (row,) = [row for row in rows.values() if row["message"] == message]
    return row
