"""The tasks' durable store: one Task row per task, read and written on a thread of its own; knows no wire or engine.

:class:`TaskRows` implements :class:`~ask_mcp.server.eras.tasks.TaskStore` on the ``Task`` model. A
create returns after its transaction committed, so a ``tasks/get`` on any worker finds the
task (the extension's durable-create rule); a save is conditional on the row not being
terminal yet, so a terminal status never changes again, whoever writes second. A load reads,
in the same query, whether the task's ask still simply waits (``TaskRecord.ask_waiting``), so
the poll of a waiting task is one read and no write. The task's identity is kept as its
principal (a column) and, in `state`, its team, its people-only rule and its credential.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from functools import partial
from typing import Any, Final

from django.db import connection
from django.db.models import Exists, OuterRef

from ask_mcp.models import Ask, Task, revoked_tokens
from ask_mcp.records.sql import TRANSIENT
from ask_mcp.server.eras.tasks import REVOKED_MESSAGE, TERMINAL, TaskRecord, task_status
from ask_mcp.server.identity import TOKEN, Credential, Identity

COLUMNS: Final = frozenset({"id", "tool", "status", "ask_id"})
"""TaskRecord fields that are columns of their own (the rest lives in `state`; the identity,
`who`, is kept as the `principal` column and the `state` keys of :func:`_who_state`)."""
READ_ONLY: Final = frozenset({"ask_waiting"})
"""TaskRecord fields read with the row from its ask's row, and never stored."""


def _at(seconds: float) -> dt.datetime:
    return dt.datetime.fromtimestamp(seconds, dt.UTC)


def _who_state(who: Identity) -> dict[str, Any]:
    """What `state` keeps of a task's identity beside its principal column (team and
    people_only as before the identity was one value; the credential as its kind, id, label)."""
    credential = who.credential
    return {
        "team": who.team or "",
        "people_only": who.people_only,
        "credential": asdict(credential) if credential is not None else None,
    }


def _who(principal: str, state: dict[str, Any]) -> Identity:
    """The identity a row keeps, taken out of `state` (a row written before the credential was
    kept has none)."""
    credential = state.pop("credential", None)
    return Identity(
        principal=principal or None,
        team=state.pop("team", "") or None,
        credential=Credential(**credential) if credential else None,
        people_only=state.pop("people_only", False),
    )


def _row(task: TaskRecord) -> dict[str, Any]:
    fields = asdict(task)
    del fields["who"]
    return {
        "id": task.id,
        "principal": task.who.principal or "",
        "tool": task.tool,
        "status": task.status,
        "created": _at(task.created_at),
        "updated": _at(task.updated_at),
        "expires_at": _at(task.expires_at),
        "ask_id": uuid.UUID(task.ask_id) if task.ask_id else None,
        "state": {
            **{key: value for key, value in fields.items() if key not in COLUMNS | READ_ONLY},
            **_who_state(task.who),
        },
    }


def _record(row: Task, ask_waiting: bool = False) -> TaskRecord:
    state = dict(row.state)
    return TaskRecord(
        id=row.id,
        who=_who(row.principal, state),
        tool=row.tool,
        status=task_status(row.status),
        ask_id=row.ask_id.hex if row.ask_id else None,
        ask_waiting=ask_waiting,
        **state,
    )


def _ask_waiting(now: dt.datetime) -> Exists:
    """Whether the task's ask is pending, unexpired and held by no call: what a reattach would
    leave as it is, with no decision to collect (a task's ask is held by worker "")."""
    return Exists(
        Ask.objects.filter(
            pk=OuterRef("ask_id"),
            status=Ask.Status.PENDING,
            expires_at__gt=now,
            worker="",
            detached_at__isnull=True,
        )
    )


def _create(task: TaskRecord) -> None:
    Task.objects.create(**_row(task))


def _load(task_id: str) -> TaskRecord | None:
    # The ask's state comes in the same query: a poll of a waiting task used to be this read,
    # then a flush of the recorder and a write transaction on the recorder's thread. With
    # 4 clients, tasks/get was 3.8 times an MRTR round at p50 (docs/tasks-measurements.md).
    waiting = _ask_waiting(dt.datetime.now(dt.UTC))
    row = Task.objects.filter(pk=task_id).annotate(ask_waiting=waiting).first()
    return _record(row, bool(row.ask_waiting)) if row is not None else None


