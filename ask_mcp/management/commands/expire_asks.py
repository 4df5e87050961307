"""`manage.py expire_asks`: one sweep by hand, as the server's sweeper runs it (no grace)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from asgiref.sync import async_to_sync
from django.core.management.base import BaseCommand

from ask_mcp import conf, runtime
from ask_mcp.records.sweeper import sweep


class Command(BaseCommand):
    help = (
        "Mark every pending ask whose expiry has passed as expired, including asks left behind "
        "by a server that stopped, delete answers past ASK_MCP['ANSWER_RETENTION_DAYS'] and "
        "ended asks, with their history and deliveries, past ASK_MCP['ASK_RETENTION_DAYS']. "
        "Can run from cron; the server also does this by itself."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        # The relay reaches inboxes and workers in other processes when the layer is shared.
        swept = async_to_sync(sweep)(runtime.relay(), grace=dt.timedelta(0))
        self.stdout.write(f"Expired {swept.expired} ask(s).")
        days = conf.values().answer_retention_days
        if days is not None:
            self.stdout.write(f"Deleted {swept.purged} answer(s) older than {days:g} days.")
        keep = conf.values().ask_retention_days
        if keep is not None:
            # One sweep deletes at most MAX_BATCHES batches; the next sweep takes the rest.
            self.stdout.write(
                f"Deleted {swept.deleted} ended ask(s) whose expiry is more than {keep:g} days old."
            )
