"""Validating what the server emits against the official mcp-types models, and raw HTTP helpers."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any, get_args

import httpx2
from mcp_types import methods
from mcp_types.jsonrpc import jsonrpc_message_adapter
from pydantic import BaseModel, ValidationError

MODERN = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientInfo": {"name": "raw-test", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
FORM_CAPS = {"elicitation": {"form": {}}}


def reply_problem(method: str, version: str, reply: dict[str, Any]) -> str | None:
    """Why a reply is not valid MCP for `method` at `version`, or None when it is."""
    try:
        jsonrpc_message_adapter.validate_python(reply)
    except ValidationError as exc:
        return f"not a JSON-RPC message: {exc}"
    if "result" in reply:
        result = reply["result"]
        if result.get("resultType") == "task" or method.startswith("tasks/"):
            from tests.support.tasks import task_problem  # it builds on this module

            return task_problem(method, result)
        try:
            methods.validate_server_result(method, version, result)
            # The surface is a union with InputRequiredResult, which a complete result missing
            # its own required fields (ttlMs on resources/read, say) would satisfy: check the
            # member that matches resultType.
            member = _result_member(method, version, result)
            if member is not None:
                member.model_validate(result, by_alias=True)
        except ValidationError as exc:
            return f"invalid {method} result: {exc}"
        except KeyError:
            return f"{method} has no result type at {version}"
        if result.get("resultType") == "input_required" and (
            "ttlMs" in result or "cacheScope" in result
        ):
            return "an input_required result carries caching hints"
        return None
    error = reply["error"]
    data = error.get("data")
    if error["code"] == -32021 and not isinstance((data or {}).get("requiredCapabilities"), dict):
        return "-32021 without data.requiredCapabilities"
    if error["code"] == -32022 and not (
        isinstance((data or {}).get("supported"), list) and "requested" in (data or {})
    ):
        return "-32022 without data.supported and data.requested"
    return None


def _result_member(method: str, version: str, result: dict[str, Any]) -> type[BaseModel] | None:
    """The one model of a union result surface that `result` claims to be, by its resultType."""
    surface = methods.SERVER_RESULTS[(method, version)]
    members = [m for m in get_args(surface) if isinstance(m, type) and issubclass(m, BaseModel)]
    if not members:
        return None
    interim = result.get("resultType") == "input_required"
    for member in members:
        if (member.__name__ == "InputRequiredResult") == interim:
            return member
    return None


def assert_valid(method: str, reply: dict[str, Any], version: str = MODERN) -> dict[str, Any]:
    problem = reply_problem(method, version, reply)
    assert problem is None, problem
    return reply


def request_body(
    method: str,
    params: dict[str, Any] | None = None,
    *,
    id: Any = 1,
    caps: dict[str, Any] | None = None,
    meta: dict[str, Any] | None = None,
) -> dict[str, Any]:
    params = dict(params or {})
    params["_meta"] = (
        meta
        if meta is not None
        else {**META, "io.modelcontextprotocol/clientCapabilities": caps or {}}
    )
    return {"jsonrpc": "2.0", "id": id, "method": method, "params": params}


def headers_for(body: dict[str, Any]) -> dict[str, str]:
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": MODERN,
        "mcp-method": body.get("method", ""),
    }
    params = body.get("params")
    if not isinstance(params, dict):
        params = {}
    name = params.get("uri") if body.get("method") == "resources/read" else params.get("name")
    if isinstance(name, str):
        headers["mcp-name"] = header_safe(name)
    return headers


def header_safe(value: str) -> str:
    """`value` as a header carries it: as it is when header-safe, else the specification's
    `=?base64?<UTF-8>?=` wrapping (non-ASCII, control characters, outer spaces, the sentinel)."""
    safe = (
        value.isascii()
        and value.isprintable()
        and value == value.strip(" \t")
        and not value.startswith("=?base64?")
    )
    if safe:
        return value
    return "=?base64?" + base64.b64encode(value.encode("utf-8")).decode("ascii") + "?="


_client: httpx2.Client | None = None


def http() -> httpx2.Client:
    """One shared client: building one costs ~0.2 s (it loads the CA bundle)."""
    global _client
    if _client is None:
        _client = httpx2.Client(timeout=10.0)
    return _client


def post(
    url: str,
    body: Any,
    headers: dict[str, str] | None = None,
    *,
    raw: bytes | None = None,
    timeout: float = 10.0,
) -> httpx2.Response:
    """POST one message; `headers` default to what a 2026-07-28 client sends for `body`."""
    content = raw if raw is not None else json.dumps(body).encode()
    if headers is None:
        headers = headers_for(body)
    return http().post(url, content=content, headers=headers, timeout=timeout)


def sse_messages(text: str) -> list[dict[str, Any]]:
    """The JSON-RPC messages of an SSE body, in order."""
    return [
        json.loads(line[5:])
        for line in text.splitlines()
        if line.startswith("data:") and line[5:].strip()
    ]


def sse(response: httpx2.Response) -> Iterator[dict[str, Any]]:
    """The JSON-RPC messages of a streamed SSE response, each as it arrives (the stream stays open)."""
    for line in response.iter_lines():
        if line.startswith("data:") and line[5:].strip():
            yield json.loads(line[5:])


def raw_http(url: str, head: str, body: bytes = b"") -> tuple[int, bytes]:
    """Send a hand-written HTTP/1.1 request (for header bytes a client library will not send)."""
    import socket
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as sock:
        sock.sendall(head.replace("\n", "\r\n").encode("latin-1") + b"\r\n" + body)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    status = int(data.split(b" ", 2)[1])
    return status, data.partition(b"\r\n\r\n")[2]


LEGACY_HEADERS = {
    "content-type": "application/json",
    "accept": "application/json, text/event-stream",
}


def legacy_initialize(
    url: str, version: str = "2025-11-25", capabilities: dict[str, Any] | None = None
) -> tuple[str, dict[str, Any]]:
    """Open an initialize-era session by hand; returns its id and the initialize result."""
    body = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": capabilities if capabilities is not None else {},
            "clientInfo": {"name": "raw-legacy", "version": "1"},
        },
    }
    response = post(url, body, LEGACY_HEADERS)
    assert response.status_code == 200, response.text
    session = response.headers["mcp-session-id"]
    negotiated = response.json()["result"]["protocolVersion"]
    post(
        url,
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {**LEGACY_HEADERS, "mcp-session-id": session, "mcp-protocol-version": negotiated},
    )
    return session, response.json()["result"]


def legacy_headers(session: str, version: str = "2025-11-25") -> dict[str, str]:
    return {**LEGACY_HEADERS, "mcp-session-id": session, "mcp-protocol-version": version}
