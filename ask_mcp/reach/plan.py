"""Which deliveries an ask gets, and when: the people and webhooks told at each moment (asked, reminder, escalation).

Planning only writes Delivery rows; sending them is :mod:`ask_mcp.reach.queue`'s. Every row has a
unique key (ask, moment, channel, person or webhook), so two workers planning the same moment,
or one planning it twice, add one row: a person is told once per ask and moment. The moments
that come later are claimed once per ask with a conditional UPDATE on its AskReach row.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Exists, F, OuterRef, Q
from django.utils import timezone

from ask_mcp import conf
from ask_mcp.models import (
    Ask,
    AskEvent,
    AskReach,
    Delivery,
    Escalation,
    PushDevice,
    ReachPreference,
    Webhook,
)
from ask_mcp.reach import digest, push

Purpose = Delivery.Purpose


@dataclass(frozen=True, slots=True)
class Escalated:
    """An ask the sweep just escalated, and to whom (in words)."""

    ask_id: uuid.UUID
    to: str


def start(ask_id: uuid.UUID, link_base: str) -> int:
    """An ask has just been put to people in the browser: remember its links' origin, tell them."""
    # One upsert: update_or_create was a transaction of a locking read and a write.
    AskReach.objects.bulk_create(
        [AskReach(ask_id=ask_id, link_base=link_base)],
        update_conflicts=True,
        unique_fields=["ask"],
        update_fields=["link_base"],
    )
    return plan(ask_id, Purpose.ASKED)


def plan(ask_id: uuid.UUID, purpose: str) -> int:
    """Add the deliveries of `ask_id` for `purpose`; returns how many rows were asked for.

    Mail goes to every person it is addressed to (or, for an escalation, the fallback) who has
    an address and chose it, when email is configured; webhooks go to every active webhook of
    those people and teams. An ask that is not waiting in a browser gets none.
    """
    ask = Ask.objects.select_related("reach").filter(pk=ask_id).first()
    if ask is None or not ask.awaits_browser_answer:
        return 0
    users, teams = _addressed(ask, purpose)
    now = timezone.now()
    people = _people(users, teams) if conf.values().email else []
    rows = [
        _row(ask, purpose, Delivery.Channel.EMAIL, person.email, now, person)
        for person in people
        if _wants_mail(person, purpose)
    ]
    rows += _push_rows(ask, purpose, users, teams, now)
    hooks = Webhook.objects.filter(Q(user__in=users) | Q(team__in=teams), active=True)
    rows += [
        _row(ask, purpose, Delivery.Channel.WEBHOOK, hook.url, now, webhook=hook)
        for hook in hooks.order_by("pk")
    ]
    Delivery.objects.bulk_create(rows, ignore_conflicts=True)
    return len(rows)


def _addressed(ask: Ask, purpose: str) -> tuple[list[int], list[int]]:
    """(user ids, group ids) to tell of `ask` for `purpose`."""
    if purpose == Purpose.ESCALATED:
        reach = ask.reach
        return (
            [reach.escalated_user_id] if reach.escalated_user_id is not None else [],
            [reach.escalated_team_id] if reach.escalated_team_id is not None else [],
        )
    return (
        [ask.asked_by_id] if ask.asked_by_id is not None else [],
        [ask.team_id] if ask.team_id is not None else [],
    )


def _people(users: Iterable[int], teams: Iterable[int]) -> list[User]:
    found = User.objects.filter(Q(pk__in=list(users)) | Q(groups__in=list(teams)), is_active=True)
    return list(found.exclude(email="").distinct().order_by("pk"))


def _push_rows(
    ask: Ask, purpose: str, users: list[int], teams: list[int], now: dt.datetime
) -> list[Delivery]:
    """One push per device of every person told, unless they turned their devices off."""
    if not push.enabled():
        return []
    devices = (
        PushDevice.objects.filter(Q(user__in=users) | Q(user__groups__in=teams))
        .filter(user__is_active=True)
        .exclude(user__reach_preference__push=False)
        .select_related("user")
        .distinct()
        .order_by("pk")
    )
    capped = _past_the_cap({device.user_id for device in devices}, now)
    rows = []
    for device in devices:
        row = _row(
            ask, purpose, Delivery.Channel.PUSH, device.endpoint, now, device.user, device=device
        )
        if device.user_id in capped:  # one "more are waiting" per device and hour stands for it
            row.purpose = Purpose.MORE
            row.key = f"more:{now:%Y%m%d%H}:device{device.pk}"
        rows.append(row)
    return rows


def _past_the_cap(people: set[int], now: dt.datetime) -> set[int]:
    """Those of `people` pushed PUSH_PER_HOUR questions already in the hour before `now`."""
    if not people:
        return set()
    cap = conf.values().push_per_hour
    pushed = (
        Delivery.objects.filter(
            channel=Delivery.Channel.PUSH,
            purpose__in=NOTIFYING,
            recipient__in=people,
            created_at__gte=now - dt.timedelta(hours=1),
        )
        .values_list("recipient_id", "ask_id")
        .distinct()
    )
    counts: dict[int, int] = {}
    for person, _ in pushed:
        counts[person] = counts.get(person, 0) + 1
    return {person for person, count in counts.items() if count >= cap}


