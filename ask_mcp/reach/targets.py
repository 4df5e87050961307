"""Which webhook targets the server may POST to: the URL's name resolved and every address vetted; knows no ask.

A webhook URL is chosen by an admin, but the server is the one that connects: a URL naming
loopback, a private network, a link-local address or a cloud metadata service would let
whoever edits webhooks make the server reach what only it can reach (SSRF). The check runs when
a webhook is saved and again at every delivery, after resolving the name, and the delivery
connects to the very address that was vetted (a name that resolves differently a moment later
cannot slip past: DNS rebinding).
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass
from typing import Final
from urllib.parse import urlsplit

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

METADATA: Final = frozenset(
    {
        ipaddress.ip_address("169.254.169.254"),  # AWS, GCP, Azure, OpenStack, DigitalOcean
        ipaddress.ip_address("169.254.170.2"),  # AWS ECS task metadata
        ipaddress.ip_address("100.100.100.200"),  # Alibaba Cloud
        ipaddress.ip_address("fd00:ec2::254"),  # AWS over IPv6
    }
)
"""Cloud metadata services: refused even when ALLOW_PRIVATE_TARGETS lets private targets in."""
DEFAULT_PORTS: Final = {"http": 80, "https": 443}
"""The port of each scheme a webhook may use, when the URL names none."""


class TargetRefused(ValueError):
    """The URL may not be posted to; the message names the URL, the address and the fix."""


@dataclass(frozen=True, slots=True)
class Target:
    """A vetted webhook target: where to connect (`address`) and what to call it (`host`)."""

    scheme: str
    host: str
    port: int
    path: str
    address: str


def kind_of(address: IPAddress) -> str | None:
    """What makes `address` internal, in words, or None for a public address."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return kind_of(address.ipv4_mapped)
    if address in METADATA:
        return "a cloud metadata service"
    for name, test in (
        ("loopback", address.is_loopback),
        ("link-local", address.is_link_local),
        ("unspecified", address.is_unspecified),
        ("multicast", address.is_multicast),
        ("private", address.is_private),
        ("reserved", address.is_reserved),
    ):
        if test:
            return name
    return None if address.is_global else "not globally routable"


def allowed(address: IPAddress, *, allow_private: bool) -> str | None:
    """Why `address` is refused, or None when it may be posted to.

    With `allow_private`, loopback and private networks are allowed (a receiver on the same
    host or network); metadata services, link-local, multicast and unspecified never are.
    """
    kind = kind_of(address)
    if kind is None:
        return None
    if allow_private and kind in ("loopback", "private", "not globally routable", "reserved"):
        return None
    return kind


def vet(url: str, *, allow_private: bool) -> Target:
    """Resolve `url`'s host and vet every address it has; the first is the one to connect to.

    Raises:
        TargetRefused: not an http(s) URL, the name does not resolve, or an address is internal.
    """
    parts = urlsplit(url)
    if parts.scheme not in DEFAULT_PORTS or not parts.hostname:
        raise TargetRefused(f"{url!r} is not an http(s) URL")
    try:
        port = parts.port or DEFAULT_PORTS[parts.scheme]
    except ValueError as exc:
        raise TargetRefused(f"{url!r} has a bad port: {exc}") from None
    host = parts.hostname
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise TargetRefused(f"{host!r} (from {url!r}) does not resolve: {exc}") from None
    addresses = [ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in found]
    for address in addresses:  # all of them: a name may resolve to one of each kind
        if (why := allowed(address, allow_private=allow_private)) is not None:
            raise TargetRefused(
                f"{url!r} resolves to {address}, {why}: the server sends only to public "
                "addresses (ASK_MCP['ALLOW_PRIVATE_TARGETS'] lets loopback and private "
                "networks in)"
            )
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    return Target(parts.scheme, host, port, path, str(addresses[0]))
