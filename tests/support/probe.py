"""A toolkit and an observer the live tests use to see inside a running server, without sleeping.

Every wait a test needs ("the handler is blocked", "the question expired") is an asyncio event
in the server, awaited by a probe tool with a bound.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter, defaultdict
from collections.abc import Mapping
from typing import Any

from ask_mcp.server import (
    Context,
    Ending,
    Question,
    QuestionObserver,
    Toolkit,
    ToolResult,
    tool,
)
from ask_mcp.server.asking.observers import ForwardingObserver

KEY_SCHEMA = {"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"]}
ANSWER = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}


class Events:
    def __init__(self) -> None:
        self._events: dict[tuple[str, str], asyncio.Event] = defaultdict(asyncio.Event)

    def set(self, kind: str, key: str) -> None:
        self._events[(kind, key)].set()

    async def wait(self, kind: str, key: str, bound: float) -> bool:
        try:
            async with asyncio.timeout(bound):
                await self._events[(kind, key)].wait()
        except TimeoutError:
            return False
        return True


EVENTS = Events()
STARTS: Counter[str] = Counter()


class ProbeObserver(ForwardingObserver):
    """Records every question's start and end; "ended" events fire per tool.

    With an `inner` observer (the real recorder), it passes every call on first.
    """

    def __init__(self, inner: QuestionObserver | None = None) -> None:
        super().__init__(inner)
        self.ended_log: list[dict[str, Any]] = []
        self.asked_count = 0

    async def asked(self, question: Question) -> None:
        self.asked_count += 1
        EVENTS.set("asked-count", str(self.asked_count))  # before the inner one, which may fail
        await super().asked(question)
        EVENTS.set("asked", question.tool)
        EVENTS.set("asked", question.id)

    def ended(self, question: Question, status: Ending, answer: Mapping[str, Any] | None) -> None:
        super().ended(question, status, answer)
        self.ended_log.append({"tool": question.tool, "status": status, "route": question.route})
        EVENTS.set("ended", question.tool)
        EVENTS.set("ended", question.id)
        EVENTS.set("ended-count", str(len(self.ended_log)))


OBSERVER = ProbeObserver()


def observer() -> ProbeObserver:
    return OBSERVER


def recording_observer() -> ProbeObserver:
    """The real recorder, seen through the probe (for the inbox's live tests)."""
    from ask_mcp.records.recorder import AskRecorder

    global OBSERVER
    OBSERVER = ProbeObserver(AskRecorder())
    return OBSERVER


async def _until_cancelled(key: str) -> str:
    """Block until the call is cancelled, and record that it was (under `key`)."""
    try:
        await asyncio.Event().wait()
    except asyncio.CancelledError:
        EVENTS.set("cancelled", key)
        raise
    return "unreachable"


class Probe(Toolkit):
    default_prefix = "probe"

    @tool("twice", input_schema=KEY_SCHEMA)
    async def twice(self, ctx: Context, arguments: dict[str, Any]) -> str:
        """Counts its starts, then asks two questions in two rounds."""
        STARTS[arguments["key"]] += 1
        first = await ctx.elicit("First?", ANSWER)
        second = await ctx.elicit("Second?", ANSWER)
        return json.dumps(
            {
                "starts": STARTS[arguments["key"]],
                "first": first.to_dict(),
                "second": second.to_dict(),
            }
        )

    @tool("starts", input_schema=KEY_SCHEMA)
    async def starts(self, ctx: Context, arguments: dict[str, Any]) -> str:
        """How many times `twice` started for a key."""
        return str(STARTS[arguments["key"]])

    @tool(
        "hang",
        input_schema={
            "type": "object",
            "properties": {"key": {"type": "string"}, "message": {"type": "string"}},
            "required": ["key"],
        },
    )
    async def hang(self, ctx: Context, arguments: dict[str, Any]) -> str:
        """Asks once (`message`, "Go?" by default), then blocks until cancelled."""
        key = arguments["key"]
        await ctx.elicit(arguments.get("message", "Go?"), ANSWER)
        EVENTS.set("blocked", key)
        return await _until_cancelled(key)

    @tool("stall", input_schema=KEY_SCHEMA)
    async def stall(self, ctx: Context, arguments: dict[str, Any]) -> str:
        """Blocks before asking anything, until cancelled."""
        key = arguments["key"]
        EVENTS.set("stalled", key)
        return await _until_cancelled(key)

    @tool(
        "count",
        input_schema={
            "type": "object",
            "properties": {
                "kind": {"type": "string", "enum": ["asked", "ended"]},
                "count": {"type": "integer"},
            },
            "required": ["kind", "count"],
        },
    )
    async def count(self, ctx: Context, arguments: dict[str, Any]) -> str:
        """Wait (at most 10 s) until `count` questions were asked (or ended) since the start."""
        kind, count = arguments["kind"], arguments["count"]
        now = OBSERVER.asked_count if kind == "asked" else len(OBSERVER.ended_log)
        fired = now >= count or await EVENTS.wait(f"{kind}-count", str(count), 10.0)
        return json.dumps({"fired": fired, "asked": OBSERVER.asked_count, **table_state(ctx)})

    @tool("next_sweep")
    async def next_sweep(self, ctx: Context, arguments: dict[str, Any]) -> str:
        """Wait (at most 10 s) until a sweep that starts after this call has finished."""
        from ask_mcp.records.sweeper import SWEEPER

        try:
            async with asyncio.timeout(10.0):
                await SWEEPER.wait_next_sweep()
        except (TimeoutError, RuntimeError):
            return json.dumps({"swept": False})
        return json.dumps({"swept": True})

    @tool("swept")
    async def swept(self, ctx: Context, arguments: dict[str, Any]) -> str:
        """Wait (at most 10 s) until the server's own sweeper finished a sweep; never starts it."""
        from ask_mcp.records.sweeper import SWEEPER

        try:
            async with asyncio.timeout(10.0):
                await SWEEPER.wait_swept()
        except (TimeoutError, RuntimeError):
            return json.dumps({"swept": False})
        return json.dumps({"swept": True})

    @tool(
        "wait",
        input_schema={
            "type": "object",
            "properties": {"kind": {"type": "string"}, "key": {"type": "string"}},
            "required": ["kind", "key"],
        },
    )
    async def wait(self, ctx: Context, arguments: dict[str, Any]) -> str:
        """Wait (at most 10 s) for an event in the server; report it and the table's state."""
        fired = await EVENTS.wait(arguments["kind"], arguments["key"], 10.0)
        return json.dumps({"fired": fired, **table_state(ctx)})

    @tool("table")
    async def table(self, ctx: Context, arguments: dict[str, Any]) -> str:
        """The elicitation table's occupancy and the questions that ended."""
        return json.dumps(table_state(ctx))

    @tool(
        "form",
        input_schema={
            "type": "object",
            "properties": {
                "message": {"type": "string"},
                "schema": {"type": "object"},
                "timeout": {"type": "number"},
            },
            "required": ["message", "schema"],
        },
    )
    async def form(self, ctx: Context, arguments: dict[str, Any]) -> str:
        """Asks any form schema and returns the ElicitResult as compact sorted JSON."""
        reply = await ctx.elicit(
            arguments["message"], arguments["schema"], timeout=arguments.get("timeout")
        )
        return json.dumps(reply.to_dict(), sort_keys=True, separators=(",", ":"))

    @tool("records")
    async def records(self, ctx: Context, arguments: dict[str, Any]) -> str:
        """Waits until the recorder has written everything, then lists the recorded asks."""
        from channels.db import database_sync_to_async

        from ask_mcp.models import Ask

        inner = OBSERVER.inner
        if inner is not None and hasattr(inner, "flush"):
            await inner.flush()
        fields = (
            "id",
            "message",
            "tool",
            "toolkit",
            "route",
            "status",
            "answer",
            "client_name",
            "call_id",
            "worker",
            "detached_at",
            "expires_at",
            "collected_at",
            "collected_by",
        )
        rows = await database_sync_to_async(
            lambda: list(Ask.objects.order_by("created").values(*fields))
        )()
        return json.dumps([{**row, "id": row["id"].hex} for row in rows], default=str)

    @tool("progress")
    async def progress(self, ctx: Context, arguments: dict[str, Any]) -> ToolResult:
        """Reports progress three times, then finishes."""
        for step in (0, 50, 100):
            await ctx.report_progress(step, 100, f"step {step}")
        return ToolResult.text("done")


def table_state(ctx: Context) -> dict[str, Any]:
    return {
        "waiting": ctx.table.waiting,
        "parked": len(ctx.table._calls),
        "ended": OBSERVER.ended_log,
    }
