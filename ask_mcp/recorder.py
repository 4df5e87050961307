"""The recorder: the question observer that writes every ask to the database, off the hot path.

One writer task per process drains a queue of inserts and conditional status updates in
batches, on a single database thread. A question sent to the client (MRTR) never waits for
the database; a question for the browser waits until its row exists, because the inbox is
about to show it. Every status update is conditional on the ask still being pending, so an
answer already recorded (a browser answer, an admin's cancel) is never overwritten.

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
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Final

from django.db import InterfaceError, OperationalError, connection, transaction

from . import conf, sweeper
from .auth import user_id_of
from .inbox import ENDED, announce
from .models import Ask, AskEvent, event_for_status, storable
from .notify import team_id_of
from .server.elicitation import Question
from .server.errors import ToolError

logger = logging.getLogger("ask_mcp.recorder")

BATCH_SIZE: Final = 500
"""Most operations written in one transaction."""
ANSWERED: Final = frozenset({Ask.Status.ACCEPTED, Ask.Status.DECLINED, Ask.Status.CANCELLED})
RETRY_PAUSES: Final = (0.1, 0.25, 0.5, 1.0, 2.0)
"""Seconds before writing again after the database failed; the last repeats."""
NOT_RECORDED: Final = (
    "The question could not be put in the inbox: the database is unavailable right now. "
    "Try again shortly, or carry on without asking."
)
TRANSIENT: Final = (OperationalError, InterfaceError)
"""Database errors that pass (a lost connection, a lock): the same write will work later."""


@dataclass(slots=True)
class _Insert:
    ask: Ask


@dataclass(slots=True)
class _Close:
    id: uuid.UUID
    status: str
    answer: Mapping[str, Any] | None
    at: dt.datetime
    route: str


@dataclass(slots=True)
class _Barrier:
    done: asyncio.Future[None]


_Op = _Insert | _Close | _Barrier


def timestamp(seconds: float) -> dt.datetime:
    return dt.datetime.fromtimestamp(seconds, dt.UTC)


class AskRecorder:
    """QuestionObserver writing Ask rows through one batching writer task."""

    def __init__(self, *, batch_size: int = BATCH_SIZE) -> None:
        self.batch_size = batch_size
        self._queue: asyncio.Queue[_Op] | None = None
        self._task: asyncio.Task[None] | None = None
        # One thread keeps one connection and serialises the writes.
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ask_mcp-recorder")
        self._toolkits: dict[str, str] | None = None
        # The server is built on its first request: from then on the sweeper closes what a
        # crashed predecessor left pending, even if nobody asks or opens the inbox.
        with contextlib.suppress(RuntimeError):  # no event loop here: started on first use
            asyncio.get_running_loop()
            sweeper.SWEEPER.ensure_running()

    async def asked(self, question: Question) -> None:
        self._submit(_Insert(self._row(question)))
        if question.route != Ask.Route.CLIENT:
            try:
                await self.flush()  # the inbox is about to show it: the row must exist
            except TRANSIENT as exc:
                raise ToolError(NOT_RECORDED) from exc

    def ended(self, question: Question, status: str, answer: Mapping[str, Any] | None) -> None:
        self._submit(
            _Close(
                uuid.UUID(question.id),
                status,
                storable(answer),
                dt.datetime.now(dt.UTC),
                question.route,
            )
        )

    async def flush(self) -> None:
        """Wait until everything submitted so far is written; raises what the write raised."""
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._submit(_Barrier(done))
        await done

    @property
    def queued(self) -> int:
        return self._queue.qsize() if self._queue is not None else 0

    def _row(self, question: Question) -> Ask:
        return Ask(
            id=uuid.UUID(question.id),
            created=timestamp(question.created_at),
            message=storable(question.message),
            schema=storable(dict(question.schema)),
            tool=question.tool,
            toolkit=self._toolkit_of(question.tool),
            client_name=storable(question.client_name or ""),
            principal=question.principal or "",
            asked_by_id=user_id_of(question.principal),
            team_id=team_id_of(question.team),
            route=question.route,
            status=Ask.Status.PENDING,
            expires_at=timestamp(question.expires_at),
            worker=question.worker or "",
            call_id=question.call_id or "",
        )

    def _toolkit_of(self, tool: str) -> str:
        if self._toolkits is None:
            server = conf.get_server()
            self._toolkits = {
                each.name: toolkit.toolkit_name()
                for toolkit, prefix in server.toolkits
                for each in toolkit.tools(prefix)
            }
        return self._toolkits.get(tool, "")

    def _submit(self, op: _Op) -> None:
        loop = asyncio.get_running_loop()
        if self._task is None or self._task.done() or self._task.get_loop() is not loop:
            self._queue = asyncio.Queue()
            self._task = loop.create_task(self._run(self._queue), name="ask_mcp recorder")
            sweeper.SWEEPER.ensure_running()
        assert self._queue is not None
        self._queue.put_nowait(op)

    async def _run(self, queue: asyncio.Queue[_Op]) -> None:
        loop = asyncio.get_running_loop()
        held: list[_Op] = []  # writes the database refused for now, oldest first
        failures = 0
        while True:
            if held:
                await asyncio.sleep(RETRY_PAUSES[min(failures, len(RETRY_PAUSES)) - 1])
                batch = held
            else:
                batch = [await queue.get()]
            while len(batch) < self.batch_size and not queue.empty():
                batch.append(queue.get_nowait())
            inserts = [op.ask for op in batch if isinstance(op, _Insert)]
            closes = [op for op in batch if isinstance(op, _Close)]
            barriers = [op.done for op in batch if isinstance(op, _Barrier)]
            held = []
            problem: Exception | None = None
            ended: list[str] = []
            try:
                if inserts or closes:
                    ended = await loop.run_in_executor(self._executor, write, inserts, closes)
                failures = 0
            except TRANSIENT as exc:
                failures += 1
                logger.warning(
                    "could not record %d ask change(s) (attempt %d); keeping them to retry: %s",
                    len(inserts) + len(closes),
                    failures,
                    exc,
                )
                held = [op for op in batch if not isinstance(op, _Barrier)]
                problem = exc
            except Exception:
                # Some row the database will never take: write one at a time, losing only it.
                logger.exception("could not record a batch of ask changes; writing them singly")
                changes = [op for op in batch if not isinstance(op, _Barrier)]
                ended, held, problem = await loop.run_in_executor(
                    self._executor, write_singly, changes
                )
                failures = failures + 1 if held else 0
            for barrier in barriers:
                if barrier.done():
                    continue
                if problem is not None:
                    barrier.set_exception(problem)
                else:
                    barrier.set_result(None)
            if ended:
                try:
                    await announce(ENDED, ended)
                except Exception:
                    logger.exception("could not tell the inboxes that asks ended")


def write(inserts: list[Ask], closes: list[_Close]) -> list[str]:
    """Insert new asks and close pending ones in one transaction, with their history events.

    Runs on the writer thread, which keeps its connection from batch to batch: opening a
    SQLite connection (and checkpointing it on close) cost more than the writes. After a
    connection error the connection is dropped, so the retry opens a new one. Returns the inbox
    asks that were closed (the inboxes drop them).
    """
    try:
        return _write(inserts, closes)
    except TRANSIENT:
        connection.close()
        raise


def _write(inserts: list[Ask], closes: list[_Close]) -> list[str]:
    ended: list[str] = []
    events: list[AskEvent] = []
    # An ask asked and ended within one batch is inserted closed already: no UPDATE for it.
    # (Applying it again when a failed batch is retried sets the same values.)
    new = {ask.id: ask for ask in inserts}
    folded: dict[uuid.UUID, _Close] = {}
    with transaction.atomic():
        for close in closes:
            ask = new.get(close.id)
            if ask is not None and close.id not in folded:  # two closes: the first one won
                ask.status = close.status
                if close.status in ANSWERED:
                    ask.answered_at = close.at
                if close.answer is not None:
                    ask.answer = dict(close.answer)
                folded[close.id] = close
        if inserts:
            _drop_unknown_addressees(inserts)
            Ask.objects.bulk_create(inserts, ignore_conflicts=True)
            for ask in inserts:
                events.append(
                    AskEvent(
                        ask=ask,
                        kind=AskEvent.Kind.CREATED,
                        at=ask.created,
                        actor_id=ask.asked_by_id,
                        actor_label=ask.client_name or "client",
                        route=ask.route,
                    )
                )
                if ask.route == Ask.Route.CLIENT:  # the client shows it straight away
                    events.append(
                        AskEvent(
                            ask=ask,
                            kind=AskEvent.Kind.SHOWN,
                            at=ask.created,
                            actor_label=ask.client_name or "client",
                            route=ask.route,
                        )
                    )
        for close in closes:
            if close.id in new:
                if folded[close.id] is not close:
                    continue
            else:
                fields: dict[str, Any] = {"status": close.status}
                if close.status in ANSWERED:
                    fields["answered_at"] = close.at
                if close.answer is not None:
                    fields["answer"] = dict(close.answer)
                changed = Ask.objects.filter(pk=close.id, status=Ask.Status.PENDING).update(
                    **fields
                )
                if not changed:
                    continue  # decided already (a browser answer, an admin): that wrote its event
            events.append(_closing_event(close))
            if close.route != Ask.Route.CLIENT:
                ended.append(close.id.hex)
        AskEvent.objects.bulk_create(events)
    return ended


def write_singly(
    changes: list[_Insert | _Close],
) -> tuple[list[str], list[_Op], Exception | None]:
    """Write each change in its own transaction.

    Returns the inbox asks closed, the changes to retry (the database went away meanwhile) and
    the first refusal; a refused change is logged and dropped, the others are not held back.
    """
    ended: list[str] = []
    retry: list[_Op] = []
    first: Exception | None = None
    for change in changes:
        try:
            if isinstance(change, _Insert):
                ended += write([change.ask], [])
            else:
                ended += write([], [change])
        except TRANSIENT:
            retry.append(change)
        except Exception as exc:
            logger.exception("dropped one ask change the database refuses")
            first = first or exc
    return ended, retry, first


def _drop_unknown_addressees(asks: list[Ask]) -> None:
    """Forget an addressee that no longer exists rather than lose the whole batch."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group

    users = {ask.asked_by_id for ask in asks if ask.asked_by_id is not None}
    teams = {ask.team_id for ask in asks if ask.team_id is not None}
    known_users = set(get_user_model().objects.filter(pk__in=users).values_list("pk", flat=True))
    known_teams = set(Group.objects.filter(pk__in=teams).values_list("pk", flat=True))
    for ask in asks:
        if ask.asked_by_id not in known_users:
            ask.asked_by_id = None
        if ask.team_id not in known_teams:
            ask.team_id = None


def _closing_event(close: _Close) -> AskEvent:
    """Who ended an ask the server saw end: the client's person, the client, or the server."""
    kind = event_for_status(close.status)
    if kind == AskEvent.Kind.EXPIRED:
        label = "server (no answer in time)"
    elif kind == AskEvent.Kind.WITHDRAWN:
        label = "client (the call ended)"
    else:
        label = "the person at the client"
    return AskEvent(ask_id=close.id, kind=kind, at=close.at, actor_label=label, route=close.route)


def recorder() -> AskRecorder:
    """Factory for ASK_MCP["OBSERVER"]: record every ask."""
    return AskRecorder()
