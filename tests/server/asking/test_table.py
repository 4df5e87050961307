"""The elicitation table's state machine, driven directly: park, cut, collect, drop, capacity, TTL.

No server and no wire: a Context from a Caller, a handler, and `finish` recording the outcome.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Mapping
from typing import Any

import pytest

from ask_mcp.protocol import mcp
from ask_mcp.protocol.forms import ElicitResult
from ask_mcp.server.asking.parked import ParkedCall
from ask_mcp.server.asking.table import ElicitationTable
from ask_mcp.server.context import Caller, Context
from ask_mcp.server.errors import (
    CLIENT_CANCELLED,
    ElicitationCapacityExceeded,
    ElicitationTimedOut,
    ElicitationUnavailable,
    NoValidAnswer,
)
from ask_mcp.server.identity import Identity
from ask_mcp.server.question import Question
from ask_mcp.server.request_state import InvalidState, StateClaims, StateSealer, derive_key
from tests.support.wire import FORM_CAPS

COLOUR: dict[str, Any] = {
    "type": "object",
    "properties": {"colour": {"type": "string"}},
    "required": ["colour"],
}
WAIT = 5.0
"""The longest any step of these tests may take."""
Handler = Callable[[Context], Coroutine[Any, Any, Any]]


class Clock:
    """A clock the test moves by hand (the table's deadlines read it)."""

    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


class Observer:
    def __init__(self) -> None:
        self.questions: list[Question] = []
        self.endings: list[str] = []
        self.ended_event = asyncio.Event()

    async def asked(self, question: Question) -> None:
        self.questions.append(question)

    def ended(self, question: Question, status: str, answer: Mapping[str, Any] | None) -> None:
        self.endings.append(status)
        self.ended_event.set()


def make_table(**options: Any) -> tuple[ElicitationTable, Observer]:
    observer = Observer()
    sealer = StateSealer([derive_key("k" * 40)])
    return ElicitationTable(sealer=sealer, observer=observer, **options), observer


def context(table: ElicitationTable, caps: Mapping[str, Any] = FORM_CAPS) -> Context:
    return Context(
        table,
        Caller(mcp.MODERN_VERSION, caps, who=Identity("ann")),
        method="tools/call",
        name="paint",
        arguments={},
        toolkit="Studio",
    )


def finish(value: Any, error: BaseException | None) -> dict[str, Any]:
    return {"value": value, "error": error}


async def start(table: ElicitationTable, handler: Handler) -> tuple[Context, dict[str, Any]]:
    ctx = context(table)
    async with asyncio.timeout(WAIT):
        result = await table.run(ctx, lambda: handler(ctx), binding="b", finish=finish)
    return ctx, result


async def resume(
    table: ElicitationTable, result: dict[str, Any], responses: Mapping[str, Any]
) -> dict[str, Any]:
    claims = table.sealer.open(result["requestState"])
    async with asyncio.timeout(WAIT):
        return await table.resume(claims, responses, stream=_NoStream())


class _NoStream:
    allows_sse = False
    closed = False

    async def notify(self, message: dict[str, Any]) -> None:
        return None


async def ask_colour(ctx: Context) -> ElicitResult:
    return await ctx.elicit("Which colour?", COLOUR, key="colour")


def accept(colour: Any) -> dict[str, Any]:
    return {"action": "accept", "content": {"colour": colour}}


def parked(table: ElicitationTable, ctx: Context) -> ParkedCall:
    assert isinstance(ctx.input_channel, ParkedCall)
    call = table.parked_call(ctx.input_channel.id)
    assert call is not None
    return call


async def test_a_question_parks_the_call_and_collecting_ends_it() -> None:
    table, observer = make_table()
    ctx, result = await start(table, ask_colour)
    assert result["resultType"] == "input_required"
    assert list(result["inputRequests"]) == ["colour"]
    call = parked(table, ctx)
    assert call.wake is None and call.round == 1, "PARKED: no request is waiting on it"
    assert table.waiting == 1
    (question,) = observer.questions
    assert (question.route, question.toolkit, question.call_id) == ("client", "Studio", call.id)

    done = await resume(table, result, {"colour": accept("teal")})
    assert done == {"value": ElicitResult("accept", {"colour": "teal"}), "error": None}
    assert table.parked_call(call.id) is None and table.waiting == 0
    assert observer.endings == ["accepted"]


async def test_a_state_answers_one_round_only() -> None:
    table, _ = make_table()
    _, result = await start(table, ask_colour)
    await resume(table, result, {"colour": accept("teal")})
    with pytest.raises(InvalidState) as refused:
        await resume(table, result, {"colour": accept("red")})
    assert refused.value.reason == "used"


async def test_the_round_is_cut_after_every_sibling_request_is_queued() -> None:
    table, _ = make_table()

    async def two_at_once(ctx: Context) -> dict[str, Any]:
        return await ctx.request_inputs(
            {
                "left": {"method": mcp.ELICITATION_METHOD, "params": {"message": "L"}},
                "right": {"method": mcp.ELICITATION_METHOD, "params": {"message": "R"}},
            }
        )

    ctx, result = await start(table, two_at_once)
    assert sorted(result["inputRequests"]) == ["left", "right"], "one round for both"
    partial = await resume(table, result, {"left": accept("l")})
    assert partial["resultType"] == "input_required", "a missing answer parks again"
    assert sorted(partial["inputRequests"]) == ["left", "right"]
    assert parked(table, ctx).round == 2
    done = await resume(table, partial, {"left": accept("l"), "right": accept("r")})
    assert done["value"] == {"left": accept("l"), "right": accept("r")}


async def test_dropping_a_parked_call_cancels_its_handler_and_frees_its_place() -> None:
    table, observer = make_table()
    ctx, result = await start(table, ask_colour)
    call = parked(table, ctx)
    assert table.expire_parked(call.id, "the release moved to Monday") is True
    async with asyncio.timeout(WAIT):
        await observer.ended_event.wait()
    assert observer.endings == ["expired"]
    assert table.parked_call(call.id) is None and table.waiting == 0
    assert call.task is not None and call.task.cancelled()
    assert table.expire_parked(call.id) is False
    # The client's retry reads the timeout with staff's reason, not "used".
    with pytest.raises(ElicitationTimedOut) as ended:
        await resume(table, result, {"colour": accept("late")})
    assert ended.value.text.startswith(
        "The user did not answer in time: the release moved to Monday. Carry on"
    )


@pytest.mark.parametrize(
    ("message", "reason"),
    [(None, "detached"), (CLIENT_CANCELLED, "withdrawn")],
    ids=["connection-dropped", "client-cancelled"],
)
async def test_a_cancelled_request_drops_its_running_call(message: str | None, reason: str) -> None:
    """A dropped connection detaches the call (its browser ask stays answerable a while); the
    client's explicit cancel withdraws it."""
    table, observer = make_table()
    asked = asyncio.Event()

    async def ask_after_a_while(ctx: Context) -> ElicitResult:
        asked.set()
        await asyncio.Event().wait()  # still RUNNING when the request goes away
        return await ask_colour(ctx)

    ctx = context(table)
    running = asyncio.ensure_future(
        table.run(ctx, lambda: ask_after_a_while(ctx), binding="b", finish=finish)
    )
    async with asyncio.timeout(WAIT):
        await asked.wait()
    running.cancel(message)
    with pytest.raises(asyncio.CancelledError):
        async with asyncio.timeout(WAIT):
            await running
    assert isinstance(ctx.input_channel, ParkedCall)
    task = ctx.input_channel.task
    assert task is not None
    with pytest.raises(asyncio.CancelledError):
        async with asyncio.timeout(WAIT):
            await task
    assert ctx.input_channel.end_reason == reason and table.waiting == 0
    assert observer.endings == []


async def test_a_server_side_answer_settles_a_parked_call_on_its_next_retry() -> None:
    table, observer = make_table()
    ctx, result = await start(table, ask_colour)
    staff = ElicitResult("cancel", reason="use the staging bucket")
    assert table.answer_parked(parked(table, ctx).id, staff) is True
    done = await resume(table, result, {})
    assert done["value"] == ElicitResult("cancel")
    assert done["value"].reason == "use the staging bucket"  # for the model's result text
    assert observer.endings == ["cancelled"]


async def test_capacity_counts_parked_questions_and_refuses_beyond_it() -> None:
    table, _ = make_table(capacity=1)
    await start(table, ask_colour)
    _, refused = await start(table, ask_colour)
    assert isinstance(refused["error"], ElicitationCapacityExceeded)
    assert table.waiting == 1


async def test_the_ttl_bounds_every_question_and_an_expired_state_is_timed_out() -> None:
    clock = Clock()
    table, observer = make_table(ttl=30.0, clock=clock)

    async def ask_with_long_timeout(ctx: Context) -> ElicitResult:
        return await ctx.elicit("Which colour?", COLOUR, key="colour", timeout=3600)

    _, result = await start(table, ask_with_long_timeout)
    (question,) = observer.questions
    assert question.expires_at - question.created_at == 30.0, "the TTL caps the timeout"
    claims = table.sealer.open(result["requestState"])
    assert isinstance(claims, StateClaims) and claims.expires_at == clock.now + 30.0
    clock.now += 31
    with pytest.raises(ElicitationTimedOut):
        await resume(table, result, {"colour": accept("late")})
    table.cancel_all()  # a shutdown: the ask is left pending for the record
    async with asyncio.timeout(WAIT):
        await observer.ended_event.wait()
    assert observer.endings == ["stopped"] and table.waiting == 0


async def test_without_forms_a_question_goes_to_on_elicit_and_a_misfit_answer_is_asked_again() -> (
    None
):
    replies = [
        {"action": "accept", "content": {"colour": 7}},
        ElicitResult("accept", {"colour": "jade"}),
    ]
    shown: list[str] = []

    async def on_elicit(question: Question, ctx: Context) -> Any:
        shown.append(question.message)
        return replies.pop(0)

    table, observer = make_table(on_elicit=on_elicit)
    ctx = context(table, caps={})
    async with asyncio.timeout(WAIT):
        reply = await ask_colour(ctx)
    assert reply == ElicitResult("accept", {"colour": "jade"})
    assert shown[0] == "Which colour?"
    assert shown[1].startswith("Which colour?\n\n(The previous answer could not be used: ")
    assert observer.questions[0].route == "browser" and observer.questions[0].attempt == 2
    assert observer.endings == ["accepted"] and table.waiting == 0


async def test_answers_that_never_fit_end_as_no_valid_answer_and_nobody_means_unavailable() -> None:
    async def always_wrong(question: Question, ctx: Context) -> Any:
        return {"action": "accept", "content": {}}

    table, observer = make_table(on_elicit=always_wrong)
    with pytest.raises(NoValidAnswer):
        async with asyncio.timeout(WAIT):
            await ask_colour(context(table, caps={}))
    assert observer.endings == ["declined"]

    nobody, _ = make_table()
    with pytest.raises(ElicitationUnavailable):
        await ask_colour(context(nobody, caps={}))
    assert nobody.waiting == 0
