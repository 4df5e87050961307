"""The recorder: the question observer that writes every ask to the database, off the hot path.

One writer task per process drains a queue of inserts and conditional status updates in batches
(gathered for up to GATHER_SECONDS or WRITE_AT changes), turns each batch into statement parameters
on the event loop, and runs the statements on a single database thread. A question sent to the
client (MRTR) never waits for the database; a question for the browser waits until its row exists,
because the inbox is about to show it. Every status update is conditional on the ask still being
pending, so an answer already recorded (a browser answer, an admin's cancel) is never overwritten.

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

from django.contrib.auth.models import Group
from django.db import InterfaceError, OperationalError, connection, transaction
from django.db.models import (
    AutoField,
    CharField,
    DateTimeField,
    Field,
    ForeignKey,
    JSONField,
    TextField,
    UUIDField,
)

from ask_mcp import runtime
from ask_mcp.models import Ask, AskEvent, event_for_status, storable
from ask_mcp.records.events import ENDED, announce
from ask_mcp.server.elicitation import Question
from ask_mcp.server.errors import ToolError
from ask_mcp.team.auth import team_id_of, user_id_of
from ask_mcp.workers.loops import alive_here, start_in_loop

logger = logging.getLogger("ask_mcp.records.recorder")

BATCH_SIZE: Final = 500
"""Most operations written in one transaction."""
ANSWERED: Final = frozenset({Ask.Status.ACCEPTED, Ask.Status.DECLINED, Ask.Status.CANCELLED})
GATHER_SECONDS: Final = 0.025
"""How long the writer lets changes gather before writing them, unless someone waits (a flush)
or WRITE_AT changes are queued. One transaction per change cost more than the recording itself
under load: a SQLite commit alone is about 100 µs, whatever the batch holds."""
WRITE_AT: Final = 32
"""Queued changes (two per MRTR call) that start a write before the gather window ends. A batch
is planned on the event loop and written on a thread sharing the server's core, so requests
behind it wait for all of it: under load, 25 ms of changes (50 calls) held the rounds' p99 at
6 ms; batches of 32 changes keep it about 3 ms and cost little more (README, Performance)."""
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
    row: dict[str, Any]
    """The Ask's column values by attribute name (asked_by_id, not asked_by)."""


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
        self._urgent: asyncio.Event | None = None  # set: write what is queued now
        self._task: asyncio.Task[None] | None = None
        # One thread keeps one connection and serialises the writes.
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ask_mcp-recorder")
        self._toolkits: dict[str, str] | None = None

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
        assert self._urgent is not None
        self._urgent.set()
        await done

    @property
    def queued(self) -> int:
        return self._queue.qsize() if self._queue is not None else 0

    def _row(self, question: Question) -> dict[str, Any]:
        return {
            "id": uuid.UUID(question.id),
            "created": timestamp(question.created_at),
            "message": storable(question.message),
            "schema": storable(dict(question.schema)),
            "tool": question.tool,
            "toolkit": self._toolkit_of(question.tool),
            "client_name": storable(question.client_name or ""),
            "principal": question.principal or "",
            "asked_by_id": user_id_of(question.principal),
            "team_id": team_id_of(question.team),
            "route": question.route,
            "status": Ask.Status.PENDING,
            "answer": None,
            "answered_by_id": None,
            "answered_at": None,
            "expires_at": timestamp(question.expires_at),
            "worker": question.worker or "",
            "call_id": question.call_id or "",
        }

    def _toolkit_of(self, tool: str) -> str:
        if self._toolkits is None:
            server = runtime.get_server()
            self._toolkits = {
                each.name: toolkit.toolkit_name()
                for toolkit, prefix in server.toolkits
                for each in toolkit.tools(prefix)
            }
        return self._toolkits.get(tool, "")

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
        loop = asyncio.get_running_loop()
        held: list[_Op] = []  # writes the database refused for now, oldest first
        failures = 0
        while True:
            if held:
                await asyncio.sleep(RETRY_PAUSES[min(failures, len(RETRY_PAUSES)) - 1])
                batch = held
            else:
                batch = [await queue.get()]
                if not urgent.is_set():
                    with contextlib.suppress(TimeoutError):
                        async with asyncio.timeout(GATHER_SECONDS):
                            await urgent.wait()
            urgent.clear()
            while len(batch) < self.batch_size and not queue.empty():
                batch.append(queue.get_nowait())
            inserts = [op.row for op in batch if isinstance(op, _Insert)]
            closes = [op for op in batch if isinstance(op, _Close)]
            barriers = [op.done for op in batch if isinstance(op, _Barrier)]
            held = []
            problem: Exception | None = None
            ended: list[str] = []
            try:
                if inserts or closes:
                    # Everything Python about the batch happens here; the writer thread only
                    # runs the statements (the database's C code lets go of the GIL, Python on
                    # that thread would hold the event loop up to the switch interval).
                    ended = await loop.run_in_executor(self._executor, write, plan(inserts, closes))
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


