"""Retention: every ended ask, with its history, its reach row and its deliveries, is deleted once ASK_RETENTION_DAYS pass; it knows rows and their ages, not calls.

An ask is deleted when all of these hold (:func:`deletable`):

- it ended (a pending ask is the sweeper's to end first, at its expiry);
- its expiry is more than ASK_RETENTION_DAYS ago, so no ask ever goes before its expiry;
- a decision no call collected yet is also past its keeping time: its expiry plus
  DETACHED_GRACE_SECONDS, the time a call coming back is given (it matters only when the
  retention is set shorter than that);
- a decision collected after the expiry (a URL retry) was collected more than the retention ago;
- no task refers to it: a task's row lives TASK_TTL + TASK_RETENTION and reads its ask until
  the sweeper deletes the task (:func:`ask_mcp.records.tasks.purge_tasks`).

Deleting an ask deletes its AskEvents, its AskReach, its Deliveries (mail and webhook) and the
WebhookDelivery rows of the earlier webhook log; WebhookDelivery rows whose ask is gone already
(an admin deleted it) go once they are older than the retention. ANSWER_RETENTION_DAYS, when
set, clears answers sooner (:func:`purge_answers`); the ask and its history stay until then.
Called by :mod:`ask_mcp.records.sweeper`; knows nothing of the sweep's timing.
"""

from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import dataclass
from typing import Final

from channels.db import database_sync_to_async
from django.db import transaction
from django.db.models import Exists, OuterRef, Q

from ask_mcp.models import (
    DECIDED,
    Ask,
    AskEvent,
    AskQuerySet,
    Task,
    WebhookDelivery,
)

BATCH: Final = 200
"""Asks deleted per transaction. A batch holds SQLite's one write lock while it deletes, and
the recorder's writes wait behind it: 200 asks with their rows (2,200, six events each) took
16-50 ms on the shared two-core development machine (load 8-9), about the recorder's 25 ms
gather window, where 500 took 39-140 ms. PostgreSQL locks only the rows (80-110 ms for 200 on
the same machine, blocking no other ask). 200 ids stay far below SQLite's bound variables."""
MAX_BATCHES: Final = 50
"""Batches per sweep: 10,000 asks at most, so one sweep stays short (the next expiry waits for
it), while at one sweep every SWEEP_SECONDS (30) a backlog of a million asks clears in under
an hour."""


@dataclass(frozen=True, slots=True)
class Deleted:
    """What one retention pass deleted."""

    asks: int
    webhook_log: int
    """WebhookDelivery rows (the earlier webhook log) deleted, with their ask or after it."""


def deletable(now: dt.datetime, days: float, grace: float) -> AskQuerySet:
    """The asks retention deletes at `now`: ended, expired more than `days` ago, their
    uncollected decision past `grace` seconds after the expiry, and held by no task."""
    cutoff = now - dt.timedelta(days=days)
    uncollected_until = now - dt.timedelta(seconds=grace)
    waiting_decision = Q(status__in=DECIDED, collected_at__isnull=True)
    return (
        Ask.objects.exclude(status=Ask.Status.PENDING)
        .filter(expires_at__lt=cutoff)
        .filter(~waiting_decision | Q(expires_at__lt=uncollected_until))
        .filter(Q(collected_at__isnull=True) | Q(collected_at__lt=cutoff))
        .exclude(Exists(Task.objects.filter(ask_id=OuterRef("pk"))))
        .order_by()
    )


def delete_batch(now: dt.datetime, days: float, grace: float) -> tuple[int, int]:
    """Delete up to BATCH of the asks :func:`deletable` names, in one transaction, with every
    row that refers to them; (asks, webhook-log rows) deleted."""
    with transaction.atomic():
        # Locked and skipped when locked (PostgreSQL; SQLite has one writer anyway): two
        # workers' sweepers take different asks, and a late collection waits for the delete.
        ids = list(
            deletable(now, days, grace)
            .select_for_update(skip_locked=True)
            .values_list("pk", flat=True)[:BATCH]
        )
        if not ids:
            return 0, 0
        log = WebhookDelivery.objects.filter(ask_id__in=[each.hex for each in ids]).delete()[0]
        # Only the ids are read: the ORM deletes the events, the reach row and the deliveries
        # with one DELETE each by their indexed ask id, then the asks.
        removed = Ask.objects.filter(pk__in=ids).only("pk").delete()[1]
        return removed.get(Ask._meta.label, 0), log


