"""Floods (issue 28, items 7 to 9): one principal's asks for people bounded across workers, its sessions capped, slow bodies cut; on live servers.

An agent with a token asks and disconnects in a loop, alternating two workers on PostgreSQL and
Redis: its pending asks stop at PENDING_ASKS_PER_PRINCIPAL, the rest are refused before they
reach anyone, and staff see the refusals counted (issue 32, item 5). Another asks new questions
faster than NEW_ASKS_PER_MINUTE. Asking the same question again and a form the client shows
itself are never refused.
"""

from __future__ import annotations

import asyncio
import json
import re
import socket
import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest

from tests.support import calls
from tests.support.browser import WEB_CONFIG, add_user
from tests.support.clients import Person, accept, authed
from tests.support.inbox_http import page_text, signed_in_http
from tests.support.live import PROBE_CONFIG, SECURED, LiveServer, LiveServers
from tests.support.results import text_of
from tests.support.shell import shell
from tests.support.tasks import TaskClient
from tests.support.team import issue_tokens
from tests.support.wire import (
    LEGACY_HEADERS,
    assert_valid,
    headers_for,
    legacy_headers,
    post,
    request_body,
)
from tests.support.workers import SharedWorkers, shared_workers

session_loop = pytest.mark.asyncio(loop_scope="session")
"""The live servers' clients share the session's event loop."""

FLOOD: dict[str, Any] = {
    **WEB_CONFIG,
    "ALLOW_ANONYMOUS_LOOPBACK": False,
    "DETACHED_GRACE_SECONDS": 600,
    "PENDING_ASKS_PER_PRINCIPAL": 4,
    "NEW_ASKS_PER_MINUTE": 1000,
}
"""Tokens required; an ask whose call left stays pending (the grace is long), four pending asks
per principal, and no rate to speak of (the pending limit is what this config shows)."""
FAST: dict[str, Any] = {**FLOOD, "PENDING_ASKS_PER_PRINCIPAL": 1000, "NEW_ASKS_PER_MINUTE": 3}
"""Three new asks for people a minute per principal, and no pending limit to speak of."""

_ASK_URL = re.compile(r"/asks/([0-9a-f-]{36})/")


async def ask_and_leave(
    http: httpx2.AsyncClient, url: str, token: str, message: str
) -> tuple[str, str]:
    """user_ask from a client without forms, left as soon as its ask exists (the connection
    drops: a detached ask). ("ask", its id), or ("refused", the tool error's text)."""
    body = request_body(
        "tools/call",
        {"name": "user_ask", "arguments": {"message": message}},
        meta={
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "looper", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {},
            "progressToken": "p",
        },
    )
    headers = {**headers_for(body), "authorization": f"Bearer {token}"}
    lines: list[str] = []
    async with http.stream("POST", url, json=body, headers=headers) as response:
        assert response.status_code == 200, await response.aread()
        async for line in response.aiter_lines():
            if found := _ASK_URL.search(line):
                return "ask", uuid.UUID(found.group(1)).hex  # leaving closes the connection
            lines.append(line)
    data = [line[5:] for line in lines if line.startswith("data:")]
    reply = assert_valid("tools/call", json.loads(data[-1] if data else "".join(lines)))
    result = reply["result"]
    assert result["isError"] is True, result
    return "refused", result["content"][0]["text"]


def asks_of(server: LiveServer, username: str) -> dict[str, str]:
    """Every ask of `username`'s principal, by id: its status."""
    code = (
        "import json; from ask_mcp.models import Ask;"
        f"print(json.dumps({{a.id.hex: a.status for a in Ask.objects.filter("
        f"asked_by__username={username!r})}}))"
    )
    found: dict[str, str] = shell(server, code)
    return found


def refusals_of(server: LiveServer, username: str) -> list[dict[str, Any]]:
    """`username`'s refused-ask rows: limit, count and last message each."""
    code = (
        "import json; from django.contrib.auth.models import User; from ask_mcp.models import "
        "RefusedAsks; from ask_mcp.team.auth import principal_of;"
        f"p = principal_of(User.objects.get(username={username!r}).pk);"
        "print(json.dumps(list(RefusedAsks.objects.filter(principal=p).values("
        "'limit', 'count', 'last_message'))))"
    )
    found: list[dict[str, Any]] = shell(server, code)
    return found


