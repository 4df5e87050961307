"""An `on_elicit` that answers from a script, and helpers to drive an MCPServer in-process."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from ask_mcp import MCPServer
from ask_mcp.protocol.forms import ElicitResult
from ask_mcp.protocol.jsonrpc import Request
from ask_mcp.server import Context, Question
from tests.support.wire import META, assert_valid

NEVER = object()
"""A scripted reply that never comes (the person walked away)."""


class ScriptedElicit:
    """Answers each question with the next scripted reply; records what was asked."""

    def __init__(self, *replies: Any) -> None:
        self.replies = list(replies)
        self.questions: list[Question] = []
        self.asked = asyncio.Event()

    async def __call__(self, question: Question, ctx: Context) -> ElicitResult | Mapping[str, Any]:
        self.questions.append(question)
        self.asked.set()
        reply = self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]
        if reply is NEVER:
            await asyncio.Event().wait()
        return reply


async def call_tool(
    server: MCPServer,
    name: str,
    arguments: Any = None,
    *,
    caps: dict[str, Any] | None = None,
    **params: Any,
) -> dict[str, Any]:
    """A tools/call through the server's dispatch boundary; the reply is validated."""
    body: dict[str, Any] = {
        "name": name,
        **params,
        "_meta": {**META, "io.modelcontextprotocol/clientCapabilities": caps or {}},
    }
    if arguments is not None:
        body["arguments"] = arguments
    reply = await server.handle_modern(Request(method="tools/call", params=body, id=1))
    assert reply is not None
    return assert_valid("tools/call", reply)
