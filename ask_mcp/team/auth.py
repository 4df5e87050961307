"""Who calls /mcp: bearer tokens, the caller one names, the principal and team it travels as; knows no ask.

Tokens are 256-bit random strings, so a single SHA-256 is a safe stored form and a cheap lookup.
Lookups are cached per process for a few seconds (the hot path must not wait on the database);
revoking a token takes effect here at once and in other workers within `CACHE_SECONDS`.
"""

from __future__ import annotations

import hashlib
import ipaddress
import secrets
import time
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

from django.contrib.auth.models import Group, User

from ask_mcp.models import ApiToken

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
class Caller:
    """Who a request comes from: the token's user (the principal) and the team it routes to."""

    principal: str
    user_id: int
    username: str
    token_id: int
    team_id: int | None
    token_label: str = ""
    """The token as people know it: its name and its first characters ("deploy-bot (amcp_Ab12…)")."""
    people_only: bool = False
    """The token's asks go to people in the inbox only, never to the client's own form."""


CALLING_TOKEN: Final[ContextVar[int | None]] = ContextVar("ask_mcp_calling_token", default=None)
"""The id of the token the current request came with. The endpoint sets it for each request;
the tasks a call starts inherit it, so the recorder stamps each ask with its token (the
admin dashboard's rates per token) without the engine carrying credentials."""


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
# How a caller travels through the engine (requestState, sessions, Question): two strings, the
# principal naming the user the model works for and the team naming the group that may answer
# too. The engine only compares them; this is the one place they are written and read back.


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


def caller_credential(caller: Caller | None) -> str | None:
    """The token a request's caller used, as people know it (None without a token)."""
    return caller.token_label or None if caller is not None else None


def caller_people_only(caller: Caller | None) -> bool:
    """Whether a request's caller holds a token whose asks go to people only (False without one)."""
    return caller is not None and caller.people_only


def caller_team(caller: Caller | None) -> str | None:
    """The team a request's caller routes its questions to (its token's group), if any."""
    if caller is None or caller.team_id is None:
        return None
    return team_of(caller.team_id)


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
        self._entries: dict[str, tuple[Caller | None, float]] = {}
        self._touched: dict[int, float] = {}

    def forget(self, token_digest: str | None = None) -> None:
        if token_digest is None:
            self._entries.clear()
        else:
            self._entries.pop(token_digest, None)

    async def caller(self, token: str) -> Caller | None:
        key = digest(token)
        now = time.monotonic()
        cached = self._entries.get(key)
        if cached is not None and cached[1] > now:
            caller = cached[0]
        else:
            caller = await self._lookup(key)
            if len(self._entries) > 10_000:
                self._entries.clear()  # bounded memory under a flood of bad tokens
            self._entries[key] = (caller, now + CACHE_SECONDS)
        if (
            caller is not None
            and now - self._touched.get(caller.token_id, -TOUCH_SECONDS) >= TOUCH_SECONDS
        ):
            self._touched[caller.token_id] = now
            await ApiToken.objects.filter(pk=caller.token_id).aupdate(
                last_used_at=datetime.now(UTC)
            )
        return caller

    async def _lookup(self, key: str) -> Caller | None:
        record = (
            await ApiToken.objects.select_related("user")
            .filter(digest=key, revoked_at__isnull=True, user__is_active=True)
            .afirst()
        )
        if record is None:
            return None
        return Caller(
            principal=principal_of(record.user_id),
            user_id=record.user_id,
            username=record.user.get_username(),
            token_id=record.pk,
            team_id=record.team_id,
            token_label=f"{record.name} ({record.prefix}…)" if record.name else f"{record.prefix}…",
            people_only=record.people_only,
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
) -> Caller | None:
    """The caller a request's token names; None for an allowed anonymous loopback request.

    Raises:
        Unauthorized: no token (and anonymous use is not allowed here), or a token that is
            unknown, revoked or belongs to an inactive user.
    """
    token = bearer_token(headers)
    if token is None:
        if anonymous_loopback and is_loopback(client):
            return None
        raise Unauthorized(
            "this endpoint needs 'Authorization: Bearer <token>'; create one with "
            "`python manage.py createtoken USER` or in the admin"
        )
    caller = await TOKENS.caller(token)
    if caller is None:
        raise Unauthorized("the bearer token is unknown or revoked", error="invalid_token")
    return caller
