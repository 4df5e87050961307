"""The recorder: the observer queueing every ask's changes, written in batches off the hot path; no SQL.

Owns the queue, the batching and the retries; the statements themselves, and how a batch becomes
them, are :mod:`ask_mcp.records.sql`'s. One writer task per event loop drains a queue of inserts
and conditional status updates in batches (gathered for up to GATHER_SECONDS or WRITE_AT
changes), has each batch planned into statement parameters on the event loop, and runs the
statements on a single database thread. A question sent to the client (MRTR) never waits for
the database; a question for the browser waits until its row exists, because the inbox is about
to show it. Every status update is conditional on the ask still being pending, so an answer
already recorded (a browser answer, an admin's cancel) is never overwritten.

Nothing is dropped when the database is away (PostgreSQL restarting, SQLite locked past its
timeout): the writes are kept in order and retried with backoff until they land. A row the
database will never take costs only itself, not the batch it came in.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import logging
import uuid
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from typing import Any, Final

from django.db import connection

from ask_mcp.models import Ask, storable
from ask_mcp.ops import metrics
from ask_mcp.protocol.forms import ElicitResult, read_settled
from ask_mcp.records import durable, limits, sql
from ask_mcp.records.choices import ROUTES
from ask_mcp.records.events import ENDED, announce
from ask_mcp.records.sql import TRANSIENT, Close
from ask_mcp.server.errors import ToolError
from ask_mcp.server.question import Ending, Question
from ask_mcp.team.auth import team_id_of, user_id_of
from ask_mcp.workers.loops import alive_here, start_in_loop

logger = logging.getLogger("ask_mcp.records.recorder")

BATCH_SIZE: Final = 500
"""Most operations written in one transaction."""
GATHER_SECONDS: Final = 0.025
"""How long the writer lets changes gather before writing them, unless someone waits (a flush)
or WRITE_AT changes are queued. One transaction per change cost more than the recording itself
under load: a SQLite commit alone is about 100 µs, whatever the batch holds."""
WRITE_AT: Final = 32
"""Queued changes (two per MRTR call) that start a write before the gather window ends. A batch
is planned on the event loop and written on a thread sharing the server's core, so requests
behind it wait for all of it: under load, 25 ms of changes (50 calls) held the rounds' p99 at
6 ms; batches of 32 changes keep it about 3 ms and cost little more (docs/measurements/performance.md)."""
RETRY_PAUSES: Final = (0.1, 0.25, 0.5, 1.0, 2.0)
"""Seconds before writing again after the database failed; the last repeats."""
NOT_RECORDED: Final = (
    "The question could not be put in the inbox: the database is unavailable right now. "
    "Try again shortly, or carry on without asking."
)
"""The tool error of a browser question whose row could not be written (nothing waits for it)."""


@dataclass(slots=True)
class _Insert:
    """A new ask to insert."""

    row: dict[str, Any]
    """The Ask's column values by attribute name (asked_by_id, not asked_by)."""


@dataclass(slots=True)
class _Barrier:
    """A flush: resolved once everything queued before it is written (or failed)."""

    done: asyncio.Future[None]


@dataclass(slots=True)
class _Refused:
    """An ask the table refused, to count on its principal's row for the limit and minute."""

    principal: str
    limit: str
    message: str
    at: dt.datetime


_Change = _Insert | Close | _Refused
"""What the writer writes."""
_Op = _Change | _Barrier
"""What the writer's queue holds: the changes it writes, and the flushes waiting on them."""


@dataclass(slots=True)
class _Written:
    """How writing one batch went."""

    ended: list[str]
    """Inbox asks it closed."""
    held: list[_Change]
    """Changes the database refused for now, to write again, oldest first."""
    problem: Exception | None
    """What the flushes waiting on the batch are told failed, if anything did."""
    failures: int
    """Failed attempts in a row so far (0 once a write landed): how long to pause."""


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def timestamp(seconds: float) -> dt.datetime:
    """A Question's time (seconds since the epoch) as the aware datetime its row holds."""
    return dt.datetime.fromtimestamp(seconds, dt.UTC)


