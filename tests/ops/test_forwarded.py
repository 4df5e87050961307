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
