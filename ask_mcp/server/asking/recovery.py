"""Finishing a call from its ask's record when its parked handler is gone; knows no database, envelope or transport.

A 2026-07-28 retry whose requestState names a call no worker holds any more (its process was
restarted or killed, or the retry reached a worker whose peer died) would read "no longer
waiting". For a tool that declares :class:`~ask_mcp.server.catalog.toolkit.FromRecord` (its result is a
pure function of its arguments and the reply, as ``user_ask``'s is) the call is finished here
instead. The sealed state names the ask, the input request's key and the attempt; the retry
brings the arguments (the state's binding has checked them) and the answer, which is checked
against the same form and re-asked with the reason when it does not fit. The ask's record
(:class:`~ask_mcp.server.ports.AskRecords`) decides it exactly once across workers and
restarts. No handler is re-run: the tool's two pure functions give what it would have given.

For URL mode the person answers on the ask's page: the retry collects that answer, also when it
comes after the ask's expiry (the person answered in time), or waits for it. Pure asyncio.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ask_mcp.protocol import mcp
from ask_mcp.protocol.forms import ElicitResult, FieldError, form_errors, read_elicit_result
from ask_mcp.server.asking.parked import Finish
from ask_mcp.server.asking.table import MAX_REASKS, RECORD_OWNER
from ask_mcp.server.catalog.toolkit import FromRecord
from ask_mcp.server.context import Context
from ask_mcp.server.errors import (
    ElicitationTimedOut,
    NoValidAnswer,
    QuestionNoLongerWaiting,
)
from ask_mcp.server.ports import AskRecords
from ask_mcp.server.question import Question
from ask_mcp.server.request_state import QuestionClaims, StateClaims

if TYPE_CHECKING:
    from ask_mcp.server.asking.table import ElicitationTable


async def finish_from_record(
    table: ElicitationTable,
    ctx: Context,
    claims: StateClaims,
    responses: Mapping[str, Any],
    recorded: FromRecord,
    finish: Finish,
) -> dict[str, Any]:
    """The retry's wire result, finished from the ask's record (or a re-ask of its form).

    Raises:
        QuestionNoLongerWaiting: the state names no question, or the server keeps no record.
        InvalidState: ``"used"``: a call already collected the ask's decision (a replay).
    """
    sealed, records = claims.question, table.records
    if sealed is None or records is None:
        raise QuestionNoLongerWaiting
    message, schema = recorded.form(ctx.arguments)
    question = Question(
        id=sealed.ask,
        message=message,
        schema=schema,
        tool=ctx.name,
        who=ctx.who,
        route=sealed.route,
        created_at=table.clock(),
        expires_at=claims.expires_at,
        client_name=ctx.client_name,
        attempt=sealed.attempt,
        worker=table.worker,
        toolkit=ctx.toolkit,
        collector=f"{ctx.client_name or 'a client'} ({ctx.protocol_version}) via "
        f"{table.worker}, from the record",
    )
    raw = responses.get(sealed.key)
    try:
        if sealed.route == "url":
            consent = read_elicit_result(raw) if isinstance(raw, Mapping) else None
            decided = await _by_url(table, records, ctx, question, consent)
        else:
            outcome = await _by_form(table, records, claims, question, raw)
            if not isinstance(outcome, ElicitResult):
                return outcome  # the form again, with what was wrong
            decided = outcome
    except (ElicitationTimedOut, QuestionNoLongerWaiting, NoValidAnswer) as exc:
        return finish(None, exc)
    return finish(recorded.result(ctx.arguments, decided), None)


async def _by_form(
    table: ElicitationTable,
    records: AskRecords,
    claims: StateClaims,
    question: Question,
    raw: Any,
) -> ElicitResult | dict[str, Any]:
    """The client's form: its answer checked against the form and decided on the record, or
    the form asked again (an answer that does not fit is re-asked with the reason)."""
    sealed = claims.question
    assert sealed is not None
    if claims.expires_at <= table.clock():
        raise ElicitationTimedOut
    schema = question.schema
    if raw is None:  # the retry answered nothing: ask the same again
        return _ask_again(table, claims, sealed, question.message, schema)
    # A reply that is not an ElicitResult is a refusal, as from a parked handler.
    reply = (read_elicit_result(raw) if isinstance(raw, Mapping) else None) or ElicitResult(
        "decline"
    )
    if reply.action == "accept":
        problems = form_errors(schema, reply.content or {})
        if reply.unreadable is not None:  # an accept is never read as a decline: ask again
            problems.insert(0, FieldError("", reply.unreadable))
        if problems:
            summary = "; ".join(str(problem) for problem in problems)
            if sealed.attempt > MAX_REASKS:
                raise NoValidAnswer(MAX_REASKS + 1, summary)
            text = f"{question.message}\n\n(The previous answer could not be used: {summary}.)"
            again = QuestionClaims(sealed.ask, sealed.key, sealed.attempt + 1, "client")
            return _ask_again(table, claims, again, text, schema)
        fields = schema.get("properties", {})
        content = {k: v for k, v in (reply.content or {}).items() if k in fields}
        reply = ElicitResult("accept", content)
    return await records.decide(question, reply)


async def _by_url(
    table: ElicitationTable,
    records: AskRecords,
    ctx: Context,
    question: Question,
    consent: ElicitResult | None,
) -> ElicitResult:
    """URL mode: the person's answer on the ask's page, given already or awaited until expiry."""
    question.attached = True  # the ask exists: no second card, no second announcement
    await records.reattach(question)
    if question.settled is not None:
        return await records.decide(question, question.settled)
    if consent is not None and consent.action != "accept":
        return await records.decide(question, consent)  # the client's decline or cancel
    remaining = question.expires_at - table.clock()
    if remaining <= 0 or table.on_elicit is None:
        raise ElicitationTimedOut
    try:
        async with asyncio.timeout(remaining):
            raw = await table.on_elicit(question, ctx)
    except TimeoutError as exc:
        raise ElicitationTimedOut from exc
    reply = raw if isinstance(raw, ElicitResult) else read_elicit_result(raw)
    return await records.decide(question, reply or ElicitResult("decline"))


def _ask_again(
    table: ElicitationTable,
    claims: StateClaims,
    sealed: QuestionClaims,
    message: str,
    schema: Mapping[str, Any],
) -> dict[str, Any]:
    """An `input_required` round with no parked call behind it: its state names the record."""
    state = StateClaims(
        claims.call,
        claims.round + 1,
        RECORD_OWNER,
        claims.principal,
        claims.binding,
        claims.expires_at,
        sealed,
    )
    params = {"mode": "form", "message": message, "requestedSchema": dict(schema)}
    return {
        "resultType": mcp.RESULT_INPUT_REQUIRED,
        "inputRequests": {sealed.key: {"method": mcp.ELICITATION_METHOD, "params": params}},
        "requestState": table.sealer.seal(state),
    }


__all__ = ["finish_from_record"]
