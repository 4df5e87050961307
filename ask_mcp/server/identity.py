"""Who is asking: one frozen value, built once from a request's credential and passed by reference; knows no credential store.

The team layer (:mod:`ask_mcp.team.auth`) builds an :class:`Identity` from the credential a
request came with; transports hand it to the engine, which keeps that same value in the
request it admits, the handler's Context, the questions it puts and the tasks it stores. The
records keep what it says of the credential as its kind and id, so a second kind of credential
needs no new parameter anywhere in between. A request without a credential (anonymous
loopback, stdio, the LLM bridge) is :attr:`Identity.ANONYMOUS`. Pure.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Final, Literal

type CredentialKind = Literal["token"]
"""The kinds of credential a caller can hold: a bearer token (``ApiToken``)."""

TOKEN: Final[CredentialKind] = "token"
"""A bearer token: its id is the ``ApiToken`` row's primary key."""


@dataclass(frozen=True, slots=True)
class Credential:
    """The credential a request came with, as the records keep it and as people know it."""

    kind: CredentialKind
    id: str
    """The credential's id within its kind (a token's row id, as text)."""
    label: str
    """As people know it: a token's name and first characters ("deploy-bot (askmcp_Ab12…)")."""


@dataclass(frozen=True, slots=True)
class Identity:
    """Who is asking: the principal, the team, the credential and its rules."""

    ANONYMOUS: ClassVar[Identity]
    """A caller without a credential: no principal, no team, no rule."""

    principal: str | None = None
    """The user the model works for (``user:<id>``); None for an anonymous caller."""
    team: str | None = None
    """The team (``group:<id>``) the credential routes questions to, besides the principal."""
    credential: Credential | None = None
    """The credential the request came with; None for an anonymous caller."""
    people_only: bool = False
    """The credential sends every question to people (the inbox), never to the client's own
    form, whatever the client declares: the agent cannot answer its own asks."""


Identity.ANONYMOUS = Identity()

__all__ = ["TOKEN", "Credential", "CredentialKind", "Identity"]
