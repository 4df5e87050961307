"""The inbox socket's origin rule: scheme, host and port, with default ports spelled or not."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import override_settings

from ask_mcp.web.origin import allowed, parse_origin


def scope(origin: str | None, host: str = "ask.example.com", scheme: str = "wss") -> dict[str, Any]:
    headers = [(b"host", host.encode())]
    if origin is not None:
        headers.append((b"origin", origin.encode()))
    return {"type": "websocket", "scheme": scheme, "headers": headers}


def test_an_origin_is_its_scheme_host_and_port() -> None:
    assert parse_origin("https://Ask.Example.com") == ("https", "ask.example.com", 443)
    assert parse_origin("http://127.0.0.1:8000") == ("http", "127.0.0.1", 8000)
    assert parse_origin("ask.example.com:443", scheme="https") == ("https", "ask.example.com", 443)
    assert parse_origin("null") is None
    assert parse_origin("http://host:notaport") is None


@override_settings(ALLOWED_HOSTS=["ask.example.com"], ASK_MCP={})
@pytest.mark.parametrize(
    ("origin", "host", "scheme", "opens"),
    [
        ("https://ask.example.com", "ask.example.com", "wss", True),
        ("https://ask.example.com:443", "ask.example.com", "wss", True),
        ("http://ask.example.com", "ask.example.com", "wss", False),  # another scheme
        ("https://ask.example.com:8443", "ask.example.com", "wss", False),  # another port
        ("https://evil.example.com", "ask.example.com", "wss", False),
        ("http://ask.example.com:8000", "ask.example.com:8000", "ws", True),
        ("http://ask.example.com:9000", "ask.example.com:8000", "ws", False),
        (None, "ask.example.com", "wss", False),
        ("https://evil.example.com", "evil.example.com", "wss", False),  # Host not allowed
    ],
)
def test_a_socket_opens_only_from_its_own_origin(
    origin: str | None, host: str, scheme: str, opens: bool
) -> None:
    assert allowed(scope(origin, host, scheme)) is opens


@override_settings(
    ALLOWED_HOSTS=["ask.example.com"],
    ASK_MCP={"PUBLIC_URL": "https://ask.example.com"},
    CSRF_TRUSTED_ORIGINS=["https://admin.example.com"],
)
def test_the_settings_can_trust_other_origins() -> None:
    # Behind a TLS proxy daphne sees ws://; PUBLIC_URL names the origin people use.
    assert allowed(scope("https://ask.example.com", scheme="ws"))
    assert allowed(scope("https://admin.example.com"))
    assert not allowed(scope("https://other.example.com"))
