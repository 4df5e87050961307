"""Rows of every kind retention looks at, written as the server writes them, and what is left of them; run inside `manage.py shell` against a live server's database.

:func:`seed` writes one ask per case, each with the rows that refer to an ask (its history, its
reach row, a mail and a webhook Delivery, a row of the earlier webhook log) and prints the asks'
ids by case as JSON; :func:`census` prints what is left of those asks and their rows. Ages are
given in seconds before now, so one seed serves a retention of 90 days and one of 90 seconds.
"""

from __future__ import annotations

import datetime as dt
import json
import uuid
from collections.abc import Mapping
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from ask_mcp.models import (
    Ask,
    AskEvent,
    AskReach,
    Delivery,
    Task,
    Webhook,
    WebhookDelivery,
)

DAY = 86_400.0

KINDS = {
    "accepted": ("answered", {"answer": {"answer": "yes"}}),
    "declined": ("declined", {}),
    "cancelled": ("cancelled", {}),
    "expired": ("expired", {}),
    "withdrawn": ("withdrawn", {}),
    "pending": ("", {}),
}
"""Each status, with the history event that ended it and what its row holds besides."""


def _ask(
    case: str,
    status: str,
    *,
    expired_ago: float,
    collected_ago: float | None,
    created_ago: float | None,
    user: User,
    webhook: Webhook,
) -> Ask:
    now = timezone.now()
    expires = now - dt.timedelta(seconds=expired_ago)
    created = now - dt.timedelta(seconds=created_ago or max(expired_ago, 0.0) + 3600)
    kind, extra = KINDS[status]
    decided = status in ("accepted", "declined", "cancelled")
    ask = Ask.objects.create(
        created=created,
        message=f"retention: {case}",
        schema={"type": "object", "properties": {"answer": {"type": "string"}}},
        tool="user_ask",
        route=Ask.Route.BROWSER,
        status=status,
        asked_by=user,
        answered_by=user if decided else None,
        answered_at=created + dt.timedelta(minutes=5) if decided else None,
        expires_at=expires,
        collected_at=None if collected_ago is None else now - dt.timedelta(seconds=collected_ago),
        worker="",
        **extra,
    )
    events = [("created", created), ("shown", created + dt.timedelta(seconds=1))]
    if kind:
        events.append((kind, created + dt.timedelta(minutes=5)))
    AskEvent.objects.bulk_create(
        AskEvent(ask=ask, kind=each, at=at, actor_label="retention seed") for each, at in events
    )
    AskReach.objects.create(ask=ask, link_base="http://127.0.0.1", reminded_at=created)
    for channel, address in (("email", "person@example.com"), ("webhook", webhook.url)):
        Delivery.objects.create(
            ask=ask,
            purpose=Delivery.Purpose.ASKED,
            channel=channel,
            recipient=user if channel == "email" else None,
            webhook=webhook if channel == "webhook" else None,
            address=address,
            key=f"asked:{channel}:{ask.pk.hex}",
            state=Delivery.State.SENT,
            next_attempt_at=created,
            sent_at=created,
        )
    legacy = WebhookDelivery.objects.create(webhook=webhook, ask_id=ask.pk.hex, status="delivered")
    WebhookDelivery.objects.filter(pk=legacy.pk).update(created_at=created)
    Delivery.objects.filter(ask=ask).update(created_at=created)
    return ask


def seed(cases: Mapping[str, Mapping[str, Any]]) -> None:
    """Write one ask per case (`status`; `expired_ago`, `collected_ago`, `created_ago` in
    seconds; `task_for`: seconds its task still lives, negative when already past), plus old webhook-log rows whose ask is gone (`orphans`);
    print the ids by case. One transaction: a server's sweeper running meanwhile sees all the
    rows or none."""
    with transaction.atomic():
        ids = _seed(cases)
    print(json.dumps(ids))


def _seed(cases: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    user, _ = User.objects.get_or_create(username="retention-person")
    webhook = Webhook.objects.create(user=user, url="http://127.0.0.1:9/hook")
    ids: dict[str, str] = {}
    for case, spec in cases.items():
        ask = _ask(
            case,
            spec["status"],
            expired_ago=spec["expired_ago"],
            collected_ago=spec.get("collected_ago"),
            created_ago=spec.get("created_ago"),
            user=user,
            webhook=webhook,
        )
        if (lives := spec.get("task_for")) is not None:
            now = timezone.now()
            Task.objects.create(
                id=uuid.uuid4().hex,
                principal=f"user:{user.pk}",
                tool="user_ask",
                status="completed",
                created=ask.created,
                updated=now,
                expires_at=now + dt.timedelta(seconds=lives),
                ask_id=ask.pk,
            )
        ids[case] = ask.pk.hex
    for name, (ask_id, age) in {
        "orphan_old": (uuid.uuid4().hex, 200 * DAY),
        "orphan_bad_id_old": ("not an ask id", 200 * DAY),
        "orphan_recent": (uuid.uuid4().hex, 0.0),
    }.items():
        row = WebhookDelivery.objects.create(webhook=webhook, ask_id=ask_id, status="failed")
        at = timezone.now() - dt.timedelta(seconds=age)
        WebhookDelivery.objects.filter(pk=row.pk).update(created_at=at)
        ids[name] = f"log:{row.pk}"
    return ids


def census(ids: Mapping[str, str]) -> None:
    """Print, by case, what is left: the ask's status and how many of each row refer to it
    (or, for a webhook-log row, whether it is left)."""
    left: dict[str, Any] = {}
    for case, ask_id in ids.items():
        if ask_id.startswith("log:"):
            left[case] = WebhookDelivery.objects.filter(pk=int(ask_id[4:])).exists()
            continue
        ask = Ask.objects.filter(pk=uuid.UUID(ask_id)).values("status", "answer").first()
        left[case] = {
            "ask": None if ask is None else ask["status"],
            "events": AskEvent.objects.filter(ask_id=uuid.UUID(ask_id)).count(),
            "reach": AskReach.objects.filter(ask_id=uuid.UUID(ask_id)).count(),
            "deliveries": Delivery.objects.filter(ask_id=uuid.UUID(ask_id)).count(),
            "webhook_log": WebhookDelivery.objects.filter(ask_id=ask_id).count(),
        }
    print(json.dumps(left))
