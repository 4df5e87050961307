"""The catalogue of bad input: each kind a client or a visitor can send, with the exact answer it gets.

One table per surface: /mcp bodies (numbers past the largest double among them), `user_ask`
arguments at the extremes, HTTP headers (raw bytes through daphne), Mcp-Param headers,
requestState abuse, the FileSystem toolkit's paths and search limits, forged session ids and
inbox form posts; then what an agent names: bearer tokens of any bytes (/metrics, /mcp), method
and tool names with line breaks (the log stays one line per record), client names with line
breaks (webhook text and mail through real SMTP keep the server's link line its own); and wrong
passwords from one address (a browser that signed in before, a client behind a trusted proxy).
Every row states status, code and the words a person or a model reads, and the rows that
touch a waiting question also show that the question is undisturbed: its genuine answer still
lands, once. Bad input never crashes the server and never loses or overwrites an answer.

What other files already assert in full stays there: the validation ladder's header, version
and method rungs (test_endpoint), an expired state's plain result (test_user_ask), random input
(test_fuzz), a forged form post in a real browser (test_inbox), and NUL characters, which only
PostgreSQL refuses (test_faults, against a PostgreSQL-backed pair of workers). The hardening
cases live beside the attack they belong to, each with its exact answer:

- tests/interaction/test_hardening.py: a 5,000-digit number in the inbox form, "must have at
  most 100 digits", and a choice ticked twice, "has a choice more than once: a", both shown in
  the form with the genuine answer still sent after them; `/static/%2e%2e/...` and
  `/static/..%2f..%2fx`, 404; an optional field sent as `null`, left out, the accept stands; an
  accept whose content is text, asked again with "(The previous answer could not be used: the
  answer was text, not an object; name: an answer is required.)"; an `initialize` with
  capabilities past the session cap, refused with the cap named; one token past its share of
  the table, an `isError` result naming ELICITATION_PER_PRINCIPAL; an inbox socket from another
  origin, closed before it opens; wrong passwords past the limit, 429 for that pair only.
- tests/interaction/test_own_address.py: a tools/call whose Host names another port, 421 before
  anyone is told of the ask; the inbox socket with such a Host, 403; an agent's Markdown link to
  another port of the server's host, or protocol-relative, shown as text.
- tests/browser/test_account.py: an email change without the current password, refused
  with "Your current password is needed"; a spent confirmation link, "There is no address
  change waiting"; /accounts/password_reset/, 404.
- tests/interaction/test_push.py: a forged push acknowledgement, 400 "not an acknowledgement this
  server signed"; a forged or expired answer button's token, 400 "This button has expired; open
  the inbox."; a GET of the answer URL, 405; a subscription missing a key, 400 naming the three it
  needs; keys that are not a P-256 key and an auth secret, 400 saying so; one without the CSRF token, 403; another person's device, 404; an endpoint on a metadata
  address, 400 naming it (the SSRF guard).
- tests/interaction/test_daphne_limits.py: a body declared or chunked past MAX_BODY_BYTES, 413
  before the body is read; headers not complete within HEADER_TIMEOUT_SECONDS, 408; connections
  past MAX_CONNECTIONS_PER_ADDRESS, 503.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import secrets
import socket
import stat
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx2
import pytest
import pytest_asyncio
from mcp import MCPError
from mcp.types import CallToolResult, InputRequiredResult, TextContent

from ask_mcp import MCPServer
from ask_mcp.protocol.jsonrpc import MAX_DEPTH
from ask_mcp.server.request_state import QuestionClaims, StateClaims, StateSealer, derive_key
from ask_mcp.transports.http import McpEndpoint
from tests.support import calls
from tests.support.asgi_client import AsgiRequest
from tests.support.browser import WEB_CONFIG, Person, add_user
from tests.support.clients import Person as ClientPerson
from tests.support.clients import accept, authed
from tests.support.conformance.toolkit import Conformance
from tests.support.filesystem import client as fs_client
from tests.support.filesystem import filesystem_server
from tests.support.filesystem import text as fs_text
from tests.support.inbox_http import HeldCall, SignedIn, held_call, page_text, signed_in_http
from tests.support.live import PROBE_CONFIG, SECURED, LiveServer, LiveServers
from tests.support.mailbox import Mailbox
from tests.support.ports import free_port
from tests.support.reach import REACH_CONFIG, Crew, mail_env, mails_for
from tests.support.receivers import Receiver
from tests.support.results import text_of
from tests.support.shell import shell
from tests.support.team import issue_tokens
from tests.support.wire import (
    FORM_CAPS,
    LEGACY_HEADERS,
    assert_valid,
    headers_for,
    http,
    legacy_initialize,
    post,
    request_body,
)

LIMIT = 1024 * 1024
"""MAX_BODY_BYTES's default, which the live servers keep."""
ANSWER_SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}}}


# ---------------------------------------------------------------- bodies that are not one request


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def tools_call_raw(arguments: str, caps: dict[str, Any] | None = None) -> bytes:
    """A tools/call of user_ask whose `arguments` is raw JSON text (for values json.dumps refuses)."""
    meta = json.dumps(
        {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": caps or FORM_CAPS,
        }
    )
    return (
        '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"user_ask",'
        f'"arguments":{arguments},"_meta":{meta}}}}}'
    ).encode()


@dataclass(frozen=True)
class BodyCase:
    raw: bytes
    code: int
    text: str
    echoed: Any = None
    legacy: bool = False


