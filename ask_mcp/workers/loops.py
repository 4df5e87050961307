"""One background task per event loop, the helper every long-lived part shares; pure asyncio, no Django.

A process serves one event loop in production, but tests (and `ask-mcp --inbox`) start
several in turn; each long-lived helper keeps one task per loop and starts a new one when the
loop it ran in is gone. Pure asyncio.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

_running: set[asyncio.Task[Any]] = set()
"""Strong references: the loop keeps only a weak one to each task."""


def alive_here(task: asyncio.Task[Any] | None) -> bool:
    """Whether `task` still runs in the event loop running now."""
    return task is not None and not task.done() and task.get_loop() is asyncio.get_running_loop()


def start_in_loop[T](coroutine: Coroutine[Any, Any, T], *, name: str) -> asyncio.Task[T]:
    """Run `coroutine` as a task of the running loop, kept alive until it ends.

    Raises:
        RuntimeError: no event loop runs here (or it is closing); `coroutine` is closed unstarted.
    """
    try:
        task = asyncio.get_running_loop().create_task(coroutine, name=name)
    except RuntimeError:
        coroutine.close()  # never to run: no "was never awaited" warning
        raise
    _running.add(task)
    task.add_done_callback(_running.discard)
    return task