@dataclass(slots=True)
class _Plan:
    """One batch as statement parameters, ready for the writer thread."""

    asks: list[list[Any]]
    """INSERT parameters of new asks (those that ended in the batch already closed)."""
    actors: set[int]
    """Users named as the actor of an event: those deleted meanwhile become NULL."""
    events: list[list[Any]]
    """INSERT parameters of events that happen whatever the database holds."""
    updates: list[tuple[str, list[Any], list[Any], str | None]]
    """Conditional closes: UPDATE and parameters, its event, and the inbox ask it ends."""
    ended: list[str]
    """Inbox asks that ended within the batch."""


def plan(inserts: list[dict[str, Any]], closes: list[_Close]) -> _Plan:
    """Turn a batch into statement parameters; pure Python, no database access."""
    sql = _sql()
    # An ask asked and ended within one batch is inserted closed already: no UPDATE for it.
    # (Planning it again when a failed batch is retried sets the same values.)
    new = {row["id"]: row for row in inserts}
    folded: dict[uuid.UUID, _Close] = {}
    for close in closes:
        row = new.get(close.id)
        if row is not None and close.id not in folded:  # two closes: the first one won
            row["status"] = close.status
            if close.status in ANSWERED:
                row["answered_at"] = close.at
            if close.answer is not None:
                row["answer"] = dict(close.answer)
            folded[close.id] = close
    events: list[list[Any]] = []
    for row in inserts:
        label = row["client_name"] or "client"
        events.append(
            sql.event_values(
                {
                    "ask_id": row["id"],
                    "kind": AskEvent.Kind.CREATED,
                    "at": row["created"],
                    "actor_id": row["asked_by_id"],
                    "actor_label": label,
                    "route": row["route"],
                }
            )
        )
        if row["route"] == Ask.Route.CLIENT:  # the client shows it straight away
            events.append(
                sql.event_values(
                    {
                        "ask_id": row["id"],
                        "kind": AskEvent.Kind.SHOWN,
                        "at": row["created"],
                        "actor_label": label,
                        "route": row["route"],
                    }
                )
            )
    updates: list[tuple[str, list[Any], list[Any], str | None]] = []
    ended: list[str] = []
    for close in closes:
        inbox = close.id.hex if close.route != Ask.Route.CLIENT else None
        event = sql.event_values(_closing_event(close))
        if close.id in new:
            if folded[close.id] is close:
                events.append(event)
                if inbox:
                    ended.append(inbox)
            continue
        changes: dict[str, Any] = {"status": close.status}
        if close.status in ANSWERED:
            changes["answered_at"] = close.at
        if close.answer is not None:
            changes["answer"] = dict(close.answer)
        updates.append((*sql.update(changes, close.id), event, inbox))
    return _Plan(
        asks=[sql.ask_values(row) for row in inserts],
        actors={row["asked_by_id"] for row in inserts if row["asked_by_id"] is not None},
        events=events,
        updates=updates,
        ended=ended,
    )


def write(batch: _Plan) -> list[str]:
    """Write a planned batch in one transaction; returns the inbox asks it closed.

    Runs on the writer thread, which keeps its connection from batch to batch: opening a
    SQLite connection (and checkpointing it on close) cost more than the writes. After a
    connection error the connection is dropped, so the retry opens a new one.
    """
    try:
        return _write(batch)
    except TRANSIENT:
        connection.close()
        raise


def _write(batch: _Plan) -> list[str]:
    sql = _sql()
    ended = list(batch.ended)
    events = [list(event) for event in batch.events]
    with transaction.atomic(), connection.cursor() as cursor:
        if batch.asks:
            cursor.executemany(sql.insert_ask, batch.asks)
        for statement, parameters, event, inbox in batch.updates:
            cursor.execute(statement, parameters)
            if cursor.rowcount != 1:
                continue  # decided already (a browser answer, an admin): that wrote its event
            events.append(list(event))
            if inbox:
                ended.append(inbox)
        if batch.actors:
            # The creator may have been deleted meanwhile, as the row's addressee was.
            known = _existing_users(cursor, batch.actors)
            for event in events:
                if event[sql.actor] is not None and event[sql.actor] not in known:
                    event[sql.actor] = None
        if events:
            cursor.executemany(sql.insert_event, events)
    return ended


