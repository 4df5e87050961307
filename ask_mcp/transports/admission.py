"""The HTTP-level admission of a request to /mcp: its headers, Host, Origin, Accept and body limit; knows no JSON-RPC method.

Each check refuses with an :class:`HttpProblem` (a status and the words of a JSON-RPC error) in
the order the validation ladder of docs/reference/endpoint.md gives; :class:`~ask_mcp.transports.http.McpEndpoint` runs
them before any message is read.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any, Final
from urllib.parse import urlsplit

from django.conf import settings
from django.core.signals import setting_changed
from django.dispatch import receiver
from django.http.request import split_domain_port, validate_host

from ask_mcp import conf
from ask_mcp.ops import forwarded
from ask_mcp.protocol.jsonrpc import INVALID_REQUEST, JsonRpcError

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]

_LOOPBACK_DEBUG_HOSTS: Final = [".localhost", "127.0.0.1", "[::1]"]


class HttpProblem(Exception):
    """A request refused at the HTTP level, before any JSON-RPC processing."""

    def __init__(self, status: int, message: str, headers: list[tuple[bytes, bytes]] | None = None):
        super().__init__(message)
        self.status = status
        self.error = JsonRpcError(INVALID_REQUEST, message)
        self.headers = headers or []


def read_headers(scope: Scope) -> tuple[dict[str, str], list[str]]:
    """Header values by lower-case name (outer whitespace stripped), and every name as sent."""
    values: dict[str, str] = {}
    names: list[str] = []
    for raw_name, raw_value in scope["headers"]:
        name = raw_name.decode("latin-1").lower()
        names.append(name)
        values[name] = raw_value.decode("latin-1").strip(" \t")
    return values, names


_hosts_seen: dict[str, bool] = {}
"""Host header values already checked against ALLOWED_HOSTS (a client sends the same one)."""


@receiver(setting_changed)
def _forget_hosts(*, setting: str, **_: object) -> None:
    if setting in ("ALLOWED_HOSTS", "DEBUG"):
        _hosts_seen.clear()


def check_host(headers: dict[str, str]) -> None:
    host = headers.get("host", "")
    allowed = _hosts_seen.get(host)
    if allowed is None:
        domain, _port = split_domain_port(host)
        patterns = list(settings.ALLOWED_HOSTS)
        if settings.DEBUG and not patterns:
            patterns = _LOOPBACK_DEBUG_HOSTS
        allowed = bool(domain) and validate_host(domain, patterns)
        if len(_hosts_seen) >= 1000:
            _hosts_seen.clear()  # bounded under a flood of made-up hosts
        _hosts_seen[host] = allowed
    if not allowed:
        raise HttpProblem(403, f"Forbidden: Host {host!r} is not in ALLOWED_HOSTS")


def check_origin(headers: dict[str, str]) -> None:
    """Refuse cross-site requests (DNS rebinding, drive-by pages); same-origin ones pass."""
    origin = headers.get("origin")
    if origin is None:
        return
    if origin in conf.values().allowed_origins:
        return
    parts = urlsplit(origin)
    if parts.scheme in ("http", "https") and parts.netloc == headers.get("host"):
        return
    raise HttpProblem(
        403,
        f"Forbidden: Origin {origin!r} is not allowed; add it to ASK_MCP['ALLOWED_ORIGINS'] to "
        "let pages from it call this server",
    )


def own_origin(scope: Scope, headers: dict[str, str]) -> str:
    """scheme://host as the client reached it; behind a trusted TLS proxy, the proxy's scheme.

    The links `/mcp` shows people are built on it: from a worker behind nginx they said http://
    for an https site until the proxy's X-Forwarded-Proto was read (SECURE_PROXY_SSL_HEADER).
    """
    scheme = forwarded.scheme(
        scope.get("scheme", "http"), headers, settings.SECURE_PROXY_SSL_HEADER
    )
    return f"{scheme}://{headers.get('host', '')}"


def accepted(headers: dict[str, str]) -> tuple[bool, bool]:
    """Whether the client accepts a JSON reply and an SSE reply."""
    accept = headers.get("accept")
    if accept is None:
        return True, True
    types = {part.split(";", 1)[0].strip().lower() for part in accept.split(",")}
    anything = "*/*" in types
    json_ok = anything or "application/json" in types or "application/*" in types
    sse_ok = anything or "text/event-stream" in types or "text/*" in types
    return json_ok, sse_ok


async def read_body(receive: Receive, headers: dict[str, str], limit: int) -> bytes:
    """The request body, refusing it as soon as it is known to pass `limit` bytes."""
    declared = headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise _too_large(limit)
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise asyncio.CancelledError
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise _too_large(limit)
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def _too_large(limit: int) -> HttpProblem:
    return HttpProblem(
        413, f"Payload Too Large: the body exceeds {limit} bytes (ASK_MCP['MAX_BODY_BYTES'])"
    )
