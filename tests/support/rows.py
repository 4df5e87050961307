"""Rows an in-process test writes straight into the database: an ask waiting in the inbox.

For suites that test what the records do with an ask (receipts, the mail digest) without a
server asking it; the live suites ask through a client instead (tests/support/inbox_asks.py).
"""

from __future__ import annotations

import datetime as dt

from django.utils import timezone

from ask_mcp.models import Ask


def waiting_ask(message: str = "Ship it?", *, hours: float = 1) -> Ask:
    """A pending ask for the inbox, created now and expiring in `hours`."""
    now = timezone.now()
    return Ask.objects.create(
        created=now,
        message=message,
        schema={},
        tool="user_ask",
        route=Ask.Route.BROWSER,
        expires_at=now + dt.timedelta(hours=hours),
    )