BODIES: dict[str, BodyCase] = {
    "truncated JSON": BodyCase(
        b'{"jsonrpc": "2.0", "id": 3, "method": "tools/list"',
        -32700,
        "Parse error: Expecting ',' delimiter at line 1 column 51",
    ),
    "not JSON": BodyCase(b"not json", -32700, "Parse error: Expecting value at line 1 column 1"),
    "empty body": BodyCase(b"", -32700, "Parse error: Expecting value at line 1 column 1"),
    "trailing data": BodyCase(
        b'{"jsonrpc":"2.0","id":1,"method":"tools/list"} {}', -32700, "Parse error: Extra data"
    ),
    "invalid UTF-8": BodyCase(
        b"\xff\xfe{}",
        -32700,
        "Parse error: the body is not valid UTF-8 (invalid start byte at byte 0)",
    ),
    "an encoded surrogate (CESU-8)": BodyCase(
        b'{"jsonrpc":"2.0","id":1,"method":"tools/list","x":"\xed\xa0\x80"}',
        -32700,
        "Parse error: the body is not valid UTF-8",
    ),
    "a byte-order mark": BodyCase(
        b'\xef\xbb\xbf{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
        -32700,
        "Parse error: Unexpected UTF-8 BOM",
    ),
    "NaN": BodyCase(
        b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"v":NaN}}',
        -32700,
        "Parse error: NaN is not a JSON value",
    ),
    "an unpaired surrogate escape in an argument": BodyCase(
        tools_call_raw('{"message":"Go \\ud800 on?"}'),
        -32700,
        "Parse error: the JSON holds an unpaired UTF-16 surrogate escape",
    ),
    "an unpaired surrogate escape as the id": BodyCase(
        b'{"jsonrpc":"2.0","id":"\\udc00","method":"tools/list"}',
        -32700,
        "Parse error: the JSON holds an unpaired UTF-16 surrogate escape",
    ),
    "arguments nested past the limit": BodyCase(
        tools_call_raw(f'{{"message":"m","questions":{nested(MAX_DEPTH)}}}'),
        -32700,
        f"Parse error: the JSON is nested more than {MAX_DEPTH} levels deep",
    ),
    "nesting past Python's own limit": BodyCase(
        nested(100_000).encode(),
        -32700,
        f"Parse error: the JSON is nested more than {MAX_DEPTH} levels deep",
    ),
    # Parsed fine once, then crashed with a 500 while the session was stored.
    "initialize with capabilities nested 1,486 deep": BodyCase(
        (
            '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":'
            f'"2025-11-25","capabilities":{{"x":{nested(1486)}}},'
            '"clientInfo":{"name":"deep","version":"1"}}}'
        ).encode(),
        -32700,
        f"Parse error: the JSON is nested more than {MAX_DEPTH} levels deep",
        legacy=True,
    ),
    # 1e999 is JSON, but reads as infinity, which no reply or record can carry: it was a 500
    # storing an initialize's capabilities, a 500 that kept a place as a question's default, and
    # a number answer the model received as {"n":Infinity}.
    "a number past the largest double": BodyCase(
        b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"v":-1e999}}',
        -32700,
        "Parse error: the number -1e999 is too large to be a finite number (it reads as "
        "infinity); send a number between -1.7976931348623157e308 and 1.7976931348623157e308",
    ),
    "initialize with a capability of 1e999": BodyCase(
        (
            b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":'
            b'"2025-11-25","capabilities":{"x":1e999},"clientInfo":{"name":"n","version":"1"}}}'
        ),
        -32700,
        "Parse error: the number 1e999 is too large to be a finite number",
        legacy=True,
    ),
    "a question's default of 1e999": BodyCase(
        tools_call_raw(
            '{"message":"m","questions":[{"name":"n","type":"number","default":1e999}]}'
        ),
        -32700,
        "Parse error: the number 1e999 is too large to be a finite number",
    ),
    "a number answer of 1e999": BodyCase(
        (
            b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"user_ask",'
            b'"arguments":{"message":"m","questions":[{"name":"n","type":"number"}]},'
            b'"inputResponses":{"user_ask":{"action":"accept","content":{"n":1E+999}}},'
            b'"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
            b'"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}}}}}'
        ),
        -32700,
        "Parse error: the number 1E+999 is too large to be a finite number",
    ),
    "an empty batch": BodyCase(
        b"[]", -32600, "Invalid request: batches are not supported; send one JSON-RPC message"
    ),
    "a batch of one request": BodyCase(
        b'[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]',
        -32600,
        "Invalid request: batches are not supported",
    ),
    "a string": BodyCase(
        b'"just a string"', -32600, "Invalid request: expected a JSON object, got a string"
    ),
    "jsonrpc 1.0": BodyCase(
        b'{"jsonrpc":"1.0","id":4,"method":"tools/list"}',
        -32600,
        'Invalid request: "jsonrpc" must be the string "2.0"',
        echoed=4,
    ),
    "jsonrpc missing": BodyCase(
        b'{"id":4,"method":"tools/list"}',
        -32600,
        'Invalid request: "jsonrpc" must be the string "2.0"',
        echoed=4,
    ),
    "jsonrpc as a number": BodyCase(
        b'{"jsonrpc":2.0,"id":4,"method":"tools/list"}',
        -32600,
        'Invalid request: "jsonrpc" must be the string "2.0"',
        echoed=4,
    ),
    "params an array": BodyCase(
        b'{"jsonrpc":"2.0","id":"s5","method":"tools/list","params":[1]}',
        -32600,
        'Invalid request: "params" must be an object, got an array',
        echoed="s5",
    ),
    "params a string": BodyCase(
        b'{"jsonrpc":"2.0","id":"s5","method":"tools/list","params":"x"}',
        -32600,
        'Invalid request: "params" must be an object, got a string',
        echoed="s5",
    ),
    "params null": BodyCase(
        b'{"jsonrpc":"2.0","id":"s5","method":"tools/list","params":null}',
        -32600,
        'Invalid request: "params" must be an object, got null',
        echoed="s5",
    ),
    "id null": BodyCase(
        b'{"jsonrpc":"2.0","id":null,"method":"tools/list"}',
        -32600,
        'Invalid request: "id" must be a string or an integer, got null',
    ),
    "id a boolean": BodyCase(
        b'{"jsonrpc":"2.0","id":true,"method":"tools/list"}',
        -32600,
        'Invalid request: "id" must be a string or an integer, got a boolean',
    ),
    "method a number": BodyCase(
        b'{"jsonrpc":"2.0","id":6,"method":7}',
        -32600,
        'Invalid request: "method" must be a non-empty string',
        echoed=6,
    ),
    "a response outside a session": BodyCase(
        b'{"jsonrpc":"2.0","id":8,"result":{}}',
        -32600,
        "Invalid request: a JSON-RPC response is only accepted inside an initialize-era session",
        echoed=8,
    ),
    "neither request nor response": BodyCase(
        b'{"jsonrpc":"2.0","id":9}',
        -32600,
        'Invalid request: a message needs "method" (request or notification) or',
        echoed=9,
    ),
}


@pytest.mark.parametrize("case", BODIES.values(), ids=list(BODIES))
def test_a_body_that_is_not_one_request_gets_its_error(mcp_url: str, case: BodyCase) -> None:
    headers = (
        {**LEGACY_HEADERS, "mcp-protocol-version": "2025-11-25"}
        if case.legacy
        else headers_for({"method": "tools/list"})
    )
    response = post(mcp_url, None, headers, raw=case.raw)
    assert response.status_code == 400, response.text
    reply = response.json()
    assert reply["error"]["code"] == case.code
    assert case.text in reply["error"]["message"], reply
    if case.echoed is None:
        assert "id" not in reply
    else:
        assert reply["id"] == case.echoed
    assert post(mcp_url, request_body("server/discover")).status_code == 200  # still serving


# ---------------------------------------------------------------- user_ask arguments at the extremes


