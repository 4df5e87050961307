"""The flood limits on a principal's new asks for people (ask_mcp.records.limits): pending and per-minute counts refuse with the setting's name, attaching or asking in the client never counts, and each refusal is counted per principal, limit and minute."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from typing import Any, Final

import pytest
from django.conf import settings
from django.db import transaction
from django.test import override_settings
from django.utils import timezone

from ask_mcp.models import Ask, RefusedAsks
from ask_mcp.records.limits import MESSAGE_LIMIT, Refusal, count_refused, refusal

pytestmark = pytest.mark.django_db

ALICE: Final = "user:1"
PENDING_LIMIT: Final = 2
RATE_LIMIT: Final = 3


@pytest.fixture(autouse=True)
def limits() -> Iterator[None]:
    config = {
        **settings.ASK_MCP,
        "PENDING_ASKS_PER_PRINCIPAL": PENDING_LIMIT,
        "NEW_ASKS_PER_MINUTE": RATE_LIMIT,
    }
    with override_settings(ASK_MCP=config):
        yield


def asked(principal: str = ALICE, *, ago: float = 1, **fields: Any) -> Ask:
    now = timezone.now()
    row: dict[str, Any] = {
        "message": "Go?",
        "schema": {},
        "tool": "user_ask",
        "route": Ask.Route.BROWSER,
        "expires_at": now + dt.timedelta(hours=1),
        **fields,
    }
    return Ask.objects.create(created=now - dt.timedelta(seconds=ago), principal=principal, **row)


def new(principal: str = ALICE, route: str = Ask.Route.BROWSER, key: str = "") -> Refusal | None:
    row = {"principal": principal, "route": route, "attach_key": key}
    with transaction.atomic():  # as open_ask calls it: its lock lasts to the transaction's end
        return refusal(row, timezone.now())


def test_pending_asks_are_counted_up_to_the_limit_then_refused_naming_the_setting() -> None:
    asked(ago=600)
    assert new() is None
    asked(ago=600, route=Ask.Route.URL)
    refused = new()
    assert refused is not None and refused.limit == RefusedAsks.Limit.PENDING
    assert f"You already have {PENDING_LIMIT} questions" in refused.message
    assert "PENDING_ASKS_PER_PRINCIPAL" in refused.message
    assert "ASKSERVER_PENDING_ASKS_PER_PRINCIPAL" in refused.message


def test_asks_that_ended_or_are_the_clients_own_are_not_pending() -> None:
    asked(ago=600, status=Ask.Status.ACCEPTED)
    asked(ago=600, route=Ask.Route.CLIENT)
    asked(ago=600, route=Ask.Route.CLIENT)
    asked("user:2", ago=600)
    asked("user:2", ago=600)
    assert new() is None


def test_new_asks_in_the_last_minute_are_refused_past_the_rate_naming_the_setting() -> None:
    for _ in range(RATE_LIMIT):
        asked(status=Ask.Status.DECLINED)
    refused = new()
    assert refused is not None and refused.limit == RefusedAsks.Limit.RATE
    assert f"You put {RATE_LIMIT} new questions" in refused.message
    assert "NEW_ASKS_PER_MINUTE" in refused.message


def test_asks_older_than_a_minute_leave_the_rate() -> None:
    for _ in range(RATE_LIMIT):
        asked(ago=61, status=Ask.Status.DECLINED)
    assert new() is None


def test_attaching_to_a_live_ask_is_never_refused() -> None:
    asked(ago=600, attach_key="same-question")
    asked(ago=600)
    assert new(key="another") is not None, "a new question at the limit is refused"
    assert new(key="same-question") is None, "asking the same again attaches"


def test_an_expired_ask_of_the_same_key_does_not_let_a_new_one_past() -> None:
    past = timezone.now() - dt.timedelta(seconds=1)
    asked(ago=600, attach_key="same-question", expires_at=past)
    asked(ago=600)
    asked(ago=600)
    assert new(key="same-question") is not None


def test_client_questions_and_anonymous_callers_are_not_limited() -> None:
    for _ in range(PENDING_LIMIT + RATE_LIMIT):
        asked()
        asked("")
    assert new() is not None
    assert new(route=Ask.Route.CLIENT) is None
    assert new("") is None


def test_refusals_are_counted_per_principal_limit_and_minute() -> None:
    at = timezone.now().replace(second=10, microsecond=0)
    count_refused(ALICE, RefusedAsks.Limit.RATE, "first", at)
    count_refused(ALICE, RefusedAsks.Limit.RATE, "x" * (MESSAGE_LIMIT + 50), at)
    count_refused(ALICE, RefusedAsks.Limit.PENDING, "other limit", at)
    count_refused(ALICE, RefusedAsks.Limit.RATE, "next minute", at + dt.timedelta(minutes=1))
    count_refused("user:2", RefusedAsks.Limit.RATE, "someone else", at)
    rate = RefusedAsks.objects.get(
        principal=ALICE, limit=RefusedAsks.Limit.RATE, minute=at.replace(second=0)
    )
    assert rate.count == 2
    assert rate.last_message == "x" * MESSAGE_LIMIT
    counts = sorted(RefusedAsks.objects.values_list("principal", "limit", "count"))
    assert counts == [
        (ALICE, RefusedAsks.Limit.PENDING, 1),
        (ALICE, RefusedAsks.Limit.RATE, 1),
        (ALICE, RefusedAsks.Limit.RATE, 2),
        ("user:2", RefusedAsks.Limit.RATE, 1),
    ]
