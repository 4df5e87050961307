"""The scheme behind a TLS proxy, read as Django's SECURE_PROXY_SSL_HEADER reads it."""

from __future__ import annotations

import pytest

from ask_mcp.ops import forwarded

TRUSTED = ("HTTP_X_FORWARDED_PROTO", "https")


@pytest.mark.parametrize(
    "own, headers, proxy_header, scheme",
    [
        ("http", {"x-forwarded-proto": "https"}, TRUSTED, "https"),
        ("http", {"x-forwarded-proto": "https, http"}, TRUSTED, "https"),  # the first value counts
        ("https", {"x-forwarded-proto": "http"}, TRUSTED, "http"),
        ("http", {}, TRUSTED, "http"),  # no header: the connection's own scheme
        ("http", {"x-forwarded-proto": "https"}, None, "http"),  # not trusted: ignored
        ("http", {"x-forwarded-ssl": "on"}, ("HTTP_X_FORWARDED_SSL", "on"), "https"),
    ],
)
def test_the_proxy_s_header_names_the_scheme_only_when_trusted(
    own: str, headers: dict[str, str], proxy_header: tuple[str, str] | None, scheme: str
) -> None:
    assert forwarded.scheme(own, headers, proxy_header) == scheme


PROXIES = forwarded.networks(["127.0.0.1", "10.0.0.0/8", "::1"])


@pytest.mark.parametrize(
    "peer, header, address",
    [
        ("127.0.0.1", "203.0.113.9", "203.0.113.9"),  # nginx's $remote_addr
        ("127.0.0.1", "198.51.100.7, 203.0.113.9", "203.0.113.9"),  # what the client sent: left
        ("127.0.0.1", "203.0.113.9, 10.1.2.3", "203.0.113.9"),  # two trusted hops
        ("::1", "2001:db8::1", "2001:db8::1"),
        ("192.0.2.5", "203.0.113.9", "192.0.2.5"),  # not a trusted proxy: the header is nobody's
        ("127.0.0.1", None, "127.0.0.1"),  # the proxy's own request
        ("127.0.0.1", "10.0.0.1, 127.0.0.1", "127.0.0.1"),  # proxies all the way: the peer
        ("127.0.0.1", "unknown", "127.0.0.1"),  # not an address: read no further
    ],
)
def test_the_client_is_the_rightmost_address_no_trusted_proxy_added(
    peer: str, header: str | None, address: str
) -> None:
    assert forwarded.client_address(peer, header, PROXIES) == address


def test_an_entry_that_is_no_address_is_named() -> None:
    with pytest.raises(ValueError, match="'nginx' is not an IP address or network"):
        forwarded.networks(["127.0.0.1", "nginx"])
