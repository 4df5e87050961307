"""What a trusted proxy says about a request: the scheme it was made with (Django's SECURE_PROXY_SSL_HEADER) and the address it came from (TRUSTED_PROXIES); knows no settings and no server.

Django's own requests take the scheme from `request.is_secure()`; the parts served outside
Django's views (`/mcp`'s links for people, the inbox socket's same-origin check) read it here
with the same rule, so behind a proxy that ends TLS they see the https page the browser saw, not
the plain http between the proxy and the worker.

The address is the one the sign-in lockout counts by: behind a proxy every request arrives from
the proxy's address, so ten wrong passwords from anywhere locked out every person (the real
admin included) who reached the server through it.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Mapping, Sequence
from typing import Final

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
"""A proxy's address or range, as TRUSTED_PROXIES names it."""

META_PREFIX: Final = "HTTP_"
"""How Django's META names a request header (`HTTP_X_FORWARDED_PROTO` is `X-Forwarded-Proto`)."""


def scheme(own: str, headers: Mapping[str, str], proxy_header: Sequence[str] | None) -> str:
    """`http` or `https`: `own` (the connection's), or what the proxy's header says when trusted.

    `headers` are by lower-case name; `proxy_header` is SECURE_PROXY_SSL_HEADER, a (META name,
    value) pair, or None when no proxy is trusted. As Django does, only the header's first
    comma-separated value counts, and its absence leaves the connection's own scheme.
    """
    if not proxy_header:
        return own
    meta_name, secure_value = proxy_header
    name = meta_name.removeprefix(META_PREFIX).replace("_", "-").lower()
    value = headers.get(name)
    if value is None:
        return own
    return "https" if value.split(",", 1)[0].strip() == secure_value else "http"


def networks(entries: Iterable[str]) -> list[Network]:
    """TRUSTED_PROXIES' entries (`127.0.0.1`, `10.0.0.0/8`, `::1`) as networks.

    Raises:
        ValueError: an entry is not an address or a network; the message names it.
    """
    found = []
    for entry in entries:
        try:
            found.append(ipaddress.ip_network(entry.strip(), strict=False))
        except ValueError as exc:
            raise ValueError(
                f"{entry!r} is not an IP address or network (such as 127.0.0.1 or 10.0.0.0/8)"
            ) from exc
    return found


def _trusted(address: str, trusted: Sequence[Network]) -> bool:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in network for network in trusted)


def client_address(peer: str, forwarded_for: str | None, trusted: Sequence[Network]) -> str:
    """The client's address: `peer` (the connection's), or, when `peer` is a trusted proxy, the
    last address in X-Forwarded-For that is not one.

    Read from the right: each proxy appends the address it was connected from, so only the
    entries the trusted proxies added are true; whatever a client sent itself is further left
    and never counts past the first untrusted entry. A trusted peer that forwarded nothing
    usable stays the address (the proxy's own requests).
    """
    if not forwarded_for or not _trusted(peer, trusted):
        return peer
    for entry in reversed(forwarded_for.split(",")):
        address = entry.strip()
        try:
            ipaddress.ip_address(address)
        except ValueError:
            return peer  # not an address: the chain cannot be read past here
        if not _trusted(address, trusted):
            return address
    return peer
