"""Sealing and opening `requestState`, the HMAC-protected handle that resumes a parked call; knows no table.

The token is readable but not forgeable: `base64url(claims) "." base64url(HMAC-SHA256 tag)`.
Claims bind the parked call, the round, the principal, the request (method, name, arguments
digest) and an expiry. Keys rotate: the first key seals, every key opens. Pure: no Django.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from ask_mcp.server.question import Route

_VERSION: Final = 1
"""The token format version sealed into every requestState."""
_TAG_BYTES: Final = 16
"""How much of the HMAC-SHA256 tag a token carries."""
_KEY_CONTEXT: Final = b"ask_mcp/request-state/v1"
"""Mixed into derive_key, so a state key is never the secret itself."""
_ARGS_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


class InvalidState(Exception):
    """A requestState that must be refused; `reason` says which check failed."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class StateClaims:
    """What a sealed requestState asserts about the retry that carries it."""

    call: str
    round: int
    owner: str
    principal: str
    binding: str
    expires_at: float
    question: QuestionClaims | None = None
    """The question the round waits on, when its call may be finished from the ask's record."""


@dataclass(frozen=True, slots=True)
class QuestionClaims:
    """The one question a round waits on, sealed so a retry can finish the call from its record
    when the parked handler is gone (a restart, a dead worker): no database read on the hot path."""

    ask: str
    """The ask's id (hex): its row decides the call exactly once."""
    key: str
    """The inputRequests key the answer comes back under."""
    attempt: int
    """Which attempt at the form this round is (a re-ask says what was wrong)."""
    route: Route
    """"client" (the client's form) or "url" (the person answers on the ask's page)."""


def claims_from_dict(fields: Mapping[str, Any]) -> StateClaims:
    """StateClaims back from :func:`dataclasses.asdict` (how a relay carries them between workers)."""
    question = fields.get("question")
    return StateClaims(
        **{**fields, "question": QuestionClaims(**question) if question is not None else None}
    )


def derive_key(secret: str | bytes) -> bytes:
    """A state-sealing key derived from an application secret, so the secret itself never signs."""
    raw = secret.encode("utf-8") if isinstance(secret, str) else secret
    return hmac.new(raw, _KEY_CONTEXT, hashlib.sha256).digest()


def request_binding(method: str, name: str, arguments: Mapping[str, Any] | None) -> str:
    """A short digest naming the request a state belongs to: method, tool/prompt/uri, arguments."""
    digest = hashlib.sha256()
    digest.update(method.encode("utf-8"))
    digest.update(b"\0")
    digest.update(name.encode("utf-8"))
    digest.update(b"\0")
    digest.update(_ARGS_ENCODER.encode(arguments or {}).encode("utf-8"))
    return base64.urlsafe_b64encode(digest.digest()[:12]).decode("ascii")


class StateSealer:
    """Seals claims into tokens and opens tokens back into claims."""

    def __init__(self, keys: Sequence[bytes]) -> None:
        if not keys:
            raise ValueError("StateSealer needs at least one key")
        if any(len(key) < 32 for key in keys):
            raise ValueError("requestState keys must be at least 32 bytes; use derive_key()")
        self._keys = tuple(keys)

    def principal_digest(self, principal: str | None) -> str:
        """An opaque stand-in for the principal, so tokens do not show who asked."""
        return _principal_digest(self._keys[0], principal)

    def principal_matches(self, claimed: str, principal: str | None) -> bool:
        """Whether a state's principal digest names `principal` under any key (so rotation keeps
        states sealed with a previous key usable by their own principal)."""
        if not isinstance(claimed, str):
            return False
        return any(
            hmac.compare_digest(claimed.encode("utf-8"), _principal_digest(key, principal).encode())
            for key in self._keys
        )

    def seal(self, claims: StateClaims) -> str:
        fields: list[Any] = [
            _VERSION,
            claims.call,
            claims.round,
            claims.owner,
            claims.principal,
            claims.binding,
            round(claims.expires_at, 3),
        ]
        if (question := claims.question) is not None:
            fields.append([question.ask, question.key, question.attempt, question.route])
        payload = json.dumps(fields, separators=(",", ":")).encode("utf-8")
        tag = hmac.new(self._keys[0], payload, hashlib.sha256).digest()[:_TAG_BYTES]
        return _b64(payload) + "." + _b64(tag)

    def open(self, token: str) -> StateClaims:
        """Verify a token and return its claims.

        Raises:
            InvalidState: the token is malformed or its tag matches no key.
        """
        if not isinstance(token, str) or len(token) > 4096 or token.count(".") != 1:
            raise InvalidState("malformed")
        body, _, sig = token.partition(".")
        try:
            payload = _unb64(body)
            tag = _unb64(sig)
        except (binascii.Error, ValueError) as exc:
            raise InvalidState("malformed") from exc
        if not any(
            hmac.compare_digest(hmac.new(key, payload, hashlib.sha256).digest()[:_TAG_BYTES], tag)
            for key in self._keys
        ):
            raise InvalidState("signature")
        try:
            fields = json.loads(payload)
            version, call, round_no, owner, principal, binding, expires_at = fields[:7]
            # States sealed before questions were (an earlier release) carry seven fields.
            question = QuestionClaims(*fields[7]) if len(fields) == 8 else None
        except (ValueError, TypeError) as exc:
            raise InvalidState("malformed") from exc
        if version != _VERSION:
            raise InvalidState("version")
        return StateClaims(call, round_no, owner, principal, binding, float(expires_at), question)

    def open_for(self, token: Any, *, binding: str, principal: str | None) -> StateClaims:
        """Verify a retry's requestState against the retry itself: its request and principal.

        Raises:
            InvalidState: tampered, malformed, or issued for another principal or request.
        """
        if not isinstance(token, str):
            raise InvalidState("malformed")
        claims = self.open(token)
        if not self.principal_matches(claims.principal, principal):
            raise InvalidState("principal")
        if claims.binding != binding:
            raise InvalidState("request")
        return claims


def _principal_digest(key: bytes, principal: str | None) -> str:
    if principal is None:
        return "-"
    tag = hmac.new(key, b"principal\0" + principal.encode("utf-8"), hashlib.sha256)
    return base64.urlsafe_b64encode(tag.digest()[:9]).decode("ascii")


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    if not text or not text.isascii():
        raise ValueError("empty or non-ASCII")
    raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    if _b64(raw) != text:
        raise ValueError("non-canonical base64")
    return raw