def test_a_message_of_a_megabyte_is_asked_whole(mcp_url: str) -> None:
    message = "é" * 500_000  # 1,000,000 bytes of UTF-8: under the limit, which counts bytes
    body = request_body("tools/call", {"name": "user_ask", "arguments": {"message": message}})
    body["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = FORM_CAPS
    assert len(json.dumps(body, ensure_ascii=False).encode()) < LIMIT
    reply = assert_valid(
        "tools/call",
        post(mcp_url, None, headers_for(body), raw=json.dumps(body, ensure_ascii=False).encode())
        .raise_for_status()
        .json(),
    )
    form = reply["result"]["inputRequests"]["user_ask"]["params"]
    assert form["message"] == message


@pytest.mark.parametrize(
    "arguments, text",
    [
        (
            f'{{"message":"m","questions":{nested(MAX_DEPTH - 5)}}}',
            "questions[0] must be an object, got an array.",
        ),
        (
            f'{{"message":{nested(MAX_DEPTH - 4)}}}',
            "`message` must be a string, got an array.",
        ),
        (
            '{"message":"m","questions":[{"name":"x","default":'
            + '{"a":' * (MAX_DEPTH - 8)
            + "1"
            + "}" * (MAX_DEPTH - 8)
            + "}]}",
            "questions[0] ('x'): `default` must be a string, got an object.",
        ),
    ],
    ids=["questions nested", "message nested", "a default nested"],
)
def test_deep_arguments_within_the_limit_get_the_tools_own_explanation(
    mcp_url: str, arguments: str, text: str
) -> None:
    raw = tools_call_raw(arguments)
    response = post(
        mcp_url,
        None,
        headers_for({"method": "tools/call", "params": {"name": "user_ask"}}),
        raw=raw,
    )
    result = assert_valid("tools/call", response.json())["result"]
    assert result["isError"] is True
    assert result["content"] == [{"type": "text", "text": text}]


# ---------------------------------------------------------------- ten megabytes


def test_ten_megabytes_are_refused_with_413(mcp_url: str) -> None:
    big = b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"x":"' + b"a" * (10 << 20)
    response = post(mcp_url, None, headers_for({"method": "tools/list"}), raw=big + b'"}}')
    assert response.status_code == 413
    assert response.json() == {
        "jsonrpc": "2.0",
        "error": {
            "code": -32600,
            "message": f"Payload Too Large: the body exceeds {LIMIT} bytes "
            "(ASK_MCP['MAX_BODY_BYTES'])",
        },
    }


class Upload:
    """An ASGI request body arriving in 64 KiB chunks; counts what the app pulled."""

    CHUNK = 64 << 10

    def __init__(self, total: int) -> None:
        self.total = total
        self.pulled = 0
        self.sent: list[MutableMapping[str, Any]] = []

    async def receive(self) -> dict[str, Any]:
        size = min(self.CHUNK, self.total - self.pulled)
        self.pulled += size
        return {"type": "http.request", "body": b"a" * size, "more_body": self.pulled < self.total}

    async def send(self, message: MutableMapping[str, Any]) -> None:
        self.sent.append(message)


@pytest.mark.parametrize("declared", [True, False], ids=["content-length", "chunked"])
async def test_the_endpoint_stops_reading_a_body_at_the_limit(declared: bool) -> None:
    # daphne itself spools a whole body before the app runs (the deploy page's nginx limit covers
    # that); the endpoint's own part is to pull no more than the limit from any ASGI server.
    upload = Upload(10 << 20)
    headers = headers_for({"method": "tools/list"})
    if declared:
        headers["content-length"] = str(upload.total)
    scope = {
        "type": "http",
        "method": "POST",
        "path": "/mcp",
        "headers": [(k.encode(), v.encode()) for k, v in {"host": "127.0.0.1", **headers}.items()],
        "client": ("127.0.0.1", 50000),
    }
    endpoint = McpEndpoint(MCPServer("limits"))
    async with asyncio.timeout(10):
        await endpoint(scope, upload.receive, upload.send)
    assert upload.sent[0]["status"] == 413
    assert upload.pulled == (0 if declared else LIMIT + Upload.CHUNK)


# ---------------------------------------------------------------- header bytes through daphne


def raw_request(url: str, head: bytes, body: bytes = b"") -> tuple[int | None, bytes, bytes]:
    """Send exactly these bytes; returns status (None if the server hung up), headers and body."""
    parts = urlsplit(url)
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as sock:
        try:
            sock.sendall(head + body)
            data = b""
            while chunk := sock.recv(65536):
                data += chunk
        except ConnectionResetError:
            return None, b"", b""
    if not data:
        return None, b"", b""
    head_bytes, _, rest = data.partition(b"\r\n\r\n")
    return int(head_bytes.split(b" ", 2)[1]), head_bytes, rest


def table_request(
    url: str, extra: bytes, *, name: str = "probe_table"
) -> tuple[int | None, bytes, bytes]:
    """tools/call of `name` with its routing headers, plus `extra` header bytes as sent."""
    body = json.dumps(request_body("tools/call", {"name": name})).encode()
    head = (
        b"POST /mcp HTTP/1.1\r\nHost: " + urlsplit(url).netloc.encode() + b"\r\n"
        b"Content-Type: application/json\r\nMCP-Protocol-Version: 2026-07-28\r\n"
        b"Mcp-Method: tools/call\r\n"
        + extra
        + b"Content-Length: "
        + str(len(body)).encode()
        + b"\r\nConnection: close\r\n\r\n"
    )
    return raw_request(url, head, body)


def b64(text: str | bytes) -> bytes:
    raw = text.encode() if isinstance(text, str) else text
    return b"=?base64?" + base64.b64encode(raw) + b"?="


def host_request(url: str, host: bytes) -> tuple[int | None, bytes]:
    """tools/list with `host` as the Host header, as sent; (status, body)."""
    body = json.dumps(request_body("tools/list")).encode()
    head = (
        b"POST /mcp HTTP/1.1\r\nHost: " + host + b"\r\n"
        b"Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
        b"MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/list\r\n"
        b"Content-Length: " + str(len(body)).encode() + b"\r\nConnection: close\r\n\r\n"
    )
    status, _, answer = raw_request(url, head, body)
    return status, answer


# A Host naming another port than PUBLIC_URL's (the live servers' own address) is refused
# before anything reads it; host names stay ALLOWED_HOSTS's (issue 28: links built on a
# poisoned port handed a local listener the person's cookies).
HOSTS: dict[str, tuple[str, int, bytes]] = {
    "another port": ("127.0.0.1:{other}", 421, b"names another port than this server's"),
    "no port (80)": ("127.0.0.1", 421, b"names another port than this server's"),
    "port 0": ("127.0.0.1:0", 421, b"names another port than this server's"),
    "a port that is no number": ("127.0.0.1:http", 421, b"names another port than this server's"),
    "another allowed name, the own port": ("localhost:{own}", 200, b'"tools"'),
    "a name not allowed, the own port": ("evil.example:{own}", 403, b"is not in ALLOWED_HOSTS"),
}


@pytest.mark.parametrize("case", HOSTS.values(), ids=list(HOSTS))
def test_a_host_naming_another_port_is_refused_and_host_names_are_allowed_hosts_business(
    live: LiveServer, case: tuple[str, int, bytes]
) -> None:
    template, expected, words = case
    own = urlsplit(live.mcp_url).port
    host = template.format(own=own, other=free_port())
    status, body = host_request(live.mcp_url, host.encode())
    assert (status, words in body) == (expected, True), body


# Refused by daphne before the app runs: CR, LF and NUL never reach a header value.
REFUSED_BY_THE_HTTP_SERVER = {
    "CR inside a value": b"Mcp-Name: probe_table\rX-Injected: 1\r\n",
    "a bare LF smuggling a header": b"Mcp-Name: probe_table\nX-Injected: 1\r\n",
    "a bare LF smuggling a second Mcp-Name": b"Mcp-Name: probe_table\nMcp-Name: user_ask\r\n",
    "NUL inside a value": b"Mcp-Name: probe\x00_table\r\n",
    "a space in a header name": b"Mcp Name: probe_table\r\n",
}


@pytest.mark.parametrize(
    "extra", REFUSED_BY_THE_HTTP_SERVER.values(), ids=list(REFUSED_BY_THE_HTTP_SERVER)
)
def test_control_bytes_in_headers_never_reach_the_endpoint(live: LiveServer, extra: bytes) -> None:
    status, head, body = table_request(live.mcp_url, extra)
    assert status == 400
    assert not body.startswith(b"{")  # daphne's own refusal: the endpoint never saw it
    assert b"x-injected" not in head.lower()
    assert table_request(live.mcp_url, b"Mcp-Name: probe_table\r\n")[0] == 200


def test_a_header_block_past_the_servers_limit_is_refused_without_the_app(
    live: LiveServer,
) -> None:
    status, _, body = table_request(live.mcp_url, b"Mcp-Name: " + b"a" * 20_000 + b"\r\n")
    assert status in (None, 400, 431)  # Twisted hangs up or refuses; never the app, never 5xx
    assert not body.startswith(b"{")
    assert table_request(live.mcp_url, b"Mcp-Name: probe_table\r\n")[0] == 200


@dataclass(frozen=True)
class HeaderCase:
    extra: bytes
    text: str
    name: str = "probe_table"
    code: int = -32020


HEADERS: dict[str, HeaderCase] = {
    "an obs-fold continuation": HeaderCase(
        b"Mcp-Name: probe\r\n _table\r\n",
        "Header mismatch: the Mcp-Name header 'probe _table' does not match params.name",
    ),
    "raw UTF-8 instead of the base64 form": HeaderCase(
        "Mcp-Name: pröbe_table\r\n".encode(),
        "Header mismatch: the Mcp-Name header 'prÃ¶be_table' does not match params.name",
    ),
    "an underscore in the name (dropped, CVE-2015-0219)": HeaderCase(
        b"Mcp_Name: probe_table\r\n",
        "Header mismatch: the Mcp-Name header is missing; it must carry params.name",
    ),
    "12 KB of name": HeaderCase(
        b"Mcp-Name: " + b"a" * 12_000 + b"\r\n",
        "Header mismatch: the Mcp-Name header 'aaaa",
    ),
    "CRLF smuggled inside base64": HeaderCase(
        b"Mcp-Name: " + b64("probe_table\r\nX-Injected: 1") + b"\r\n",
        "Header mismatch: the Mcp-Name header 'probe_table\\r\\nX-Injected: 1' does not match",
    ),
    "base64 inside base64 (decoded once only)": HeaderCase(
        b"Mcp-Name: " + b64(b64("probe_table")) + b"\r\n",
        "Header mismatch: the Mcp-Name header '=?base64?cHJvYmVfdGFibGU=?=' does not match",
    ),
    "base64 of bytes that are not UTF-8": HeaderCase(
        b"Mcp-Name: " + b64(b"\xff\xfeprobe") + b"\r\n",
        "Header mismatch: the Mcp-Name header has a malformed base64 value",
    ),
    "base64 with a space inside": HeaderCase(
        b"Mcp-Name: =?base64?cHJvYmVf dGFibGU=?=\r\n",
        "Header mismatch: the Mcp-Name header has a malformed base64 value",
    ),
    "the sentinel in capitals (not a sentinel: literal)": HeaderCase(
        b"Mcp-Name: =?BASE64?cHJvYmVfdGFibGU=?=\r\n",
        "Header mismatch: the Mcp-Name header '=?BASE64?cHJvYmVfdGFibGU=?=' does not match",
    ),
    "an empty payload": HeaderCase(
        b"Mcp-Name: =?base64??=\r\n",
        "Header mismatch: the Mcp-Name header '' does not match params.name 'probe_table'",
    ),
    # The header matches a body name holding CRLF: the check passes, the name is just unknown,
    # and the decoded value goes nowhere near a response header.
    "a matching name that holds CRLF": HeaderCase(
        b"Mcp-Name: " + b64("probe_table\r\nX-Injected: 1") + b"\r\n",
        "Unknown tool: 'probe_table\\r\\nX-Injected: 1'; this server offers user_ask",
        name="probe_table\r\nX-Injected: 1",
        code=-32602,
    ),
}


@pytest.mark.parametrize("case", HEADERS.values(), ids=list(HEADERS))
def test_header_values_that_disagree_with_the_body_are_named_in_the_error(
    live: LiveServer, case: HeaderCase
) -> None:
    status, head, body = table_request(live.mcp_url, case.extra, name=case.name)
    assert status == 400
    reply = json.loads(body)
    assert reply["id"] == 1 and reply["error"]["code"] == case.code
    assert case.text in reply["error"]["message"], reply
    assert b"x-injected" not in head.lower()


# ---------------------------------------------------------------- Mcp-Param headers (in-process)


@pytest.fixture(scope="module")
def conformance_endpoint() -> McpEndpoint:
    # The header check is the endpoint's own: no HTTP server's behaviour is involved here.
    return McpEndpoint(MCPServer("params").plug(Conformance()))


PARAMS: dict[str, tuple[dict[str, Any], dict[str, str], str | None]] = {
    "the header missing": (
        {"region": "eu"},
        {},
        "the Mcp-Param-Region header is missing; it must mirror argument 'region'",
    ),
    "the argument missing": (
        {},
        {"mcp-param-region": "eu"},
        "the Mcp-Param-Region header is sent but argument 'region' is absent",
    ),
    "a different value": (
        {"region": "eu"},
        {"mcp-param-region": "us"},
        "the Mcp-Param-Region header 'us' does not match argument 'region'",
    ),
    "malformed base64": (
        {"region": "eu"},
        {"mcp-param-region": "=?base64?ZXU?="},
        "the Mcp-Param-Region header has a malformed base64 value",
    ),
    "base64 inside base64": (
        {"region": "eu"},
        {"mcp-param-region": b64(b64("eu")).decode()},
        "the Mcp-Param-Region header '=?base64?ZXU=?=' does not match argument 'region'",
    ),
    "a value holding CRLF, in base64, matching": (
        {"region": "eu\r\nX-Injected: 1"},
        {"mcp-param-region": b64("eu\r\nX-Injected: 1").decode()},
        None,
    ),
    "a non-ASCII value in base64, matching": (
        {"region": "Zürich"},
        {"mcp-param-region": b64("Zürich").decode()},
        None,
    ),
}


@pytest.mark.parametrize("case", PARAMS.values(), ids=list(PARAMS))
async def test_mcp_param_headers_mirror_their_argument_exactly(
    conformance_endpoint: McpEndpoint, case: tuple[dict[str, Any], dict[str, str], str | None]
) -> None:
    arguments, param_headers, text = case
    body = request_body("tools/call", {"name": "test_custom_header", "arguments": arguments})
    request = AsgiRequest(
        conformance_endpoint, "POST", {**headers_for(body), **param_headers}, body
    )
    async with asyncio.timeout(10):
        start = await request.start()
        reply = assert_valid("tools/call", await request.body())
    if text is None:
        assert start["status"] == 200
        assert reply["result"]["content"][0]["text"] == f"Region: {arguments['region']}"
        assert all(name != b"x-injected" for name, _ in start["headers"])
    else:
        assert start["status"] == 400
        assert reply["error"]["code"] == -32020
        assert reply["error"]["message"] == f"Header mismatch: {text}"


# ---------------------------------------------------------------- requestState abuse


@pytest.fixture(scope="module")
def tokens(live_servers: LiveServers) -> dict[str, str]:
    """Tokens for alice and bob on test_auth's server (shared when both run): tokens required."""
    return issue_tokens(live_servers.get(SECURED), "alice", "bob", name="catalogue")


@pytest.fixture(scope="module")
def secured(live_servers: LiveServers, tokens: dict[str, str]) -> LiveServer:
    return live_servers.get(SECURED)


def forged(state: str) -> str:
    """The same claims, sealed with a key that is not the server's."""
    payload = json.loads(base64.urlsafe_b64decode(state.split(".")[0] + "=="))
    _, call, round_no, owner, principal, binding, expires_at = payload[:7]
    question = QuestionClaims(*payload[7]) if len(payload) == 8 else None
    sealer = StateSealer([derive_key("an attacker's own secret key, 32+ bytes long")])
    claims = StateClaims(call, round_no, owner, principal, binding, expires_at, question)
    return sealer.seal(claims)


@dataclass(frozen=True)
class StateCase:
    reason: str
    text: str
    retry: Callable[[str], str] = lambda state: state
    as_user: str = "alice"
    arguments: dict[str, Any] = field(default_factory=lambda: {"message": "Which region?"})
    after_answer: bool = False


STATES: dict[str, StateCase] = {
    "sealed with another key": StateCase(
        "signature",
        "requestState failed its integrity check (altered, or sealed with a key this server "
        "does not hold)",
        retry=forged,
    ),
    "cut short": StateCase("malformed", "requestState is malformed", retry=lambda s: s[:-5]),
    "another user's token": StateCase(
        "principal", "requestState was issued to a different principal", as_user="bob"
    ),
    "other arguments": StateCase(
        "request",
        "requestState was issued for a different request (method, name or arguments differ)",
        arguments={"message": "Which region, really?"},
    ),
    "replayed after its answer": StateCase(
        "used",
        "requestState was already used: each state answers one round; retry with the newest state",
        after_answer=True,
    ),
}


@pytest.mark.parametrize("case", STATES.values(), ids=list(STATES))
async def test_a_bad_state_is_refused_and_the_parked_call_still_gets_its_answer(
    secured: LiveServer, tokens: dict[str, str], case: StateCase
) -> None:
    arguments = {"message": "Which region?"}
    url = secured.mcp_url
    async with asyncio.timeout(30):
        async with authed(url, tokens["alice"], ClientPerson(accept(answer="x"))) as alice:
            first = await alice.session.call_tool("user_ask", arguments, allow_input_required=True)
            assert isinstance(first, InputRequiredResult) and first.request_state

            async def genuine() -> CallToolResult | InputRequiredResult:
                return await alice.session.call_tool(
                    "user_ask",
                    arguments,
                    request_state=first.request_state,
                    input_responses={"user_ask": accept(answer="eu-west")},
                    allow_input_required=True,
                )

            done: CallToolResult | InputRequiredResult | None = None
            if case.after_answer:
                done = await genuine()
            async with authed(url, tokens[case.as_user], None) as abuser:
                with pytest.raises(MCPError) as refused:
                    await abuser.session.call_tool(
                        "user_ask",
                        case.arguments,
                        request_state=case.retry(first.request_state),
                        input_responses={"user_ask": accept(answer="hijacked")},
                        allow_input_required=True,
                    )
            if not case.after_answer:
                done = await genuine()
    assert refused.value.code == -32602
    assert refused.value.data == {"reason": case.reason}
    assert str(refused.value) == f"Invalid requestState: {case.text}"
    assert isinstance(done, CallToolResult) and text_of(done) == '{"answer":"eu-west"}'


# ---------------------------------------------------------------- FileSystem paths and searches


LIMITS = {"max_search_files": 3, "max_search_bytes": 100, "max_matches": 2}
"""The FileSystem limits of the catalogue's server, small enough for a tree of a few files."""
NO_TIME = {"max_search_seconds": 1e-06}
"""A time limit that has passed by the first check: no search can look at a single file."""
GUIDE = "step one\nstep two: deploy\n"
SIXTY = "deploy " + "x" * 52 + "\n"
"""60 bytes: two such files pass the 100-byte limit."""


@pytest.fixture(scope="module")
def fs_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """root/ with text, binary, links in and out, a FIFO, a socket, a device; secret/ beside it."""
    base = tmp_path_factory.mktemp("fs")
    root = base / "root"
    (root / "docs").mkdir(parents=True)
    (root / "notes.md").write_text("# Notes\nDeploy on Friday.\n")
    (root / "docs" / "guide.txt").write_text(GUIDE)
    (root / "image.bin").write_bytes(b"\x89PNG\x00\x01\x02")
    (root / "latin1.txt").write_bytes("caf\xe9\n".encode("latin-1"))
    (base / "secret").mkdir()
    (base / "secret" / "key.txt").write_text("deploy key: hunter2\n")
    os.symlink("../secret/key.txt", root / "leak.txt")
    os.symlink("../secret", root / "leakdir")
    os.symlink("docs", root / "docs-link")
    os.mkfifo(root / "pipe")
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(root / "sock"))  # the socket file stays after the socket closes
    if os.geteuid() == 0:  # only root may make a device node
        os.mknod(root / "null", stat.S_IFCHR | 0o600, os.makedev(1, 3))
    (root / "caps" / "many").mkdir(parents=True)
    for name in "abcde":  # one match, in the first file: under the match limit
        (root / "caps" / "many" / f"{name}.txt").write_text("deploy\n" if name == "a" else "x\n")
    (root / "caps" / "big").mkdir()
    for name in "ab":
        (root / "caps" / "big" / f"{name}.txt").write_text(SIXTY)
    (root / "caps" / "matches").mkdir()
    (root / "caps" / "matches" / "a.txt").write_text("deploy 1\ndeploy 2\ndeploy 3\n")
    return root


