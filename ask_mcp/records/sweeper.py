"""The sweeper: no ask stays pending past its expiry, nor long after its call's connection dropped; it knows rows, not calls.

The worker holding a call ends its ask itself at the deadline; the sweeper is the backstop for
asks whose worker stopped (a restart, a crash): it ends them when their time is up, never
because their worker is gone, since a call asking the same, or a client's retry, can still
collect them (docs/agents/nothing-lost.md). An ask whose call left with its connection is withdrawn
once DETACHED_GRACE_SECONDS pass with no call attached. Each sweep also applies the retention
(:mod:`ask_mcp.records.retention`): old answers, then old asks with everything that refers to
them. It runs as one task in the server process, started with the application
(:func:`ask_mcp.runtime.start_background`), and `manage.py expire_asks` runs the same sweep by
hand.

Beside it, every WATCH_SECONDS, the revocation watch withdraws the pending asks of revoked
tokens (and of deactivated users' tokens), saying why, and ends the calls holding them on
their workers: a call whose token was revoked otherwise kept waiting and took a later answer.
In the same pass it cancels their open tasks and ends their initialize-era sessions, closing
those sessions' standalone streams on whichever worker holds them.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

from channels.db import database_sync_to_async
from channels.layers import InMemoryChannelLayer, get_channel_layer

from ask_mcp import conf
from ask_mcp.models import Ask, AskEvent, AskQuerySet, event_for_status, revoked_tokens
from ask_mcp.records.events import ENDED, announce
from ask_mcp.records.held import commit_due
from ask_mcp.records.retention import delete_past_retention, purge_answers
from ask_mcp.records.tasks import end_revoked_tasks, purge_tasks
from ask_mcp.server.identity import TOKEN
from ask_mcp.workers.loops import alive_here, start_in_loop
from ask_mcp.workers.relay import ChannelRelay
from ask_mcp.workers.sessions import end_sessions_of_revoked, purge_idle_sessions

logger = logging.getLogger("ask_mcp.records.sweeper")

REVOKED_REASON: Final = "the token it was asked with was revoked"
"""Why a revoked token's asks were withdrawn: on the card, and in the ending call's result."""
REVOKED_LABEL: Final = "server (its token was revoked)"
"""The history's label for that withdrawal."""
WATCH_SECONDS: Final = 5.0
"""How often each worker looks for revoked tokens' asks: half the token cache's 10 s, so a
revoked credential's calls end on every worker within the time its token still opens /mcp."""
GRACE: Final = dt.timedelta(seconds=5)
"""How long past its expiry an ask is left to the worker holding it before the sweeper steps in."""


@dataclass(frozen=True, slots=True)
class Closed:
    """An ask the sweep closed, with what is needed to tell its worker and the inboxes."""

    id: str
    worker: str
    call_id: str
    route: str


def expire_overdue(now: dt.datetime, *, grace: dt.timedelta = GRACE) -> list[Closed]:
    """Mark every pending ask whose expiry passed (more than `grace` ago) as expired."""
    return _close(Ask.objects.pending().filter(expires_at__lte=now - grace), Ask.Status.EXPIRED)


def withdraw_detached(now: dt.datetime, grace: float) -> list[Closed]:
    """Withdraw pending asks whose call left with its connection more than `grace` seconds ago
    and to which no call attached since (DETACHED_GRACE_SECONDS)."""
    cutoff = now - dt.timedelta(seconds=grace)
    detached = Ask.objects.pending().filter(worker="", detached_at__lte=cutoff)
    return _close(detached, Ask.Status.WITHDRAWN, label="server (no call came back for it)")


def withdraw_revoked() -> list[Closed]:
    """Withdraw the pending asks of a revoked token, or of a token whose user was deactivated.

    Conditional, as every close: an answer given before the revocation stands, kept as decided
    and not collected (the revoked call never collects it: its token no longer opens /mcp).
    """
    revoked = revoked_tokens()
    asks = Ask.objects.pending().filter(credential_kind=TOKEN, credential_id__in=revoked)
    return _close(asks, Ask.Status.WITHDRAWN, label=REVOKED_LABEL, reason=REVOKED_REASON)