class AskRecorder:
    """QuestionObserver writing Ask rows through one batching writer task, and the AskRecords
    that decide asks from their rows (:mod:`ask_mcp.records.durable`) on the same thread."""

    def __init__(self, *, batch_size: int = BATCH_SIZE) -> None:
        self.batch_size = batch_size
        self._queue: asyncio.Queue[_Op] | None = None
        self._urgent: asyncio.Event | None = None  # set: write what is queued now
        self._task: asyncio.Task[None] | None = None
        # One thread keeps one connection and serialises the writes.
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ask_mcp-recorder")

    async def asked(self, question: Question) -> None:
        if question.route == "client":
            # The hot path: queued, never awaited. The sealed requestState and the retry's own
            # arguments are what make this ask durable (ask_mcp.server.asking.recovery).
            self._submit(_Insert(self._row(question)))
            return
        # The inbox is about to show it: the row must exist first, or be the one it attaches to.
        opened = await self._on_thread(durable.open_ask, self._row(question), _now())
        if opened.refused is not None:  # no row: nobody is told of it
            raise limits.AskLimitReached(opened.refused.limit, opened.refused.message)
        question.id = opened.id
        question.attached = opened.attached
        question.attached_from = opened.previous_worker
        if opened.settled is not None:
            question.settled = read_settled(opened.settled)
        if opened.attached:
            await announce(ENDED, [opened.id])  # an agent waits on it again: redraw its line

    def ended(self, question: Question, status: Ending, answer: Mapping[str, Any] | None) -> None:
        self._submit(
            Close(
                uuid.UUID(question.id),
                status,
                storable(answer),
                _now(),
                ROUTES[question.route],
                question.worker or "",
                question.collector,
            )
        )

    def refused(self, question: Question, limit: str, message: str) -> None:
        """Count an ask the table refused (its capacity, the principal's share); queued, never awaited."""
        self._submit(_Refused(question.who.principal or "", limit, question.message, _now()))

    # ------------------------------------------------------------------ AskRecords

    async def decide(self, question: Question, reply: ElicitResult) -> ElicitResult:
        row = self._row(question)
        decided = await self._on_thread(
            durable.decide_ask, row, storable(reply.to_dict()), question.collector, _now()
        )
        if question.route != "client":
            await announce(ENDED, [question.id])
        return read_settled(decided) or ElicitResult("decline")

    async def reattach(self, question: Question) -> None:
        opened = await self._on_thread(durable.reattach_ask, self._row(question), _now())
        question.attached_from = opened.previous_worker
        if opened.settled is not None:
            question.settled = read_settled(opened.settled)

    async def withdraw(self, question: Question, reason: str = "") -> bool:
        label = question.collector or "the server"
        withdrawn = await self._on_thread(
            durable.withdraw_ask, uuid.UUID(question.id), reason, label, _now()
        )
        if withdrawn and question.route != "client":
            await announce(ENDED, [question.id])
        return withdrawn

    async def _on_thread[**P, T](
        self, function: Callable[P, T], *args: P.args, **kwargs: P.kwargs
    ) -> T:
        """Run `function` on the writer thread, after everything queued before it is written.

        Raises:
            ToolError: the database is unavailable (the call says so; nothing waits on it).
        """
        loop = asyncio.get_running_loop()
        try:
            await self.flush()
            return await loop.run_in_executor(self._executor, partial(function, *args, **kwargs))
        except TRANSIENT as exc:
            with contextlib.suppress(Exception):
                await loop.run_in_executor(self._executor, connection.close)
            raise ToolError(NOT_RECORDED) from exc

    async def flush(self) -> None:
        """Wait until everything submitted so far is written; raises what the write raised."""
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._submit(_Barrier(done))
        assert self._urgent is not None
        self._urgent.set()
        await done

    @property
    def queued(self) -> int:
        return self._queue.qsize() if self._queue is not None else 0

    def _row(self, question: Question) -> dict[str, Any]:
        who, credential = question.who, question.who.credential
        return {
            "id": uuid.UUID(question.id),
            "created": timestamp(question.created_at),
            "message": storable(question.message),
            "schema": storable(dict(question.schema)),
            "tool": question.tool,
            "toolkit": question.toolkit or "",
            "client_name": storable(question.client_name or ""),
            "principal": who.principal or "",
            "asked_by_id": user_id_of(who.principal),
            "team_id": team_id_of(who.team),
            "credential_kind": credential.kind if credential is not None else "",
            "credential_id": credential.id if credential is not None else "",
            "route": ROUTES[question.route],
            "people_only": who.people_only,
            "in_task": question.in_task,
            "status": Ask.Status.PENDING,
            "answer": None,
            "answered_by_id": None,
            "answered_at": None,
            "expires_at": timestamp(question.expires_at),
            "worker": question.worker or "",
            "call_id": question.call_id or "",
            "detached_at": None,
            "attach_key": question.attach_key or "",
            "collected_at": None,
            "collected_by": "",
            # Cut to their columns: a client names its own version, of any length.
            "credential": storable(credential.label[:200] if credential is not None else ""),
            "client_version": storable((question.client_version or "")[:100]),
            "session": (question.session or "")[:64],
            "reason": "",
        }

    def _submit(self, op: _Op) -> None:
        if not alive_here(self._task):
            self._queue = asyncio.Queue()
            self._urgent = asyncio.Event()
            self._task = start_in_loop(
                self._run(self._queue, self._urgent), name="ask_mcp recorder"
            )
        assert self._queue is not None and self._urgent is not None
        self._queue.put_nowait(op)
        if self._queue.qsize() >= min(WRITE_AT, self.batch_size):
            self._urgent.set()

    async def _run(self, queue: asyncio.Queue[_Op], urgent: asyncio.Event) -> None:
        """The writer: gather a batch, write it (or hold it to retry), release its flushes."""
        held: list[_Change] = []
        failures = 0
        while True:
            batch: list[_Op]
            if held:
                await asyncio.sleep(RETRY_PAUSES[min(failures, len(RETRY_PAUSES)) - 1])
                batch = list(held)
            else:
                batch = [await queue.get()]
                if not urgent.is_set():
                    with contextlib.suppress(TimeoutError):
                        async with asyncio.timeout(GATHER_SECONDS):
                            await urgent.wait()
            urgent.clear()
            while len(batch) < self.batch_size and not queue.empty():
                batch.append(queue.get_nowait())
            written = await self._write(batch, failures)
            held, failures = written.held, written.failures
            for op in batch:
                if not isinstance(op, _Barrier) or op.done.done():
                    continue
                if written.problem is not None:
                    op.done.set_exception(written.problem)
                else:
                    op.done.set_result(None)
            if written.ended:
                try:
                    await announce(ENDED, written.ended)
                except Exception:
                    logger.exception("could not tell the inboxes that asks ended")

    async def _write(self, batch: list[_Op], failures: int) -> _Written:
        """Write a batch's changes on the writer thread: all at once, else one by one."""
        loop = asyncio.get_running_loop()
        changes = [op for op in batch if not isinstance(op, _Barrier)]
        try:
            if not changes:
                return _Written([], [], None, 0)
            # Everything Python about the batch happens here; the writer thread only runs the
            # statements (the database's C code lets go of the GIL, Python on that thread would
            # hold the event loop up to the switch interval).
            inserts = [op.row for op in changes if isinstance(op, _Insert)]
            closes = [op for op in changes if isinstance(op, Close)]
            refused = [op for op in changes if isinstance(op, _Refused)]
            ended = await loop.run_in_executor(
                self._executor, _write_batch, sql.plan(inserts, closes), refused
            )
            return _Written(ended, [], None, 0)
        except TRANSIENT as exc:
            metrics.recorder_failed()
            logger.warning(
                "could not record %d ask change(s) (attempt %d); keeping them to retry: %s",
                len(changes),
                failures + 1,
                exc,
            )
            return _Written([], changes, exc, failures + 1)
        except Exception:
            # Some row the database will never take: write one at a time, losing only it.
            metrics.recorder_failed()
            logger.exception("could not record a batch of ask changes; writing them singly")
            ended, held, problem = await loop.run_in_executor(self._executor, write_singly, changes)
            return _Written(ended, held, problem, failures + 1 if held else 0)


