"""What the admin dashboard shows, counted from the recorded asks: per day by outcome, time to answer, rates per token, the longest waiting, the refused; no drawing.

Plain queries over :class:`~ask_mcp.models.Ask`, a bounded window each (DAYS days, LIMIT rows),
so the page costs the same on a database of a million asks. Medians and percentiles are taken
in Python over the window's answered asks: SQLite has no percentile function.
"""

from __future__ import annotations

import datetime as dt
import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

from django.db.models import CharField, Count, Max, Q, Sum
from django.db.models.functions import Cast, TruncDate
from django.utils import timezone

from ask_mcp.models import ApiToken, Ask, RefusedAsks
from ask_mcp.server.identity import TOKEN

DAYS: Final = 14
"""Days the dashboard's charts cover, today included: two working weeks side by side."""
LIMIT: Final = 10
"""Rows in the per-token table and the longest-waiting list."""
OUTCOMES: Final = (
    Ask.Status.ACCEPTED,
    Ask.Status.DECLINED,
    Ask.Status.CANCELLED,
    Ask.Status.EXPIRED,
    Ask.Status.WITHDRAWN,
    Ask.Status.PENDING,
)
"""The statuses the per-day chart stacks, in drawing order."""
REPLIED: Final = (Ask.Status.ACCEPTED, Ask.Status.DECLINED, Ask.Status.CANCELLED)
"""Statuses a person chose: only these have a time to answer."""


@dataclass
class Day:
    """One day's asks by status, and how long the answered ones took."""

    date: dt.date
    counts: dict[str, int] = field(default_factory=dict)
    median: float | None = None
    p90: float | None = None

    @property
    def total(self) -> int:
        return sum(self.counts.values())


@dataclass(frozen=True)
class TokenRates:
    """How a token's asks ended over the window."""

    label: str
    asks: int
    declined: int
    expired: int

    @property
    def decline_rate(self) -> float:
        return self.declined / self.asks if self.asks else 0.0

    @property
    def timeout_rate(self) -> float:
        return self.expired / self.asks if self.asks else 0.0


def percentile(values: Sequence[float], fraction: float) -> float | None:
    """The `fraction` percentile of `values` (nearest rank), None when there are none."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(fraction * len(ordered)))
    return ordered[rank - 1]


def _window_start(now: dt.datetime) -> dt.datetime:
    today = now.astimezone(dt.UTC).date()
    return dt.datetime.combine(today - dt.timedelta(days=DAYS - 1), dt.time(), dt.UTC)


def daily(now: dt.datetime | None = None) -> list[Day]:
    """The last DAYS days (UTC), oldest first, each with its asks by status and answer times."""
    now = now or timezone.now()
    start = _window_start(now)
    days = {
        (start + dt.timedelta(days=n)).date(): Day((start + dt.timedelta(days=n)).date())
        for n in range(DAYS)
    }
    recent = Ask.objects.filter(created__gte=start)
    rows = (
        recent.annotate(day=TruncDate("created", tzinfo=dt.UTC))
        .values_list("day", "status")
        .annotate(n=Count("id"))
        .order_by()
    )
    for day, status, n in rows:
        if day in days:
            days[day].counts[status] = n
    waits: dict[dt.date, list[float]] = defaultdict(list)
    answered = recent.filter(status__in=REPLIED, answered_at__isnull=False).values_list(
        "created", "answered_at"
    )
    for created, answered_at in answered:
        if answered_at is not None:
            waits[created.astimezone(dt.UTC).date()].append((answered_at - created).total_seconds())
    for day, seconds in waits.items():
        if day in days:
            days[day].median = percentile(seconds, 0.5)
            days[day].p90 = percentile(seconds, 0.9)
    return list(days.values())


def answer_times(now: dt.datetime | None = None) -> tuple[float | None, float | None]:
    """The median and 90th percentile of every time to answer over the window, in seconds."""
    start = _window_start(now or timezone.now())
    seconds = [
        (answered_at - created).total_seconds()
        for created, answered_at in Ask.objects.filter(
            created__gte=start, status__in=REPLIED, answered_at__isnull=False
        ).values_list("created", "answered_at")
        if answered_at is not None
    ]
    return percentile(seconds, 0.5), percentile(seconds, 0.9)


def per_token(now: dt.datetime | None = None) -> list[TokenRates]:
    """The tokens that asked most over the window, with their decline and timeout counts.

    An ask names its token by credential kind and id, not by a foreign key: the tokens that
    still exist are matched by id (a deleted token's asks are not counted), then named.
    """
    start = _window_start(now or timezone.now())
    existing = ApiToken.objects.annotate(key=Cast("pk", CharField())).values("key")
    rows = list(
        Ask.objects.filter(created__gte=start, credential_kind=TOKEN, credential_id__in=existing)
        .values("credential_id")
        .annotate(
            asks=Count("id"),
            declined=Count("id", filter=Q(status=Ask.Status.DECLINED)),
            expired=Count("id", filter=Q(status=Ask.Status.EXPIRED)),
        )
        .order_by("-asks")[:LIMIT]
    )
    tokens = ApiToken.objects.select_related("user").in_bulk(
        [int(row["credential_id"]) for row in rows]
    )
    rates = []
    for row in rows:
        token = tokens.get(int(row["credential_id"]))
        if token is not None:  # deleted since the first query
            label = f"{token.user.get_username()} · {token.name or token.prefix + '…'}"
            rates.append(TokenRates(label, row["asks"], row["declined"], row["expired"]))
    return rates


def waiting_longest() -> list[Ask]:
    """The pending asks that have waited longest, oldest first."""
    return list(
        Ask.objects.filter(status=Ask.Status.PENDING)
        .select_related("asked_by", "team")
        .order_by("created")[:LIMIT]
    )


@dataclass(frozen=True)
class Refused:
    """How many asks one principal had refused by one limit over the window, and the last one."""

    principal: str
    limit: str
    """The limit as the admin names it (its setting in brackets)."""
    count: int
    last_at: dt.datetime
    last_message: str


def refused(now: dt.datetime | None = None) -> list[Refused]:
    """The principals and limits that refused most asks over the window, most first.

    Summed from the one row per principal, limit and minute (:class:`~ask_mcp.models.RefusedAsks`);
    the last message is read from each pair's latest row.
    """
    start = _window_start(now or timezone.now())
    rows = list(
        RefusedAsks.objects.filter(minute__gte=start)
        .values("principal", "limit")
        .annotate(count=Sum("count"), last_at=Max("last_at"))
        .order_by("-count", "principal")[:LIMIT]
    )
    names = dict(RefusedAsks.Limit.choices)
    found = []
    for row in rows:
        last = (
            RefusedAsks.objects.filter(
                principal=row["principal"], limit=row["limit"], last_at=row["last_at"]
            )
            .values_list("last_message", flat=True)
            .first()
        )
        found.append(
            Refused(
                row["principal"] or "anonymous",
                names.get(row["limit"], row["limit"]),
                row["count"],
                row["last_at"],
                last or "",
            )
        )
    return found
