"""The table's places: a principal's share, the capacity, and giving places back."""

from __future__ import annotations

import pytest

from ask_mcp.server.errors import ElicitationCapacityExceeded, PrincipalShareExceeded
from ask_mcp.server.places import Places


def test_a_principal_fills_its_share_and_others_still_take_places() -> None:
    places = Places(capacity=4, share=2)
    places.take("user:1")
    places.take("user:1")
    with pytest.raises(PrincipalShareExceeded) as refused:
        places.take("user:1")
    assert "your share" in str(refused.value) and refused.value.waiting == 2
    places.take("user:2")
    places.take(None)  # anonymous callers: the capacity only
    with pytest.raises(ElicitationCapacityExceeded) as full:
        places.take("user:3")
    assert str(full.value).startswith("4 questions are already waiting")
    places.give_back("user:1")
    places.take("user:3")
    assert places.in_use == 4 and places.held_by("user:1") == 1


def test_giving_every_place_back_leaves_nothing_per_principal() -> None:
    places = Places(capacity=64, share=16)
    for n in range(1000):
        places.take(f"user:{n % 50}")
        places.give_back(f"user:{n % 50}")
    assert places.in_use == 0 and places._by_principal == {}


def test_callers_without_a_principal_are_bounded_by_the_capacity_only() -> None:
    places = Places(capacity=4, share=1)
    for _ in range(4):
        places.take(None)  # one person on their own machine: every caller is them
    with pytest.raises(ElicitationCapacityExceeded):
        places.take(None)
    assert places.held_by(None) == 4


def test_a_share_above_the_capacity_is_the_whole_table() -> None:
    assert Places(capacity=8, share=16).share == 8
    assert Places(capacity=8).share == 8
