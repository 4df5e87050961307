"""Sending deliveries: claiming due rows once across workers, one try each, the outcome kept with backoff.

A worker claims a batch of due rows in one transaction: on PostgreSQL it selects them `FOR
UPDATE SKIP LOCKED` (two workers never wait on, nor take, the same rows), and everywhere the
UPDATE that claims them repeats the "still due" condition, so a row is claimed by one worker
only. A claim is a lease: a worker that died mid-send leaves its rows to be claimed again once
the lease ends (at most once more per lease; the receiver sees the same Askserver-Delivery id).
Sending (SMTP, HTTP) runs off the event loop and off the database thread.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import os
import smtplib
import uuid
from dataclasses import dataclass
from typing import Final
from urllib.parse import urlsplit

from channels.db import database_sync_to_async
from django.db import connection, transaction
from django.db.models import F, Q
from django.urls import reverse
from django.utils import timezone

from ask_mcp import conf
from ask_mcp.models import Ask, Delivery, PushDevice
from ask_mcp.ops import metrics
from ask_mcp.reach import digest, mail, push, targets, webhooks

logger = logging.getLogger("ask_mcp.reach.queue")

State = Delivery.State
ATTEMPTS: Final = 5
"""Tries per delivery before it is marked failed."""
BACKOFF: Final = (5.0, 30.0, 120.0, 600.0)
"""Seconds before the 2nd, 3rd, 4th and 5th try: a receiver down for a deploy gets minutes."""
LEASE: Final = dt.timedelta(seconds=120)
"""How long a claim holds a row: longer than one try can take (SMTP's 10 s, HTTP's 5 s)."""
BATCH: Final = 32
"""Rows one worker claims at a time (the rest are left to the next pass or another worker)."""


@dataclass(frozen=True, slots=True)
class Outcome:
    state: str
    error: str = ""
    status: int | None = None
    gone: bool = False
    """The push service said the device's subscription no longer exists."""


def _due(now: dt.datetime) -> Q:
    waiting = Q(state__in=(State.PENDING, State.RETRYING), next_attempt_at__lte=now)
    abandoned = Q(state=State.SENDING, lease_until__lt=now)  # its worker stopped mid-send
    return waiting | abandoned


def claim(now: dt.datetime, limit: int = BATCH) -> list[Delivery]:
    """Claim up to `limit` due deliveries for this worker; each row is claimed by one worker."""
    mark = f"{os.getpid()}-{uuid.uuid4().hex}"  # which process claimed it, for the admin
    with transaction.atomic():
        due = Delivery.objects.filter(_due(now)).order_by("next_attempt_at", "pk")
        if connection.features.has_select_for_update_skip_locked:
            due = due.select_for_update(skip_locked=True)
        ids = list(due.values_list("pk", flat=True)[:limit])
        if not ids:
            return []
        Delivery.objects.filter(_due(now), pk__in=ids).update(
            state=State.SENDING, claim=mark, lease_until=now + LEASE, attempts=F("attempts") + 1
        )
    claimed = Delivery.objects.filter(claim=mark, state=State.SENDING).select_related(
        "ask",
        "ask__reach",
        "ask__asked_by",
        "ask__answered_by",
        "recipient",
        "webhook",
        "device",
        "ask__reach__escalated_team",
    )
    return list(claimed.select_related("ask__reach__escalated_user"))


def send(delivery: Delivery) -> Outcome:
    """One try of `delivery` (blocking: SMTP or HTTP); no database access."""
    ask = delivery.ask
    closing = delivery.purpose == Delivery.Purpose.CLOSED  # sent because the ask ended
    if not closing and not ask.awaits_browser_answer:
        return Outcome(State.SKIPPED, f"the ask was {ask.status} before this was sent")
    try:
        base = link_base(ask)
        if delivery.channel == Delivery.Channel.PUSH:
            return _push(delivery, base)
        if delivery.channel == Delivery.Channel.EMAIL:
            mail.message(delivery, base).send()
            return Outcome(State.SENT)
        hook = delivery.webhook
        if hook is None or not hook.active:
            return Outcome(State.SKIPPED, "the webhook was deleted or turned off")
        target = targets.vet(hook.url, allow_private=conf.values().allow_private_targets)
        body = webhooks.body_of(
            webhooks.announcement(_ask_fields(ask), _page(base, ask), delivery.purpose)
        )
        status = webhooks.post(target, body, secret=hook.secret, delivery_id=delivery.pk)
        return Outcome(State.SENT, status=status)
    except targets.TargetRefused as exc:
        return Outcome(State.FAILED, f"refused: {exc}")  # retrying would be refused again
    except NoOrigin as exc:
        return Outcome(State.FAILED, str(exc))
    except push.PushGone as exc:
        return Outcome(State.FAILED, f"the subscription is gone ({exc}): device removed", gone=True)
    except webhooks.PostFailed as exc:
        return Outcome(State.RETRYING, str(exc), exc.status)
    except (smtplib.SMTPException, OSError, ValueError) as exc:
        return Outcome(State.RETRYING, f"{type(exc).__name__}: {exc}")
    except Exception as exc:  # a bug here must cost one delivery, never the loop
        logger.exception("delivery %s could not be sent", delivery.pk)
        return Outcome(State.RETRYING, f"{type(exc).__name__}: {exc}")