def delete_orphaned_log(cutoff: dt.datetime, after: int) -> tuple[int, int | None]:
    """Delete the WebhookDelivery rows created before `cutoff` whose ask no longer exists, in
    the page of BATCH rows after the row id `after`; (deleted, the next page's `after` or None).

    Their `ask_id` is text (the log predates the Ask foreign keys), so the asks are looked up
    by page rather than joined: a join would need a cast that one bad row would break.
    """
    page = list(
        WebhookDelivery.objects.filter(created_at__lt=cutoff, pk__gt=after)
        .order_by("pk")
        .values_list("pk", "ask_id")[:BATCH]
    )
    if not page:
        return 0, None
    named = {row_id: _uuid(ask_id) for row_id, ask_id in page}
    present = set(
        Ask.objects.filter(pk__in={each for each in named.values() if each is not None})
        .order_by()
        .values_list("pk", flat=True)
    )
    gone = [row_id for row_id, ask_id in named.items() if ask_id not in present]
    deleted = WebhookDelivery.objects.filter(pk__in=gone).delete()[0] if gone else 0
    return deleted, page[-1][0] if len(page) == BATCH else None


async def delete_past_retention(now: dt.datetime, days: float, grace: float) -> Deleted:
    """Delete the asks past retention, BATCH at a time and MAX_BATCHES at most, then the old
    webhook-log rows whose ask is gone; each batch is a call of its own on the database
    thread, so the inbox's queries run between them."""
    asks = log = 0
    for _ in range(MAX_BATCHES):
        deleted, with_them = await database_sync_to_async(delete_batch)(now, days, grace)
        asks, log = asks + deleted, log + with_them
        if deleted < BATCH:
            break
    cutoff = now - dt.timedelta(days=days)
    after: int | None = 0
    for _ in range(MAX_BATCHES):
        if after is None:
            break
        deleted, after = await database_sync_to_async(delete_orphaned_log)(cutoff, after)
        log += deleted
    return Deleted(asks, log)


def _uuid(text: str) -> uuid.UUID | None:
    try:
        return uuid.UUID(text)
    except ValueError:
        return None  # not an ask's id: no ask keeps it


def purge_answers(now: dt.datetime, days: float, grace: float) -> int:
    """Clear the answers given more than `days` ago (ANSWER_RETENTION_DAYS); how many.

    The ask, its status and its history stay; only what the person typed goes. An answer no
    call collected yet stays until `grace` seconds (DETACHED_GRACE_SECONDS) after its ask's
    expiry, so a call coming back for it still gets it.
    """
    cutoff = now - dt.timedelta(days=days)
    uncollected_until = now - dt.timedelta(seconds=grace)
    ids = list(
        Ask.objects.filter(answered_at__lt=cutoff, answer__isnull=False)
        .filter(Q(collected_at__isnull=False) | Q(expires_at__lt=uncollected_until))
        .order_by()
        .values_list("id", flat=True)
    )
    if ids:
        Ask.objects.filter(pk__in=ids).update(answer=None)
        AskEvent.objects.bulk_create(
            AskEvent(
                ask_id=ask_id,
                kind=AskEvent.Kind.PURGED,
                at=now,
                actor_label=f"server (kept {days:g} days)",
            )
            for ask_id in ids
        )
    return len(ids)


__all__ = [
    "BATCH",
    "MAX_BATCHES",
    "Deleted",
    "deletable",
    "delete_batch",
    "delete_orphaned_log",
    "delete_past_retention",
    "purge_answers",
]
