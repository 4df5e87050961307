"""Which pages may open the inbox's sockets: the same origin (scheme, host and port), or one the settings trust; knows nothing of what a socket sends.

Channels' `AllowedHostsOriginValidator` compares only the Origin's host name with
`ALLOWED_HOSTS`, so a page served from another port or scheme of the same host (another
local user's server on :9000, a plain-http page beside the TLS one) opened a socket with the
person's session cookie and read their pending questions and answers. Here the Origin must be
the socket's own origin, as `/mcp` requires: `http(s)` for `ws(s)`, the `Host` header's host
and port (default ports spelled or not), or one listed in `ASK_MCP["ALLOWED_ORIGINS"]`,
`PUBLIC_URL`'s origin or `CSRF_TRUSTED_ORIGINS` (exact entries; Django's wildcards are not
followed here). The `Host` itself must match `ALLOWED_HOSTS`. A refused socket is closed
before it is accepted (the browser sees HTTP 403). Behind a TLS proxy the worker's socket is
plain ws, so the scheme is the one the proxy's `X-Forwarded-Proto` names when Django's
SECURE_PROXY_SSL_HEADER trusts it: otherwise every https page's socket was refused.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any, Final
from urllib.parse import urlsplit

from channels.security.websocket import WebsocketDenier
from django.conf import settings
from django.http.request import split_domain_port, validate_host

from ask_mcp import conf
from ask_mcp.ops import forwarded

Scope = MutableMapping[str, Any]
Asgi = Callable[[Scope, Any, Any], Awaitable[None]]
Origin = tuple[str, str, int]
"""(scheme, lower-case host, port): the parts two origins must share."""

DEFAULT_PORTS: Final = {"http": 80, "https": 443}
"""The port an origin or Host header means when it names none."""
LOOPBACK_DEBUG_HOSTS: Final = [".localhost", "127.0.0.1", "[::1]"]
"""The hosts Django accepts with DEBUG on and ALLOWED_HOSTS empty."""
HTTP_SCHEME_OF: Final = {"ws": "http", "wss": "https", "http": "http", "https": "https"}
"""The page scheme that matches a socket's scheme (a wss socket comes from an https page)."""


def parse_origin(value: str, *, scheme: str | None = None) -> Origin | None:
    """`value` as an origin; with `scheme`, `value` is a Host header (host[:port]) of that scheme.

    None for anything that is not an http(s) origin, such as the literal `null` a sandboxed
    page sends, or a port that is not a number.
    """
    text = f"{scheme}://{value}" if scheme is not None else value
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in DEFAULT_PORTS or not parts.hostname:
        return None
    return parts.scheme, parts.hostname.lower(), port or DEFAULT_PORTS[parts.scheme]


def trusted_origins() -> set[Origin]:
    """The origins the settings name besides the socket's own."""
    named = [*conf.values().allowed_origins, *getattr(settings, "CSRF_TRUSTED_ORIGINS", [])]
    if conf.values().public_url:
        named.append(conf.values().public_url)
    return {origin for value in named if (origin := parse_origin(value)) is not None}


def allowed(scope: Scope) -> bool:
    """Whether the page behind this socket may open it (its Origin and the Host it used)."""
    headers = {name.lower(): value for name, value in scope.get("headers", [])}
    host = headers.get(b"host", b"").decode("latin-1")
    domain, _port = split_domain_port(host)
    patterns = list(settings.ALLOWED_HOSTS)
    if settings.DEBUG and not patterns:
        patterns = LOOPBACK_DEBUG_HOSTS
    if not domain or not validate_host(domain, patterns):
        return False
    raw = headers.get(b"origin")
    if raw is None:
        return False  # every browser sends Origin on a WebSocket; its absence is not a page
    origin = parse_origin(raw.decode("latin-1"))
    if origin is None:
        return False
    text = {name.decode("latin-1"): value.decode("latin-1") for name, value in headers.items()}
    scheme = HTTP_SCHEME_OF.get(scope.get("scheme", "ws"), "http")
    scheme = forwarded.scheme(scheme, text, settings.SECURE_PROXY_SSL_HEADER)
    own = parse_origin(host, scheme=scheme)
    return origin == own or origin in trusted_origins()


class SameOriginSockets:
    """ASGI middleware: a socket opens only from a page of this site; others get 403."""

    def __init__(self, application: Asgi) -> None:
        self.application = application

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] == "websocket" and not allowed(scope):
            await WebsocketDenier()(scope, receive, send)
            return
        await self.application(scope, receive, send)
