"""Who calls /mcp: bearer tokens, and the identity one gives (principal, team, credential, rules); knows no ask.

Tokens are 256-bit random strings, so a single SHA-256 is a safe stored form and a cheap lookup.
Lookups are cached per process for a few seconds (the hot path must not wait on the database);
revoking a token takes effect here at once and in other workers within `CACHE_SECONDS`. A
token's :class:`~ask_mcp.server.identity.Identity` is built here, once per lookup
(:func:`identity_of`); the transports hand that value to the engine as it is.
"""

from __future__ import annotations

import hashlib
import ipaddress
import secrets
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

from django.contrib.auth.models import Group, User

from ask_mcp.models import ApiToken
from ask_mcp.server.identity import TOKEN, Credential, Identity

TOKEN_PREFIX: Final = "askmcp_"
"""How every token starts, so one pasted anywhere is recognisable (secret scanners, logs)."""
CACHE_SECONDS: Final = 10.0
"""How long a worker trusts a token lookup before asking the database again."""
TOUCH_SECONDS: Final = 60.0
"""`last_used_at` is written at most this often per token."""
USER_PREFIX: Final = "user:"
"""A principal naming a user is this prefix and the user's id."""
TEAM_PREFIX: Final = "group:"
"""A team naming a group (Django's auth Group) is this prefix and the group's id."""


@dataclass(frozen=True, slots=True)
class TokenHolder:
    """What a live token gives whoever holds it: the identity its requests ask as."""

    token_id: int
    who: Identity


class Unauthorized(Exception):
    """The request has no usable token; the message says which and is safe to show."""

    def __init__(self, message: str, *, error: str | None = None) -> None:
        super().__init__(message)
        self.error = error

    @property
    def challenge(self) -> bytes:
        value = 'Bearer realm="askserver"'
        if self.error:
            value += f', error="{self.error}", error_description="{self}"'
        return value.encode("latin-1", "replace")


# ---------------------------------------------------------------------- principals and teams
# How a caller travels through the engine (in its Identity: requestState, sessions, Question):
# two strings, the principal naming the user the model works for and the team naming the group
# that may answer too. The engine only compares them; this is the one place they are written and
# read back.


def principal_of(user_id: int) -> str:
    """The principal string bound into requestState, sessions and asks for a user."""
    return f"{USER_PREFIX}{user_id}"


def user_id_of(principal: str | None) -> int | None:
    """The user a principal names; None for no principal, or one that names no user."""
    return _id_after(USER_PREFIX, principal)


def team_of(group_id: int) -> str:
    """The team string bound into requestState, sessions and asks for a group."""
    return f"{TEAM_PREFIX}{group_id}"


def team_id_of(team: str | None) -> int | None:
    """The group a team string names; None for no team, or one that names no group."""
    return _id_after(TEAM_PREFIX, team)


def _id_after(prefix: str, value: str | None) -> int | None:
    if value is None or not value.startswith(prefix):
        return None
    try:
        return int(value.removeprefix(prefix))
    except ValueError:
        return None


# ---------------------------------------------------------------------- tokens


def digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def issue_token(
    user: User, *, name: str = "", team: Group | None = None, people_only: bool = False
) -> tuple[ApiToken, str]:
    """Create a token for `user`; the clear token is returned here and never stored."""
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    record = ApiToken.objects.create(
        user=user,
        name=name,
        team=team,
        people_only=people_only,
        digest=digest(token),
        prefix=token[: len(TOKEN_PREFIX) + 4],
    )
    return record, token


class TokenCache:
    """Per-process memory of recent token lookups."""

    def __init__(self) -> None:
        self._entries: dict[str, tuple[TokenHolder | None, float]] = {}
        self._touched: dict[int, float] = {}

    def forget(self, token_digest: str | None = None) -> None:
        if token_digest is None:
            self._entries.clear()
        else:
            self._entries.pop(token_digest, None)

    async def holder(self, token: str) -> TokenHolder | None:
        """What `token` gives, if it is live (cached for CACHE_SECONDS)."""
        key = digest(token)
        now = time.monotonic()
        cached = self._entries.get(key)
        if cached is not None and cached[1] > now:
            holder = cached[0]
        else:
            holder = await self._lookup(key)
            if len(self._entries) > 10_000:
                self._entries.clear()  # bounded memory under a flood of bad tokens
            self._entries[key] = (holder, now + CACHE_SECONDS)
        if (
            holder is not None
            and now - self._touched.get(holder.token_id, -TOUCH_SECONDS) >= TOUCH_SECONDS
        ):
            self._touched[holder.token_id] = now
            await ApiToken.objects.filter(pk=holder.token_id).aupdate(
                last_used_at=datetime.now(UTC)
            )
        return holder

    async def _lookup(self, key: str) -> TokenHolder | None:
        record = await ApiToken.objects.filter(
            digest=key, revoked_at__isnull=True, user__is_active=True
        ).afirst()
        if record is None:
            return None
        return TokenHolder(record.pk, identity_of(record))


def identity_of(token: ApiToken) -> Identity:
    """The identity a token's requests ask as: the one place it is built from a token."""
    label = f"{token.name} ({token.prefix}…)" if token.name else f"{token.prefix}…"
    return Identity(
        principal=principal_of(token.user_id),
        team=team_of(token.team_id) if token.team_id is not None else None,
        credential=Credential(TOKEN, str(token.pk), label),
        people_only=token.people_only,
    )


TOKENS: Final = TokenCache()
"""The process's token lookups (the endpoint reads them, the admin forgets revoked ones)."""


def bearer_token(headers: dict[str, str]) -> str | None:
    """The token of an `Authorization: Bearer …` header; None when there is no header.

    Raises:
        Unauthorized: the header is there but is not a bearer token.
    """
    value = headers.get("authorization")
    if value is None:
        return None
    scheme, _, token = value.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthorized(
            "the Authorization header must be 'Bearer <token>'", error="invalid_request"
        )
    return token.strip()


def is_loopback(client: Any) -> bool:
    host = client[0] if isinstance(client, list | tuple) and client else None
    if not isinstance(host, str):
        return False
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


async def authenticate(
    headers: dict[str, str], client: Any, *, anonymous_loopback: bool
) -> Identity:
    """Who a request asks as: its token's identity, or Identity.ANONYMOUS for an allowed
    anonymous loopback request.

    Raises:
        Unauthorized: no token (and anonymous use is not allowed here), or a token that is
            unknown, revoked or belongs to an inactive user.
    """
    token = bearer_token(headers)
    if token is None:
        if anonymous_loopback and is_loopback(client):
            return Identity.ANONYMOUS
        raise Unauthorized(
            "this endpoint needs 'Authorization: Bearer <token>'; create one with "
            "`python manage.py createtoken USER` or in the admin"
        )
    holder = await TOKENS.holder(token)
    if holder is None:
        raise Unauthorized("the bearer token is unknown or revoked", error="invalid_token")
    return holder.who
