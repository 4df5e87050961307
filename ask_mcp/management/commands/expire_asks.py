"""`manage.py expire_asks`: mark every pending ask past its expiry as expired (the sweeper, by hand)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from asgiref.sync import async_to_sync
from django.core.management.base import BaseCommand

from ask_mcp import conf
from ask_mcp.records.sweeper import expire_overdue, purge_answers, tell


class Command(BaseCommand):
    help = (
        "Mark every pending ask whose expiry has passed as expired, including asks left behind "
        "by a server that stopped, and delete answers past ASK_MCP['ANSWER_RETENTION_DAYS']. "
        "Can run from cron; the server also does this by itself."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        closed = expire_overdue(dt.datetime.now(dt.UTC), grace=dt.timedelta(0))
        # Reaches inboxes and workers in other processes when the channel layer is shared.
        async_to_sync(tell)(closed, expire_calls=True)
        self.stdout.write(f"Expired {len(closed)} ask(s).")
        days = conf.get("ANSWER_RETENTION_DAYS")
        if days is not None:
            purged = purge_answers(dt.datetime.now(dt.UTC), float(days))
            self.stdout.write(f"Deleted {purged} answer(s) older than {days:g} days.")
