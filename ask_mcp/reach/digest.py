"""When a person's mail goes: the first at once, what falls due in the next MAIL_DIGEST_SECONDS as one digest; reminders and immediate mails never wait. Rows, not sending.

One person once got 8 mails in the same second (4 new questions, 4 reminders). Now each mail
row gets its time when it is planned (:func:`slot`): at once when nothing went to that address
in the last MAIL_DIGEST_SECONDS; else with the digest already waiting, or MAIL_DIGEST_SECONDS
after the last mail. Rows due at the same time for one address go as one mail, and the rows
still waiting for an address go with a reminder to it (:func:`pull_in`): a reminder, always
planned for the moment it is due, carries the waiting digest along instead of waiting for it. A row marked
`immediate` (a push fallback, an urgent mail) is always sent at once and alone.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from django.db import transaction
from django.db.models import F, Max

from ask_mcp import conf
from ask_mcp.models import Delivery

State = Delivery.State
WAITING = (State.PENDING, State.RETRYING)
"""Rows not yet tried, or waiting for their next try."""


def slot(address: str, purpose: str, now: dt.datetime, *, immediate: bool = False) -> dt.datetime:
    """When a mail to `address` planned `now` for `purpose` goes."""
    window = conf.values().mail_digest_seconds
    if window is None or immediate or purpose == Delivery.Purpose.REMINDER:
        return now
    mails = Delivery.objects.filter(
        channel=Delivery.Channel.EMAIL, address=address, immediate=False
    )
    # A digest is already waiting for this address: join it.
    waiting = mails.filter(state__in=WAITING, next_attempt_at__gt=now, attempts=0)
    joined: dt.datetime | None = (
        waiting.order_by("next_attempt_at").values_list("next_attempt_at", flat=True).first()
    )
    if joined is not None:
        return joined
    # The last mail that went (or is going now): the next goes a window after it.
    since = now - dt.timedelta(seconds=window)
    last: dt.datetime | None = mails.filter(sent_at__gte=since).aggregate(at=Max("sent_at"))["at"]
    going: dt.datetime | None = mails.filter(
        state__in=(*WAITING, State.SENDING), next_attempt_at__gte=since
    ).aggregate(at=Max("next_attempt_at"))["at"]
    anchor = max((at for at in (last, going) if at is not None), default=None)
    if anchor is None:
        return now  # the first mail in a while: at once
    return max(now, anchor + dt.timedelta(seconds=window))


def pull_in(claimed: Sequence[Delivery], mark: str, lease_until: dt.datetime) -> list[Delivery]:
    """Claim, for this worker's `mark`, the mail rows still waiting for the addresses of the
    reminders in `claimed`: a reminder goes when it is due, and the digest waiting for the same
    person goes with it rather than as a mail of its own a moment later. (The first mail to a
    person pulls nothing in: the digest after it keeps its time.)"""
    addresses = {
        each.address
        for each in claimed
        if each.channel == Delivery.Channel.EMAIL
        and not each.immediate
        and each.purpose == Delivery.Purpose.REMINDER
    }
    if not addresses:
        return []
    with transaction.atomic():
        waiting = Delivery.objects.filter(
            channel=Delivery.Channel.EMAIL,
            address__in=addresses,
            immediate=False,
            state__in=WAITING,
        ).exclude(pk__in=[each.pk for each in claimed])
        ids = list(waiting.values_list("pk", flat=True))
        if not ids:
            return []
        Delivery.objects.filter(pk__in=ids, state__in=WAITING).update(
            state=State.SENDING, claim=mark, lease_until=lease_until, attempts=F("attempts") + 1
        )
    return list(
        Delivery.objects.filter(pk__in=ids, claim=mark, state=State.SENDING).select_related(
            "ask", "ask__reach", "ask__asked_by", "recipient"
        )
    )


def grouped(claimed: Sequence[Delivery]) -> list[list[Delivery]]:
    """The claimed rows as sends: one group per address for mail (a digest when more than one;
    immediate mails alone), one per row for webhooks; with MAIL_DIGEST_SECONDS None, every mail
    alone too, as the setting promises (rows falling due together are not a digest then)."""
    groups: dict[str, list[Delivery]] = {}
    sends: list[list[Delivery]] = []
    digests = conf.values().mail_digest_seconds is not None
    for each in claimed:
        if digests and each.channel == Delivery.Channel.EMAIL and not each.immediate:
            groups.setdefault(each.address, []).append(each)
        else:
            sends.append([each])
    return sends + list(groups.values())
