"""What an inbox socket may say of a card, and the words the others' cards show."""

from __future__ import annotations

import json

import pytest

from ask_mcp.web import presence

ASK = "0" * 31 + "a"


@pytest.mark.parametrize(
    "text",
    [
        None,
        "",
        "not json",
        "[]",
        json.dumps({"presence": "open"}),
        json.dumps({"presence": "typing", "ask": ASK}),
        json.dumps({"presence": "open", "ask": ASK.upper()}),
        json.dumps({"presence": "open", "ask": ASK + "0"}),
        json.dumps({"presence": "open", "ask": 7}),
    ],
)
def test_anything_but_an_open_or_closed_card_is_ignored(text: str | None) -> None:
    assert presence.read(text) is None


def test_an_unfolded_and_a_folded_card_are_read() -> None:
    assert presence.read(json.dumps({"presence": "open", "ask": ASK})) == (ASK, "open")
    assert presence.read(json.dumps({"presence": "closed", "ask": ASK})) == (ASK, "closed")


def test_the_words_name_each_person_once_and_stay_one_line() -> None:
    assert presence.words([]) == ""
    assert presence.words(["bob", "bob"]) == "bob is answering"  # two tabs of one person
    assert presence.words(["carol", "bob"]) == "bob and carol are answering"
    assert presence.words(["e", "d", "c", "b", "a"]) == "a, b, c and 2 more are answering"


def test_a_name_is_escaped_in_the_cards_line() -> None:
    html = presence.fragment(ASK, ["<script>x</script>"])
    assert "<script>" not in html and "&lt;script&gt;x&lt;/script&gt; is answering" in html
    assert f'id="presence-{ASK}"' in html and 'hx-swap-oob="true"' in html