@dataclass(frozen=True)
class FsCase:
    tool: str
    arguments: dict[str, Any]
    text: str
    """The whole text of an error; for a search that stopped, its `stopped` sentence."""
    matches: list[tuple[str, int]] | None = None
    """For a search that stopped: the (path, line) of the matches found before it did."""
    limits: dict[str, Any] = field(default_factory=lambda: LIMITS)


LINKS = (
    "links under the file root are never followed, so give the path of the file or directory "
    "itself."
)
NOT_REGULAR = "opens regular files only (never pipes, sockets or devices)."


def stopped(cap: str, limit: str, files: str, read: int, where: str) -> str:
    return (
        f"Search stopped at the limit {cap}={limit} after looking at {files} ({read} bytes "
        f"read); {where} and everything after it in the walk was not searched. Narrow the "
        f"search with `path` or `glob`, or raise {cap} in the FileSystem toolkit's settings."
    )


FS_CASES: dict[str, FsCase] = {
    "an absolute path": FsCase(
        "fs_read",
        {"path": "/etc/passwd"},
        "'/etc/passwd' is an absolute path; paths are relative to the file root (for example "
        "'notes/todo.md', or '.' for the root itself).",
    ),
    "'..' that climbs out": FsCase(
        "fs_read",
        {"path": "../secret/key.txt"},
        "'../secret/key.txt' contains '..'; paths only go down from the file root, so give the "
        "path without '..' (for example 'notes/todo.md').",
    ),
    "'..' that stays inside": FsCase(
        "fs_read",
        {"path": "docs/../notes.md"},
        "'docs/../notes.md' contains '..'; paths only go down from the file root, so give the "
        "path without '..' (for example 'notes/todo.md').",
    ),
    "a NUL character": FsCase(
        "fs_read",
        {"path": "notes.md\x00.txt"},
        "'notes.md\\x00.txt' contains a NUL character; give a plain relative path.",
    ),
    "a link to a file outside": FsCase(
        "fs_read", {"path": "leak.txt"}, f"'leak.txt' is a symbolic link; {LINKS}"
    ),
    "a path through a link to a directory outside": FsCase(
        "fs_read",
        {"path": "leakdir/key.txt"},
        f"'leakdir/key.txt' goes through 'leakdir', a symbolic link; {LINKS}",
    ),
    "a path through a link that stays inside": FsCase(
        "fs_read",
        {"path": "docs-link/guide.txt"},
        f"'docs-link/guide.txt' goes through 'docs-link', a symbolic link; {LINKS}",
    ),
    "a FIFO (it used to block the read forever)": FsCase(
        "fs_read",
        {"path": "pipe"},
        f"'pipe' is a FIFO (named pipe), not a regular file; read {NOT_REGULAR}",
    ),
    "a socket": FsCase(
        "fs_read", {"path": "sock"}, f"'sock' is a socket, not a regular file; read {NOT_REGULAR}"
    ),
    "a device": FsCase(
        "fs_read",
        {"path": "null"},
        f"'null' is a character device, not a regular file; read {NOT_REGULAR}",
    ),
    "a directory": FsCase(
        "fs_read", {"path": "docs"}, "'docs' is a directory; use the list tool for directories."
    ),
    "a file taken for a directory": FsCase(
        "fs_read",
        {"path": "notes.md/x"},
        "'notes.md/x' goes through 'notes.md', which is a regular file, not a directory.",
    ),
    "a file that does not exist": FsCase(
        "fs_read", {"path": "missing.txt"}, "'missing.txt' does not exist under the file root."
    ),
    "a binary file": FsCase(
        "fs_read",
        {"path": "image.bin"},
        "'image.bin' is a binary file (7 bytes); read returns text files only.",
    ),
    "a file that is not UTF-8": FsCase(
        "fs_read",
        {"path": "latin1.txt"},
        "'latin1.txt' is not UTF-8 text (5 bytes); read returns text files only.",
    ),
    "an offset past the end": FsCase(
        "fs_read",
        {"path": "notes.md", "offset": 99},
        "offset 99 is past the end of 'notes.md' (26 bytes).",
    ),
    "listing a file": FsCase(
        "fs_list",
        {"path": "notes.md"},
        "'notes.md' is a file, not a directory; use the read tool for files.",
    ),
    "listing through a link": FsCase(
        "fs_list", {"path": "leakdir"}, f"'leakdir' is a symbolic link; {LINKS}"
    ),
    "listing a FIFO": FsCase(
        "fs_list",
        {"path": "pipe"},
        "'pipe' is a FIFO (named pipe), not a directory.",
    ),
    "searching a FIFO": FsCase(
        "fs_search",
        {"query": "x", "path": "pipe"},
        f"'pipe' is a FIFO (named pipe), not a regular file; search {NOT_REGULAR}",
    ),
    "searching through a link": FsCase(
        "fs_search",
        {"query": "deploy", "path": "leakdir"},
        f"'leakdir' is a symbolic link; {LINKS}",
    ),
    "a search past the file limit": FsCase(
        "fs_search",
        {"query": "deploy", "path": "caps/many"},
        stopped("max_search_files", "3", "3 files", 11, "'caps/many/d.txt'"),
        matches=[("caps/many/a.txt", 1)],
    ),
    "a search past the byte limit": FsCase(
        "fs_search",
        {"query": "deploy", "path": "caps/big"},
        stopped("max_search_bytes", "100", "1 file", 60, "'caps/big/b.txt'"),
        matches=[("caps/big/a.txt", 1)],
    ),
    "a search past the match limit": FsCase(
        "fs_search",
        {"query": "deploy", "path": "caps/matches"},
        stopped("max_matches", "2", "1 file", 27, "'caps/matches/a.txt' from line 3"),
        matches=[("caps/matches/a.txt", 1), ("caps/matches/a.txt", 2)],
    ),
    "a search past the time limit": FsCase(
        "fs_search",
        {"query": "x", "path": "caps/many"},
        stopped("max_search_seconds", "1e-06", "0 files", 0, "'caps/many'"),
        matches=[],
        limits=NO_TIME,
    ),
}


