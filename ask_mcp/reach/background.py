"""The reach task beside the server: plans reminders and escalations that fell due, sends due deliveries.

One task per event loop in every worker, as the sweeper is (and started with it, by
:func:`ask_mcp.runtime.start_background`), but apart from it: the sweeper ends asks, this tells
people about them. It wakes every REACH_SECONDS, and at once when a new ask was planned here.
Every worker runs it; planning and claiming are safe to race (see plan and queue).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Final

from channels.db import database_sync_to_async
from django.db import connection
from django.utils import timezone

from ask_mcp import conf
from ask_mcp.reach import plan, push, queue
from ask_mcp.records.events import ASKED, announce
from ask_mcp.records.sql import TRANSIENT
from ask_mcp.workers.loops import alive_here, start_in_loop

logger = logging.getLogger("ask_mcp.reach")


@dataclass(frozen=True, slots=True)
class Pass:
    """What one pass did."""

    reminded: int
    escalated: int
    tried: int


async def one_pass() -> Pass:
    """Plan due reminders and escalations (telling the inboxes of the escalated), send what is due."""
    now = timezone.now()
    before = conf.values().reminder_before_seconds
    reminded = [] if before is None else await database_sync_to_async(plan.remind_due)(now, before)
    escalated = await database_sync_to_async(plan.escalate_due)(now)
    if escalated:  # the fallback's inboxes list it now
        await announce(ASKED, [each.ask_id.hex for each in escalated])
    if push.enabled():
        after = conf.values().push_fallback_seconds
        await database_sync_to_async(plan.fallback_due)(now, after)
        await database_sync_to_async(plan.close_ended)()
    tried = 0
    while batch := await queue.deliver_due():
        tried += batch
        if batch < queue.BATCH:
            break
    return Pass(len(reminded), len(escalated), tried)


_PLANNER: Final = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ask_mcp-reach-plan")
"""The thread that plans new asks' first deliveries, keeping its database connection."""


def _kept_start(ask_id: uuid.UUID, link_base: str) -> int:
    """plan.start on the planner's thread, on the connection it keeps from ask to ask: under
    database_sync_to_async each new ask opened and closed a connection (CONN_MAX_AGE 0): the
    largest part of creating a task in a profile (docs/measurements/logging-measurements.md). After a
    connection error the connection is dropped and the plan runs once more on a new one
    (planning twice adds nothing: every delivery has its unique key)."""
    try:
        return plan.start(ask_id, link_base)
    except TRANSIENT:
        connection.close()
    return plan.start(ask_id, link_base)


async def asked(ask_id: str, link_base: str) -> None:
    """A new browser ask: plan its first deliveries and send them now (in the background)."""
    try:
        loop = asyncio.get_running_loop()
        planned = await loop.run_in_executor(
            _PLANNER, _kept_start, uuid.UUID(hex=ask_id), link_base
        )
    except Exception:  # a notification problem must never cost the question
        logger.exception("could not plan the notifications of ask %s", ask_id)
        return
    if planned:
        REACHER.wake()


class Reacher:
    """Runs :func:`one_pass` every REACH_SECONDS (or when woken), once per event loop."""

    def __init__(self) -> None:
        self._task: asyncio.Task[None] | None = None
        self._wake: asyncio.Event | None = None

    def ensure_running(self) -> None:
        if alive_here(self._task):
            return
        self._wake = asyncio.Event()
        self._task = start_in_loop(self._run(self._wake), name="ask_mcp reach")

    def wake(self) -> None:
        """Run a pass now (a new ask was planned) rather than at the next tick."""
        if self._wake is not None and alive_here(self._task):
            self._wake.set()

    def start_soon(self, ask_id: str, link_base: str) -> None:
        """Plan a new ask's deliveries in the background: the call that asked never waits."""
        self.ensure_running()
        start_in_loop(asked(ask_id, link_base), name=f"ask_mcp reach {ask_id[:8]}")

    async def _run(self, wake: asyncio.Event) -> None:
        while True:
            wake.clear()  # before the pass: a wake during it means another pass
            try:
                done = await one_pass()
            except asyncio.CancelledError:
                raise
            except Exception:
                logger.exception("reaching people failed; trying again")
            else:
                if done.reminded or done.escalated:
                    logger.info("reminded %d, escalated %d ask(s)", done.reminded, done.escalated)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(wake.wait(), timeout=conf.values().reach_seconds)


REACHER: Final = Reacher()
"""The process's reach task."""
