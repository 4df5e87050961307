"""A raw-HTTP client for the MCP Tasks extension, and checks of its messages against the extension's shapes.

No official client speaks the extension yet. The shapes are the extension's schema
(`CreateTaskResult`, `GetTaskResult`, the empty acknowledgement) as
../shared/docs/mcp-tasks-extension.md digests it.
"""

from __future__ import annotations

import re
from typing import Any, Final

import httpx2

from tests.support.wire import META, headers_for, sse_messages

EXTENSION: Final = "io.modelcontextprotocol/tasks"
TASK_CAPS: Final = {"extensions": {EXTENSION: {}}, "elicitation": {"form": {}}}
"""A client that declares the extension and shows forms."""
INBOX_CAPS: Final = {"extensions": {EXTENSION: {}}}
"""A client that declares the extension and shows no forms: a person answers in the inbox."""
STATUSES: Final = {"working", "input_required", "completed", "failed", "cancelled"}
ISO: Final = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}")
TASK_FIELDS: Final = {
    "taskId",
    "status",
    "createdAt",
    "lastUpdatedAt",
    "ttlMs",
    "pollIntervalMs",
    "statusMessage",
}


def _task_fields(result: dict[str, Any]) -> None:
    assert isinstance(result["taskId"], str) and len(result["taskId"]) >= 22, result
    assert result["status"] in STATUSES, result
    assert ISO.match(result["createdAt"]) and ISO.match(result["lastUpdatedAt"]), result
    ttl = result["ttlMs"]
    assert ttl is None or (isinstance(ttl, int) and ttl > 0), result
    poll = result.get("pollIntervalMs")
    assert poll is None or (isinstance(poll, int) and poll > 0), result
    assert "requestState" not in result and "ttl" not in result and "pollInterval" not in result


def assert_handle(reply: dict[str, Any]) -> dict[str, Any]:
    """A CreateTaskResult: flat, resultType "task", no payload."""
    result = reply["result"]
    assert result["resultType"] == "task", result
    _task_fields(result)
    extra = set(result) - TASK_FIELDS - {"resultType", "_meta"}
    assert not extra, f"the handle carries {extra}"
    return result


def assert_detailed(reply: dict[str, Any]) -> dict[str, Any]:
    """A GetTaskResult: resultType "complete", the payload its status calls for and no other."""
    result = reply["result"]
    assert result["resultType"] == "complete", result
    _task_fields(result)
    payload = {
        "input_required": {"inputRequests"},
        "completed": {"result"},
        "failed": {"error"},
    }.get(result["status"], set())
    extra = set(result) - TASK_FIELDS - {"resultType", "_meta"}
    assert extra == payload, f"status {result['status']} carries {extra}"
    for request in result.get("inputRequests", {}).values():
        assert set(request) == {"method", "params"}, request
        assert request["method"] == "elicitation/create"
        assert request["params"]["mode"] == "form"
    if "result" in result:
        assert isinstance(result["result"]["content"], list), result
        assert "io.modelcontextprotocol/related-task" not in result["result"].get("_meta", {})
    return result


def assert_ack(reply: dict[str, Any]) -> None:
    """The empty acknowledgement of tasks/update and tasks/cancel."""
    result = reply["result"]
    assert set(result) <= {"resultType", "_meta"} and result["resultType"] == "complete", result


def task_problem(method: str, result: dict[str, Any]) -> str | None:
    """Why a result of `method` is not the extension's shape for it, or None when it is."""
    check = {"tasks/get": assert_detailed, "tools/call": assert_handle}.get(method, assert_ack)
    try:
        check({"result": result})
    except (AssertionError, KeyError, TypeError) as exc:
        return f"invalid {method} task result: {exc!r}"
    return None


class TaskClient:
    """One principal (a token, or none: anonymous on loopback) speaking the extension by hand."""

    def __init__(self, url: str, token: str | None = None) -> None:
        self.url = url
        self.token = token
        self._ids = 0

    async def rpc(
        self, method: str, params: dict[str, Any], caps: dict[str, Any] | None = None
    ) -> tuple[int, dict[str, Any]]:
        self._ids += 1
        meta = {**META, "io.modelcontextprotocol/clientCapabilities": caps or TASK_CAPS}
        body = {"jsonrpc": "2.0", "id": self._ids, "method": method, "params": {**params}}
        body["params"]["_meta"] = meta
        headers = headers_for(body)
        if "taskId" in params:
            headers["mcp-name"] = params["taskId"]
        if self.token:
            headers["authorization"] = f"Bearer {self.token}"
        async with httpx2.AsyncClient(timeout=10.0) as http:
            response = await http.post(self.url, json=body, headers=headers)
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            return response.status_code, sse_messages(response.text)[-1]
        return response.status_code, response.json()

    async def ask(
        self, arguments: dict[str, Any], caps: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        status, reply = await self.rpc(
            "tools/call", {"name": "user_ask", "arguments": arguments}, caps
        )
        assert status == 200, reply
        return assert_handle(reply)

    async def get(self, task_id: str, caps: dict[str, Any] | None = None) -> dict[str, Any]:
        status, reply = await self.rpc("tasks/get", {"taskId": task_id}, caps)
        assert status == 200, reply
        return assert_detailed(reply)

    async def update(self, task_id: str, responses: dict[str, Any]) -> None:
        params = {"taskId": task_id, "inputResponses": responses}
        status, reply = await self.rpc("tasks/update", params)
        assert status == 200, reply
        assert_ack(reply)

    async def cancel(self, task_id: str) -> None:
        status, reply = await self.rpc("tasks/cancel", {"taskId": task_id})
        assert status == 200, reply
        assert_ack(reply)