@pytest.mark.parametrize("case", FS_CASES.values(), ids=list(FS_CASES))
async def test_a_bad_path_or_a_search_past_a_limit_gets_its_exact_answer(
    live_servers: LiveServers, fs_root: Path, case: FsCase
) -> None:
    if case.arguments.get("path") == "null" and not (fs_root / "null").exists():
        # mknod needs root; the tests run as root here and in CI, so the row runs there.
        pytest.skip("making a device node needs root")
    server = filesystem_server(live_servers, fs_root, **case.limits)
    # Bounded: before the fix the FIFO row never answered, so the bound is the failure.
    async with asyncio.timeout(30), fs_client(server) as client:
        result = await client.call_tool(case.tool, case.arguments)
    if case.matches is None:
        assert result.is_error is True
        assert result.content == [TextContent(type="text", text=case.text)]
    else:  # a normal result: the matches found so far, and which limit stopped it
        assert result.is_error is False
        found = json.loads(fs_text(result))
        assert found["truncated"] is True
        assert found["stopped"] == case.text
        assert [(m["path"], m["line"]) for m in found["matches"]] == case.matches
    assert "hunter2" not in fs_text(result)
    assert str(fs_root.parent) not in fs_text(result)  # the real location is never shown


# ---------------------------------------------------------------- forged session ids


