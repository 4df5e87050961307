"""The management commands: `expire_asks` closes overdue asks; `quickstart` makes the first account."""

from __future__ import annotations

import datetime as dt
import io
import re
import uuid

import pytest
from django.contrib.auth import authenticate, get_user_model
from django.core.management import call_command
from django.test import RequestFactory

from ask_mcp.models import Ask

NOW = dt.datetime.now(dt.UTC)


def make_ask(*, expires_in: dt.timedelta, status: str = Ask.Status.PENDING) -> Ask:
    return Ask.objects.create(
        id=uuid.uuid4(),
        created=NOW - dt.timedelta(hours=1),
        message="Left waiting",
        schema={"type": "object", "properties": {}},
        tool="user_ask",
        route=Ask.Route.BROWSER,
        status=status,
        expires_at=NOW + expires_in,
        worker="askmcp.worker.stopped",
    )


def run(*args: str) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


@pytest.mark.django_db
def test_expire_asks_expires_only_pending_asks_past_their_expiry() -> None:
    overdue = make_ask(expires_in=-dt.timedelta(seconds=1))
    waiting = make_ask(expires_in=dt.timedelta(minutes=5))
    answered = make_ask(expires_in=-dt.timedelta(minutes=5), status=Ask.Status.ACCEPTED)

    assert run("expire_asks") == (
        "Expired 1 ask(s).\nDeleted 0 ended ask(s) whose expiry is more than 90 days old.\n"
    )

    statuses = {ask.pk: ask.status for ask in Ask.objects.all()}
    assert statuses == {
        overdue.pk: Ask.Status.EXPIRED,
        waiting.pk: Ask.Status.PENDING,
        answered.pk: Ask.Status.ACCEPTED,
    }
    assert run("expire_asks").startswith("Expired 0 ask(s).\n")


@pytest.mark.django_db
def test_quickstart_creates_one_admin_once_and_shows_its_password_once() -> None:
    first = run("quickstart", "--url", "http://127.0.0.1:9000")
    assert "Inbox:         http://127.0.0.1:9000/" in first
    found = re.search(r"Sign in as:\s+(\S+)\n\s+Password:\s+(\S+)", first)
    assert found is not None
    user = authenticate(
        RequestFactory().post("/accounts/login/"), username=found.group(1), password=found.group(2)
    )
    assert user is not None and user.is_superuser and user.is_staff

    again = run("quickstart", "--url", "http://127.0.0.1:9000")
    assert found.group(2) not in again and "existing superuser" in again
    assert get_user_model().objects.count() == 1
