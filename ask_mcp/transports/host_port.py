"""The port a request's `Host` names: this server's own, or the request is refused before anything reads it; knows no host name.

Browsers send a host's cookies to every port of it, and `ALLOWED_HOSTS` looks at host names
only, so a request saying `Host: 127.0.0.1:<another port>` was served as if it were this
server's own: an agent sent one to `/mcp`, the links built from it pointed a teammate at a local
listener on that port, and one click handed it their session and CSRF cookies (issue 28).
Links now come from `PUBLIC_URL` alone; this guard also refuses the request itself, for HTTP
(`421 Misdirected Request`) and for the inbox's sockets (closed before they are accepted, which
the browser sees as 403).

The ports a `Host` may name: `PUBLIC_URL`'s (the origin people use, the proxy's port behind
one), and the port the server listens on (a probe or a Prometheus scrape that reaches a worker
directly: that is this very server, never another listener). A `Host` with no port means the
default port of `PUBLIC_URL`'s scheme (what a proxy's `Host $host` forwards), or without
`PUBLIC_URL` of the request's own scheme. A server on a Unix socket without `PUBLIC_URL` has no
port to compare, and checks none. Which host names are served stays `ALLOWED_HOSTS`'s business.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any, Final
from urllib.parse import urlsplit

from django.http.request import split_domain_port

from ask_mcp import conf

Scope = MutableMapping[str, Any]
Asgi = Callable[[Scope, Any, Any], Awaitable[None]]

DEFAULT_PORTS: Final = {"http": 80, "https": 443, "ws": 80, "wss": 443}
"""The port a `Host` without one means, by scheme."""
MISDIRECTED: Final = 421
"""RFC 9110's status for a request sent to a server that is not the one it names."""


def own_ports(scope: Scope) -> tuple[set[int], str]:
    """The ports a `Host` may name, and the scheme whose default port a bare `Host` means."""
    ports: set[int] = set()
    scheme = str(scope.get("scheme") or "http")
    public = conf.values().public_url
    if public:
        parts = urlsplit(public)
        scheme = parts.scheme
        ports.add(parts.port or DEFAULT_PORTS[scheme])
    server = scope.get("server")
    if server and len(server) > 1 and isinstance(server[1], int):
        ports.add(server[1])
    return ports, scheme


def named_port(host: str, scheme: str) -> int | None:
    """The port `host` (a Host header) names; None when it cannot be read."""
    domain, port = split_domain_port(host)
    if not domain:
        return None  # not a host[:port] at all (a port that is not a number included)
    return int(port) if port else DEFAULT_PORTS.get(scheme, 80)


def refusal(scope: Scope) -> str | None:
    """Why this request's `Host` is refused, or None when it names one of this server's ports."""
    headers = scope.get("headers", ())
    host = next((value for name, value in headers if name.lower() == b"host"), None)
    if host is None:
        return None  # no Host (HTTP/1.0): nothing to build a link from; Django refuses it
    ports, scheme = own_ports(scope)
    if not ports:
        return None
    text = host.decode("latin-1")
    port = named_port(text, scheme)
    if port in ports:
        return None
    expected = " or ".join(str(each) for each in sorted(ports))
    return (
        f"Host {text!r} names another port than this server's ({expected}): refused, because "
        "a link built from it would lead people elsewhere. Use the address in PUBLIC_URL."
    )


class OwnPortOnly:
    """ASGI middleware: HTTP requests and sockets whose `Host` names another port are refused."""

    def __init__(self, application: Asgi) -> None:
        self.application = application

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] in ("http", "websocket") and (why := refusal(scope)) is not None:
            if scope["type"] == "websocket":
                await receive()  # websocket.connect; closing before accepting answers 403
                await send({"type": "websocket.close", "code": 1008})
                return
            body = why.encode()
            await send(
                {
                    "type": "http.response.start",
                    "status": MISDIRECTED,
                    "headers": [
                        (b"content-type", b"text/plain; charset=utf-8"),
                        (b"content-length", str(len(body)).encode()),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": body})
            return
        await self.application(scope, receive, send)