class NoOrigin(Exception):
    """PUBLIC_URL is unset: no link can be sent (the checks and the webhook form refuse this)."""


def _push(delivery: Delivery, base: str) -> Outcome:
    """One try of a push to its device: the question (or its closing), encrypted to the device."""
    device = delivery.device
    if device is None:
        return Outcome(State.SKIPPED, "the device was removed before this was sent")
    ask = delivery.ask
    payload = push_payload(delivery, base)
    # A question is worth delivering until it expires; a closing only while its question may
    # still be waiting at the push service (the same span, from now).
    ttl = int((ask.expires_at - timezone.now()).total_seconds())
    if delivery.purpose == Delivery.Purpose.CLOSED:
        ttl = int((ask.expires_at - ask.created).total_seconds())
    subscription = push.Subscription(device.endpoint, device.p256dh, device.auth)
    status = push.send(subscription, payload, purpose=delivery.purpose, ttl=ttl, topic=ask.id.hex)
    return Outcome(State.SENT, status=status)


def push_payload(delivery: Delivery, base: str) -> dict[str, object]:
    """What the service worker gets (encrypted): what to show, where to open, how to acknowledge.

    `tag` is the ask's id: the device shows one notification per ask, and the closing push
    (`kind` "closed") closes it.
    """
    ask = delivery.ask
    common: dict[str, object] = {
        "tag": ask.id.hex,
        "url": _page(base, ask),
        "ack": {"url": reverse("ask_mcp:push_ack"), "token": push.ack_token(delivery.pk)},
    }
    if delivery.purpose == Delivery.Purpose.MORE:
        return {
            **common,
            "kind": "more",
            "tag": "askserver-more",
            "url": base.rstrip("/") + reverse("ask_mcp:inbox"),
            "title": "More questions are waiting",
            "body": "You were sent many questions this hour; your inbox lists them all.",
        }
    if delivery.purpose == Delivery.Purpose.CLOSED:
        who = ask.answered_by.get_username() if ask.answered_by is not None else ""
        ended = push.ended_words(ask.status, who)
        return {**common, "kind": "closed", "title": "Question closed", "body": ended}
    first = (ask.message.strip().splitlines() or [""])[0]
    title = mail.SUBJECTS[delivery.purpose].format(
        asker=mail.asker(ask), first="", fallback=_ask_fields(ask).get("fallback", "")
    )
    shown: dict[str, object] = {
        **common,
        "kind": "ask",
        "title": title.rstrip(": —"),
        "body": first[: push.BODY_CHARS],
    }
    if delivery.recipient_id is not None and (options := push.quick_answers(ask.schema)):
        expires = ask.expires_at.timestamp()
        shown["answer_url"] = reverse("ask_mcp:push_answer")
        shown["actions"] = [
            {
                "action": f"answer-{index}",
                "title": label,
                "token": push.answer_token(
                    push.QuickAnswer(ask.id.hex, delivery.recipient_id, name, value, label),
                    expires,
                ),
            }
            for index, (name, label, value) in enumerate(options)
        ]
    return shown


def link_base(ask: Ask) -> str:
    """The origin of the links sent for `ask`: PUBLIC_URL, and only it.

    Never the origin the ask was asked on: that is the agent's `Host` header, and a poisoned
    one led a teammate's mailed link to another local listener (issue 28).

    Raises:
        NoOrigin: PUBLIC_URL is unset.
    """
    base = conf.values().public_url
    if not base:
        raise NoOrigin(conf.public_url_needed("Sending mail or a webhook"))
    return base