def release_orphans(worker: str) -> int:
    """Mark pending asks held by any other worker as held by nobody; they stay pending.

    Only sound when no other worker can exist: with the in-memory channel layer the server is
    one process, so an ask held by another worker was left by a process that stopped. Its
    inbox card then says no agent is waiting, and an answer to it waits to be collected.
    """
    return Ask.objects.pending().exclude(worker="").exclude(worker=worker).update(worker="")


def release_worker(worker: str) -> int:
    """Mark the pending asks `worker` holds as held by nobody (it is stopping); they stay pending."""
    return Ask.objects.pending().filter(worker=worker).update(worker="")


def _close(
    asks: AskQuerySet, status: str, *, label: str = "server (sweeper)", reason: str = ""
) -> list[Closed]:
    rows = list(asks.values_list("id", "worker", "call_id", "route"))
    closed = []
    now = dt.datetime.now(dt.UTC)
    for ask_id, worker, call_id, route in rows:
        # Conditional, so an answer recorded meanwhile stands; a call asking the same after
        # this asks anew (the attach key is freed).
        ended = Ask.objects.filter(pk=ask_id, status=Ask.Status.PENDING)
        if ended.update(status=status, attach_key="", reason=reason):
            closed.append(Closed(ask_id.hex, worker, call_id, route))
            AskEvent.objects.create(
                ask_id=ask_id,
                kind=event_for_status(status),
                at=now,
                actor_label=label,
                route=route,
            )
    return closed


async def tell(closed: Sequence[Closed], *, relay: ChannelRelay | None, reason: str = "") -> None:
    """Tell the inboxes the asks ended and, with a `relay`, the workers still holding them
    (their calls end as timed out, saying `reason` if there is one)."""
    if not closed:
        return
    await announce(ENDED, [each.id for each in closed if each.route != Ask.Route.CLIENT])
    if relay is None:
        return
    await asyncio.gather(
        *(
            relay.expire(each.worker, each.id, each.call_id or None, reason)
            for each in closed
            if each.worker
        )
    )


@dataclass(frozen=True, slots=True)
class Swept:
    """What one sweep did."""

    expired: int
    withdrawn: int
    purged: int
    released: int = 0
    deleted: int = 0
    """Ended asks deleted past ASK_RETENTION_DAYS, with their history and deliveries."""
    committed: int = 0
    """Held decisions committed (their undo window passed, e.g. across a restart)."""


async def sweep(
    relay: ChannelRelay,
    *,
    grace: dt.timedelta = GRACE,
    orphans_of_others_than: str | None = None,
) -> Swept:
    """One sweep: expire overdue asks (telling their workers), release a stopped process's asks,
    commit held decisions that fell due, withdraw asks no call came back for, purge old answers,
    the rows of idle initialize-era sessions, and tasks past their TTL.

    `orphans_of_others_than` is this worker's name, given only when no other worker can exist
    (see :func:`release_orphans`). The sweeper runs this every SWEEP_SECONDS; `manage.py
    expire_asks` runs it once, with no grace.
    """
    now = dt.datetime.now(dt.UTC)
    expired = await database_sync_to_async(expire_overdue)(now, grace=grace)
    await tell(expired, relay=relay)
    released = 0
    if orphans_of_others_than is not None:
        released = await database_sync_to_async(release_orphans)(orphans_of_others_than)
    # After the release: a decision held across a restart must not wait on the stopped worker.
    committed = await commit_due(relay, within=conf.values().sweep_seconds)
    settings = conf.values()
    withdrawn = await database_sync_to_async(withdraw_detached)(
        now, settings.detached_grace_seconds
    )
    await tell(withdrawn, relay=None)
    await purge_idle_sessions(settings.session_idle_seconds)
    grace_seconds = settings.detached_grace_seconds
    days = settings.answer_retention_days
    purged = (
        0 if days is None else await database_sync_to_async(purge_answers)(now, days, grace_seconds)
    )
    # Tasks first: a task past its ttlMs ("Task not found" after) frees its ask for retention.
    await database_sync_to_async(purge_tasks)(now)
    deleted = 0
    if (keep := settings.ask_retention_days) is not None:
        deleted = (await delete_past_retention(now, keep, grace_seconds)).asks
    return Swept(len(expired), len(withdrawn), purged, released, deleted, committed)


