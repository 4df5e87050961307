"""How the inbox and the admin name an ask's people, its route and where it was answered, in one voice."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from ask_mcp.models import Ask

if TYPE_CHECKING:
    from django.contrib.auth.models import User


ROUTE_WORDS: Final[dict[str, str]] = {
    Ask.Route.CLIENT: "in the client's own form",
    Ask.Route.BROWSER: "in the inbox",
    Ask.Route.URL: "in the inbox, by a link the client opened",
}
"""Where an ask is answered, by its route, as the card, the history and the admin say it."""
PEOPLE_ONLY_ROUTE: Final = (
    "in the inbox only: this token's asks go to people, never to the client's own form"
)
"""Where a people-only token's ask is answered (its card's route line)."""


def route_words(route: str, *, people_only: bool = False) -> str:
    """Where an ask (or one step of its history) is answered, in words: "in the inbox"."""
    if people_only and route != Ask.Route.CLIENT:
        return PEOPLE_ONLY_ROUTE
    return ROUTE_WORDS.get(route, route)


def answered_in(ask: Ask) -> str:
    """Which route answered a decided ask, in words ("" where the row cannot tell).

    The client's own form when no person decided; the inbox when a person accepted or declined
    a browser or URL ask. A person's cancel says nothing: the admin's cancel and the inbox's
    leave the same row (its history names the admin).
    """
    if not ask.is_decided:
        return ""
    if ask.answered_by is None:
        return ROUTE_WORDS[Ask.Route.CLIENT] if ask.route == Ask.Route.CLIENT else ""
    if ask.route == Ask.Route.CLIENT or ask.status == Ask.Status.CANCELLED:
        return ""
    return ROUTE_WORDS[Ask.Route.BROWSER]


def person(user: User) -> str:
    """How a person is named everywhere (inbox, history, admin): their full name, else username."""
    return user.get_full_name() or user.get_username()


def agent(ask: Ask) -> str:
    """The asking client as it named itself, with its version ("claude-code 2.1")."""
    name = ask.client_name or "An MCP client"
    return f"{name} {ask.client_version}" if ask.client_version else name


def asked_by(ask: Ask) -> str:
    """Who put the question, in one line, the same in the inbox and the admin."""
    if ask.asked_by is not None:
        line = f"{agent(ask)} for {person(ask.asked_by)}"
    elif ask.principal:
        line = f"{agent(ask)} as {ask.principal}"
    else:
        line = agent(ask)
    if team := team_name(ask):
        line += f" (team {team})"
    return line


def team_name(ask: Ask) -> str:
    """The ask's team's name when it was read with the ask (listing.as_shown); never a query,
    since pages and sockets draw asks from the event loop."""
    if ask.team_id is None or not Ask.team.is_cached(ask):
        return ""
    return ask.team.name if ask.team is not None else ""