def _wants_mail(person: User, purpose: str) -> bool:
    """The person's choice (the settings page); no row means the default: yes."""
    choice = ReachPreference.objects.filter(user=person).first()
    if choice is None:
        return True
    return choice.email_reminders if purpose == Purpose.REMINDER else choice.email_asks


def _row(
    ask: Ask,
    purpose: str,
    channel: str,
    address: str,
    now: dt.datetime,
    person: User | None = None,
    webhook: Webhook | None = None,
    device: PushDevice | None = None,
) -> Delivery:
    if device is not None:
        who = f"device{device.pk}"
    elif person is not None:
        who = f"user{person.pk}"
    else:
        who = f"webhook{webhook.pk if webhook else 0}"
    # A push nobody acknowledged is mailed at once and alone: a digest never holds it.
    immediate = purpose == Purpose.FALLBACK
    if channel == Delivery.Channel.EMAIL:
        now = digest.slot(address, purpose, now, immediate=immediate)  # the rest as a digest
    return Delivery(
        ask=ask,
        purpose=purpose,
        channel=channel,
        recipient=person,
        webhook=webhook,
        device=device,
        address=address,
        key=f"{ask.id.hex}:{purpose}:{channel}:{who}",
        next_attempt_at=now,
        immediate=immediate,
    )


def remind_due(now: dt.datetime, before: float) -> list[uuid.UUID]:
    """Plan the reminder of every ask within `before` seconds of its expiry, once per ask.

    Only asks that waited longer than `before` in all get one: a question asked with less time
    than that left was just sent, and a reminder on its heels would be noise.
    """
    window = dt.timedelta(seconds=before)
    due = (
        Ask.objects.pending()
        .in_browser()
        .filter(expires_at__gt=now, expires_at__lte=now + window)
        .filter(expires_at__gt=F("created") + window)
        .filter(Q(reach__isnull=True) | Q(reach__reminded_at__isnull=True))
        .exclude(asked_by__isnull=True, team__isnull=True)
    )
    reminded = []
    for ask_id in list(due.values_list("id", flat=True)):
        AskReach.objects.get_or_create(ask_id=ask_id)
        if AskReach.objects.filter(pk=ask_id, reminded_at__isnull=True).update(reminded_at=now):
            plan(ask_id, Purpose.REMINDER)
            reminded.append(ask_id)
    return reminded


def escalate_due(now: dt.datetime) -> list[Escalated]:
    """Offer every ask a team's escalation says waited too long to its fallback, once per ask;
    an ask addressed to a person who is away goes at once, whatever the wait (one level)."""
    escalated = []
    rules = Escalation.objects.filter(active=True).select_related("fallback_team", "fallback_user")
    # The admin's form refuses a shorter wait; a row saved before the setting (or by code)
    # still waits at least this long.
    least = dt.timedelta(seconds=conf.values().escalation_min_seconds)
    for rule in rules:
        waited = now - max(dt.timedelta(minutes=rule.after_minutes), least)
        away = Q(asked_by__reach_preference__away_until__gt=now)
        due = (
            Ask.objects.pending()
            .in_browser()
            .filter(Q(created__lte=waited) | away, team_id=rule.team_id, expires_at__gt=now)
            .filter(Q(reach__isnull=True) | Q(reach__escalated_at__isnull=True))
        )
        for ask_id, route, created, who, until in list(
            due.values_list(
                "id",
                "route",
                "created",
                "asked_by__username",
                "asked_by__reach_preference__away_until",
            )
        ):
            why = f"unanswered after {rule.after_minutes:g} min"
            if created > waited and until is not None:
                why = f"{who} is away until {until:%Y-%m-%d %H:%M} UTC"
            if (done := _escalate(ask_id, route, rule, now, why)) is not None:
                escalated.append(done)
    _note_nobody_else(now)
    return escalated


def nobody_else_words(who: str, until: dt.datetime, team: str | None) -> str:
    """Why an ask waits on a person who is away, offered to nobody else: the card's and the
    history's one wording."""
    rule = f"team {team} has no escalation" if team else "no team escalates it"
    return f"{who} is away until {until:%Y-%m-%d %H:%M} UTC and {rule}: nobody else is offered it"


def _note_nobody_else(now: dt.datetime) -> None:
    """An ask addressed to a person who is away, whose team has no escalation to send it to, is
    offered to nobody else: its history says so once, as an escalation to nobody. Nothing is
    marked on the ask's reach, so an escalation added later still offers it at once."""
    rules = Escalation.objects.filter(active=True, team_id=OuterRef("team_id"))
    said = AskEvent.objects.filter(ask_id=OuterRef("pk"), kind=AskEvent.Kind.ESCALATED)
    due = (
        Ask.objects.pending()
        .in_browser()
        .filter(asked_by__reach_preference__away_until__gt=now, expires_at__gt=now)
        .filter(~Exists(rules), ~Exists(said))
    )
    rows = due.values_list(
        "id", "route", "asked_by__username", "asked_by__reach_preference__away_until", "team__name"
    )
    for ask_id, route, who, until, team in list(rows):
        assert until is not None  # filtered on: away until after now
        with transaction.atomic():  # two workers' passes: the ask's row lock lets one say it
            Ask.objects.select_for_update().filter(pk=ask_id).first()
            if AskEvent.objects.filter(ask_id=ask_id, kind=AskEvent.Kind.ESCALATED).exists():
                continue
            AskEvent.objects.create(
                ask_id=ask_id,
                kind=AskEvent.Kind.ESCALATED,
                at=now,
                actor_label=f"nobody ({nobody_else_words(who, until, team)})",
                route=route,
            )


