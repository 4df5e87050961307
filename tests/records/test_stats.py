"""The dashboard's rates per token, counted from asks that name their credential by kind and id."""

from __future__ import annotations

import datetime as dt
import uuid

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from ask_mcp.models import ApiToken, Ask
from ask_mcp.records.stats import per_token


def _ask(status: str, kind: str = "", credential_id: str = "") -> Ask:
    now = timezone.now()
    return Ask(
        id=uuid.uuid4(),
        created=now,
        message="rates?",
        schema={},
        tool="user_ask",
        route="browser",
        status=status,
        credential_kind=kind,
        credential_id=credential_id,
        expires_at=now + dt.timedelta(minutes=10),
    )


@pytest.mark.django_db
def test_rates_are_counted_per_existing_token_and_named_by_it() -> None:
    user = User.objects.create(username="ann")
    bot = ApiToken.objects.create(user=user, name="ci-bot", digest="a" * 64, prefix="askmcp_Ab12")
    laptop = ApiToken.objects.create(user=user, digest="b" * 64, prefix="askmcp_Cd34")
    gone = ApiToken.objects.create(user=user, name="old", digest="c" * 64, prefix="askmcp_Ef56")
    Ask.objects.bulk_create(
        [
            *(_ask(status, "token", str(bot.pk)) for status in ("accepted", "declined", "expired")),
            _ask("declined", "token", str(laptop.pk)),
            _ask("accepted", "token", str(gone.pk)),
            _ask("accepted"),  # anonymous: no credential
        ]
    )
    gone.delete()  # its asks keep its id, which names nothing now: not counted
    rates = {rate.label: (rate.asks, rate.declined, rate.expired) for rate in per_token()}
    assert rates == {"ann · ci-bot": (3, 1, 1), "ann · askmcp_Cd34…": (1, 1, 0)}
