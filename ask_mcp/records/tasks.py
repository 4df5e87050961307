"""The tasks' durable store: one Task row per task, read and written on a thread of its own; knows no wire or engine.

:class:`TaskRows` implements :class:`~ask_mcp.server.tasks.TaskStore` on the ``Task`` model. A
create returns after its transaction committed, so a ``tasks/get`` on any worker finds the
task (the extension's durable-create rule); a save is conditional on the row not being
terminal yet, so a terminal status never changes again, whoever writes second.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from functools import partial
from typing import Any, Final

from django.db import close_old_connections

from ask_mcp.models import Task
from ask_mcp.server.tasks import TERMINAL, TaskRecord

COLUMNS: Final = frozenset({"id", "principal", "tool", "status", "ask_id"})
"""TaskRecord fields that are columns of their own (the rest lives in `state`)."""


def _at(seconds: float) -> dt.datetime:
    return dt.datetime.fromtimestamp(seconds, dt.UTC)


def _row(task: TaskRecord) -> dict[str, Any]:
    fields = asdict(task)
    return {
        "id": task.id,
        "principal": task.principal,
        "tool": task.tool,
        "status": task.status,
        "created": _at(task.created_at),
        "updated": _at(task.updated_at),
        "expires_at": _at(task.expires_at),
        "ask_id": uuid.UUID(task.ask_id) if task.ask_id else None,
        "state": {key: value for key, value in fields.items() if key not in COLUMNS},
    }


def _record(row: Task) -> TaskRecord:
    state = dict(row.state)
    return TaskRecord(
        id=row.id,
        principal=row.principal,
        tool=row.tool,
        status=row.status,
        ask_id=row.ask_id.hex if row.ask_id else None,
        **state,
    )


def _create(task: TaskRecord) -> None:
    close_old_connections()
    Task.objects.create(**_row(task))


def _load(task_id: str) -> TaskRecord | None:
    close_old_connections()
    row = Task.objects.filter(pk=task_id).first()
    return _record(row) if row is not None else None


def _save(task: TaskRecord) -> bool:
    close_old_connections()
    values = _row(task)
    del values["id"]
    written = Task.objects.filter(pk=task.id).exclude(status__in=TERMINAL).update(**values)
    return bool(written)


def _open_count(principal: str) -> int:
    close_old_connections()
    return Task.objects.filter(principal=principal).exclude(status__in=TERMINAL).count()


def purge_tasks(now: dt.datetime) -> int:
    """Delete the tasks whose time to live has passed (the sweeper runs this); how many."""
    deleted, _ = Task.objects.filter(expires_at__lte=now).delete()
    return deleted


def _purge(now: float) -> int:
    close_old_connections()
    return purge_tasks(_at(now))


class TaskRows:
    """TaskStore on the Task model; one thread keeps one connection and serialises the writes."""

    def __init__(self) -> None:
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ask_mcp-tasks")

    async def _run[T](self, function: Any, *args: Any) -> T:
        loop = asyncio.get_running_loop()
        result: T = await loop.run_in_executor(self._executor, partial(function, *args))
        return result

    async def create(self, task: TaskRecord) -> None:
        await self._run(_create, task)

    async def load(self, task_id: str) -> TaskRecord | None:
        found: TaskRecord | None = await self._run(_load, task_id)
        return found

    async def save(self, task: TaskRecord) -> bool:
        written: bool = await self._run(_save, task)
        return written

    async def open_count(self, principal: str) -> int:
        count: int = await self._run(_open_count, principal)
        return count

    async def purge(self, now: float) -> int:
        deleted: int = await self._run(_purge, now)
        return deleted


__all__ = ["TaskRows", "purge_tasks"]