@pytest.mark.parametrize(
    "session_id",
    [
        secrets.token_urlsafe(32),
        "a" * 4000,
        "=?base64?c2Vzc2lvbg==?=",
        "' OR 1=1 --",
    ],
    ids=["well-formed but unknown", "4,000 characters", "a base64 sentinel", "SQL"],
)
@pytest.mark.parametrize("method", ["POST", "GET", "DELETE"])
def test_a_forged_session_id_is_404_for_every_method(
    mcp_url: str, session_id: str, method: str
) -> None:
    legacy_initialize(mcp_url)  # a real session exists: a forged id must not find it
    headers = {
        **LEGACY_HEADERS,
        "mcp-session-id": session_id,
        "mcp-protocol-version": "2025-11-25",
    }
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    response = http().request(
        method, mcp_url, headers=headers, content=json.dumps(body) if method == "POST" else None
    )
    assert response.status_code == 404
    error = response.json()["error"]
    assert error == {
        "code": -32600,
        "message": "Not Found: unknown or ended Mcp-Session-Id; initialize a new session",
    }
    assert response.json().get("id") == (1 if method == "POST" else None)


# ---------------------------------------------------------------- inbox form posts


@pytest.fixture(scope="module")
def outsider(web: LiveServer) -> Person:
    """Signed in, not staff, in no team: no anonymous ask is addressed to them."""
    return add_user(web, f"nina{uuid.uuid4().hex[:6]}", staff=False)


@pytest_asyncio.fixture(loop_scope="session")
async def as_admin(web: LiveServer, admin: Person) -> AsyncIterator[SignedIn]:
    async with signed_in_http(web, admin) as session:
        yield session


@dataclass(frozen=True)
class FormCase:
    status: int
    text: str
    poster: str = "admin"
    csrf: str | None = None
    """None: the poster's own token; "": none; "bea": another person's."""
    action: str = "accept"
    ask: str = "pending"
    """pending, unknown, withdrawn, expired, answered or client."""


FORMS: dict[str, FormCase] = {
    "no CSRF token": FormCase(403, "CSRF verification failed. Request aborted.", csrf=""),
    "another person's CSRF token": FormCase(
        403, "CSRF verification failed. Request aborted.", csrf="bea"
    ),
    "not signed in": FormCase(302, "", poster="nobody"),
    "someone it is not addressed to": FormCase(
        403, "This question is addressed to someone else.", poster="outsider"
    ),
    "an unknown action": FormCase(
        400, "action must be one of: accept, decline, cancel", action="approve"
    ),
    "an ask that does not exist": FormCase(404, "No such question.", ask="unknown"),
    "after the client withdrew it": FormCase(
        200,
        "Your reply was not sent. This question is no longer waiting: the client stopped "
        "waiting for an answer.",
        ask="withdrawn",
    ),
    "after it expired": FormCase(
        200,
        "Your reply was not sent. This question is no longer waiting: nobody answered in time.",
        ask="expired",
    ),
    "past its expiry, before the sweeper saw it": FormCase(
        200,
        "Your reply was not sent. This question is no longer waiting: nobody answered in time.",
        ask="overdue",
    ),
    "after someone answered": FormCase(
        200, "Your reply was not sent. Answered by {admin}", poster="bea", ask="answered"
    ),
    "to an ask its client shows itself": FormCase(
        200,
        "This question was sent to raw-test, which shows it and sends the answer.",
        ask="client",
    ),
}


@pytest.mark.asyncio(loop_scope="session")
@pytest.mark.parametrize("case", FORMS.values(), ids=list(FORMS))
async def test_a_bad_form_post_is_refused_and_overwrites_nothing(
    web: LiveServer,
    admin: Person,
    bea: Person,
    outsider: Person,
    as_admin: SignedIn,
    case: FormCase,
) -> None:
    people = {"admin": admin, "bea": bea, "outsider": outsider}
    async with asyncio.timeout(60), contextlib.AsyncExitStack() as stack:
        poster: SignedIn | None = None
        if case.poster != "nobody":
            poster = await stack.enter_async_context(signed_in_http(web, people[case.poster]))
        http = await stack.enter_async_context(calls.client())
        ask_id, call = await make_ask(web, as_admin, case.ask, stack, http)
        before = (await calls.records(http, web.mcp_url)).get(ask_id)

        if poster is None:  # a visitor with a CSRF cookie (from the sign-in page), no session
            async with httpx2.AsyncClient(base_url=web.base_url, timeout=20) as anonymous:
                await anonymous.get("/accounts/login/")
                response = await anonymous.post(
                    f"/asks/{uuid.UUID(ask_id)}/",
                    data={
                        "action": "accept",
                        "f:answer": "forged",
                        "csrfmiddlewaretoken": str(anonymous.cookies["csrftoken"]),
                    },
                )
        else:
            csrf = case.csrf
            if csrf == "bea":
                async with signed_in_http(web, bea) as other:
                    csrf = other.csrf
            response = await poster.answer(ask_id, case.action, csrf=csrf, answer="forged")

        assert response.status_code == case.status, page_text(response.text)[:300]
        if case.status == 302:
            assert response.headers["location"].startswith("/accounts/login/")
        else:
            assert case.text.format(admin=admin.username) in page_text(response.text)
        after = (await calls.records(http, web.mcp_url)).get(ask_id)
        if before is None:
            assert after is None  # nothing written
        else:  # nothing overwritten (the sweeper may meanwhile expire an overdue ask)
            assert after is not None and after["answer"] == before["answer"]
            assert after["status"] in (before["status"], "expired" if case.ask == "overdue" else "")

        if call is not None:  # the ask still waits: the genuine answer lands, once
            sent = await as_admin.answer(ask_id, answer="genuine")
            assert "Sent: the agent has your reply." in page_text(sent.text)
            result = await call.result()
            assert result["result"]["content"][0]["text"] == '{"answer":"genuine"}'
            row = (await calls.records(http, web.mcp_url))[ask_id]
            assert (row["status"], row["answer"]) == ("accepted", {"answer": "genuine"})


