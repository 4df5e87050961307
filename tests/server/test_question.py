"""The Question as observers see it, and the attach key an ask is found by."""

from __future__ import annotations

import typing

from ask_mcp.server.identity import Identity
from ask_mcp.server.question import Ending, Question, Route, attach_key


def question() -> Question:
    return Question(
        id="a1",
        message="Deploy?",
        schema={"type": "object", "properties": {}},
        tool="user_ask",
        who=Identity("user:1"),
        route="browser",
        created_at=10.0,
        expires_at=70.0,
    )


def test_shown_as_changes_the_message_only_and_leaves_the_original() -> None:
    asked = question()
    again = asked.shown_as("Deploy? (your last answer was not a yes or no)")
    assert again.message.startswith("Deploy? (your")
    assert asked.message == "Deploy?"
    assert (again.id, again.who, again.route, again.attempt) == (asked.id, asked.who, "browser", 1)


def test_the_attach_key_tells_apart_who_which_tool_and_what() -> None:
    key = attach_key("user:1", "user_ask", "digest")
    assert len(key) == 64 and int(key, 16) >= 0
    assert key == attach_key("user:1", "user_ask", "digest")
    others = {
        attach_key("user:2", "user_ask", "digest"),
        attach_key(None, "user_ask", "digest"),
        attach_key("user:1", "other", "digest"),
        attach_key("user:1", "user_ask", "other"),
        # parts are separated: moving characters between them changes the key
        attach_key("user:1u", "ser_ask", "digest"),
    }
    assert key not in others and len(others) == 5


def test_the_vocabularies_are_closed() -> None:
    assert typing.get_args(Route) == ("client", "url", "browser")
    assert set(typing.get_args(Ending)) == {
        "accepted",
        "declined",
        "cancelled",
        "expired",
        "withdrawn",
        "detached",
        "stopped",
    }