def _save(task: TaskRecord) -> bool:
    values = _row(task)
    del values["id"]
    written = Task.objects.filter(pk=task.id).exclude(status__in=TERMINAL).update(**values)
    return bool(written)


def _open_count(principal: str, now: float | None) -> int:
    at = dt.datetime.now(dt.UTC) if now is None else _at(now)
    found = Task.objects.filter(principal=principal, expires_at__gt=at)
    return found.exclude(status__in=TERMINAL).count()


def purge_tasks(now: dt.datetime) -> int:
    """Delete the tasks whose time to live has passed (the sweeper runs this); how many."""
    deleted, _ = Task.objects.filter(expires_at__lte=now).delete()
    return deleted


def _purge(now: float) -> int:
    return purge_tasks(_at(now))


def _kept[T](function: Callable[..., T], *args: Any, again: bool = True) -> T:
    """`function` on the store's thread, which keeps its connection from call to call: each
    call used to open a new one (close_old_connections under CONN_MAX_AGE 0), 0.9 ms of the
    3 ms of CPU a profiled tasks/get cost in-process (docs/tasks-measurements.md). After a
    connection error the connection is dropped, and a call that may run twice runs once more
    on a new one (a connection the database closed while idle fails only its first use)."""
    try:
        return function(*args)
    except TRANSIENT:
        connection.close()
        if not again:
            raise
    return function(*args)


class TaskRows:
    """TaskStore on the Task model; one thread keeps one connection and serialises the writes."""

    def __init__(self) -> None:
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ask_mcp-tasks")

    async def _run[T](self, function: Any, *args: Any, again: bool = True) -> T:
        loop = asyncio.get_running_loop()
        call = partial(_kept, function, *args, again=again)
        result: T = await loop.run_in_executor(self._executor, call)
        return result

    async def create(self, task: TaskRecord) -> None:
        await self._run(_create, task, again=False)  # it may have committed: not twice

    async def load(self, task_id: str) -> TaskRecord | None:
        found: TaskRecord | None = await self._run(_load, task_id)
        return found

    async def save(self, task: TaskRecord) -> bool:
        written: bool = await self._run(_save, task)
        return written

    async def open_count(self, principal: str, now: float | None = None) -> int:
        count: int = await self._run(_open_count, principal, now)
        return count

    async def purge(self, now: float) -> int:
        deleted: int = await self._run(_purge, now)
        return deleted


__all__ = ["TaskRows", "end_revoked_tasks", "purge_tasks"]


def end_revoked_tasks() -> int:
    """End the open tasks created with a revoked token (or one whose user was deactivated) as
    cancelled, saying so; returns how many.

    Run in the pass that withdraws their asks (:func:`ask_mcp.records.sweeper.end_revoked`): such
    a task otherwise stayed open until polled, and its revoked token can no longer poll it.
    Conditional, as every save: a task that ended meanwhile keeps its ending. An answer given
    before stays on the ask, decided and not collected.
    """
    revoked = [str(key) for key in revoked_tokens().values_list("key", flat=True)]
    if not revoked:
        return 0
    found = Task.objects.exclude(status__in=TERMINAL).filter(
        state__credential__kind=TOKEN, state__credential__id__in=revoked
    )
    ended = 0
    for task_id in found.values_list("id", flat=True):
        task = _load(task_id)
        if task is None or task.status in TERMINAL:
            continue
        task.cancel(REVOKED_MESSAGE)
        task.updated_at = time.time()
        ended += _save(task)
    return ended


def note_status(ask_id: uuid.UUID, message: str) -> int:
    """Say `message` as the statusMessage of the open tasks of `ask_id` (who has seen its
    question); returns how many were changed.

    Through the one update path (:func:`_save`, `updated` bumped), so whatever tells a poll
    that a task changed tells it this too, and a poll that finds nothing changed reads nothing
    more for it.
    """
    changed = 0
    for task_id in (
        Task.objects.filter(ask_id=ask_id).exclude(status__in=TERMINAL).values_list("id", flat=True)
    ):
        task = _load(task_id)
        if task is None or task.status_message == message:
            continue
        task.status_message = message
        task.updated_at = time.time()
        changed += _save(task)
    return changed