def _escalate(
    ask_id: uuid.UUID, route: str, rule: Escalation, now: dt.datetime, why: str
) -> Escalated | None:
    AskReach.objects.get_or_create(ask_id=ask_id)
    won = AskReach.objects.filter(pk=ask_id, escalated_at__isnull=True).update(
        escalated_at=now, escalated_team=rule.fallback_team, escalated_user=rule.fallback_user
    )
    if not won:
        return None  # another worker escalated it first
    if rule.fallback_team is not None:
        to = f"team {rule.fallback_team.name}"
    else:
        to = rule.fallback_user.get_username() if rule.fallback_user is not None else "nobody"
    AskEvent.objects.create(
        ask_id=ask_id,
        kind=AskEvent.Kind.ESCALATED,
        at=now,
        actor_label=f"{to} ({why})",
        route=route,
    )
    plan(ask_id, Purpose.ESCALATED)
    return Escalated(ask_id, to)


NOTIFYING: Final = (Purpose.ASKED, Purpose.REMINDER, Purpose.ESCALATED)
"""The purposes of pushes that put a question to a person (a closing push puts none)."""


def fallback_due(now: dt.datetime, after: float) -> int:
    """Mail, at once, every person none of whose devices acknowledged a push of a waiting ask
    within `after` seconds of its planning; returns how many mails were planned.

    A person already mailed about the ask (they chose mail too, or a fallback went) gets none:
    every mail row of the ask and person counts. The row's purpose, FALLBACK, says why it went,
    and marks it as one to send at once (never gathered into a digest).
    """
    if not conf.values().email:
        return 0
    pushes = Delivery.objects.filter(
        ask=OuterRef("ask"), recipient=OuterRef("recipient"), channel=Delivery.Channel.PUSH
    )
    mailed = Delivery.objects.filter(
        ask=OuterRef("ask"), recipient=OuterRef("recipient"), channel=Delivery.Channel.EMAIL
    )
    due = (
        Delivery.objects.filter(
            channel=Delivery.Channel.PUSH,
            purpose__in=NOTIFYING,
            created_at__lte=now - dt.timedelta(seconds=after),
            ask__status=Ask.Status.PENDING,
            ask__expires_at__gt=now,
            recipient__is_active=True,
        )
        .exclude(recipient__email="")
        .filter(~Exists(pushes.filter(acked_at__isnull=False)), ~Exists(mailed))
        .select_related("ask", "recipient")
        .order_by("pk")
    )
    rows: dict[tuple[uuid.UUID, int], Delivery] = {}
    for pushed in due[:FALLBACK_BATCH]:
        person = pushed.recipient
        assert person is not None  # filtered on
        rows.setdefault(
            (pushed.ask_id, person.pk),
            _row(pushed.ask, Purpose.FALLBACK, Delivery.Channel.EMAIL, person.email, now, person),
        )
    Delivery.objects.bulk_create(list(rows.values()), ignore_conflicts=True)
    return len(rows)


FALLBACK_BATCH: Final = 500
"""Push rows one pass looks at for fallbacks (the rest wait for the next pass)."""
CLOSE_BATCH: Final = 500
"""Devices one pass plans closing pushes for (the rest wait for the next pass)."""


def close_ended() -> int:
    """Plan a closing push to every device that was pushed an ask that has since ended.

    The closing push carries the ask's tag, so the device closes the notification wherever it
    is still shown. Returns how many were planned.
    """
    closed = Delivery.objects.filter(
        ask=OuterRef("ask"), device=OuterRef("device"), purpose=Purpose.CLOSED
    )
    opened = (
        Delivery.objects.filter(
            channel=Delivery.Channel.PUSH, purpose__in=NOTIFYING, state=Delivery.State.SENT
        )
        .exclude(device__isnull=True)
        .exclude(ask__status=Ask.Status.PENDING)
        .filter(~Exists(closed))
        .select_related("ask", "device", "recipient")
        .order_by("pk")
    )
    now = timezone.now()
    rows: dict[tuple[uuid.UUID, int], Delivery] = {}
    for sent in opened[:CLOSE_BATCH]:
        device = sent.device
        assert device is not None  # filtered on
        rows.setdefault(
            (sent.ask_id, device.pk),
            _row(
                sent.ask,
                Purpose.CLOSED,
                Delivery.Channel.PUSH,
                device.endpoint,
                now,
                sent.recipient,
                device=device,
            ),
        )
    Delivery.objects.bulk_create(list(rows.values()), ignore_conflicts=True)
    return len(rows)
