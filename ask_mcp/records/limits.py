"""The flood limits on a principal's new asks for people, counted in the record across workers, and every refused ask counted per principal, limit and minute.

One token asking and disconnecting in a loop left 60 pending cards and 120 team mails in 9 s:
a held call gives its place in the table back when it leaves, but its ask stays pending for
DETACHED_GRACE_SECONDS, and the table's share (ELICITATION_PER_PRINCIPAL) counts only held
calls, in one worker. Two limits now bound what one principal (a token's user) puts to people,
whichever worker it reaches:

- ``PENDING_ASKS_PER_PRINCIPAL``: its pending asks for people, held, detached or in a task
  (tasks keep ``TASK_LIMIT`` as their own bound on open tasks besides);
- ``NEW_ASKS_PER_MINUTE``: its new asks for people created in the last 60 seconds.

Where the check runs, and why there: in :func:`ask_mcp.records.durable.open_ask`, inside the
transaction that writes a new ask's row, as one aggregate over that principal's rows (two
partial indexes keep it to the principal's pending and recent rows). The record is already
shared by every worker, so nothing else needs keeping in step (no counter in each process and
no message through the channel layer that could drift from the rows), and on PostgreSQL an
advisory lock per principal, held to the end of that transaction, keeps two workers from both
passing the last place. It costs one statement per *new ask for people* and nothing
elsewhere: a question the client shows in its own form is queued, never awaited, and is not
counted here (it notifies nobody; the table's share bounds it, in process), so an MRTR round,
and a busy agent at full speed, never reach the database for it; a retry carrying
``requestState`` reattaches by id (``reattach_ask``), ``tasks/get`` and ``tasks/update`` read
or decide existing rows, and a call asking the same again attaches to its ask: none of them is
counted or refused. A refused ask gets no row, so neither the inbox nor the mail and webhook
planner (which read rows) ever hears of it: it is refused before anyone is notified.

Anonymous loopback callers (no principal: one person trying things on their own machine) are
not limited here, as the table's share does not limit them. Each refusal, by these limits or by
the table's (its capacity, a principal's share), adds one to its principal's row for that limit
and minute (:class:`~ask_mcp.models.RefusedAsks`, with the last refused message), which the
admin and the dashboard show.
"""

from __future__ import annotations

import datetime as dt
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from django.db import IntegrityError, connection, transaction
from django.db.models import Count, F, Q

from ask_mcp import conf
from ask_mcp.models import Ask, RefusedAsks
from ask_mcp.server.errors import ToolError

WINDOW: Final = dt.timedelta(seconds=60)
"""The span NEW_ASKS_PER_MINUTE counts over: the last 60 seconds, sliding."""
MESSAGE_LIMIT: Final = 1000
"""Characters of the last refused message kept on its row: enough to recognise the question."""
ANNOUNCED: Final = (Ask.Route.BROWSER, Ask.Route.URL)
"""The routes whose asks the server announces to people (a task's ask is a browser ask)."""


class AskLimitReached(ToolError):
    """A new ask for people refused by one of the flood limits; the message names it and its setting."""

    def __init__(self, limit: RefusedAsks.Limit, message: str) -> None:
        super().__init__(message)
        self.limit = limit


@dataclass(frozen=True, slots=True)
class Refusal:
    """Which limit refused a new ask, and what the call is told."""

    limit: RefusedAsks.Limit
    message: str


def _pending_text(pending: int, limit: int) -> str:
    return (
        f"You already have {pending} questions waiting for people (held, detached or in a "
        f"task), the most one user may have: {limit}, the limit PENDING_ASKS_PER_PRINCIPAL "
        "(ASKSERVER_PENDING_ASKS_PER_PRINCIPAL). This question was not put to anyone. Wait for "
        "some to be answered or to expire, or carry on without asking; asking one of them "
        "again attaches to it."
    )


def _rate_text(recent: int, limit: int) -> str:
    return (
        f"You put {recent} new questions to people in the last 60 seconds, the most one user "
        f"may: {limit}, the limit NEW_ASKS_PER_MINUTE (ASKSERVER_NEW_ASKS_PER_MINUTE). This "
        "question was not put to anyone. Try again in a minute, or carry on without asking; "
        "asking a waiting question again attaches to it."
    )


def _lock(principal: str) -> None:
    """Serialise new asks of `principal` across workers until the transaction ends (PostgreSQL;
    SQLite writes one transaction at a time already)."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [zlib.crc32(principal.encode())])


def refusal(row: Mapping[str, Any], now: dt.datetime) -> Refusal | None:
    """Why the new ask `row` may not be created now, or None (in open_ask's transaction).

    A row whose attach key names a live ask of the same principal is not new: it attaches, and
    is never refused.
    """
    principal = str(row["principal"])
    if not principal or row["route"] not in ANNOUNCED:
        return None
    _lock(principal)
    values = conf.values()
    since = now - WINDOW
    pending = Q(status=Ask.Status.PENDING, route__in=ANNOUNCED)
    recent = Q(created__gte=since, route__in=ANNOUNCED)
    key = str(row["attach_key"] or "")
    live = Q(attach_key=key, expires_at__gt=now) if key else Q(pk__in=[])
    counts = Ask.objects.filter(Q(principal=principal) & (pending | recent | live)).aggregate(
        pending=Count("pk", filter=pending),
        recent=Count("pk", filter=recent),
        live=Count("pk", filter=live),
    )
    if counts["live"]:
        return None  # it attaches to that ask
    if counts["pending"] >= values.pending_asks_per_principal:
        return Refusal(
            RefusedAsks.Limit.PENDING,
            _pending_text(counts["pending"], values.pending_asks_per_principal),
        )
    if counts["recent"] >= values.new_asks_per_minute:
        return Refusal(
            RefusedAsks.Limit.RATE, _rate_text(counts["recent"], values.new_asks_per_minute)
        )
    return None


def count_refused(principal: str, limit: str, message: str, at: dt.datetime) -> None:
    """Add one to `principal`'s refused asks for `limit` in `at`'s minute, keeping `message`."""
    minute = at.replace(second=0, microsecond=0)
    text = message[:MESSAGE_LIMIT]
    mine = RefusedAsks.objects.filter(principal=principal, limit=limit, minute=minute)
    if mine.update(count=F("count") + 1, last_message=text, last_at=at):
        return
    try:
        with transaction.atomic():
            RefusedAsks.objects.create(
                principal=principal,
                limit=limit,
                minute=minute,
                count=1,
                last_message=text,
                last_at=at,
            )
    except IntegrityError:  # another worker made the minute's row first
        mine.update(count=F("count") + 1, last_message=text, last_at=at)


__all__ = ["AskLimitReached", "Refusal", "count_refused", "refusal"]