async def make_ask(
    web: LiveServer,
    as_admin: SignedIn,
    state: str,
    stack: contextlib.AsyncExitStack,
    http: httpx2.AsyncClient,
) -> tuple[str, HeldCall | None]:
    """An ask in `state`; with the held call when it still waits for an answer."""
    message = f"Catalogue ({state}) [{uuid.uuid4().hex[:8]}]"
    url = web.mcp_url
    if state == "unknown":
        return uuid.uuid4().hex, None
    if state == "pending":
        call = await stack.enter_async_context(held_call(url, message=message, http=http))
        return call.ask_id, call
    if state == "withdrawn":
        async with held_call(url, message=message, http=http) as call:
            pass  # the client leaves; no call asks the same within DETACHED_GRACE_SECONDS
        await wait_ended(http, url, call.ask_id)
        await wait_status(http, url, call.ask_id, "withdrawn")
        return call.ask_id, None
    if state == "expired":
        async with held_call(
            url, "probe_form", http=http, message=message, schema=ANSWER_SCHEMA, timeout=0.3
        ) as call:
            result = await call.result()
        assert result["result"]["content"][0]["text"].startswith("The user did not answer in time.")
        await wait_ended(http, url, call.ask_id)
        return call.ask_id, None
    if state == "answered":
        async with held_call(url, message=message, http=http) as call:
            await as_admin.answer(call.ask_id, answer="first")
            await call.result()
        return call.ask_id, None
    if state == "overdue":
        ask_id = uuid.uuid4()
        web.manage(
            "shell",
            "-c",
            "import datetime as dt; from ask_mcp.models import Ask;"
            "now = dt.datetime.now(dt.UTC);"
            f"Ask.objects.create(id={str(ask_id)!r}, created=now - dt.timedelta(minutes=5),"
            f"message={message!r}, schema={{'type': 'object', 'properties': "
            "{'answer': {'type': 'string'}}}, tool='user_ask', route='browser',"
            "expires_at=now - dt.timedelta(seconds=1), worker='askmcp.worker.gone')",
        )
        return ask_id.hex, None
    assert state == "client"
    # Shown by the client (MRTR); parked with a timeout, so it frees its place by itself.
    await calls.first_round(
        http, url, "probe_form", message=message, schema=ANSWER_SCHEMA, timeout=30
    )
    return calls.by_message(await calls.records(http, url), message)["id"], None


async def wait_status(http: httpx2.AsyncClient, url: str, ask_id: str, status: str) -> None:
    """Until the sweeper has given the ask `status` (bounded: a few sweeps, each 10 s at most)."""
    for _ in range(10):
        if (await calls.records(http, url))[ask_id]["status"] == status:
            return
        assert (await calls.probe(http, url, "next_sweep"))["swept"] is True
    raise AssertionError(f"ask {ask_id} never became {status}")


async def wait_ended(http: httpx2.AsyncClient, url: str, ask_id: str) -> None:
    """Until the server has ended the ask (bounded by the probe's own 10 s)."""
    assert (await calls.probe(http, url, "wait", kind="ended", key=ask_id))["fired"] is True


# ---------------------------------------------------------------- what an agent names, in logs and metrics

METRICS_TOKEN = "metrics-" + uuid.uuid4().hex


@pytest.fixture(scope="module")
def logged(live_servers: LiveServers) -> Iterator[LiveServer]:
    """The default live server logging plain lines of its own (no daphne access log), with metrics."""
    server = live_servers.start(
        {**PROBE_CONFIG, "METRICS_TOKEN": METRICS_TOKEN},
        extra_env={"ASKSERVER_LOG_FORMAT": "plain", "ASKSERVER_METRICS": "1"},
        access_log=False,
    )
    yield server
    live_servers.stop(server)


def bearer(url: str, path: bytes, token: bytes) -> tuple[int | None, bytes]:
    """GET `path` with `Authorization: Bearer <token>`, the token's bytes as sent."""
    head = (
        b"GET " + path + b" HTTP/1.1\r\nHost: " + urlsplit(url).netloc.encode() + b"\r\n"
        b"Authorization: Bearer " + token + b"\r\nConnection: close\r\n\r\n"
    )
    status, _, body = raw_request(url, head)
    return status, body


NON_ASCII_TOKENS = {
    "UTF-8 letters": "métrïcs".encode(),
    "Latin-1 bytes": b"caf\xe9",
    "bytes that are no text": b"\xff\xfe\x80",
}


@pytest.mark.parametrize("token", NON_ASCII_TOKENS.values(), ids=list(NON_ASCII_TOKENS))
def test_metrics_refuse_a_bearer_token_of_any_bytes_with_401(
    logged: LiveServer, token: bytes
) -> None:
    # It was a 500: compare_digest refuses text with non-ASCII characters.
    status, body = bearer(logged.base_url, b"/metrics", token)
    assert status == 401
    assert b'{"error": "/metrics needs \'Authorization: Bearer <METRICS_TOKEN>\'"}' in body
    assert bearer(logged.base_url, b"/metrics", METRICS_TOKEN.encode())[0] == 200


@pytest.mark.parametrize("token", NON_ASCII_TOKENS.values(), ids=list(NON_ASCII_TOKENS))
def test_mcp_refuses_a_bearer_token_of_any_bytes_with_401(
    secured: LiveServer, token: bytes
) -> None:
    head = (
        b"POST /mcp HTTP/1.1\r\nHost: " + urlsplit(secured.base_url).netloc.encode() + b"\r\n"
        b"Authorization: Bearer " + token + b"\r\nContent-Type: application/json\r\n"
        b"Accept: application/json, text/event-stream\r\nContent-Length: 2\r\n"
        b"Connection: close\r\n\r\n{}"
    )
    status, _, _ = raw_request(secured.mcp_url, head)
    assert status == 401


def log_lines_with(server: LiveServer, mark: str, count: int) -> list[str]:
    """The lines of `server`'s log holding `mark`, once there are `count` (bounded: 10 s)."""
    deadline = time.monotonic() + 10
    while True:
        lines = [line for line in server.log().splitlines() if mark in line]
        if len(lines) >= count or time.monotonic() > deadline:
            return lines
        time.sleep(0.05)  # poll interval of the bounded wait (deadline above)


@pytest.mark.parametrize(
    "where, separator",
    [
        ("method", "\n"),
        ("tool", "\n"),
        ("tool", "\r"),
        ("tool", "\u2028"),
        ("tool", "\x1b[2K\r"),  # erase the line on a terminal, then write over it
    ],
    ids=["method LF", "tool LF", "tool CR", "tool U+2028", "tool ANSI erase"],
)
def test_a_name_with_a_line_break_cannot_forge_a_log_line(
    logged: LiveServer, where: str, separator: str
) -> None:
    mark = f"FORGED-{uuid.uuid4().hex[:8]}"
    forged = f"2026-01-01 00:00:00,000 INFO ask_mcp.requests: tools/call user_ask by {mark}: ok"
    if where == "tool":
        body = request_body("tools/call", {"name": f"probe_table{separator}{forged}"})
        headers = headers_for(body)
    else:
        body = request_body("tools/list")
        headers = headers_for(body)
        body["method"] = f"tools/list{separator}{forged}"
    post(logged.mcp_url, body, headers)
    (line,) = log_lines_with(logged, mark, 1)
    assert " INFO ask_mcp.requests: " in line and not line.startswith("2026-01-01")
    shown = {"\n": "\\n", "\r": "\\r", "\u2028": "\\u2028", "\x1b[2K\r": "\\u001b[2K\\r"}
    assert f"{shown[separator]}{forged}" in line
    assert len(line.splitlines()) == 1 and line.isprintable()


