"""What an inbox or a history lists: its filters read from a query string, its order and its page; renders nothing.

The inbox page, its live socket and its polling fallback read the same filters from the same
query string, so a filtered inbox stays filtered however its cards arrive.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final
from urllib.parse import urlencode

from django.db.models import Exists, F, OuterRef, Prefetch, Q

from ask_mcp.models import Ask, AskEvent, AskQuerySet, Escalation

INBOX_LIMIT: Final = 20
"""Cards an inbox draws at most, soonest expiry first (about two phone screens of folded cards;
the page says how many more wait and offers the search). Every card carries its whole form and
costs ~10 ms of template rendering here: at 50 cards the page with 1,000 asks took 6.8 times as
long as with 10 (`make bench`, inbox suite); the issue's bound is 3."""
HISTORY_PAGE: Final = 50
"""Rows per page of "My answers"."""
FILTERS: Final = ("q", "route", "team", "asker", "status")
"""The query-string keys the lists understand."""
MAX_QUERY: Final = 200
"""Longest search text used (characters); the rest is ignored."""
CLOSED: Final = tuple(status for status in Ask.Status.values if status != Ask.Status.PENDING)
"""The statuses a history row can have."""


@dataclass(frozen=True, slots=True)
class Filters:
    """The filters a person chose: search text, route, team (group name), asker, status."""

    q: str = ""
    route: str = ""
    team: str = ""
    asker: str = ""
    status: str = ""

    @classmethod
    def read(cls, query: Mapping[str, str]) -> Filters:
        """The filters in a query string; unknown routes and statuses are ignored."""
        values = {key: str(query.get(key, "") or "").strip()[:MAX_QUERY] for key in FILTERS}
        if values["route"] not in Ask.Route.values:
            values["route"] = ""
        if values["status"] not in Ask.Status.values:
            values["status"] = ""
        return cls(**values)

    @property
    def active(self) -> bool:
        return any((self.q, self.route, self.team, self.asker, self.status))

    def apply(self, asks: AskQuerySet) -> AskQuerySet:
        if self.q:
            asks = asks.filter(message__icontains=self.q)
        if self.route:
            asks = asks.filter(route=self.route)
        if self.team:
            asks = asks.filter(team__name=self.team)
        if self.asker:
            asks = asks.filter(
                Q(client_name__icontains=self.asker)
                | Q(asked_by__username__iexact=self.asker)
                | Q(principal__iexact=self.asker)
            )
        if self.status:
            asks = asks.filter(status=self.status)
        return asks

    def query_string(self) -> str:
        """The filters as a query string ("" when none), for the socket and the poll URLs."""
        chosen = {key: getattr(self, key) for key in FILTERS if getattr(self, key)}
        return urlencode(chosen)


def inbox_asks(asks: AskQuerySet, filters: Filters) -> AskQuerySet:
    """An inbox's asks in the order people need them: the one about to expire first."""
    return filters.apply(asks).order_by("expires_at", "created")


def as_shown(asks: AskQuerySet) -> AskQuerySet:
    """Asks with everything a card names read in the same query (people, and the team's name),
    and who has seen each in one more (the card's "seen by"), and which devices a push reached in
    another (its "reached")."""
    looks = AskEvent.objects.filter(kind=AskEvent.Kind.SEEN).select_related("actor").order_by("at")
    pushes = AskEvent.objects.filter(kind=AskEvent.Kind.REACHED).select_related("actor")
    rules = Escalation.objects.filter(active=True, team_id=OuterRef("team_id"))
    return (
        asks.with_people()
        .select_related("team")
        # Whether its person is away with nobody else to offer it to (the card says so).
        .annotate(away_until=F("asked_by__reach_preference__away_until"), escalates=Exists(rules))
        .prefetch_related(
            Prefetch("events", queryset=looks, to_attr="seen_events"),
            Prefetch("events", queryset=pushes.order_by("at"), to_attr="reached_events"),
        )
    )