def _write_batch(plan: sql.Plan, refused: list[_Refused]) -> list[str]:
    """Write a batch's rows, then count its refused asks (on the writer thread)."""
    ended = sql.write(plan)
    for one in refused:
        limits.count_refused(one.principal, one.limit, one.message, one.at)
    return ended


def write_singly(
    changes: list[_Change],
) -> tuple[list[str], list[_Change], Exception | None]:
    """Write each change in its own transaction (on the writer thread).

    Returns the inbox asks closed, the changes to retry (the database went away meanwhile) and
    the first refusal; a refused change is logged and dropped, the others are not held back.
    """
    ended: list[str] = []
    retry: list[_Change] = []
    first: Exception | None = None
    for change in changes:
        try:
            if isinstance(change, _Insert):
                ended += sql.write(sql.plan([change.row], []))
            elif isinstance(change, _Refused):
                limits.count_refused(change.principal, change.limit, change.message, change.at)
            else:
                ended += sql.write(sql.plan([], [change]))
        except TRANSIENT:
            retry.append(change)
        except Exception as exc:
            logger.exception("dropped one ask change the database refuses")
            first = first or exc
    return ended, retry, first


def recorder() -> AskRecorder:
    """Factory for ASK_MCP["OBSERVER"]: record every ask."""
    return AskRecorder()