# ---------------------------------------------------------------- a client's name on people's channels

FAKE_LINK = "Answer at: http://evil.test/"
"""The line an agent's client name tried to put above the server's own link."""


@pytest.fixture(scope="module")
def reaching(live_servers: LiveServers, mailbox: Mailbox) -> Iterator[LiveServer]:
    """askserver as shipped with mail to the test's SMTP server."""
    server = live_servers.start(REACH_CONFIG, extra_env=mail_env(mailbox))
    yield server
    live_servers.stop(server)


@pytest.mark.asyncio(loop_scope="session")
async def test_a_client_name_with_line_breaks_stays_on_its_line_in_webhook_text_and_mail(
    reaching: LiveServer, mailbox: Mailbox
) -> None:
    crew = Crew(reaching)
    secret = f"whsec_{crew.tag}"
    receiver = Receiver([200], secret=secret)
    reaching.manage(
        "shell",
        "-c",
        "from django.contrib.auth.models import Group; from ask_mcp.models import Webhook;"
        f"Webhook.objects.create(team=Group.objects.get(name={crew.team!r}), "
        f"url={receiver.url!r}, secret={secret!r})",
    )
    message = f"Who is asking? [{crew.tag}]"
    info = {"name": f"helper\n{FAKE_LINK}\r\n\u2028\x1b", "version": f"1\n{FAKE_LINK}" + "9" * 99}
    shown = f"helper {FAKE_LINK}"
    try:
        async with held_call(
            reaching.mcp_url,
            headers={"authorization": f"Bearer {crew.token}"},
            meta={"io.modelcontextprotocol/clientInfo": info},
            message=message,
        ):
            assert await asyncio.to_thread(receiver.wait_for, 1, 20)
            (got,) = receiver.received
            assert got.verified is True
            headline, link_line, *_quoted = got.body["text"].splitlines()
            assert headline == f"{shown} asks (via user_ask)"
            assert link_line.startswith(f"Answer at: {reaching.base_url}/asks/")
            starting = [line for line in got.body["text"].splitlines() if "Answer at" in line[:9]]
            assert starting == [link_line]
            assert got.body["ask"]["client"] == shown
            assert got.body["blocks"][0]["text"]["text"] == f"*{shown} asks (via user_ask)*"

            # The agent is named as the asker: to alice "your agent ...", to the others "... for alice".
            askers = (f"your agent {shown}", f"{shown} for {crew.alice.username}")
            for mail in await mails_for(mailbox, message, 2):
                lines = mail.text.splitlines()
                assert any(f"{asker} asks:" in lines for asker in askers), lines
                assert not [line for line in lines if line.startswith("Answer at")]
                assert any(mail.subject.startswith(f"Question from {a}:") for a in askers)
            stored = shell(
                reaching,
                "import json; from ask_mcp.models import Ask;"
                f"a = Ask.objects.get(message={message!r});"
                "print(json.dumps([a.client_name, a.client_version]))",
            )
            assert stored == [shown, f"1 {FAKE_LINK}" + "9" * 20]  # 50 characters at most
    finally:
        receiver.close()


# ---------------------------------------------------------------- wrong passwords from one address


async def sign_in(
    client: httpx2.AsyncClient, username: str, password: str, path: str = "/accounts/login/"
) -> int:
    """The sign-in form's status for one try: 302 signed in, 200 the form again, 429 locked out."""
    await client.get(path)
    answer = await client.post(
        path,
        data={
            "username": username,
            "password": password,
            "csrfmiddlewaretoken": str(client.cookies["csrftoken"]),
        },
    )
    return answer.status_code


@pytest.mark.asyncio(loop_scope="session")
async def test_wrong_passwords_from_the_same_address_do_not_lock_out_a_browser_that_signed_in_before(
    web: LiveServer, bea: Person
) -> None:
    target = add_user(web, f"owner{uuid.uuid4().hex[:6]}", staff=True)
    async with (
        httpx2.AsyncClient(base_url=web.base_url, timeout=30) as owner,
        httpx2.AsyncClient(base_url=web.base_url, timeout=30) as attacker,
        httpx2.AsyncClient(base_url=web.base_url, timeout=30) as bea_browser,
    ):
        assert await sign_in(owner, target.username, target.password) == 302
        assert owner.cookies.get("askserver_device")
        await owner.post(
            "/accounts/logout/", data={"csrfmiddlewaretoken": owner.cookies["csrftoken"]}
        )
        assert await sign_in(bea_browser, bea.username, bea.password) == 302

        # Another local client (the same 127.0.0.1) guesses until the pair is locked.
        wrong = [await sign_in(attacker, target.username, f"guess-{n}") for n in range(10)]
        assert wrong == [200] * 9 + [429]
        assert await sign_in(attacker, target.username, target.password) == 429
        # A forged device cookie, or one this browser got for someone else, counts for nothing.
        attacker.cookies.set("askserver_device", owner.cookies["askserver_device"][:-2] + "xx")
        assert await sign_in(attacker, target.username, target.password) == 429
        attacker.cookies.set("askserver_device", bea_browser.cookies["askserver_device"])
        assert await sign_in(attacker, target.username, target.password) == 429

        # The browser the owner signed in from before still signs in, inbox and admin alike.
        assert await sign_in(owner, target.username, target.password) == 302
        assert await sign_in(owner, target.username, target.password, "/admin/login/") == 302
        # Its own wrong passwords still lock it, after the same limit.
        mine = [await sign_in(owner, target.username, f"typo-{n}") for n in range(10)]
        assert mine == [200] * 9 + [429]
        assert await sign_in(owner, target.username, target.password) == 429


@pytest.fixture(scope="module")
def proxied(live_servers: LiveServers) -> Iterator[LiveServer]:
    """askserver as shipped, told that loopback is its proxy (ASKSERVER_TRUSTED_PROXIES)."""
    server = live_servers.start(WEB_CONFIG, extra_env={"ASKSERVER_TRUSTED_PROXIES": "127.0.0.1"})
    yield server
    live_servers.stop(server)


@pytest.mark.asyncio(loop_scope="session")
async def test_behind_a_trusted_proxy_the_forwarded_address_is_what_a_lockout_counts(
    proxied: LiveServer, web: LiveServer
) -> None:
    target = add_user(proxied, f"proxied{uuid.uuid4().hex[:6]}", staff=True)
    attacker = {"x-forwarded-for": "203.0.113.9"}
    person = {"x-forwarded-for": "198.51.100.7"}
    async with httpx2.AsyncClient(base_url=proxied.base_url, timeout=30, headers=attacker) as bad:
        wrong = [await sign_in(bad, target.username, f"guess-{n}") for n in range(10)]
        assert wrong == [200] * 9 + [429]
        assert await sign_in(bad, target.username, target.password) == 429
    async with httpx2.AsyncClient(base_url=proxied.base_url, timeout=30, headers=person) as good:
        assert await sign_in(good, target.username, target.password) == 302
    # What a client sends left of the proxy's own entry is not believed: the attacker's address
    # stays locked out whatever it claims to be.
    spoofed = {"x-forwarded-for": "198.51.100.7, 203.0.113.9"}
    async with httpx2.AsyncClient(base_url=proxied.base_url, timeout=30, headers=spoofed) as bad:
        assert await sign_in(bad, target.username, target.password) == 429

    # Without TRUSTED_PROXIES the header counts for nothing: a new address per try evades nothing.
    other = add_user(web, f"direct{uuid.uuid4().hex[:6]}", staff=True)
    async with httpx2.AsyncClient(base_url=web.base_url, timeout=30) as direct:
        tries = []
        for n in range(10):
            direct.headers["x-forwarded-for"] = f"192.0.2.{n}"
            tries.append(await sign_in(direct, other.username, "guess"))
        assert tries == [200] * 9 + [429]