@pytest.fixture(scope="module")
def workers(live_servers: LiveServers) -> Iterator[SharedWorkers]:
    with shared_workers(live_servers, FLOOD) as both:
        yield both


@session_loop
async def test_asking_and_leaving_in_a_loop_on_two_workers_stops_at_the_pending_limit(
    workers: SharedWorkers,
) -> None:
    token = issue_tokens(workers.a, "looper")["looper"]
    tasks = TaskClient(workers.a.mcp_url, token)
    task = await tasks.ask({"message": "Ship it?"})  # a task's ask counts too
    outcomes = []
    async with calls.client() as http, asyncio.timeout(120):
        for n in range(8):  # alternating workers: the limit is the principal's, not a worker's
            server = workers.servers[n % 2]
            outcomes.append(await ask_and_leave(http, server.mcp_url, token, f"Deploy {n}?"))
        kept = [value for kind, value in outcomes if kind == "ask"]
        refused = [value for kind, value in outcomes if kind == "refused"]
        assert len(kept) == 3 and len(refused) == 5, outcomes
        assert "PENDING_ASKS_PER_PRINCIPAL" in refused[0] and "4" in refused[0]
        # The same question again attaches to its ask: never refused, even at the limit.
        assert await ask_and_leave(http, workers.b.mcp_url, token, "Deploy 0?") == ("ask", kept[0])
    # The official client reads the refusal as a tool error naming the limit and its setting.
    async with asyncio.timeout(30), authed(workers.b.mcp_url, token) as client:
        result = await client.call_tool("user_ask", {"message": "One more?"})
    assert result.is_error and "PENDING_ASKS_PER_PRINCIPAL" in text_of(result)
    # A new task is refused as well; reading and answering the task already made never are.
    other = TaskClient(workers.b.mcp_url, token)
    status, reply = await other.rpc(
        "tools/call", {"name": "user_ask", "arguments": {"message": "Another task?"}}
    )
    assert status == 200 and reply["result"]["isError"] is True, reply
    assert "PENDING_ASKS_PER_PRINCIPAL" in reply["result"]["content"][0]["text"]
    read = await other.get(task["taskId"])
    assert read["status"] == "input_required", read
    (key,) = read["inputRequests"]
    await other.update(task["taskId"], {key: {"action": "accept", "content": {"answer": "y"}}})
    # A form its client shows itself notifies nobody: never refused by these limits.
    async with asyncio.timeout(30), authed(workers.a.mcp_url, token, Person(accept(a="y"))) as c:
        shown = await c.call_tool("user_ask", {"message": "In the client?"})
    assert not shown.is_error, text_of(shown)
    # Refused asks got no row (nobody was told of them): only the three kept are waiting.
    pending = {ask for ask, status in asks_of(workers.a, "looper").items() if status == "pending"}
    assert pending == set(kept)
    rows = refusals_of(workers.a, "looper")
    assert sum(row["count"] for row in rows if row["limit"] == "pending") == 7
    assert {row["last_message"] for row in rows} <= {"Deploy 7?", "One more?", "Another task?"}
    # The task's answered ask freed its place: a new question is put to people again.
    async with calls.client() as http, asyncio.timeout(30):
        assert (await ask_and_leave(http, workers.b.mcp_url, token, "Next?"))[0] == "ask"


@session_loop
async def test_asks_at_once_on_two_workers_never_pass_the_pending_limit(
    workers: SharedWorkers,
) -> None:
    token = issue_tokens(workers.a, "racer")["racer"]
    async with calls.client() as http, asyncio.timeout(120):
        outcomes = await asyncio.gather(
            *(
                ask_and_leave(http, workers.servers[n % 2].mcp_url, token, f"Race {n}?")
                for n in range(10)
            )
        )
    # Both workers count in the same record, one new ask of a principal at a time.
    assert [kind for kind, _ in outcomes].count("ask") == 4, outcomes
    pending = [status for status in asks_of(workers.a, "racer").values() if status == "pending"]
    assert len(pending) == 4


