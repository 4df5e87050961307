"""The recorder's SQL: a batch of ask changes planned into statements, written in one transaction; no queue.

Owns the hand-written statements that bypass the ORM (and why: see :class:`Statements`), the
planning of a batch on the event loop, and the writing on the recorder's thread. Knows nothing
of the queue, the batching or the retries (:mod:`ask_mcp.records.recorder`), nor of the inboxes
it returns the ended asks for.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any, Final

from django.contrib.auth import get_user_model
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

from ask_mcp.models import DECIDED, Ask, AskEvent, event_for_status

ANSWERED: Final = DECIDED
"""Statuses a person decided: closing to one of them stamps answered_at."""
DETACHED: Final = "detached"
"""A close that leaves the ask pending: its call's connection dropped (it stays answerable for
DETACHED_GRACE_SECONDS, so a call asking the same can attach to it)."""
STOPPED: Final = "stopped"
"""A close that leaves the ask pending: its worker is shutting down (it stays until expiry)."""
TRANSIENT: Final = (OperationalError, InterfaceError)
"""Database errors that pass (a lost connection, a lock): the same write will work later."""


@dataclass(slots=True)
class Close:
    """An ask the server saw end (answered at the client, expired, withdrawn): a conditional close."""

    id: uuid.UUID
    status: str
    answer: Mapping[str, Any] | None
    at: dt.datetime
    route: str
    worker: str = ""
    """The worker whose call ended: a detach applies only while the ask is still its."""
    collector: str = ""
    """The call the decision was delivered to (for a decided status)."""


Update = tuple[str, list[Any], list[Any], str | None]
"""A conditional close: its UPDATE and parameters, its event's parameters, the inbox ask it ends."""


@dataclass(slots=True)
class Plan:
    """One batch as statement parameters, ready for the writer thread."""

    asks: list[list[Any]]
    """INSERT parameters of new asks (those that ended in the batch already closed)."""
    actors: set[int]
    """Users named as the actor of an event: those deleted meanwhile become NULL."""
    events: list[list[Any]]
    """INSERT parameters of events that happen whatever the database holds."""
    updates: list[Update]
    """Conditional closes, each written only if its ask is still pending."""
    ended: list[str]
    """Inbox asks that ended within the batch."""


def plan(inserts: list[dict[str, Any]], closes: list[Close]) -> Plan:
    """Turn a batch into statement parameters; pure Python, no database access.

    `inserts` are new asks' column values by attribute name (asked_by_id, not asked_by).
    """
    sql = statements()
    folded = _fold(inserts, closes)
    events = [event for row in inserts for event in created_events(sql, row)]
    updates: list[Update] = []
    ended: list[str] = []
    for close in closes:
        inbox = close.id.hex if close.route != Ask.Route.CLIENT else None
        event = sql.event_values(_closing_event(close))
        if close.id not in folded:
            where = {"worker": close.worker} if close.status == DETACHED else None
            updates.append((*sql.update(_closed_columns(close), close.id, where), event, inbox))
        elif folded[close.id] is close:
            events.append(event)
            if inbox:
                ended.append(inbox)
        if close.status in ANSWERED and inbox:
            # Decided in the browser (not pending any more): the call took the decision.
            delivered = {
                "ask_id": close.id,
                "kind": AskEvent.Kind.DELIVERED,
                "at": close.at,
                "actor_label": close.collector[:200],
                "route": close.route,
            }
            updates.append((*sql.collect(close), sql.event_values(delivered), inbox))
    return Plan(
        asks=[sql.ask_values(row) for row in inserts],
        actors={row["asked_by_id"] for row in inserts if row["asked_by_id"] is not None},
        events=events,
        updates=updates,
        ended=ended,
    )


def _fold(inserts: list[dict[str, Any]], closes: list[Close]) -> dict[uuid.UUID, Close]:
    """Write into its row each close of an ask inserted in the same batch, which is then inserted
    closed already (no UPDATE for it); returns which close each such ask took. The first close of
    an ask wins. Planning a failed batch again when it is retried sets the same values."""
    new = {row["id"]: row for row in inserts}
    folded: dict[uuid.UUID, Close] = {}
    for close in closes:
        row = new.get(close.id)
        if row is not None and close.id not in folded:
            row.update(_closed_columns(close))
            folded[close.id] = close
    return folded


