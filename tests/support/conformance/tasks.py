"""The Conformance toolkit's Tasks-extension fixtures: the tools the suite's `tasks-*` scenarios call; knows no task store.

Names, arguments and texts are the ones the scenarios check (``greet`` must answer exactly
"Hello, {name}!"). Whether a call becomes a task is the engine's decision
(:mod:`ask_mcp.server.eras.tasks`); these handlers only say ``task="optional"`` or ``"required"``.
Pure: no Django.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any, Final

from ask_mcp.protocol import mcp
from ask_mcp.protocol.jsonrpc import INTERNAL_ERROR, JsonRpcError
from ask_mcp.server.catalog.toolkit import tool
from ask_mcp.server.context import Context
from ask_mcp.server.errors import ToolError

LONGEST_COMPUTE: Final = 120.0
"""Seconds slow_compute may be asked to take at most (the suite asks 0, 1, 2 or 60)."""


def _form(message: str, properties: Mapping[str, Any]) -> dict[str, Any]:
    """An elicitation/create input request; extra properties in an answer are accepted."""
    schema = {"type": "object", "properties": dict(properties), "required": list(properties)}
    params = {"mode": "form", "message": message, "requestedSchema": schema}
    return {"method": mcp.ELICITATION_METHOD, "params": params}


def _object(**properties: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {name: {"type": kind} for name, kind in properties.items()},
        "required": list(properties),
    }


class TaskFixtures:
    """Mixed into the Conformance toolkit: greet, slow_compute, failing_job, protocol_error_job,
    confirm_delete, multi_input and test_tool_with_task."""

    @tool("greet", input_schema=_object(name="string"))
    async def greet(self, ctx: Context, arguments: dict[str, Any]) -> str:
        """Greets by name; always synchronous, never a task."""
        return f"Hello, {arguments.get('name', 'stranger')}!"

    @tool("slow_compute", input_schema=_object(seconds="number", label="string"), task="optional")
    async def slow_compute(self, ctx: Context, arguments: dict[str, Any]) -> str:
        """Waits `seconds` (at most 120), then names its label; a task for a declaring client."""
        seconds = arguments.get("seconds", 1)
        if isinstance(seconds, bool) or not isinstance(seconds, int | float):
            raise ToolError(f"seconds must be a number, got {seconds!r}")
        # The scenario's own contract: a task that takes time (tasks-* poll it while it works).
        await asyncio.sleep(max(0.0, min(float(seconds), LONGEST_COMPUTE)))
        return f"Computed {arguments.get('label', 'result')} in {seconds} s."

    @tool("failing_job", task="required")
    async def failing_job(self, ctx: Context, arguments: dict[str, Any]) -> str:
        """Runs only as a task and fails after a second with a tool error (isError)."""
        await asyncio.sleep(1.0)  # the scenario reads the task as working before it fails
        raise ToolError("The job failed, as this fixture always does.")

    @tool("protocol_error_job", task="required")
    async def protocol_error_job(self, ctx: Context, arguments: dict[str, Any]) -> str:
        """Runs only as a task and ends in a JSON-RPC error after half a second."""
        await asyncio.sleep(0.5)  # the scenario reads the task as working before it errs
        raise JsonRpcError(INTERNAL_ERROR, "Internal error: the fixture's job broke on purpose")

    @tool("confirm_delete", input_schema=_object(filename="string"), task="required")
    async def confirm_delete(self, ctx: Context, arguments: dict[str, Any]) -> str:
        """Asks to confirm deleting `filename` (key `confirm`), then says what it did."""
        filename = arguments.get("filename", "the file")
        asked = {"confirm": _form(f"Delete {filename}?", {"confirm": {"type": "boolean"}})}
        reply = (await ctx.request_inputs(asked))["confirm"]
        content = reply.get("content") if isinstance(reply, Mapping) else None
        if isinstance(content, Mapping) and content.get("confirm") is True:
            return f"Deleted {filename}."
        return f"Kept {filename}."

    @tool("multi_input", task="required")
    async def multi_input(self, ctx: Context, arguments: dict[str, Any]) -> str:
        """Asks two questions at once (keys `name` and `confirm`) and reports both answers."""
        asked = {
            "name": _form("Your name?", {"name": {"type": "string"}}),
            "confirm": _form("Confirm?", {"confirm": {"type": "boolean"}}),
        }
        replies = await ctx.request_inputs(asked)
        names = [
            str((reply.get("content") or {}).get("name", ""))
            for reply in replies.values()
            if isinstance(reply, Mapping)
        ]
        return f"Received both answers ({', '.join(names)})."

    @tool("test_tool_with_task", task="after_input")
    async def tool_with_task(self, ctx: Context, arguments: dict[str, Any]) -> str:
        """Asks the user's name by MRTR first (key `user_name`); the last round gets the task."""
        form = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
        reply = await ctx.elicit("What is your name?", form, key="user_name")
        if reply.action != "accept":
            return f"No name given ({reply.action})."
        return f"Hello, {(reply.content or {})['name']}! Your task is done."