@session_loop
async def test_new_asks_past_the_rate_are_refused_and_staff_see_them_counted(
    live_servers: LiveServers,
) -> None:
    server = live_servers.get(FAST)
    token = issue_tokens(server, "hasty")["hasty"]
    async with calls.client() as http, asyncio.timeout(60):
        outcomes = [
            await ask_and_leave(http, server.mcp_url, token, f"Rename table {n}?") for n in range(4)
        ]
    assert [kind for kind, _ in outcomes] == ["ask", "ask", "ask", "refused"], outcomes
    assert "NEW_ASKS_PER_MINUTE" in outcomes[3][1] and "3" in outcomes[3][1]
    async with asyncio.timeout(30), authed(server.mcp_url, token, Person(accept(a="y"))) as client:
        shown = await client.call_tool("user_ask", {"message": "In the client?"})
    assert not shown.is_error, text_of(shown)
    # Questions shown in the client past the table's share (16) are refused, and counted too.
    auth = {"authorization": f"Bearer {token}"}
    async with calls.client() as http, asyncio.timeout(60):
        rounds = await asyncio.gather(
            *(
                calls.rpc(
                    http, server.mcp_url, calls.call_body("user_ask", {"message": f"{n}?"}), auth
                )
                for n in range(20)
            )
        )
    results = [reply["result"] for _, reply in rounds]
    assert sum(1 for result in results if result.get("isError")) == 4
    # The table's refusals are counted off the hot path (the recorder's next batch): poll.
    deadline = time.monotonic() + WAIT
    while (counted := {row["limit"]: row["count"] for row in refusals_of(server, "hasty")}) != {
        "rate": 1,
        "share": 4,
    } and time.monotonic() < deadline:
        pass  # each look is a manage.py run: a second or two
    assert counted == {"rate": 1, "share": 4}
    # Staff read the refusals in the admin (read-only) and on the dashboard.
    staff = add_user(server, f"staff{uuid.uuid4().hex[:6]}", staff=True)
    server.manage(
        "shell",
        "-c",
        "from django.contrib.auth.models import User;"
        f"User.objects.filter(username={staff.username!r}).update(is_superuser=True)",
    )
    async with signed_in_http(server, staff) as signed:
        listing = await signed.client.get("/admin/ask_mcp/refusedasks/")
        assert listing.status_code == 200
        text = page_text(listing.text)
        assert "Rename table 3?" in text and "new asks a minute (NEW_ASKS_PER_MINUTE)" in text
        assert (await signed.client.get("/admin/ask_mcp/refusedasks/add/")).status_code == 403
        board = await signed.client.get("/admin/ask_mcp/ask/dashboard/")
        assert board.status_code == 200
        shown_board = page_text(board.text)
        assert "Refused by a limit" in shown_board and "Rename table 3?" in shown_board
        assert "share of the table (ELICITATION_PER_PRINCIPAL)" in shown_board


# ---------------------------------------------------------------- initialize-era sessions

SESSIONS: dict[str, Any] = {
    **PROBE_CONFIG,
    "ALLOW_ANONYMOUS_LOOPBACK": False,
    "SESSIONS_PER_PRINCIPAL": 3,
}
"""Tokens required, three initialize-era sessions per principal."""
DECLARED = {
    "elicitation": {"form": {"extra": "x" * 1000}},
    "roots": {"listChanged": True},
    "experimental": {f"k{n:04d}": [n] * 10 for n in range(150)},
}
"""What a client declares: about 10 KB of JSON, nearly all of it nothing the server reads."""


def open_session(server: LiveServer, token: str) -> str:
    body = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": DECLARED,
            "clientInfo": {"name": "opener", "version": "1", "padding": "p" * 2000},
        },
    }
    response = post(server.mcp_url, body, {**LEGACY_HEADERS, "authorization": f"Bearer {token}"})
    assert response.status_code == 200, response.text
    return response.headers["mcp-session-id"]