class _Statements:
    """The recorder's SQL, built once from the models and the database's own quoting.

    The ORM's bulk_create and update() cost more than the writes themselves (building model
    instances, compiling each query); these statements take column values prepared by the
    backend's own adapters (see _preparer), so the database sees what the ORM would have sent.
    An addressee (user, team) deleted meanwhile is written as NULL by the inner SELECT rather
    than failing the batch on its foreign key. Built on the event loop's thread: only quoting
    and adapters are used there, never a connection.
    """

    def __init__(self) -> None:
        quote = connection.ops.quote_name
        checked = {
            "asked_by_id": f"(SELECT id FROM {quote(_users_table())} WHERE id = %s)",
            "team_id": f"(SELECT id FROM {quote(Group._meta.db_table)} WHERE id = %s)",
        }
        self.ask_fields: list[Field[Any, Any]] = list(Ask._meta.concrete_fields)
        self.insert_ask = (
            f"INSERT INTO {quote(Ask._meta.db_table)} "
            f"({', '.join(quote(_column(f)) for f in self.ask_fields)}) VALUES "
            f"({', '.join(checked.get(f.attname, '%s') for f in self.ask_fields)}) "
            "ON CONFLICT DO NOTHING"
        )
        self.event_fields = [f for f in AskEvent._meta.concrete_fields if not f.primary_key]
        self.insert_event = (
            f"INSERT INTO {quote(AskEvent._meta.db_table)} "
            f"({', '.join(quote(_column(f)) for f in self.event_fields)}) VALUES "
            f"({', '.join('%s' for _ in self.event_fields)})"
        )
        self.ask_preparers = [_preparer(f) for f in self.ask_fields]
        self.event_preparers = [_preparer(f) for f in self.event_fields]
        self.actor = [f.attname for f in self.event_fields].index("actor_id")
        self.table = quote(Ask._meta.db_table)
        self.quote = quote
        self.pending = Ask.Status.PENDING.value
        self._columns = {f.name: f for f in self.ask_fields}
        self._pk = self._columns["id"]
        self._updates: dict[tuple[str, ...], tuple[str, list[Any]]] = {}

    def ask_values(self, row: dict[str, Any]) -> list[Any]:
        return [
            row[name] if prepare is None else prepare(row[name])
            for name, prepare in self.ask_preparers
        ]

    def event_values(self, event: dict[str, Any]) -> list[Any]:
        return [
            event.get(name) if prepare is None else prepare(event.get(name))
            for name, prepare in self.event_preparers
        ]

    def update(self, changes: dict[str, Any], ask_id: uuid.UUID) -> tuple[str, list[Any]]:
        """UPDATE setting `changes` on one ask, only while it is still pending."""
        names = tuple(changes)
        cached = self._updates.get(names)
        if cached is None:
            fields = [self._columns[name] for name in names]
            sets = ", ".join(f"{self.quote(_column(f))} = %s" for f in fields)
            sql = f"UPDATE {self.table} SET {sets} WHERE id = %s AND status = %s"
            cached = self._updates[names] = (sql, fields)
        sql, fields = cached
        values = [f.get_db_prep_save(changes[f.name], connection) for f in fields]
        pk = self._pk.get_db_prep_save(ask_id, connection)
        return sql, [*values, pk, self.pending]


def _column(field: Field[Any, Any]) -> str:
    column = field.column
    assert column is not None  # concrete fields always have one
    return column


def _preparer(field: Any) -> tuple[str, Callable[[Any], Any] | None]:
    """How one column's value reaches the driver: what the field itself would send, taken
    straight from the backend's adapters (the field's get_db_prep_save layers checks around
    them that cost more than the write): text and integer ids pass as they are."""
    target = field.target_field if isinstance(field, ForeignKey) else field
    if isinstance(target, (CharField, TextField, AutoField)):
        return field.attname, None
    ops = connection.ops
    if isinstance(target, DateTimeField):
        return field.attname, ops.adapt_datetimefield_value
    if isinstance(target, JSONField):
        encoder = target.encoder
        return (
            field.attname,
            lambda value: None if value is None else ops.adapt_json_value(value, encoder),
        )
    if isinstance(target, UUIDField) and not connection.features.has_native_uuid_field:
        return field.attname, lambda value: None if value is None else value.hex
    if isinstance(target, UUIDField):
        return field.attname, None
    return field.attname, partial(field.get_db_prep_save, connection=connection)


_statements: dict[str, _Statements] = {}
"""Per database vendor (the tests switch databases in one process)."""


def _sql() -> _Statements:
    statements = _statements.get(connection.vendor)
    if statements is None:
        statements = _statements[connection.vendor] = _Statements()
    return statements


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
                ended += write(plan([change.row], []))
            else:
                ended += write(plan([], [change]))
        except TRANSIENT:
            retry.append(change)
        except Exception as exc:
            logger.exception("dropped one ask change the database refuses")
            first = first or exc
    return ended, retry, first


def _users_table() -> str:
    from django.contrib.auth import get_user_model

    return get_user_model()._meta.db_table


def _existing_users(cursor: Any, ids: set[int]) -> set[int]:
    """Which of these user ids still exist (an event's actor must, or be NULL)."""
    wanted = sorted(ids)
    marks = ", ".join("%s" for _ in wanted)
    cursor.execute(
        f"SELECT id FROM {connection.ops.quote_name(_users_table())} WHERE id IN ({marks})",
        wanted,
    )
    return {each for (each,) in cursor.fetchall()}


def _closing_event(close: _Close) -> dict[str, Any]:
    """Who ended an ask the server saw end: the client's person, the client, or the server."""
    kind = event_for_status(close.status)
    if kind == AskEvent.Kind.EXPIRED:
        label = "server (no answer in time)"
    elif kind == AskEvent.Kind.WITHDRAWN:
        label = "client (the call ended)"
    else:
        label = "the person at the client"
    return {
        "ask_id": close.id,
        "kind": kind,
        "at": close.at,
        "actor_label": label,
        "route": close.route,
    }


def recorder() -> AskRecorder:
    """Factory for ASK_MCP["OBSERVER"]: record every ask."""
    return AskRecorder()