def _page(base: str, ask: Ask) -> str:
    return base.rstrip("/") + reverse("ask_mcp:ask", args=[ask.id])


def _ask_fields(ask: Ask) -> dict[str, str]:
    fields = {
        "id": ask.id.hex,
        "message": ask.message,
        "tool": ask.tool,
        "client": ask.client_name,
        "created": ask.created.isoformat(timespec="seconds"),
        "expires_at": ask.expires_at.isoformat(timespec="seconds"),
    }
    reach = getattr(ask, "reach", None)
    if reach is not None and reach.escalated_at is not None:
        fields["fallback"] = reach.escalated_to
    return fields


def record(delivery: Delivery, outcome: Outcome, now: dt.datetime) -> str:
    """Keep the outcome of this worker's try (only while its claim holds); returns the new state."""
    state = outcome.state
    fields: dict[str, object] = {
        "last_error": outcome.error[:2000],
        "response_status": outcome.status,
        "lease_until": None,
    }
    if state == State.RETRYING:
        if delivery.attempts >= ATTEMPTS:
            state = State.FAILED
        else:
            pause = BACKOFF[min(delivery.attempts - 1, len(BACKOFF) - 1)]
            fields["next_attempt_at"] = now + dt.timedelta(seconds=pause)
    if state == State.SENT:
        fields["sent_at"] = now
    Delivery.objects.filter(pk=delivery.pk, claim=delivery.claim, state=State.SENDING).update(
        state=state, **fields
    )
    if delivery.device_id is not None:
        devices = PushDevice.objects.filter(pk=delivery.device_id)
        if outcome.gone:
            devices.delete()  # RFC 8030 7.3: the push service will never deliver to it again
        elif state == State.SENT:
            devices.update(last_sent_at=now)
    if state in (State.RETRYING, State.FAILED):
        metrics.notification_failed(delivery.channel)
        # Only a webhook's host: a chat webhook's path is its secret (hooks.slack.com/services/…).
        where = delivery.address
        if "://" in where:
            where = urlsplit(where).netloc.rpartition("@")[2]
        logger.warning(
            "%s delivery %s to %s, try %d: %s",
            delivery.channel,
            delivery.pk,
            where,
            delivery.attempts,
            outcome.error,
        )
    return state


def send_group(group: list[Delivery]) -> list[Outcome]:
    """One try of a send (blocking): one row alone, or a person's mail rows as one digest
    (MAIL_DIGEST_SECONDS); an outcome per row, in order."""
    if len(group) == 1:
        return [send(group[0])]
    waiting = [each for each in group if each.ask.awaits_browser_answer]
    if len(waiting) <= 1:
        return [send(each) for each in group]  # what ended is skipped, one mail at most goes
    try:
        mail.digest(waiting, link_base).send()
        sent = Outcome(State.SENT)
    except (smtplib.SMTPException, OSError, ValueError) as exc:
        sent = Outcome(State.RETRYING, f"{type(exc).__name__}: {exc}")
    except Exception as exc:  # a bug here must cost one digest, never the loop
        logger.exception("digest of %d deliveries could not be sent", len(waiting))
        sent = Outcome(State.RETRYING, f"{type(exc).__name__}: {exc}")
    return [
        sent
        if each.ask.awaits_browser_answer
        else Outcome(State.SKIPPED, f"the ask was {each.ask.status} before this was sent")
        for each in group
    ]


async def deliver_due() -> int:
    """Claim what is due and the mail waiting for the same people, try each send (concurrently:
    a person's mails as one digest), keep the outcomes; returns how many rows were tried."""
    claimed = await database_sync_to_async(claim)(timezone.now())
    if not claimed:
        return 0
    lease = timezone.now() + LEASE
    claimed += await database_sync_to_async(digest.pull_in)(claimed, claimed[0].claim, lease)
    sends = digest.grouped(claimed)
    outcomes = await asyncio.gather(*(asyncio.to_thread(send_group, group) for group in sends))
    for group, results in zip(sends, outcomes, strict=True):
        for delivery, outcome in zip(group, results, strict=True):
            await database_sync_to_async(record)(delivery, outcome, timezone.now())
    return len(claimed)
