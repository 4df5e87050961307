"""The table's slots: a principal's share, the capacity, and giving slots back."""

from __future__ import annotations

import pytest

from ask_mcp.server.asking.capacity import Slots
from ask_mcp.server.errors import ElicitationCapacityExceeded, PrincipalShareExceeded


def test_a_principal_fills_its_share_and_others_still_take_places() -> None:
    slots = Slots(capacity=4, share=2)
    slots.take("user:1")
    slots.take("user:1")
    with pytest.raises(PrincipalShareExceeded) as refused:
        slots.take("user:1")
    assert "your share" in str(refused.value) and refused.value.waiting == 2
    slots.take("user:2")
    slots.take(None)  # anonymous callers: the capacity only
    with pytest.raises(ElicitationCapacityExceeded) as full:
        slots.take("user:3")
    assert str(full.value).startswith("4 questions are already waiting")
    slots.give_back("user:1")
    slots.take("user:3")
    assert slots.in_use == 4 and slots.held_by("user:1") == 1


def test_giving_every_place_back_leaves_nothing_per_principal() -> None:
    slots = Slots(capacity=64, share=16)
    for n in range(1000):
        slots.take(f"user:{n % 50}")
        slots.give_back(f"user:{n % 50}")
    assert slots.in_use == 0 and slots._by_principal == {}


def test_callers_without_a_principal_are_bounded_by_the_capacity_only() -> None:
    slots = Slots(capacity=4, share=1)
    for _ in range(4):
        slots.take(None)  # one person on their own machine: every caller is them
    with pytest.raises(ElicitationCapacityExceeded):
        slots.take(None)
    assert slots.held_by(None) == 4


def test_a_share_above_the_capacity_is_the_whole_table() -> None:
    assert Slots(capacity=8, share=16).share == 8
    assert Slots(capacity=8).share == 8
