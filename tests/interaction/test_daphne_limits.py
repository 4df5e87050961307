"""daphne as `make run` ships it, attacked over real sockets: huge bodies, slow headers, many connections.

Every case talks to a real daphne process on loopback (askserver's ASGI application, which
installs ask_mcp.transports.guard) with hand-written bytes, and reads the server's memory and
open files from /proc. Tokens are required, so without the guard each of these bodies would
be read whole before its 401.
"""

from __future__ import annotations

import json
import os
import re
import select
import selectors
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.support.live import ROOT, SECURED, LiveServer, LiveServers

LIMIT = 1024 * 1024
"""MAX_BODY_BYTES's default."""
HUGE = 300 * 1024 * 1024
"""The issue's unauthenticated POST."""
GUARDED = {**SECURED, "HEADER_TIMEOUT_SECONDS": 2.0, "MAX_CONNECTIONS_PER_ADDRESS": 64}
"""Tokens required; a short header deadline and a small cap, so each case runs in seconds."""
WAIT = 15.0
"""The longest any single read of these tests waits."""
MCP_HEAD = (
    "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    "Accept: application/json, text/event-stream\r\n"
)
MEASURES = ROOT / "test-output" / "daphne-limits-measures.json"


@pytest.fixture(scope="module")
def guarded(live_servers: LiveServers) -> LiveServer:
    return live_servers.get(GUARDED)


def address(server: LiveServer) -> tuple[str, int]:
    parts = urlsplit(server.base_url)
    assert parts.hostname is not None and parts.port is not None
    return parts.hostname, parts.port


def connect(server: LiveServer, source: str = "127.0.0.1") -> socket.socket:
    sock = socket.create_connection(address(server), timeout=WAIT, source_address=(source, 0))
    return sock


def login_request(server: LiveServer) -> bytes:
    """A person's GET of the sign-in page, its Host naming the server's own port (another port is
    refused with 421, so a link could never be built from it)."""
    host, port = address(server)
    return f"GET /accounts/login/ HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\n\r\n".encode()


