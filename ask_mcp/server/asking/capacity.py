"""The elicitation table's slots: how many are taken, by which principal, and each one's fair share.

One token parked 64 questions in under a second and every other user and team was refused
until the TTL passed. A slot is now taken against two bounds: the table's capacity, and a
share per principal (the user a token names), so one noisy agent fills at most its share and the
rest of the table stays open to everyone else. Callers without a principal (anonymous loopback:
one person trying things out on their own machine, where every caller is that person) are
bounded by the capacity only. It knows no question or call. Pure: no Django.
"""

from __future__ import annotations

from typing import Final

from ask_mcp.server.errors import ElicitationCapacityExceeded, PrincipalShareExceeded

ANONYMOUS: Final = ""
"""The key every caller without a principal (anonymous loopback) shares."""


class Slots:
    """Slots taken in the table, overall and per principal."""

    __slots__ = ("_by_principal", "_in_use", "capacity", "share")

    def __init__(self, capacity: int, share: int | None = None) -> None:
        if capacity < 1:
            raise ValueError(f"capacity must be at least 1, got {capacity!r}")
        if share is not None and share < 1:
            raise ValueError(f"share must be at least 1 or None, got {share!r}")
        self.capacity = capacity
        self.share = capacity if share is None else min(share, capacity)
        self._in_use = 0
        self._by_principal: dict[str, int] = {}

    @property
    def in_use(self) -> int:
        return self._in_use

    def held_by(self, principal: str | None) -> int:
        return self._by_principal.get(principal or ANONYMOUS, 0)

    def take(self, principal: str | None) -> None:
        """Take a slot for `principal` now, so concurrent askers can never overshoot.

        Raises:
            ElicitationCapacityExceeded: the table is full.
            PrincipalShareExceeded: `principal` (not None) already holds its share (a subclass).
        """
        key = principal or ANONYMOUS
        held = self._by_principal.get(key, 0)
        # A full table first: "others can still ask" would not be true.
        if self._in_use >= self.capacity:
            raise ElicitationCapacityExceeded(self._in_use)
        if principal is not None and held >= self.share:
            raise PrincipalShareExceeded(held)
        self._by_principal[key] = held + 1
        self._in_use += 1

    def give_back(self, principal: str | None) -> None:
        """Give back a slot `principal` took (once per :meth:`take`)."""
        key = principal or ANONYMOUS
        held = self._by_principal.get(key, 0)
        if held <= 1:
            self._by_principal.pop(key, None)  # no entry per principal that holds nothing
        else:
            self._by_principal[key] = held - 1
        self._in_use -= 1
