"""The elicitation table: every call waiting for a person, and how answers return; knows no envelope or transport.

A question travels one of three ways. To a 2026-07-28 client that shows forms it goes as a
multi round-trip request: the handler is *parked* here (its task stays suspended inside
``ctx.elicit``), the tools/call is answered ``input_required`` with a sealed requestState, and
the retry carrying ``inputResponses`` wakes the same task where it stopped; nothing is re-run.
To a legacy client it goes as a server-initiated request on the call's stream (an
:class:`~ask_mcp.server.ports.InputChannel` supplied by the era). Otherwise it goes to the
server's ``on_elicit`` hook (the browser inbox), as every question of a people-only caller
(``Context.who.people_only``) does, whatever its client declares. All three share the capacity,
the deadlines, the schema checks and the re-ask rule. It does not know the wire's envelope,
the eras' methods or any transport. Pure asyncio: no Django.

A question (:meth:`ElicitationTable.elicit`) is *asked* (the observer hears of it and it takes a
slot in the table), then re-asked while an accepted answer does not fit its form (at most
``MAX_REASKS`` times), and *ends* exactly once, as ``accepted``, ``declined``, ``cancelled``,
``expired`` or ``withdrawn`` (the observer hears of that too, and its slot is given back).

A multi round-trip call (:class:`~ask_mcp.server.asking.parked.ParkedCall`) moves between these states::

    run() ──▶ RUNNING ──_drive: the task finished──▶ _collect ──▶ DONE (finish's wire result)
                │  ▲
    cut(): every│  │ resume_local(): the retry answers every pending request
    request of  │  │ (one that answers none of them is _park-ed again, same requests)
    the round is▼  │
    queued:    PARKED (in the table, awaiting round N+1's requestState)
    _park          │
                   └──the deadline passes (_expire), expire_parked(), cancel_all(),
                      or the client leaves while RUNNING──▶ _drop ──▶ DROPPED
                      (the task is cancelled; its question ends "expired"/"withdrawn")

RUNNING means a request is waiting in :meth:`ElicitationTable._drive` (``call.wake`` is set);
PARKED means no request is (``call.wake`` is None) and the call sits in ``_calls`` under a
timer. A requestState names one round of one call: once that round resumes, the same state is
refused as ``used``.

Long: the three routes share one life cycle (the slot, the deadline, the re-ask rule and the
single ending the observer hears), and the state machine above is read best as one class;
what is not that life cycle lives beside it (slots, parked calls, settlement, recovery).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import secrets
import time
from collections.abc import Callable, Coroutine, Mapping
from functools import partial
from typing import Any, Final

from ask_mcp.protocol import mcp
from ask_mcp.protocol.forms import (
    Action,
    ElicitResult,
    FieldError,
    check_form_schema,
    form_errors,
    read_elicit_result,
    read_settled,
)
from ask_mcp.server.asking.capacity import Slots
from ask_mcp.server.asking.parked import Finish, ParkedCall
from ask_mcp.server.asking.settlement import AdminExpired, first_of
from ask_mcp.server.context import AnswerUrl, Context, OnElicit
from ask_mcp.server.errors import (
    ElicitationCapacityExceeded,
    ElicitationTimedOut,
    ElicitationUnavailable,
    MissingClientCapability,
    NoValidAnswer,
    PrincipalShareExceeded,
    QuestionNoLongerWaiting,
    cancelled_by_client,
)
from ask_mcp.server.ids import new_ask_id
from ask_mcp.server.ports import (
    NULL_STREAM,
    AskRecords,
    Notifier,
    QuestionObserver,
    RefusalCounter,
    Relay,
    Stream,
)
from ask_mcp.server.question import Ending, Question, Route, attach_key
from ask_mcp.server.request_state import (
    InvalidState,
    QuestionClaims,
    StateClaims,
    StateSealer,
    request_binding,
)

logger = logging.getLogger("ask_mcp.elicitation")

MAX_REASKS: Final = 2
"""How many times an answer that does not fit its form is asked again before giving up."""
EXPIRY_GRACE: Final = 1.0
"""Seconds a parked call outlives its state's expiry, so a late retry meets "expired", not "gone"."""
RECORD_OWNER: Final = "@record"
"""The owner a requestState names when no parked call holds its round: the call is finished
from its ask's record (:mod:`ask_mcp.server.asking.recovery`)."""

