"""Who has seen an ask (ask_mcp.records.receipts): each person's first look kept once, and the words the agent is told."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from ask_mcp.models import Ask, AskEvent
from ask_mcp.records.receipts import mark_seen, seen_words
from tests.support.rows import waiting_ask


@pytest.fixture
def ask() -> Ask:
    return waiting_ask()


def looked_at(ask: Ask, person: User) -> str:
    event = AskEvent.objects.get(ask=ask, kind=AskEvent.Kind.SEEN, actor=person)
    return f"{event.at:%H:%M} UTC"


@pytest.mark.django_db
def test_the_first_look_is_kept_once_and_told_in_words(ask: Ask) -> None:
    alice = User.objects.create_user("alice")
    words = mark_seen(ask.id, alice)
    assert words == f"Seen by alice at {looked_at(ask, alice)}; not answered yet."
    assert mark_seen(ask.id, alice) is None, "a second look says nothing new"
    seen = AskEvent.objects.filter(ask=ask, kind=AskEvent.Kind.SEEN)
    assert seen.count() == 1
    assert seen.get().route == Ask.Route.BROWSER


@pytest.mark.django_db
def test_each_person_is_named_in_the_order_they_looked(ask: Ask) -> None:
    alice, bob = User.objects.create_user("alice"), User.objects.create_user("bob")
    mark_seen(ask.id, alice)
    words = mark_seen(ask.id, bob)
    assert words == (
        f"Seen by alice at {looked_at(ask, alice)} and bob at {looked_at(ask, bob)}; "
        "not answered yet."
    )


@pytest.mark.django_db
def test_an_ask_that_no_longer_waits_keeps_no_look(ask: Ask) -> None:
    Ask.objects.filter(pk=ask.pk).update(status=Ask.Status.ACCEPTED)
    assert mark_seen(ask.id, User.objects.create_user("alice")) is None
    assert not AskEvent.objects.filter(ask=ask).exists()


def test_the_words_name_three_people_then_count_the_rest() -> None:
    looks = [(name, f"14:0{n} UTC") for n, name in enumerate(["ann", "bo", "cy", "di", "ed"])]
    assert seen_words(looks[:1]) == "Seen by ann at 14:00 UTC; not answered yet."
    assert seen_words(looks[:3]) == (
        "Seen by ann at 14:00 UTC, bo at 14:01 UTC and cy at 14:02 UTC; not answered yet."
    )
    assert seen_words(looks) == (
        "Seen by ann at 14:00 UTC, bo at 14:01 UTC, cy at 14:02 UTC and 2 more; not answered yet."
    )