class Sweeper:
    """Runs :func:`sweep` every SWEEP_SECONDS in the server process, once per event loop.

    Started by :func:`ask_mcp.runtime.start_background` with the process's relay.
    """

    def __init__(self) -> None:
        self._task: asyncio.Task[None] | None = None
        self._swept: asyncio.Event | None = None
        self._next: asyncio.Event | None = None
        self._count = 0

    def ensure_running(self, relay_of: Callable[[], ChannelRelay], worker: str) -> None:
        """Sweep in this event loop from now on; `worker` names the asks this process holds.

        `relay_of` gives the relay each sweep tells workers through: the process's server (and
        so its relay) is rebuilt when the settings change.
        """
        if alive_here(self._task):
            return
        self._swept = asyncio.Event()
        self._task = start_in_loop(self._run(relay_of, worker), name="ask_mcp sweeper")

    async def wait_swept(self) -> None:
        """Wait until the running sweeper has finished a sweep (its first closes what a crash left).

        Raises:
            RuntimeError: no sweeper runs in this process yet.
        """
        if self._swept is None:
            raise RuntimeError("the sweeper is not running")
        await self._swept.wait()

    async def wait_next_sweep(self) -> None:
        """Wait until the running sweeper finishes a sweep that starts after this call.

        Raises:
            RuntimeError: no sweeper runs in this process yet.
        """
        if self._swept is None:
            raise RuntimeError("the sweeper is not running")
        target = self._count + 2  # the sweep under way may have read the rows before this call
        while self._count < target:
            if self._next is None:
                self._next = asyncio.Event()
            await self._next.wait()

    async def _run(self, relay_of: Callable[[], ChannelRelay], worker: str) -> None:
        # With the in-memory layer this process is the only worker: what another worker held
        # was left by a process that stopped; it stays pending, held by nobody.
        alone = isinstance(get_channel_layer(), InMemoryChannelLayer)
        first = True
        while True:
            try:
                swept = await sweep(
                    relay_of(), orphans_of_others_than=worker if first and alone else None
                )
            except asyncio.CancelledError:
                raise
            except Exception:
                logger.exception("sweeping overdue asks failed")
            else:
                if swept.expired:
                    logger.info("expired %d overdue ask(s)", swept.expired)
                if swept.purged:
                    logger.info("deleted %d answer(s) past ANSWER_RETENTION_DAYS", swept.purged)
                if swept.deleted:
                    logger.info("deleted %d ended ask(s) past ASK_RETENTION_DAYS", swept.deleted)
                if self._swept is not None:
                    self._swept.set()
            self._count += 1
            if self._next is not None:
                self._next.set()
                self._next = None
            first = False
            await asyncio.sleep(conf.values().sweep_seconds)


SWEEPER: Final = Sweeper()
"""The process's sweeper."""


async def end_revoked(relay: ChannelRelay | None) -> int:
    """Withdraw revoked tokens' pending asks, end their calls on the workers holding them, then
    (in the same pass) their open tasks and their initialize-era sessions with their streams;
    returns how many asks were withdrawn."""
    closed = await database_sync_to_async(withdraw_revoked)()
    await tell(closed, relay=relay, reason=REVOKED_REASON)
    if tasks := await database_sync_to_async(end_revoked_tasks)():
        logger.info("cancelled %d task(s) of revoked tokens", tasks)
    if relay is not None:
        await end_sessions_of_revoked(relay)
    return len(closed)


class RevocationWatch:
    """Runs :func:`end_revoked` every WATCH_SECONDS in the server process, once per event loop.

    Every worker runs it, so a token revoked anywhere (the admin, a shell, a deactivated user)
    ends its calls wherever they are held; the conditional close makes one worker win each ask.
    """

    def __init__(self) -> None:
        self._task: asyncio.Task[None] | None = None

    def ensure_running(self, relay_of: Callable[[], ChannelRelay]) -> None:
        if not alive_here(self._task):
            self._task = start_in_loop(self._run(relay_of), name="ask_mcp revocation watch")

    async def _run(self, relay_of: Callable[[], ChannelRelay]) -> None:
        while True:
            try:
                if ended := await end_revoked(relay_of()):
                    logger.info("withdrew %d ask(s) of revoked tokens", ended)
            except asyncio.CancelledError:
                raise
            except Exception:
                logger.exception("withdrawing revoked tokens' asks failed")
            await asyncio.sleep(WATCH_SECONDS)  # the watch's period, not a wait for an event


REVOCATIONS: Final = RevocationWatch()
"""The process's revocation watch (started beside the sweeper)."""
