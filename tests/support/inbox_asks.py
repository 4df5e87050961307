"""Asks a person answers in the inbox: calls from a client that cannot show forms, which wait until someone answers in a browser.

The client declares no elicitation capability, so the server routes each ask to the inbox and
the call is held open; a test starts it as a task, answers in the browser, then awaits it.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from mcp import Client
from mcp.types import CallToolResult

from tests.support.results import text_of


async def call_tool(url: str, name: str, arguments: dict[str, Any]) -> CallToolResult:
    """One tools/call from a client that cannot show forms (no elicitation capability)."""
    async with asyncio.timeout(30), Client(url, mode="2026-07-28") as client:
        return await client.call_tool(name, arguments)


def ask(url: str, message: str, **arguments: Any) -> asyncio.Task[Any]:
    """user_ask from a client without forms, running until someone answers in a browser."""
    return asyncio.create_task(call_tool(url, "user_ask", {"message": message, **arguments}))


def ask_form(url: str, message: str, schema: dict[str, Any], **extra: Any) -> asyncio.Task[Any]:
    """The probe's form tool with `schema` as its form, running until someone answers."""
    arguments = {"message": message, "schema": schema, **extra}
    return asyncio.create_task(call_tool(url, "probe_form", arguments))


async def finish(task: asyncio.Task[Any]) -> Any:
    """The asking call's result, once the answer has been sent (bounded)."""
    async with asyncio.timeout(15):
        return await task


def form_reply(result: CallToolResult) -> dict[str, Any]:
    """What the person sent for a form, as the call returned it."""
    reply: dict[str, Any] = json.loads(text_of(result))
    return reply
