"""HTTP admission at /mcp: headers read once, Host and Origin checked, Accept read, the body bounded while it arrives."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from django.test import override_settings

from ask_mcp.transports.admission import (
    HttpProblem,
    accepted,
    check_host,
    check_origin,
    own_origin,
    read_body,
    read_headers,
)


def test_headers_are_read_lowercased_and_trimmed_with_every_name_in_order() -> None:
    scope = {"headers": [(b"Host", b" a.test "), (b"X-Two", b"1"), (b"x-two", b"2")]}
    values, names = read_headers(scope)
    assert values == {"host": "a.test", "x-two": "2"}
    assert names == ["host", "x-two", "x-two"]


@override_settings(ALLOWED_HOSTS=["api.example.org"], DEBUG=False)
def test_only_allowed_hosts_pass() -> None:
    check_host({"host": "api.example.org:8443"})
    for host in ("evil.example", "", "api.example.org.evil.example"):
        with pytest.raises(HttpProblem) as refused:
            check_host({"host": host})
        assert refused.value.status == 403 and "not in ALLOWED_HOSTS" in str(refused.value)


def test_same_origin_pages_pass_and_others_are_refused_naming_the_setting() -> None:
    check_origin({"host": "127.0.0.1:8000"})  # no Origin: not a browser page
    check_origin({"host": "127.0.0.1:8000", "origin": "http://127.0.0.1:8000"})
    with pytest.raises(HttpProblem) as refused:
        check_origin({"host": "127.0.0.1:8000", "origin": "http://127.0.0.1:9000"})
    assert refused.value.status == 403 and "ALLOWED_ORIGINS" in str(refused.value)
    with pytest.raises(HttpProblem):
        check_origin({"host": "127.0.0.1:8000", "origin": "null"})


@override_settings(SECURE_PROXY_SSL_HEADER=("HTTP_X_FORWARDED_PROTO", "https"))
def test_the_servers_own_origin_follows_the_proxys_scheme() -> None:
    scope = {"scheme": "http"}
    assert own_origin(scope, {"host": "ask.example"}) == "http://ask.example"
    forwarded = {"host": "ask.example", "x-forwarded-proto": "https"}
    assert own_origin(scope, forwarded) == "https://ask.example"


@pytest.mark.parametrize(
    "accept, json_ok, sse_ok",
    [
        (None, True, True),
        ("application/json, text/event-stream", True, True),
        ("application/json;q=0.9", True, False),
        ("text/*", False, True),
        ("*/*", True, True),
        ("text/html", False, False),
    ],
)
def test_accept_says_whether_json_and_sse_may_come_back(
    accept: str | None, json_ok: bool, sse_ok: bool
) -> None:
    headers = {} if accept is None else {"accept": accept}
    assert accepted(headers) == (json_ok, sse_ok)


def chunks(*parts: dict[str, Any]) -> Any:
    queue = list(parts)

    async def receive() -> dict[str, Any]:
        return queue.pop(0)

    return receive


async def test_the_body_is_joined_from_its_chunks_and_refused_past_the_limit() -> None:
    receive = chunks(
        {"type": "http.request", "body": b"ab", "more_body": True},
        {"type": "http.request", "body": b"cd"},
    )
    assert await read_body(receive, {}, limit=4) == b"abcd"
    too_long = chunks(
        {"type": "http.request", "body": b"abc", "more_body": True},
        {"type": "http.request", "body": b"de"},
    )
    with pytest.raises(HttpProblem) as refused:
        await read_body(too_long, {}, limit=4)
    assert refused.value.status == 413 and "exceeds 4 bytes" in str(refused.value)
    with pytest.raises(HttpProblem):  # refused on its declared length, before any byte is read
        await read_body(chunks(), {"content-length": "5"}, limit=4)


async def test_a_client_that_leaves_while_sending_cancels_the_read() -> None:
    receive = chunks(
        {"type": "http.request", "body": b"a", "more_body": True}, {"type": "http.disconnect"}
    )
    with pytest.raises(asyncio.CancelledError):
        await read_body(receive, {}, limit=10)