STATUS_FOR_ACTION: Final[Mapping[Action, Ending]] = {
    "accept": "accepted",
    "decline": "declined",
    "cancel": "cancelled",
}
"""The ending a question takes from each action of the person's reply."""
REPLIED: Final[frozenset[Ending]] = frozenset(STATUS_FOR_ACTION.values())
"""Endings the person's reply gave: only these have a time to answer."""
CALL_LEFT: Final[frozenset[Ending]] = frozenset({"detached", "withdrawn", "stopped"})
"""Endings of a call that went away undecided: an ask another call attached to still waits."""


def new_question(
    ctx: Context,
    message: str,
    schema: Mapping[str, Any],
    route: Route,
    *,
    now: float,
    limit: float,
    worker: str,
) -> Question:
    """The question `ctx`'s call asks (plain data the observers see; the table chose `route`), waiting `limit` seconds from `now` in `worker`.

    A question answered in the browser gets an attach key: a call asking the same (the same
    principal, tool and arguments, or the call's idempotency key; people-only or not, as this
    one) attaches to its ask.
    """
    attach = None
    if route != "client":
        same = ctx.idempotency_key or request_binding(ctx.method, ctx.name, ctx.arguments)
        attach = attach_key(ctx.who.principal, ctx.name, same, people_only=ctx.who.people_only)
    return Question(
        id=new_ask_id().hex,
        message=message,
        schema=schema,
        tool=ctx.name,
        who=ctx.who,
        route=route,
        created_at=now,
        expires_at=now + limit,
        client_name=ctx.client_name,
        worker=worker,
        toolkit=ctx.toolkit,
        attach_key=attach,
        collector=f"{ctx.client_name or 'a client'} ({ctx.protocol_version}) via {worker}",
        client_version=ctx.client_version,
        session=ctx.session,
    )