@session_loop
async def test_one_token_holds_at_most_its_sessions_each_keeping_only_what_the_server_reads(
    live_servers: LiveServers,
) -> None:
    server = live_servers.get(SESSIONS)
    token = issue_tokens(server, "opener")["opener"]
    opened = [open_session(server, token) for _ in range(5)]
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    auth = {"authorization": f"Bearer {token}"}
    statuses = [
        post(server.mcp_url, ping, {**legacy_headers(each), **auth}).status_code for each in opened
    ]
    assert statuses == [404, 404, 200, 200, 200]  # the idle longest went first
    code = (
        "import json; from ask_mcp.models import LegacySessionRecord as R;"
        "print(json.dumps(list(R.objects.filter(principal__startswith='user:').values("
        "'id', 'capabilities', 'client_info'))))"
    )
    rows = shell(server, code)
    assert {row["id"] for row in rows} == set(opened[2:])
    assert all(
        row["capabilities"] == {"elicitation": {"form": {}}, "roots": {}, "experimental": {}}
        and row["client_info"] == {"name": "opener", "version": "1"}
        for row in rows
    )
    # The official client, on the initialize era with the same token, still asks and is answered.
    async with (
        asyncio.timeout(30),
        authed(server.mcp_url, token, Person(accept(answer="yes")), mode="legacy") as client,
    ):
        result = await client.call_tool("user_ask", {"message": "Still here?"})
    assert not result.is_error and json.loads(text_of(result)) == {"answer": "yes"}


# ---------------------------------------------------------------- slow bodies

SLOW: dict[str, Any] = {
    **SECURED,
    "BODY_TIMEOUT_SECONDS": 2.0,
    "BODY_MIN_BYTES_PER_SECOND": 1000,
    "MAX_CONNECTIONS_PER_ADDRESS": 8,
}
"""A body gets 2 s, then must average 1,000 bytes a second; eight connections per address."""
SLOW_HEAD = (
    "POST /accounts/login/ HTTP/1.1\r\nHost: {host}\r\n"
    "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 200\r\n\r\n"
)
"""Complete headers of a 200-byte form post: Django reads a body whole before any view runs.
The Host names the server's own port: another port is refused (421) before any body is read."""
WAIT = 15.0
"""The longest one read waits."""


def slow_sender(server: LiveServer) -> socket.socket:
    host, port = server.base_url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=WAIT)
    sock.sendall(SLOW_HEAD.format(host=f"{host}:{port}").encode() + b"u")
    return sock


def trickle_until_answered(sock: socket.socket, pause: float) -> bytes:
    """One body byte per `pause` seconds (each bounded wait for an answer paces the next), for
    at most WAIT seconds; everything the server answered."""
    sock.settimeout(pause)
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        try:
            answer = sock.recv(65536)
        except TimeoutError:
            sock.sendall(b"u")
            continue
        sock.settimeout(WAIT)
        while chunk := sock.recv(65536):
            answer += chunk
        return answer
    raise AssertionError(f"still reading a body trickled for {WAIT} s")


def served(server: LiveServer) -> int:
    return httpx2.get(server.base_url + "/health/live", timeout=WAIT).status_code


@pytest.mark.parametrize("kind", ["daphne", "uvicorn"])
def test_a_body_trickled_one_byte_at_a_time_is_cut_and_others_are_served(
    live_servers: LiveServers, kind: str
) -> None:
    server = (
        live_servers.get(SLOW) if kind == "daphne" else live_servers.start(SLOW, server="uvicorn")
    )
    try:
        started = time.monotonic()
        slow = [slow_sender(server) for _ in range(8)]  # every place of the address (daphne)
        try:
            # Another local client (nginx, a person's browser) is served meanwhile: under daphne
            # the connection sending its request longest makes room, told why.
            assert served(server) == 200
            if kind == "daphne":
                first = slow.pop(0)
                first.settimeout(WAIT)
                cut = first.recv(65536)
                assert cut.startswith(b"HTTP/1.1 408") and b"MAX_CONNECTIONS_PER_ADDRESS" in cut
                first.close()
            answer = trickle_until_answered(slow[0], 0.5)
        finally:
            for sock in slow:
                sock.close()
        took = time.monotonic() - started
        assert answer.split(b" ", 2)[1] == b"408", answer
        assert answer.partition(b"\r\n\r\n")[2] == (
            b"Request Timeout: the request's body did not arrive within 2 s plus 1 s per 1000 "
            b"bytes sent (ASK_MCP['BODY_TIMEOUT_SECONDS'], ASK_MCP['BODY_MIN_BYTES_PER_SECOND'])\n"
        )
        assert took < WAIT, took  # a bound, not a speed: without a deadline it never ends
        assert served(server) == 200
    finally:
        if kind == "uvicorn":
            live_servers.stop(server)