def _closed_columns(close: Close) -> dict[str, Any]:
    """What closing an ask sets: its status, when a person decided it, what they answered;
    for a close that leaves it pending, that no call of this worker waits on it any more."""
    if close.status == DETACHED:
        return {"worker": "", "detached_at": close.at}
    if close.status == STOPPED:
        return {"worker": ""}
    changes: dict[str, Any] = {"status": close.status}
    if close.status in ANSWERED:
        changes["answered_at"] = close.at
        if close.route == Ask.Route.CLIENT:  # answered in the call itself: collected with it
            changes["collected_at"] = close.at
            changes["collected_by"] = close.collector[:200]
    elif close.route != Ask.Route.CLIENT:
        changes["attach_key"] = ""  # ended unanswered: a call asking the same asks anew
    if close.answer is not None:
        changes["answer"] = dict(close.answer)
    return changes


def created_events(sql: Statements, row: dict[str, Any]) -> list[list[Any]]:
    """A new ask's first events: created, and shown at once when the client shows it."""
    label = row["client_name"] or "client"
    created = {
        "ask_id": row["id"],
        "kind": AskEvent.Kind.CREATED,
        "at": row["created"],
        "actor_id": row["asked_by_id"],
        "actor_label": label,
        "route": row["route"],
    }
    events = [sql.event_values(created)]
    if row["route"] == Ask.Route.CLIENT:
        shown = {**created, "kind": AskEvent.Kind.SHOWN, "actor_id": None}
        events.append(sql.event_values(shown))
    return events


def _closing_event(close: Close) -> dict[str, Any]:
    """Who ended an ask the server saw end: the client's person, the client, or the server."""
    if close.status in (DETACHED, STOPPED):
        label = (
            "client (its connection dropped)"
            if close.status == DETACHED
            else "server (stopped; the ask stays pending)"
        )
        return {
            "ask_id": close.id,
            "kind": AskEvent.Kind.DETACHED,
            "at": close.at,
            "actor_label": label,
            "route": close.route,
        }
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


def write(batch: Plan) -> list[str]:
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


def _write(batch: Plan) -> list[str]:
    sql = statements()
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


class Statements:
    """The recorder's SQL, built once from the models and the database's own quoting.

    The ORM's bulk_create and update() cost more than the writes themselves (building model
    instances, compiling each query); these statements take column values prepared by the
    backend's own adapters (see _preparer), so the database sees what the ORM would have sent.
    An addressee (user, team) deleted meanwhile is written as NULL by the inner SELECT rather than
    failing the batch on its foreign key. Built on the event loop's thread: only quoting
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
        self._updates: dict[tuple[str, ...], tuple[str, list[Field[Any, Any]]]] = {}

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

    def update(
        self,
        changes: dict[str, Any],
        ask_id: uuid.UUID,
        where: Mapping[str, Any] | None = None,
    ) -> tuple[str, list[Any]]:
        """UPDATE setting `changes` on one ask, only while it is still pending (and, with
        `where`, while those columns hold those values)."""
        names = tuple(changes)
        also = tuple(where or ())
        cached = self._updates.get((*names, "|", *also))
        if cached is None:
            fields = [self._columns[name] for name in names]
            sets = ", ".join(f"{self.quote(_column(f))} = %s" for f in fields)
            extra = "".join(f" AND {self.quote(_column(self._columns[n]))} = %s" for n in also)
            sql = f"UPDATE {self.table} SET {sets} WHERE id = %s AND status = %s{extra}"
            cached = self._updates[(*names, "|", *also)] = (sql, fields)
        sql, fields = cached
        values = [f.get_db_prep_save(changes[f.name], connection) for f in fields]
        pk = self._pk.get_db_prep_save(ask_id, connection)
        return sql, [*values, pk, self.pending, *(where or {}).values()]

    def collect(self, close: Close) -> tuple[str, list[Any]]:
        """UPDATE marking a decided ask collected by `close`'s call, unless a call already was."""
        quote = self.quote
        sql = (
            f"UPDATE {self.table} SET {quote('collected_at')} = %s, {quote('collected_by')} = %s, "
            f"{quote('attach_key')} = '' WHERE id = %s AND {quote('collected_at')} IS NULL "
            f"AND status IN (%s, %s, %s)"
        )
        at = self._columns["collected_at"].get_db_prep_save(close.at, connection)
        pk = self._pk.get_db_prep_save(close.id, connection)
        return sql, [at, close.collector[:200], pk, *sorted(ANSWERED)]


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


_statements: dict[str, Statements] = {}
"""Per database vendor (the tests switch databases in one process)."""


def statements() -> Statements:
    """The statements for the database in use, built on first use."""
    built = _statements.get(connection.vendor)
    if built is None:
        built = _statements[connection.vendor] = Statements()
    return built


def _users_table() -> str:
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
