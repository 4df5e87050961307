"""How an ask's people, its route and where it was answered are named, in one voice for the inbox and the admin."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import Group, User

from ask_mcp.models import Ask
from ask_mcp.web.naming import (
    PEOPLE_ONLY_ROUTE,
    agent,
    answered_in,
    asked_by,
    person,
    route_words,
    team_name,
)


def ask(**fields: Any) -> Ask:
    """An ask as a row holds it (never saved: naming reads only what was loaded with it)."""
    return Ask(message="Deploy?", **fields)


def test_routes_are_named_in_words_and_a_people_only_ask_says_so() -> None:
    assert route_words(Ask.Route.BROWSER) == "in the inbox"
    assert route_words(Ask.Route.URL) == "in the inbox, by a link the client opened"
    assert route_words(Ask.Route.CLIENT, people_only=True) == "in the client's own form"
    assert route_words(Ask.Route.BROWSER, people_only=True) == PEOPLE_ONLY_ROUTE
    assert route_words("carrier-pigeon") == "carrier-pigeon"


def test_where_a_decided_ask_was_answered() -> None:
    alice = User(username="alice")
    assert answered_in(ask(status=Ask.Status.PENDING, route=Ask.Route.BROWSER)) == ""
    assert answered_in(ask(status=Ask.Status.ACCEPTED, route=Ask.Route.CLIENT)) == (
        "in the client's own form"
    )
    assert answered_in(ask(status=Ask.Status.ACCEPTED, route=Ask.Route.URL)) == ""
    by_person = ask(status=Ask.Status.DECLINED, route=Ask.Route.URL, answered_by=alice)
    assert answered_in(by_person) == "in the inbox"
    cancelled = ask(status=Ask.Status.CANCELLED, route=Ask.Route.BROWSER, answered_by=alice)
    assert answered_in(cancelled) == ""  # the admin's cancel and the inbox's leave the same row


def test_people_and_agents_are_named_by_what_they_said_of_themselves() -> None:
    assert person(User(username="bea", first_name="Bea", last_name="Ng")) == "Bea Ng"
    assert person(User(username="bea")) == "bea"
    assert agent(ask(client_name="claude-code", client_version="2.1")) == "claude-code 2.1"
    assert agent(ask()) == "An MCP client"


def test_who_asked_in_one_line() -> None:
    dora = User(username="dora", first_name="Dora")
    assert asked_by(ask(client_name="cli", asked_by=dora)) == "cli for Dora"
    assert asked_by(ask(principal="user:9")) == "An MCP client as user:9"
    assert asked_by(ask()) == "An MCP client"
    with_team = ask(client_name="cli", asked_by=dora, team=Group(id=3, name="ops"))
    assert asked_by(with_team) == "cli for Dora (team ops)"
    assert team_name(ask(team_id=3)) == ""  # not read with the ask: no query from a page
