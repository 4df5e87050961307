"""Which era a message belongs to (2026-07-28 stateless, or an initialize-era session); knows no transport.

The one place that reads the signs (a version header, a session id, modern `_meta`); each
transport asks here and keeps only what it knows of sessions. It does not know what either era
does with the message. Pure: no IO, no Django.
"""

from __future__ import annotations

from typing import Final, Literal

from ask_mcp.protocol import mcp
from ask_mcp.protocol.jsonrpc import Request, Response

EraName = Literal["modern", "legacy"]
MODERN: Final[EraName] = "modern"
"""2026-07-28: every request carries its envelope in `_meta`; no session."""
LEGACY: Final[EraName] = "legacy"
"""2025-06-18 and 2025-11-25: initialize opens a session that later requests run in."""


def era_of_version(protocol_version: str) -> EraName:
    """The era a negotiated or requested protocol version belongs to."""
    return MODERN if protocol_version == mcp.MODERN_VERSION else LEGACY


def declared_era(version_header: str | None, session_id: str | None) -> EraName | None:
    """The era a transport's own signs name before the body is read, or None when they name none.

    A version header naming a 2026-07-28 (or unknown) revision is modern, whatever else is
    sent; an initialize-era version header, or a session id without a version header, is legacy.
    """
    if version_header is not None and version_header not in mcp.HANDSHAKE_VERSIONS:
        return MODERN
    if version_header is not None or session_id is not None:
        return LEGACY
    return None


def era_of(message: Request | Response, declared: EraName | None = None) -> EraName:
    """The era `message` belongs to: the transport's declaration wins, else modern `_meta` says
    modern, else it is legacy (initialize, or a request or response inside a session)."""
    if declared is not None:
        return declared
    return MODERN if has_modern_meta(message) else LEGACY


def has_modern_meta(message: Request | Response) -> bool:
    """Whether `message` is a request whose `_meta` names a protocol version (the modern envelope)."""
    if not isinstance(message, Request):
        return False
    meta = message.params.get("_meta")
    return isinstance(meta, dict) and mcp.META_PROTOCOL_VERSION in meta