def read_answer(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection."""
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    return data


def status_of(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1])


def body_of(answer: bytes) -> bytes:
    return answer.partition(b"\r\n\r\n")[2]


def rss_mb(server: LiveServer) -> float:
    status = Path(f"/proc/{server.process.pid}/status").read_text()
    (kilobytes,) = re.findall(r"^VmRSS:\s+(\d+) kB", status, re.MULTILINE)
    return int(kilobytes) / 1024


def open_files(server: LiveServer) -> int:
    return len(os.listdir(f"/proc/{server.process.pid}/fd"))


def record(what: str, **numbers: Any) -> None:
    MEASURES.parent.mkdir(exist_ok=True)
    known = json.loads(MEASURES.read_text()) if MEASURES.exists() else {}
    known[what] = numbers
    MEASURES.write_text(json.dumps(known, indent=2))


def send_body(sock: socket.socket, size: int, *, chunked: bool) -> int:
    """Send up to `size` body bytes, stopping once the server has answered (as a client that
    reads while it writes does); returns how many were sent."""
    piece = b"a" * (256 << 10)
    sent = 0
    sock.settimeout(WAIT)
    while sent < size:
        if select.select([sock], [], [], 0)[0]:
            break  # answered: the rest would be discarded
        data = b"%x\r\n%s\r\n" % (len(piece), piece) if chunked else piece
        try:
            sock.sendall(data)
        except (BrokenPipeError, ConnectionResetError):
            break
        sent += len(piece)
    if chunked and sent >= size:
        sock.sendall(b"0\r\n\r\n")
    return sent


TOO_LARGE = {
    "jsonrpc": "2.0",
    "error": {
        "code": -32600,
        "message": f"Payload Too Large: the body exceeds {LIMIT} bytes (ASK_MCP['MAX_BODY_BYTES'])",
    },
}


def test_a_declared_300_mb_body_is_refused_before_one_byte_of_it_is_read(
    guarded: LiveServer,
) -> None:
    with connect(guarded) as sock:
        sock.sendall(f"{MCP_HEAD}Content-Length: {HUGE}\r\n\r\n".encode())
        answer = read_answer(sock)  # no body was sent: the answer comes on the headers alone
    assert status_of(answer) == 413
    assert json.loads(body_of(answer)) == TOO_LARGE


def test_a_300_mb_post_is_answered_at_once_and_memory_stays_flat(guarded: LiveServer) -> None:
    before = rss_mb(guarded)
    started = time.monotonic()
    with connect(guarded) as sock:
        sock.sendall(f"{MCP_HEAD}Content-Length: {HUGE}\r\n\r\n".encode())
        sent = send_body(sock, HUGE, chunked=False)
        answer = read_answer(sock)
    after = rss_mb(guarded)
    record(
        "a 300 MB POST with Content-Length",
        rss_before_mb=round(before, 1),
        rss_after_mb=round(after, 1),
        sent_mb=sent >> 20,
        seconds=round(time.monotonic() - started, 2),
        status=status_of(answer),
    )
    assert status_of(answer) == 413
    assert after - before < 20, f"{before:.0f} MB -> {after:.0f} MB"


def test_a_chunked_body_is_cut_at_the_limit(guarded: LiveServer) -> None:
    before = rss_mb(guarded)
    with connect(guarded) as sock:
        sock.sendall(f"{MCP_HEAD}Transfer-Encoding: chunked\r\n\r\n".encode())
        sent = send_body(sock, HUGE, chunked=True)
        answer = read_answer(sock)
    after = rss_mb(guarded)
    record(
        "a 300 MB chunked POST",
        rss_before_mb=round(before, 1),
        rss_after_mb=round(after, 1),
        sent_mb=sent >> 20,
        status=status_of(answer),
    )
    assert status_of(answer) == 413 and json.loads(body_of(answer)) == TOO_LARGE
    assert sent < 8 * LIMIT  # cut at the limit (plus what the socket buffers held)
    assert after - before < 20, f"{before:.0f} MB -> {after:.0f} MB"


def test_a_page_body_over_django_s_limit_is_refused_at_the_headers(guarded: LiveServer) -> None:
    with connect(guarded) as sock:
        sock.sendall(b"POST /accounts/login/ HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        sock.sendall(b"Content-Length: %d\r\n\r\n" % (3 * LIMIT))
        answer = read_answer(sock)
    assert status_of(answer) == 413
    assert body_of(answer) == (
        b"Payload Too Large: the body exceeds 2621440 bytes (DATA_UPLOAD_MAX_MEMORY_SIZE)\n"
    )


def test_headers_that_do_not_complete_in_time_are_dropped(guarded: LiveServer) -> None:
    started = time.monotonic()
    with connect(guarded) as sock:
        sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        # A slowloris: one header byte at a time, for as long as the server listens. Each
        # bounded wait for an answer paces the next byte.
        sock.settimeout(0.2)
        answer = b""
        for byte in b"X-Slow: " + b"a" * 200:
            try:
                answer = sock.recv(65536)
            except TimeoutError:
                sock.sendall(bytes([byte]))
                continue
            break
        sock.settimeout(WAIT)
        answer += read_answer(sock)
    took = time.monotonic() - started
    assert status_of(answer) == 408
    assert body_of(answer) == (
        b"Request Timeout: the request's headers did not arrive within 2 s "
        b"(ASK_MCP['HEADER_TIMEOUT_SECONDS'])\n"
    )
    assert 2.0 <= took < 2.0 + 5, took


def closed(server: LiveServer, base_files: int) -> None:
    """Wait (at most WAIT) until the server has seen the test's connections close."""
    deadline = time.monotonic() + WAIT
    while open_files(server) > base_files + 10 and time.monotonic() < deadline:
        pass  # reading /proc: the server closes them as fast as its loop turns


def idle(server: LiveServer, count: int, source: str = "127.0.0.1") -> Iterator[socket.socket]:
    for _ in range(count):
        yield connect(server, source)


def test_connections_per_address_are_capped_and_loopback_counts_as_one(
    guarded: LiveServer,
) -> None:
    base_files = open_files(guarded)
    held = list(idle(guarded, 64))
    try:
        # The address's 64 places are taken by unfinished requests: each connection below, from
        # whichever loopback address, takes the place of the one unfinished longest (cut with
        # 408), and is served.
        answers = []
        for source in ("127.0.0.1", "127.0.0.2", "127.9.9.9"):
            with connect(guarded, source) as extra:
                extra.sendall(login_request(guarded))
                answers.append(read_answer(extra))
        cut = [read_answer(sock) for sock in held[:3]]
        files_held = open_files(guarded)
    finally:
        for sock in held:
            sock.close()
    assert {status_of(answer) for answer in answers} == {200}
    assert {status_of(answer) for answer in cut} == {408}
    assert body_of(cut[0]) == (
        b"Request Timeout: this connection was still sending its request when another from the "
        b"same address needed its place (64 open, ASK_MCP['MAX_CONNECTIONS_PER_ADDRESS'])\n"
    )
    assert files_held - base_files <= 64 + 10  # still 64 at most
    closed(guarded, base_files)


def test_a_thousand_unfinished_requests_neither_exhaust_files_nor_lock_people_out(
    live_servers: LiveServers,
) -> None:
    # As shipped: the default cap (512) and deadline (20 s); the thousand connections.
    server = live_servers.get(SECURED)
    base_files = open_files(server)
    sockets = []
    cut = 0
    try:
        for _ in range(1000):
            sock = connect(server)
            sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # and never more
            sockets.append(sock)
        # Each one past the cap takes the place of the one unfinished longest, cut at once with
        # 408; the 512 newest are held until their deadline (20 s).
        waiting = selectors.DefaultSelector()
        for sock in sockets:
            waiting.register(sock, selectors.EVENT_READ)
        deadline = time.monotonic() + WAIT
        while cut < 1000 - 512 and (left := deadline - time.monotonic()) > 0:
            for key, _ in waiting.select(timeout=left):
                waiting.unregister(key.fileobj)
                if key.fileobj.recv(12).startswith(b"HTTP/1.1 408"):  # type: ignore[union-attr]
                    cut += 1
        files = open_files(server)
        record("1,000 unfinished requests", cut=cut, open_files=files, before=base_files)
        with connect(server) as sock:  # a person's request is served while they are held
            sock.sendall(login_request(server))
            assert status_of(read_answer(sock)) == 200
    finally:
        for sock in sockets:
            sock.close()
    assert cut == 1000 - 512
    assert files - base_files <= 512 + 10  # the held ones, and the database files a request opens
    closed(server, base_files)
