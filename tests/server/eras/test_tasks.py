"""The Tasks extension in process: a handler task's status machine, its store, and tasks/get, update and cancel by principal."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from ask_mcp.protocol.jsonrpc import INVALID_PARAMS, JsonRpcError, Request
from ask_mcp.server import Context, Server, Toolkit, tool
from ask_mcp.server.eras.tasks import (
    CANCELLED,
    CANCELLED_MESSAGE,
    COMPLETED,
    EXTENSION,
    INPUT_REQUIRED,
    WORKING,
    MemoryTaskStore,
    TaskRecord,
    declares_tasks,
    iso,
    task_id_of,
    task_status,
)
from ask_mcp.server.identity import Identity
from tests.support.wire import META

WAIT = 5.0
"""The longest any step may take: a hang fails, it does not stall the suite."""
TASK_CAPS = {"extensions": {EXTENSION: {}}, "elicitation": {"form": {}}}
COLOUR = {"type": "object", "properties": {"colour": {"type": "string"}}, "required": ["colour"]}


class Jobs(Toolkit):
    default_prefix = ""

    def __init__(self) -> None:
        self.release = asyncio.Event()

    @tool("paint", task="required")
    async def paint(self, ctx: Context, arguments: dict[str, Any]) -> str:
        """Asks for a colour, then paints."""
        reply = await ctx.elicit("Which colour?", COLOUR)
        return f"painted {(reply.content or {}).get('colour')}"

    @tool("wait", task="optional")
    async def wait(self, ctx: Context, arguments: dict[str, Any]) -> str:
        """Waits to be released."""
        await self.release.wait()
        return "released"


def record(
    status: Any = WORKING, principal: str | None = "user:1", expires_at: float = 100.0
) -> TaskRecord:
    return TaskRecord(
        id="t1",
        who=Identity(principal),
        tool="paint",
        arguments={},
        status=status,
        created_at=0.0,
        updated_at=1.5,
        ttl_ms=60_000,
        expires_at=expires_at,
    )


async def send(
    server: Server, method: str, params: dict[str, Any], principal: str = "user:1"
) -> dict[str, Any]:
    meta = {**META, "io.modelcontextprotocol/clientCapabilities": TASK_CAPS}
    async with asyncio.timeout(WAIT):
        reply = await server.handle_modern(
            Request(method, {**params, "_meta": meta}, id=1), who=Identity(principal)
        )
    assert reply is not None
    return reply


async def status_until(server: Server, task_id: str, wanted: str) -> dict[str, Any]:
    """tasks/get until the task reaches `wanted`, within WAIT."""
    async with asyncio.timeout(WAIT):
        while True:
            got = (await send(server, "tasks/get", {"taskId": task_id}))["result"]
            if got["status"] == wanted:
                return got
            await asyncio.sleep(0)  # one turn of the loop (a yield, not a wait)


def test_the_status_machine_waits_on_inputs_and_an_ending_waits_on_nothing() -> None:
    task = record()
    task.require_input("a", {"method": "elicitation/create"})
    task.require_input("b", {"method": "roots/list"})
    task.input_given("a")
    assert task.status == INPUT_REQUIRED and list(task.input_requests) == ["b"]
    task.input_given("b")
    assert task.status == WORKING
    task.require_input("c", {})
    task.ask_again("c.2", {"again": True})
    assert task.input_requests == {"c.2": {"again": True}}
    assert task.detailed()["inputRequests"] == {"c.2": {"again": True}}
    task.cancel()
    assert (task.status, task.input_requests, task.status_message) == (
        CANCELLED,
        {},
        CANCELLED_MESSAGE,
    )
    assert task.wire() == {
        "taskId": "t1",
        "status": "cancelled",
        "createdAt": "1970-01-01T00:00:00.000Z",
        "lastUpdatedAt": "1970-01-01T00:00:01.500Z",
        "ttlMs": 60_000,
        "pollIntervalMs": 2000,
        "statusMessage": CANCELLED_MESSAGE,
    }


def test_a_completed_or_failed_task_carries_its_payload() -> None:
    done = record()
    done.complete({"content": [], "isError": False})
    assert done.detailed()["result"] == {"content": [], "isError": False}
    failed = record()
    failed.fail({"code": -32603, "message": "Internal error"}, "it broke")
    assert (
        failed.detailed()["error"]["code"] == -32603
        and failed.wire()["statusMessage"] == "it broke"
    )


async def test_the_memory_store_keeps_copies_refuses_writes_after_an_ending_and_purges() -> None:
    store = MemoryTaskStore()
    task = record()
    await store.create(task)
    task.status = COMPLETED  # the caller's copy: the stored one is unchanged until saved
    loaded = await store.load("t1")
    assert loaded is not None and loaded.status == WORKING
    # at 50.0, before the record's expiry (100.0): the test's clock, not the wall clock
    assert await store.open_count("user:1", now=50.0) == 1
    assert await store.open_count("user:2", now=50.0) == 0
    assert await store.save(task) is True
    assert await store.save(record()) is False  # terminal already: the ending stands
    assert await store.open_count("user:1", now=50.0) == 0
    assert await store.purge(now=99.0) == 0 and await store.purge(now=100.0) == 1
    assert await store.load("t1") is None


def test_the_small_readers_name_what_they_refuse() -> None:
    assert declares_tasks({"extensions": {EXTENSION: {}}})
    assert not declares_tasks({"extensions": {EXTENSION: True}}) and not declares_tasks({})
    assert task_status("working") == WORKING
    with pytest.raises(ValueError, match="'done' is no task status"):
        task_status("done")
    assert task_id_of({"taskId": "abc"}) == "abc"
    with pytest.raises(JsonRpcError) as refused:
        task_id_of({"taskId": 3})
    assert refused.value.code == INVALID_PARAMS
    assert iso(0.25) == "1970-01-01T00:00:00.250Z"


async def test_a_handler_task_asks_through_tasks_update_and_completes_for_its_principal_only() -> (
    None
):
    server = Server("s").plug(Jobs())
    created = (await send(server, "tools/call", {"name": "paint", "arguments": {}}))["result"]
    assert created["resultType"] == "task" and created["status"] == WORKING
    task_id = created["taskId"]
    waiting = await status_until(server, task_id, INPUT_REQUIRED)
    ((key, request),) = waiting["inputRequests"].items()
    assert request["params"]["message"] == "Which colour?"
    other = await send(server, "tasks/get", {"taskId": task_id}, principal="user:2")
    assert (
        other["error"]["code"] == INVALID_PARAMS and "Task not found" in other["error"]["message"]
    )
    answer = {"action": "accept", "content": {"colour": "teal"}}
    await send(server, "tasks/update", {"taskId": task_id, "inputResponses": {key: answer}})
    done = await status_until(server, task_id, COMPLETED)
    assert done["result"]["content"][0]["text"] == "painted teal"


async def test_tasks_cancel_ends_a_running_handler_task_and_a_second_cancel_is_still_acknowledged() -> (
    None
):
    server = Server("s").plug(Jobs())
    created = (await send(server, "tools/call", {"name": "wait", "arguments": {}}))["result"]
    cancelled = await send(server, "tasks/cancel", {"taskId": created["taskId"]})
    assert "error" not in cancelled  # an empty acknowledgement
    got = (await send(server, "tasks/get", {"taskId": created["taskId"]}))["result"]
    assert got["status"] == CANCELLED and got["statusMessage"] == CANCELLED_MESSAGE
    again = await send(server, "tasks/cancel", {"taskId": created["taskId"]})
    assert "error" not in again
    unknown = await send(server, "tasks/cancel", {"taskId": "no-such-task"})
    assert unknown["error"]["code"] == INVALID_PARAMS
