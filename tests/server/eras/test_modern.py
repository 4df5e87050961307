"""The 2026-07-28 era in process: MRTR rounds through Server.handle_modern, no sockets, no Django.

A question parks the handler and answers `input_required`; the retry's requestState resumes the
same suspended handler (never re-run), and is refused when it belongs to another request or
principal, was already used, or has expired. Every reply is checked against mcp-types.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from typing import Any

import pytest

from ask_mcp.protocol.jsonrpc import Request
from ask_mcp.server import (
    Context,
    Ending,
    Question,
    Server,
    Toolkit,
    prompt,
    tool,
)
from ask_mcp.server.asking import table as elicitation_module
from ask_mcp.server.eras.modern import STATE_REJECTIONS
from ask_mcp.server.errors import TIMED_OUT_TEXT
from ask_mcp.server.identity import Identity
from tests.support.results import text_of as text
from tests.support.wire import FORM_CAPS, META, assert_valid

COLOUR: dict[str, Any] = {
    "type": "object",
    "properties": {"colour": {"type": "string"}},
    "required": ["colour"],
}
TOPIC: dict[str, Any] = {"type": "object", "properties": {"topic": {"type": "string"}}}
WAIT = 5.0
"""The longest any step of these tests may take: a hang fails, it does not stall the suite."""


class Desk(Toolkit):
    """Tools that ask, ask twice, or block, counting how often each handler starts."""

    def __init__(self) -> None:
        self.runs = 0
        self.started = asyncio.Event()
        self.cancelled = asyncio.Event()

    @tool("ask", input_schema=TOPIC)
    async def ask(self, ctx: Context, arguments: dict[str, Any]) -> str:
        """Asks for a colour."""
        self.runs += 1
        reply = await ctx.elicit("Which colour?", COLOUR)
        return f"{reply.action}:{(reply.content or {}).get('colour')}"

    @tool("ask_twice")
    async def ask_twice(self, ctx: Context, arguments: dict[str, Any]) -> str:
        """Asks two questions, one after the other."""
        self.runs += 1
        first = await ctx.elicit("First colour?", COLOUR, key="first")
        second = await ctx.elicit("Second colour?", COLOUR, key="second")
        return f"{(first.content or {}).get('colour')},{(second.content or {}).get('colour')}"

    @tool("block")
    async def block(self, ctx: Context, arguments: dict[str, Any]) -> str:
        """Runs until it is cancelled."""
        self.started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled.set()
            raise
        return "never"

    @tool("sample", required_capabilities={"sampling": {}})
    async def sample(self, ctx: Context, arguments: dict[str, Any]) -> str:
        """Needs sampling."""
        return "sampled"

    @prompt("colour")
    async def colour(self, ctx: Context, arguments: dict[str, str]) -> str:
        """Asks for a colour, then renders it."""
        reply = await ctx.elicit("Which colour?", COLOUR)
        return f"Paint it {(reply.content or {}).get('colour')}."


class Observer:
    """Hears every question put and ended, as the recorder would (a QuestionObserver)."""

    def __init__(self) -> None:
        self.questions: list[Question] = []
        self.endings: list[Ending] = []
        self.changed = asyncio.Event()

    async def asked(self, question: Question) -> None:
        self.questions.append(question)

    def ended(self, question: Question, status: Ending, answer: Mapping[str, Any] | None) -> None:
        self.endings.append(status)
        self.changed.set()


def make_server(**options: Any) -> tuple[Server, Desk, Observer]:
    desk = Desk()
    observer = Observer()
    server = Server("desk", observer=observer, **options).plug(desk)
    return server, desk, observer


async def send(
    server: Server,
    method: str,
    params: dict[str, Any],
    *,
    caps: Mapping[str, Any] = FORM_CAPS,
    principal: str | None = None,
) -> dict[str, Any]:
    """One modern request through the dispatch boundary, bounded in time; the reply validated."""
    meta = {**META, "io.modelcontextprotocol/clientCapabilities": dict(caps)}
    request = Request(method=method, params={**params, "_meta": meta}, id=1)
    async with asyncio.timeout(WAIT):
        reply = await server.handle_modern(request, who=Identity(principal))
    assert reply is not None
    return assert_valid(method, reply)


async def call(server: Server, name: str, arguments: dict[str, Any], **kw: Any) -> dict[str, Any]:
    extra = kw.pop("extra", {})
    return await send(server, "tools/call", {"name": name, "arguments": arguments, **extra}, **kw)


def retry(state: str, **answers: Any) -> dict[str, Any]:
    responses = {key: {"action": "accept", "content": {"colour": c}} for key, c in answers.items()}
    return {"extra": {"requestState": state, "inputResponses": responses}}


def rejection(reply: dict[str, Any], reason: str) -> None:
    assert reply["error"] == {
        "code": -32602,
        "message": f"Invalid requestState: {STATE_REJECTIONS[reason]}",
        "data": {"reason": reason},
    }


async def test_a_question_answers_input_required_and_the_retry_resumes_the_same_handler() -> None:
    server, desk, observer = make_server()
    first = await call(server, "ask", {"topic": "walls"})
    result = first["result"]
    assert result["resultType"] == "input_required"
    assert result["inputRequests"] == {
        "ask": {
            "method": "elicitation/create",
            "params": {"mode": "form", "message": "Which colour?", "requestedSchema": COLOUR},
        }
    }
    assert "ttlMs" not in result and server.table.waiting == 1

    done = await call(
        server, "ask", {"topic": "walls"}, **retry(result["requestState"], ask="teal")
    )
    assert done["result"]["resultType"] == "complete"
    assert text(done) == "accept:teal"
    assert done["result"]["_meta"] == {"io.modelcontextprotocol/serverInfo": server.server_info}
    assert desk.runs == 1, "the handler ran once, across both rounds"
    assert server.table.waiting == 0
    assert observer.endings == ["accepted"]
    (question,) = observer.questions
    assert (question.tool, question.toolkit, question.route) == ("ask", "Desk", "client")
    assert question.call_id is not None


async def test_every_round_of_a_call_gets_its_own_state_and_the_handler_never_restarts() -> None:
    server, desk, _ = make_server()
    first = (await call(server, "ask_twice", {}))["result"]
    assert list(first["inputRequests"]) == ["first"]
    second = (await call(server, "ask_twice", {}, **retry(first["requestState"], first="red")))[
        "result"
    ]
    assert second["resultType"] == "input_required" and list(second["inputRequests"]) == ["second"]
    assert second["requestState"] != first["requestState"]
    done = await call(server, "ask_twice", {}, **retry(second["requestState"], second="blue"))
    assert text(done) == "red,blue"
    assert desk.runs == 1


async def test_a_used_state_is_refused_on_replay() -> None:
    server, _, _ = make_server()
    state = (await call(server, "ask", {}))["result"]["requestState"]
    assert text(await call(server, "ask", {}, **retry(state, ask="teal"))) == "accept:teal"
    rejection(await call(server, "ask", {}, **retry(state, ask="red")), "used")


async def test_a_state_is_bound_to_its_tool_arguments_and_principal() -> None:
    server, desk, _ = make_server()
    state = (await call(server, "ask", {"topic": "walls"}, principal="ann"))["result"][
        "requestState"
    ]
    wrong_args = await call(
        server, "ask", {"topic": "doors"}, principal="ann", **retry(state, ask="x")
    )
    rejection(wrong_args, "request")
    wrong_tool = await call(server, "ask_twice", {}, principal="ann", **retry(state, first="x"))
    rejection(wrong_tool, "request")
    someone_else = await call(
        server, "ask", {"topic": "walls"}, principal="bob", **retry(state, ask="x")
    )
    rejection(someone_else, "principal")
    tampered = state[:-2] + ("AA" if not state.endswith("AA") else "BB")
    rejection(
        await call(server, "ask", {"topic": "walls"}, principal="ann", **retry(tampered, ask="x")),
        "signature",
    )
    malformed = {"extra": {"requestState": 7}}
    rejection(
        await call(server, "ask", {"topic": "walls"}, principal="ann", **malformed), "malformed"
    )

    # None of the refused retries used the state up.
    done = await call(server, "ask", {"topic": "walls"}, principal="ann", **retry(state, ask="ok"))
    assert text(done) == "accept:ok" and desk.runs == 1


async def test_a_retry_missing_an_answer_is_asked_the_same_again() -> None:
    server, _, _ = make_server()
    first = (await call(server, "ask", {}))["result"]
    again = (await call(server, "ask", {}, extra={"requestState": first["requestState"]}))["result"]
    assert again["resultType"] == "input_required"
    assert again["inputRequests"] == first["inputRequests"]
    assert again["requestState"] != first["requestState"]
    assert (
        text(await call(server, "ask", {}, **retry(again["requestState"], ask="x"))) == "accept:x"
    )


async def test_answers_sent_up_front_are_used_without_a_round() -> None:
    server, desk, _ = make_server()
    up_front = {"inputResponses": {"ask": {"action": "accept", "content": {"colour": "ochre"}}}}
    assert text(await call(server, "ask", {}, extra=up_front)) == "accept:ochre"
    assert desk.runs == 1 and server.table.waiting == 0


async def test_capacity_refuses_a_question_beyond_it_as_an_error_result() -> None:
    server, _, _ = make_server(elicitation_capacity=1)
    assert (await call(server, "ask", {}))["result"]["resultType"] == "input_required"
    refused = await call(server, "ask", {"topic": "more"})
    assert refused["result"]["isError"] is True
    assert text(refused) == (
        "1 question is already waiting for answers, the most this server holds at once. "
        "Try again after some are answered, or carry on without asking."
    )
    assert server.table.waiting == 1


async def test_a_parked_call_expires_after_the_ttl_and_its_retry_reads_did_not_answer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(elicitation_module, "EXPIRY_GRACE", 0.0)
    server, desk, observer = make_server(elicitation_ttl=0.05)
    state = (await call(server, "ask", {}))["result"]["requestState"]
    async with asyncio.timeout(WAIT):
        await observer.changed.wait()  # the table's own timer ends the parked call
    assert observer.endings == ["expired"]
    assert server.table.waiting == 0 and server.table.parked_call("1") is None

    later = time.time() + 60
    server.table.clock = lambda: later  # the state's expiry has certainly passed
    late = await call(server, "ask", {}, **retry(state, ask="teal"))
    assert late["result"]["isError"] is False
    assert text(late) == TIMED_OUT_TEXT
    assert desk.runs == 1


async def test_a_cancelled_request_cancels_its_running_handler_and_frees_the_table() -> None:
    server, desk, _ = make_server()
    meta = {**META, "io.modelcontextprotocol/clientCapabilities": FORM_CAPS}
    request = Request("tools/call", {"name": "block", "arguments": {}, "_meta": meta}, id=9)
    handling = asyncio.ensure_future(server.handle_modern(request))
    async with asyncio.timeout(WAIT):
        await desk.started.wait()
    handling.cancel()
    with pytest.raises(asyncio.CancelledError):
        async with asyncio.timeout(WAIT):
            await handling
    async with asyncio.timeout(WAIT):
        await desk.cancelled.wait()
    assert server.table.waiting == 0


async def test_a_prompt_parks_and_resumes_like_a_tool() -> None:
    server, _, observer = make_server()
    first = await send(server, "prompts/get", {"name": "colour"})
    state = first["result"]["requestState"]
    responses = {"colour": {"action": "accept", "content": {"colour": "umber"}}}
    done = await send(
        server,
        "prompts/get",
        {"name": "colour", "requestState": state, "inputResponses": responses},
    )
    assert done["result"]["messages"][0]["content"]["text"] == "Paint it umber."
    assert observer.questions[0].toolkit == "Desk"


async def test_a_missing_client_capability_is_32021_naming_it() -> None:
    server, _, _ = make_server()
    reply = await call(server, "sample", {})
    assert reply["error"] == {
        "code": -32021,
        "message": "sample needs the client capabilities sampling, which the client did not "
        "declare",
        "data": {"requiredCapabilities": {"sampling": {}}},
    }


async def test_lists_carry_private_caching_hints_and_unoffered_methods_do_not_exist() -> None:
    server, _, _ = make_server()
    tools = await send(server, "tools/list", {})
    assert [entry["name"] for entry in tools["result"]["tools"]] == [
        "ask",
        "ask_twice",
        "block",
        "sample",
    ]
    assert (tools["result"]["ttlMs"], tools["result"]["cacheScope"]) == (60_000, "private")
    missing = await send(server, "resources/list", {})
    assert missing["error"]["message"] == (
        "Method not found: 'resources/list'; this server does not offer resources"
    )
    removed = await send(server, "ping", {})
    assert removed["error"]["message"] == (
        "Method not found: 'ping' does not exist in protocol version 2026-07-28"
    )


async def test_a_notification_gets_no_reply() -> None:
    server, _, _ = make_server()
    assert await server.handle_modern(Request("notifications/initialized", {"_meta": META})) is None