class ElicitationTable:
    """Parked and held calls, their capacity, their deadlines, and how each is resumed."""

    def __init__(
        self,
        *,
        sealer: StateSealer,
        capacity: int = 64,
        share: int | None = None,
        ttl: float = 600.0,
        on_elicit: OnElicit | None = None,
        observer: QuestionObserver | None = None,
        relay: Relay | None = None,
        answer_url: AnswerUrl | None = None,
        records: AskRecords | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.sealer = sealer
        if records is None and isinstance(observer, AskRecords):
            records = observer
        self.records = records
        """The asks' durable record, which finishes calls whose parked handler is gone."""
        self.stopping = False
        """Set while the process shuts down: calls it ends leave their asks pending."""
        self.answer_url = answer_url
        self.slots = Slots(capacity, share)
        self.ttl = ttl
        self.on_elicit = on_elicit
        self.observer = observer
        self.relay = relay
        self.clock = clock
        self.worker = relay.worker if relay is not None else f"local.{secrets.token_hex(6)}"
        if relay is not None:
            relay.attach(self)
        self._calls: dict[str, ParkedCall] = {}
        self._admin_expired = AdminExpired()
        self._seq = itertools.count(1)
        self._issued = 0

    # ------------------------------------------------------------------ introspection

    @property
    def capacity(self) -> int:
        return self.slots.capacity

    @property
    def share(self) -> int:
        """The most slots one principal holds at once."""
        return self.slots.share

    @property
    def waiting(self) -> int:
        """Questions currently occupying a slot in the table."""
        return self.slots.in_use

    def parked_call(self, call_id: str) -> ParkedCall | None:
        return self._calls.get(call_id)

    # ------------------------------------------------------------------ asking

    async def elicit(
        self,
        ctx: Context,
        message: str,
        schema: Mapping[str, Any],
        *,
        timeout: float | None,
        key: str,
    ) -> ElicitResult:
        """Ask one form question by whichever route reaches a person; see Context.elicit."""
        check_form_schema(schema)
        question = self._question(ctx, message, schema, self._route(ctx), timeout)
        parked = ctx.input_channel if isinstance(ctx.input_channel, ParkedCall) else None
        travels = parked is not None and question.route != "browser"
        try:
            if travels:
                assert parked is not None
                question.call_id = parked.id
                self._hold_slot(parked)  # held until the call ends, across every round
            else:
                self.slots.take(ctx.who.principal)
        except ElicitationCapacityExceeded as exc:
            if isinstance(self.observer, RefusalCounter):  # staff see what was refused
                limit = "share" if isinstance(exc, PrincipalShareExceeded) else "capacity"
                self.observer.refused(question, limit, str(exc))
            raise
        status: Ending = "withdrawn"
        answer: Mapping[str, Any] | None = None
        try:
            if self.observer is not None:
                await self.observer.asked(question)
            reply = await self._ask_until_valid(ctx, question, key)
            status = STATUS_FOR_ACTION[reply.action]
            answer = reply.content
            return reply
        except ElicitationTimedOut:
            status = "expired"
            raise
        except NoValidAnswer:
            status = "declined"
            raise
        except asyncio.CancelledError as exc:
            if parked is not None:
                status = parked.end_reason
            elif not cancelled_by_client(exc):
                status = "detached"  # the connection dropped: a re-ask may attach
            raise
        finally:
            if not travels:
                self.slots.give_back(ctx.who.principal)
            if self.observer is not None:
                self._ended(question, status, answer)

    def _ended(self, question: Question, status: Ending, answer: Mapping[str, Any] | None) -> None:
        """Tell the observer how the question ended, as far as its ask is concerned."""
        assert self.observer is not None
        if (status == "detached" or status == "withdrawn") and self.stopping:
            status = "stopped"  # a deploy or a restart: the ask stays pending (docs: deploying)
        elif status == "detached" and question.route == "client":
            status = "withdrawn"  # the client's form goes with its call
        if status in CALL_LEFT and question.route != "client":
            relay = self.relay
            if relay is not None and relay.waits_for(question.id):
                return  # another call in this worker attached to the same ask still waits
        self.observer.ended(question, status, answer)

    def _route(self, ctx: Context) -> Route:
        """How a question from `ctx` reaches a person: the client's form, a URL it opens, the inbox.

        A people-only caller's question always goes to the inbox, whatever the client declares:
        no form or link is offered, so the agent holding the token has nothing to answer itself.

        Raises:
            ElicitationUnavailable: nobody can be asked.
        """
        if ctx.who.people_only:
            if self.on_elicit is not None:
                return "browser"
            raise ElicitationUnavailable(people_only=True)
        if ctx.client_shows_forms:
            return "client"
        if self.on_elicit is not None and self._client_opens_urls(ctx):
            return "url"
        if self.on_elicit is not None:
            return "browser"
        raise ElicitationUnavailable

    def _question(
        self,
        ctx: Context,
        message: str,
        schema: Mapping[str, Any],
        route: Route,
        timeout: float | None,
    ) -> Question:
        """The question as observers see it, its deadline the sooner of `timeout` and the TTL."""
        now = self.clock()
        limit = self.ttl if timeout is None else max(0.0, min(timeout, self.ttl))
        return new_question(ctx, message, schema, route, now=now, limit=limit, worker=self.worker)

    async def _ask_until_valid(self, ctx: Context, question: Question, key: str) -> ElicitResult:
        text = question.message
        for attempt in range(1, MAX_REASKS + 2):
            question.attempt = attempt
            reply = await self._ask_once(ctx, question, text, key)
            if reply.action != "accept":
                return reply
            content = reply.content or {}
            problems = form_errors(question.schema, content)
            if reply.unreadable is not None:
                problems.insert(0, FieldError("", reply.unreadable))
            if not problems:
                fields = question.schema["properties"]
                return ElicitResult("accept", {k: v for k, v in content.items() if k in fields})
            summary = "; ".join(str(problem) for problem in problems)
            text = f"{question.message}\n\n(The previous answer could not be used: {summary}.)"
        raise NoValidAnswer(MAX_REASKS + 1, summary)

    def _client_opens_urls(self, ctx: Context) -> bool:
        """URL mode needs a page to point at and a 2026-07-28 client that opens links (MRTR)."""
        return (
            self.answer_url is not None
            and isinstance(ctx.input_channel, ParkedCall)
            and mcp.supports_url_elicitation(ctx.capabilities)
        )

    async def _ask_once(
        self, ctx: Context, question: Question, text: str, key: str
    ) -> ElicitResult:
        if question.settled is not None:  # attached to an answer no call had collected
            settled, question.settled = question.settled, None
            return settled
        if isinstance(ctx.input_channel, ParkedCall) and question.route != "browser":
            ctx.input_channel.question = QuestionClaims(
                question.id, key, question.attempt, question.route
            )
        if question.route == "url":
            return await self._ask_by_url(ctx, question, text, key)
        if question.route == "client":
            assert ctx.input_channel is not None
            params = {"mode": "form", "message": text, "requestedSchema": question.schema}
            asking = ctx.input_channel.request(
                key, {"method": mcp.ELICITATION_METHOD, "params": params}, question.expires_at
            )
            relay = None if isinstance(ctx.input_channel, ParkedCall) else self.relay
            # A parked call is settled on its retry (answer_parked); one on a stream at once.
            raw = await (asking if relay is None else first_of(asking, relay, question.id))
            # A reply that is not an ElicitResult is a refusal, not a fault.
            return read_elicit_result(raw) or ElicitResult("decline")
        assert self.on_elicit is not None
        shown = question.shown_as(text)
        try:
            async with asyncio.timeout(max(0.0, question.expires_at - self.clock())):
                reply = await self.on_elicit(shown, ctx)
        except TimeoutError as exc:
            raise ElicitationTimedOut from exc
        # The hook is the server's own (the inbox): its settlement may carry the admin's reason.
        return read_settled(reply) or ElicitResult("decline")

    async def _ask_by_url(
        self, ctx: Context, question: Question, text: str, key: str
    ) -> ElicitResult:
        """URL mode: the question waits in `on_elicit` (the inbox) and the client is sent its page.

        The client's `accept` is consent to open the page, not an answer (2026-07-28 has no
        elicitationId and no completion notification): its retry waits here for the person's
        submission, the timeout or the TTL. A submission that arrived first wins over the
        client's reply; a decline or cancel without one ends the question.
        """
        assert self.on_elicit is not None and self.answer_url is not None
        assert ctx.input_channel is not None
        shown = question.shown_as(text)
        # Started before the input request is queued: the inbox registers the question in its
        # first step, so the page exists by the time the client can open it.
        waiting = asyncio.ensure_future(self.on_elicit(shown, ctx))
        try:
            params = {"mode": "url", "message": text, "url": self.answer_url(shown, ctx)}
            raw = await ctx.input_channel.request(
                key, {"method": mcp.ELICITATION_METHOD, "params": params}, question.expires_at
            )
            consent = read_elicit_result(raw) or ElicitResult("decline")
            submitted = waiting.done() and not waiting.cancelled() and not waiting.exception()
            if consent.action != "accept" and not submitted:
                await self._share_decision(question, consent.action)
                return ElicitResult(consent.action)
            try:
                async with asyncio.timeout(max(0.0, question.expires_at - self.clock())):
                    reply = await waiting
            except TimeoutError as exc:
                raise ElicitationTimedOut from exc
        finally:
            if not waiting.done():
                waiting.cancel()
        return read_settled(reply) or ElicitResult("decline")

    async def _share_decision(self, question: Question, action: Action) -> None:
        """A call's own decision on its ask (URL mode's refusal) wakes every call attached to it.

        Calls that asked the same wait on the ask's settlement, which a person's answer or an
        admin's decision gives; a refusal in the client gave none, and they waited for the TTL.
        """
        if self.relay is None:
            return
        try:
            await self.relay.settle(self.worker, question.id, {"action": action})
        except Exception:  # the layer is down: the attached calls end at their deadline
            logger.warning("could not share the decision on ask %s", question.id, exc_info=True)

    async def request_inputs(
        self, ctx: Context, requests: Mapping[str, Mapping[str, Any]]
    ) -> dict[str, Any]:
        """Send several raw input requests in one round; see Context.request_inputs."""
        for request in requests.values():
            needed = mcp.capability_for_request(request)
            if ctx.input_channel is None or not mcp.declares(ctx.capabilities, needed):
                raise MissingClientCapability(
                    f"This request needs the client capability {next(iter(needed))!r}, which "
                    "the client did not declare.",
                    needed,
                )
        channel = ctx.input_channel
        assert channel is not None
        parked = channel if isinstance(channel, ParkedCall) else None
        if parked is not None:
            self._hold_slot(parked)
        else:
            self.slots.take(ctx.who.principal)
        deadline = self.clock() + self.ttl
        try:
            answers = await asyncio.gather(
                *(
                    channel.request(key, dict(request), deadline)
                    for key, request in requests.items()
                )
            )
        finally:
            if parked is None:
                self.slots.give_back(ctx.who.principal)
        return dict(zip(requests, answers, strict=True))

    def _hold_slot(self, call: ParkedCall) -> None:
        """A call takes one slot for its principal on its first question, across every round."""
        if not call.holds_slot:
            self.slots.take(call.ctx.who.principal)
            call.holds_slot = True

    def _release_slot(self, call: ParkedCall) -> None:
        if call.holds_slot:
            call.holds_slot = False
            self.slots.give_back(call.ctx.who.principal)

    # ------------------------------------------------------------------ multi round-trip calls

    async def run(
        self,
        ctx: Context,
        handler: Callable[[], Coroutine[Any, Any, Any]],
        *,
        binding: str,
        finish: Finish,
        preset: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Start a call that may park: run `handler` until it finishes or waits for input.

        Returns the wire result of this request: `finish` applied to the handler's outcome, or
        an `input_required` result naming what the handler waits for.
        """
        call = ParkedCall(
            table=self,
            id=str(next(self._seq)),
            ctx=ctx,
            binding=binding,
            principal=self.sealer.principal_digest(ctx.who.principal),
            preset=dict(preset) if preset else None,
            finish=finish,
        )
        self._issued += 1
        ctx.input_channel = call
        call.task = asyncio.get_running_loop().create_task(handler())
        call.task.add_done_callback(partial(self._task_done, call))
        return await self._drive(call)

    async def resume(
        self,
        claims: StateClaims,
        responses: Mapping[str, Any],
        *,
        stream: Stream,
        progress_token: str | int | None = None,
        log_level: str | None = None,
    ) -> dict[str, Any]:
        """Wake the parked call a verified requestState names, with the client's responses.

        Raises:
            ElicitationTimedOut: the state expired (a plain "did not answer in time" result).
            QuestionNoLongerWaiting: the call is gone (its worker restarted).
            InvalidState: the state was already used (a replay or a double submit).
        """
        if claims.expires_at <= self.clock():
            raise ElicitationTimedOut
        if claims.owner == RECORD_OWNER:
            raise QuestionNoLongerWaiting  # no parked call: finished from the record
        if claims.owner != self.worker:
            if self.relay is None:
                raise QuestionNoLongerWaiting
            return await self.relay.resume_remote(
                claims, responses, stream, progress_token, log_level
            )
        return await self.resume_local(
            claims, responses, stream=stream, progress_token=progress_token, log_level=log_level
        )

    async def resume_local(
        self,
        claims: StateClaims,
        responses: Mapping[str, Any],
        *,
        stream: Notifier,
        progress_token: str | int | None = None,
        log_level: str | None = None,
    ) -> dict[str, Any]:
        """The owner's half of :meth:`resume`, also reached through a relay."""
        call = self._calls.get(claims.call)
        if call is None:
            if (reason := self._admin_expired.reason(claims.call)) is not None:
                raise ElicitationTimedOut(reason)  # an admin expired it: say so, and why
            if claims.call.isdigit() and int(claims.call) <= self._issued:
                raise InvalidState("used")
            raise QuestionNoLongerWaiting
        if call.round != claims.round or call.wake is not None:
            raise InvalidState("used")
        call.round += 1
        ctx = call.ctx
        ctx.stream = stream
        ctx.progress_token = progress_token
        ctx.log_level = log_level
        assert call.task is not None
        if call.task.done():
            return self._collect(call)
        answers = {**responses, **call.overrides}
        if any(key not in answers for key in call.pending):
            return self._park(call)  # ask the same again
        if call.timer is not None:
            call.timer.cancel()
            call.timer = None
        for key, pending in call.pending.items():
            if not pending.future.done():
                pending.future.set_result(answers[key])
        call.pending.clear()
        call.overrides.clear()
        return await self._drive(call)

    def answer_parked(self, call_id: str, reply: ElicitResult) -> bool:
        """Settle a parked call's pending questions server-side (an admin's cancel or expire).

        The call resumes with `reply` itself (not its wire form: it may carry the admin's reason)
        when its client retries. False when no such call waits.
        """
        call = self._calls.get(call_id)
        if call is None or not call.pending:
            return False
        call.overrides = dict.fromkeys(call.pending, reply)
        return True

    def expire_parked(self, call_id: str, reason: str = "") -> bool:
        """End a parked call now as if its deadline had passed; its client's retry reads the
        timeout, with the admin's `reason`. False when no such call waits."""
        call = self._calls.get(call_id)
        if call is None or call.wake is not None:
            return False
        self._drop(call, "expired")
        self._admin_expired.note(call_id, reason)
        return True

    async def _drive(self, call: ParkedCall) -> dict[str, Any]:
        """RUNNING: wait until the handler finishes (then :meth:`_collect`) or its round is
        :meth:`cut` (then :meth:`_park`). A request cancelled meanwhile (the client left)
        drops the call as withdrawn."""
        assert call.task is not None
        wake = call.wake = asyncio.get_running_loop().create_future()
        if call.task.done():
            wake.set_result(None)
        try:
            await wake
        except asyncio.CancelledError as exc:
            # The client went away (2026-07-28 cancellation): the call ends; its browser ask
            # stays answerable a while unless the client cancelled it explicitly.
            self._drop(call, "withdrawn" if cancelled_by_client(exc) else "detached")
            raise
        finally:
            call.wake = None
        if call.task.done():
            return self._collect(call)
        return self._park(call)

    def _collect(self, call: ParkedCall) -> dict[str, Any]:
        """RUNNING or PARKED -> DONE: the handler finished; the call leaves the table and its
        outcome becomes the wire result through the call's `finish`."""
        self._drop(call, "withdrawn")
        task = call.task
        assert task is not None
        if task.cancelled():
            return call.finish(None, QuestionNoLongerWaiting())
        error = task.exception()
        return call.finish(None if error is not None else task.result(), error)

    def _park(self, call: ParkedCall) -> dict[str, Any]:
        """RUNNING -> PARKED (or PARKED again): keep the call under a timer and answer this
        round `input_required`, with its requests and a requestState sealed for the next."""
        call.preset = None  # answers sent up front apply to the first request only
        # This round's response is about to end: let go of it (the transport's request objects
        # and the body sent) while the call waits; the retry brings the next round's stream.
        call.ctx.stream = NULL_STREAM
        call.deadline = min(pending.deadline for pending in call.pending.values())
        loop = asyncio.get_running_loop()
        if call.timer is not None:
            call.timer.cancel()
        delay = call.deadline - self.clock() + EXPIRY_GRACE
        call.timer = loop.call_at(loop.time() + delay, self._expire, call)
        self._calls[call.id] = call
        if self.relay is not None:
            self.relay.ensure_listening()
        question = call.question
        if question is not None and list(call.pending) != [question.key]:
            question = None  # finished from the record only when it waits on that one question
        token = self.sealer.seal(
            StateClaims(
                call.id,
                call.round,
                self.worker,
                call.principal,
                call.binding,
                call.deadline,
                question,
            )
        )
        requests = {key: pending.request for key, pending in call.pending.items()}
        return {
            "resultType": mcp.RESULT_INPUT_REQUIRED,
            "inputRequests": requests,
            "requestState": token,
        }

    def cut(self, call: ParkedCall) -> None:
        """End the current round: the handler has queued every input request it makes now, so
        the request waiting in :meth:`_drive` may park the call (called by the ParkedCall)."""
        call.cut_handle = None
        if call.wake is not None and not call.wake.done():
            call.wake.set_result(None)

    def _task_done(self, call: ParkedCall, task: asyncio.Task[Any]) -> None:
        """The handler task ended: wake a waiting :meth:`_drive` and give the call's slot back."""
        if call.wake is not None and not call.wake.done():
            call.wake.set_result(None)
        self._release_slot(call)

    def _expire(self, call: ParkedCall) -> None:
        """The timer of a PARKED call fired: drop it as expired (a RUNNING call is left alone)."""
        call.timer = None
        if call.wake is None:
            self._drop(call, "expired")

    def _drop(self, call: ParkedCall, reason: Ending) -> None:
        """-> DROPPED (or the bookkeeping half of DONE): forget the call, its timer and its
        slot; a task still running is cancelled, its question ending as `reason`."""
        if call.timer is not None:
            call.timer.cancel()
            call.timer = None
        if call.cut_handle is not None:
            call.cut_handle.cancel()
            call.cut_handle = None
        self._calls.pop(call.id, None)
        self._release_slot(call)
        if call.task is not None and not call.task.done():
            call.end_reason = reason
            call.task.cancel()

    def cancel_all(self) -> list[asyncio.Task[Any]]:
        """Cancel every parked call (server shutdown): their asks stay pending, and a retry
        finishes them from the record where the tool allows. Returns the cancelled tasks."""
        self.stopping = True
        tasks = [call.task for call in self._calls.values() if call.task is not None]
        for call in list(self._calls.values()):
            self._drop(call, "stopped")
        return [task for task in tasks if task.cancelled() or not task.done()]


__all__ = ["ElicitationTable"]
