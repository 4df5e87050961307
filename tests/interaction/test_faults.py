"""Faults: clients that leave at every step, a server killed mid-question, Redis and PostgreSQL away
for a moment, files swapped under the FileSystem's reads, SQLite locked by another writer. No
place in the table leaks, nothing stays pending forever, nothing is read from outside a root,
every error says what happened, and no answer is lost.

Live daphne servers throughout; the multi-worker outages cut a loopback TCP proxy in front of
the machine's Redis and PostgreSQL (tests/support/proxy.py) rather than the services themselves.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import sqlite3
import threading
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import pytest

from ask_mcp.records.recorder import NOT_RECORDED
from ask_mcp.server.errors import with_reason
from ask_mcp.toolkits.ask import CANCELLED_TEXT
from ask_mcp.web.middleware import UNAVAILABLE
from ask_mcp.web.views import NOT_DELIVERED
from ask_mcp.workers.relay import LAYER_DOWN_TEXT
from tests.support import calls
from tests.support.browser import WEB_CONFIG, Person, quickstart_admin
from tests.support.calls import answer_round, by_message, call_body, first_round, probe, rpc
from tests.support.filesystem import client as fs_client
from tests.support.filesystem import filesystem_server
from tests.support.filesystem import text as fs_text
from tests.support.inbox_http import held_call, page_text, signed_in_http
from tests.support.live import LiveServer, LiveServers
from tests.support.names import unique
from tests.support.proxy import HARNESS_SOCKETS, TcpProxy
from tests.support.results import text_of as text
from tests.support.wire import headers_for
from tests.support.workers import shared_workers

ACCEPT = {"action": "accept", "content": {"answer": "x"}}

pytestmark = HARNESS_SOCKETS  # the proxy's own aborted sockets (tests.support.proxy)


def accept(answer: str) -> dict[str, Any]:
    return {"action": "accept", "content": {"answer": answer}}


async def answered_by_client(http: httpx2.AsyncClient, url: str, message: str, answer: str) -> str:
    """user_ask through both MRTR rounds, the client's person answering `answer`; the result."""
    state = await first_round(http, url, "user_ask", message=message)
    return text(await answer_round(http, url, "user_ask", state, accept(answer), message=message))


# ---------------------------------------------------------------- clients that leave


@pytest.fixture(scope="module")
def one_place(live_servers: LiveServers) -> LiveServer:
    """Room for one question: any place a leaving client leaked would refuse the next one."""
    return live_servers.get({**WEB_CONFIG, "ELICITATION_CAPACITY": 1})


Leave = Callable[[httpx2.AsyncClient, str, str], Awaitable[None]]


async def _cut(
    http: httpx2.AsyncClient, url: str, body: dict[str, Any], kind: str, key: str
) -> None:
    """Send `body`, wait until the server reports `kind` for `key`, then close the connection."""
    sending = asyncio.ensure_future(http.post(url, json=body, headers=headers_for(body)))
    reached = await probe(http, url, "wait", kind=kind, key=key)
    assert reached["fired"] is True, reached
    sending.cancel()  # httpx drops the connection of a cancelled request
    with contextlib.suppress(asyncio.CancelledError):
        await sending


async def while_the_body_is_sent(http: httpx2.AsyncClient, url: str, message: str) -> None:
    body = json.dumps(call_body("user_ask", {"message": message})).encode()
    host = url.split("/")[2]
    with socket.create_connection(tuple(host.split(":")), timeout=10) as sock:  # type: ignore[arg-type]
        sock.sendall(
            f"POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n".encode()
            + body[: len(body) // 2]
        )


async def before_it_asks(http: httpx2.AsyncClient, url: str, message: str) -> None:
    await _cut(http, url, call_body("probe_stall", {"key": message}), "stalled", message)
    cancelled = await probe(http, url, "wait", kind="cancelled", key=message)
    assert cancelled["fired"] is True


async def between_rounds(http: httpx2.AsyncClient, url: str, message: str) -> None:
    # Parked with a short timeout; the client never comes back.
    schema = {"type": "object", "properties": {"answer": {"type": "string"}}}
    await first_round(http, url, "probe_form", message=message, schema=schema, timeout=0.3)


async def during_the_retry(http: httpx2.AsyncClient, url: str, message: str) -> None:
    # The answer arrives, the handler runs on (and blocks): the client leaves before its result.
    state = await first_round(http, url, "probe_hang", key=message, message=message)
    body = call_body(
        "probe_hang",
        {"key": message, "message": message},
        state=state,
        responses={"probe_hang": ACCEPT},
    )
    await _cut(http, url, body, "blocked", message)
    cancelled = await probe(http, url, "wait", kind="cancelled", key=message)
    assert cancelled["fired"] is True


async def while_held_as_json(http: httpx2.AsyncClient, url: str, message: str) -> None:
    # No progress token: the response stays JSON until it has something to say.
    count = (await probe(http, url, "count", kind="asked", count=0))["asked"]
    body = call_body("user_ask", {"message": message}, forms=False)
    await _cut(http, url, body, "asked-count", str(count + 1))


async def while_streaming_progress(http: httpx2.AsyncClient, url: str, message: str) -> None:
    async with held_call(url, message=message, http=http):
        pass  # the client closes the stream


@dataclass(frozen=True)
class Step:
    leave: Leave
    status: str | None
    """How the question it left is recorded; None when it never asked one."""


STEPS: dict[str, Step] = {
    "MRTR: while sending the body": Step(while_the_body_is_sent, None),
    "MRTR: before the handler asks": Step(before_it_asks, None),
    "MRTR: between rounds, never retrying": Step(between_rounds, "expired"),
    "MRTR: during the retry, while the handler runs on": Step(during_the_retry, "accepted"),
    # The call ends with its connection; its ask stays answerable (DETACHED_GRACE_SECONDS).
    "held: while the response is still JSON": Step(while_held_as_json, "pending"),
    "held: while streaming progress": Step(while_streaming_progress, "pending"),
}


@pytest.mark.parametrize("step", STEPS.values(), ids=list(STEPS))
async def test_a_client_that_leaves_frees_its_place(one_place: LiveServer, step: Step) -> None:
    url = one_place.mcp_url
    message = unique("Leaving")
    async with asyncio.timeout(60), calls.client() as http:
        before = await probe(http, url, "table")
        assert before["waiting"] == 0
        await step.leave(http, url, message)
        if step.status is not None:  # its question ended by itself, with the client gone
            ended = await probe(http, url, "count", kind="ended", count=len(before["ended"]) + 1)
            assert ended["fired"] is True
        assert (await probe(http, url, "table"))["waiting"] == 0

        # The one place is free: the next question parks, and its answer comes back.
        assert await answered_by_client(http, url, "And now?", "next") == '{"answer":"next"}'
        rows = await calls.records(http, url)
    if step.status is None:
        assert [row for row in rows.values() if row["message"] == message] == []
    else:
        assert by_message(rows, message)["status"] == step.status


# ---------------------------------------------------------------- a server killed mid-question


async def test_a_server_killed_with_questions_waiting_loses_none_of_them(
    live_servers: LiveServers,
) -> None:
    """SIGKILL with a question answered, one parked at the client (MRTR) and one held for the
    inbox; the next server on the same database finishes both waiting calls."""
    config = {**WEB_CONFIG, "INSTRUCTIONS": "to be killed", "DETACHED_GRACE_SECONDS": 600}
    first = live_servers.start(config)
    admin = quickstart_admin(first)
    answered, parked, held = unique("Answered"), unique("Parked"), unique("Held")
    try:
        async with (
            asyncio.timeout(60),
            calls.client() as http,
            signed_in_http(first, admin) as person,
        ):
            async with held_call(first.mcp_url, message=answered, http=http) as call:
                await person.answer(call.ask_id, answer="kept")
                assert text(await call.result()) == '{"answer":"kept"}'
            state = await first_round(http, first.mcp_url, "user_ask", message=parked)
            waiting = held_call(first.mcp_url, message=held, http=http)
            held_ask = (await waiting.__aenter__()).ask_id
            rows = await calls.records(http, first.mcp_url)  # all three written
            assert [by_message(rows, m)["status"] for m in (answered, parked, held)] == [
                "accepted",
                "pending",
                "pending",
            ]
            first.process.kill()  # SIGKILL: nothing gets to record an ending
            first.process.wait(timeout=10)
            with contextlib.suppress(Exception):  # the held call's connection died with it
                await waiting.__aexit__(None, None, None)
    finally:
        live_servers.stop(first)

    second = live_servers.start(config, db=first.db)
    try:
        async with (
            asyncio.timeout(60),
            calls.client() as http,
            signed_in_http(second, admin) as person,
        ):
            assert await probe(http, second.mcp_url, "swept") == {"swept": True}
            after_restart = await calls.records(http, second.mcp_url)
            # The MRTR client retries with its state: finished from the record, not re-run.
            late = await answer_round(
                http, second.mcp_url, "user_ask", state, accept("after the restart"), message=parked
            )
            # The inbox client calls again with the same arguments: it attaches, no second card.
            async with held_call(second.mcp_url, message=held, http=http) as again:
                assert again.ask_id == held_ask
                sent = await person.answer(held_ask, answer="still here")
                assert "Sent: the agent has your reply." in page_text(sent.text)
                result = await again.result()
            rows = await calls.records(http, second.mcp_url)
    finally:
        live_servers.stop(second)
    for message in (parked, held):
        row = by_message(after_restart, message)
        assert row["status"] == "pending", "a crash ends no ask"
    assert text(late) == '{"answer":"after the restart"}' and late["result"]["isError"] is False
    assert text(result) == '{"answer":"still here"}'
    assert len([row for row in rows.values() if row["message"] == held]) == 1
    for message, answer in ((parked, "after the restart"), (held, "still here")):
        row = by_message(rows, message)
        assert (row["status"], row["answer"]) == ("accepted", {"answer": answer})
        assert row["collected_at"] is not None, "the history says it was delivered"
    kept = by_message(rows, answered)
    assert (kept["status"], kept["answer"]) == ("accepted", {"answer": "kept"})


# ---------------------------------------------------------------- Redis and PostgreSQL away


@dataclass
class Pair:
    a: LiveServer
    b: LiveServer
    redis: TcpProxy
    postgres: TcpProxy
    admin: Person


@pytest.fixture(scope="module")
def pair(live_servers: LiveServers) -> Iterator[Pair]:
    """Two workers whose Redis and PostgreSQL are reached through proxies the tests can cut."""
    with shared_workers(live_servers, WEB_CONFIG, prefix="askmcp-faults", cuttable=True) as both:
        yield Pair(both.a, both.b, both.redis, both.postgres, quickstart_admin(both.a))


async def test_with_redis_away_a_retry_for_another_worker_says_so_and_lands_after(
    pair: Pair,
) -> None:
    message = unique("Across, through an outage")
    async with asyncio.timeout(60), calls.client() as http:
        state = await first_round(http, pair.a.mcp_url, "user_ask", message=message)
        retry = call_body(
            "user_ask", {"message": message}, state=state, responses={"user_ask": accept("B")}
        )
        with pair.redis.outage():
            status, first = await rpc(http, pair.b.mcp_url, retry)
        assert status == 200  # -32603 is an answer, not an HTTP failure
        _, again = await rpc(http, pair.b.mcp_url, retry)
    if "error" in first:
        # B could not hand the retry to A: it says so; Redis back, the same retry reaches A.
        assert first["error"] == {"code": -32603, "message": LAYER_DOWN_TEXT}
        assert text(again) == '{"answer":"B"}'
    else:
        # The outage outlasted A's acknowledgement: B finished the call from the ask's record
        # (issue 16), so the same state again is a replay.
        assert text(first) == '{"answer":"B"}'
        assert again["error"]["data"] == {"reason": "used"}


async def test_with_redis_away_an_answer_on_another_worker_is_refused_and_lands_after(
    pair: Pair,
) -> None:
    message = unique("Held on A, answered on B")
    async with (
        asyncio.timeout(60),
        calls.client() as http,
        signed_in_http(pair.b, pair.admin) as person,
    ):
        async with held_call(pair.a.mcp_url, message=message, http=http) as call:
            with pair.redis.outage():
                refused = await person.answer(call.ask_id, answer="during")
            assert refused.status_code == 503
            assert NOT_DELIVERED in page_text(refused.text)
            assert 'name="f:answer" value="during"' in refused.text  # what they typed stays
            row = by_message(await calls.records(http, pair.a.mcp_url), message)
            assert (row["status"], row["answer"]) == ("pending", None)  # nothing half-recorded

            sent = await person.answer(call.ask_id, answer="after")
            assert "Sent: the agent has your reply." in page_text(sent.text)
            assert text(await call.result()) == '{"answer":"after"}'
        row = by_message(await calls.records(http, pair.a.mcp_url), message)
    assert (row["status"], row["answer"]) == ("accepted", {"answer": "after"})


async def test_with_redis_away_an_admin_cancel_on_another_worker_leaves_the_ask_pending(
    pair: Pair,
) -> None:
    message = unique("Held on A, cancelled from B's admin")
    async with (
        asyncio.timeout(60),
        calls.client() as http,
        signed_in_http(pair.b, pair.admin) as admin,
    ):

        async def cancel(ask_id: str, reason: str = "") -> str:
            done = await admin.client.post(
                "/admin/ask_mcp/ask/",
                data={
                    "action": "cancel_asks",
                    "_selected_action": str(uuid.UUID(ask_id)),
                    "csrfmiddlewaretoken": admin.csrf,
                    "confirmed": "yes",  # what the action's confirmation page posts
                    "reason": reason,
                },
                follow_redirects=True,
            )
            assert done.status_code == 200, done.text
            return page_text(done.text)

        async with held_call(pair.a.mcp_url, message=message, http=http) as call:
            with pair.redis.outage():
                refused = await cancel(call.ask_id)
            assert "1 ask(s) were left pending" in refused, refused
            row = by_message(await calls.records(http, pair.a.mcp_url), message)
            assert (row["status"], row["answer"]) == ("pending", None)  # nothing half-recorded

            # The reason crosses from B's admin to A's held call over the channel layer.
            assert "1 ask(s) cancelled." in await cancel(call.ask_id, "B is draining")
            assert text(await call.result()) == with_reason(CANCELLED_TEXT, "B is draining")
        row = by_message(await calls.records(http, pair.a.mcp_url), message)
    assert row["status"] == "cancelled"


async def test_with_postgresql_away_errors_say_so_and_nothing_is_lost(pair: Pair) -> None:
    held, refused_ask, offline = unique("Held"), unique("Browser, no DB"), unique("Client, no DB")
    url = pair.a.mcp_url
    async with (
        asyncio.timeout(60),
        calls.client() as http,
        signed_in_http(pair.a, pair.admin) as person,
    ):
        async with held_call(url, message=held, http=http) as call:
            with pair.postgres.outage():
                page = await person.answer(call.ask_id, answer="during")
                assert page.status_code == 503 and page.text == UNAVAILABLE
                # A question for the inbox needs its row first: refused, in words.
                _, browser = await rpc(
                    http, url, call_body("user_ask", {"message": refused_ask}, forms=False)
                )
                assert browser["result"]["isError"] is True
                assert text(browser) == NOT_RECORDED
                # A question the client shows needs no database: asked and answered meanwhile.
                done = await answered_by_client(http, url, offline, "offline")
                assert done == '{"answer":"offline"}'
            # Back, nothing restarted: the held question takes its answer.
            sent = await person.answer(call.ask_id, answer="after")
            assert "Sent: the agent has your reply." in page_text(sent.text)
            assert text(await call.result()) == '{"answer":"after"}'
        rows = await calls.records(http, url)  # the recorder kept what it could not write
    assert (by_message(rows, offline)["status"], by_message(rows, offline)["answer"]) == (
        "accepted",
        {"answer": "offline"},
    )
    assert (by_message(rows, held)["status"], by_message(rows, held)["answer"]) == (
        "accepted",
        {"answer": "after"},
    )
    # Refused before anyone was shown it, and the model was told: no ask was left to answer.
    assert [row for row in rows.values() if row["message"] == refused_ask] == []


async def test_nul_characters_postgresql_cannot_store_are_recorded_and_lose_nothing(
    pair: Pair,
) -> None:
    # Valid JSON and valid form input, refused by PostgreSQL's text and jsonb: such a row used
    # to sink the recorder's whole batch, and a form answer holding one was a 500.
    asked, shown = unique("Nul\x00 in the question"), unique("Nul in a form answer")
    url = pair.a.mcp_url
    async with (
        asyncio.timeout(60),
        calls.client() as http,
        signed_in_http(pair.a, pair.admin) as person,
    ):
        done = await answered_by_client(http, url, asked, "a\x00b")
        assert done == '{"answer":"a\\u0000b"}'  # the model gets exactly what was sent
        async with held_call(url, message=shown, http=http) as call:
            sent = await person.answer(call.ask_id, answer="c\x00d")
            assert "Sent: the agent has your reply." in page_text(sent.text)
            assert text(await call.result()) == '{"answer":"c\\u0000d"}'
        rows = await calls.records(http, url)
    row = by_message(rows, asked.replace("\x00", "\ufffd"))
    assert (row["status"], row["answer"]) == ("accepted", {"answer": "a\ufffdb"})
    assert by_message(rows, shown)["answer"] == {"answer": "c\ufffdd"}


# ---------------------------------------------------------------- files changing under the FileSystem's reads


READS = 2_000
"""As many reads as issue 20's race ran: 26 of them escaped the root before reads walked descriptors."""
AT_ONCE = 8
"""Reads in flight together: more than the server's 6 worker threads (2 cores), so they overlap."""
LINKS_NEVER_FOLLOWED = (
    "links under the file root are never followed, so give the path of the file or directory "
    "itself."
)


@contextlib.contextmanager
def swapping(swap: Callable[[], None]) -> Iterator[list[int]]:
    """Run `swap` again and again in a thread while the block runs; yields [swaps done]."""
    done = threading.Event()
    swaps = [0]

    def run() -> None:
        while not done.is_set():
            swap()
            swaps[0] += 1

    thread = threading.Thread(target=run, name="swapper", daemon=True)
    thread.start()
    try:
        yield swaps
    finally:
        done.set()
        thread.join(timeout=10)  # one swap is four syscalls: it ends at once
        assert not thread.is_alive()


async def read_many(server: LiveServer, path: str, reads: int) -> Counter[str]:
    """`reads` fs_read calls of `path`, AT_ONCE at a time; how often each answer came."""
    answers: Counter[str] = Counter()
    gate = asyncio.Semaphore(AT_ONCE)
    async with fs_client(server) as client:

        async def one() -> None:
            async with gate:
                result = await client.call_tool("fs_read", {"path": path})
            answers[("error: " if result.is_error else "") + fs_text(result)] += 1

        await asyncio.gather(*(one() for _ in range(reads)))
    return answers


@pytest.fixture(scope="module")
def racing_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("race")
    (base / "root" / "d").mkdir(parents=True)
    (base / "root" / "d" / "f.txt").write_text("inside\n")
    (base / "root" / "p.txt").write_text("plain\n")
    (base / "outside").mkdir()
    (base / "outside" / "f.txt").write_text("SECRET outside the root\n")
    return base / "root"


async def test_a_directory_swapped_for_a_link_out_never_lets_a_read_escape(
    live_servers: LiveServers, racing_root: Path
) -> None:
    server = filesystem_server(live_servers, racing_root)
    real, link, outside = racing_root / "d", racing_root / "d.real", racing_root.parent / "outside"

    def swap() -> None:  # d: the real directory, then a link to outside/, then the directory
        os.rename(real, link)
        os.symlink(outside, real)
        os.unlink(real)
        os.rename(link, real)

    async with asyncio.timeout(300):  # 2,000 calls through daphne took 25 s on 2 shared cores
        with swapping(swap) as swaps:
            answers = await read_many(server, "d/f.txt", READS)
    assert not any("SECRET" in answer for answer in answers)
    through_link = f"error: 'd/f.txt' goes through 'd', a symbolic link; {LINKS_NEVER_FOLLOWED}"
    allowed = {
        "inside\n",
        through_link,
        "error: 'd/f.txt' does not exist under the file root.",  # between the renames
        "error: 'd/f.txt' changed while it was being opened; try again.",  # a link, then not
    }
    assert set(answers) <= allowed, answers
    # The race was run, not dodged: reads found the directory, and found the link in its place.
    assert answers["inside\n"] > 0 and answers[through_link] > 0, answers
    assert swaps[0] > 0 and sum(answers.values()) == READS


async def test_a_file_swapped_for_a_fifo_never_blocks_a_read(
    live_servers: LiveServers, racing_root: Path
) -> None:
    server = filesystem_server(live_servers, racing_root)
    target, fifo, plain = racing_root / "p.txt", racing_root / "fifo.tmp", racing_root / "p.tmp"

    def swap() -> None:  # p.txt: a regular file, then a FIFO, each put in place by one rename
        os.mkfifo(fifo)
        os.rename(fifo, target)
        plain.write_text("plain\n")
        os.rename(plain, target)

    # Bounded: a read that opened the FIFO would wait for a writer forever; this is the failure.
    async with asyncio.timeout(120):
        with swapping(swap) as swaps:
            answers = await read_many(server, "p.txt", READS // 4)
    is_fifo = (
        "error: 'p.txt' is a FIFO (named pipe), not a regular file; read opens regular files "
        "only (never pipes, sockets or devices)."
    )
    assert set(answers) <= {"plain\n", is_fifo}, answers
    assert answers["plain\n"] > 0 and answers[is_fifo] > 0, answers
    assert swaps[0] > 0


# ---------------------------------------------------------------- SQLite locked


@pytest.fixture(scope="module")
def lockable(live_servers: LiveServers) -> Iterator[tuple[LiveServer, Person]]:
    """Its own SQLite server, waiting 2 s for a lock (20 s in production) before giving up."""
    server = live_servers.start(
        {**WEB_CONFIG, "INSTRUCTIONS": "lockable"},
        extra_env={"ASKSERVER_TEST_SQLITE_TIMEOUT": "2"},
    )
    try:
        yield server, quickstart_admin(server)
    finally:
        live_servers.stop(server)


@contextlib.contextmanager
def write_lock(db: Path) -> Iterator[None]:
    """Another connection holds SQLite's write lock inside the block."""
    holder = sqlite3.connect(db, isolation_level=None, timeout=10)
    holder.execute("BEGIN IMMEDIATE")
    try:
        yield
    finally:
        holder.execute("ROLLBACK")
        holder.close()


@contextlib.asynccontextmanager
async def answering(server: LiveServer, person: Person, message: str) -> AsyncIterator[Any]:
    async with (
        calls.client() as http,
        signed_in_http(server, person) as signed,
        held_call(server.mcp_url, message=message, http=http) as call,
    ):
        yield http, signed, call


async def test_an_answer_waits_out_a_brief_write_lock(
    lockable: tuple[LiveServer, Person],
) -> None:
    server, admin = lockable
    assert server.db is not None
    async with (
        asyncio.timeout(60),
        answering(server, admin, unique("Locked?")) as (_, person, call),
    ):
        with write_lock(server.db):
            posting = asyncio.ensure_future(person.answer(call.ask_id, answer="patient"))
            done, _ = await asyncio.wait({posting}, timeout=0.5)
            assert not done  # the answer's UPDATE waits for the lock…
        sent = await posting  # …and completes once it is released
        assert "Sent: the agent has your reply." in page_text(sent.text)
        assert text(await call.result()) == '{"answer":"patient"}'


async def test_a_lock_held_too_long_is_a_clear_error_and_loses_nothing(
    lockable: tuple[LiveServer, Person],
) -> None:
    server, admin = lockable
    assert server.db is not None
    held, meanwhile = unique("Held through a lock"), unique("Asked through a lock")
    url = server.mcp_url
    async with asyncio.timeout(60), answering(server, admin, held) as (http, person, call):
        with write_lock(server.db):
            refused = await person.answer(call.ask_id, answer="too soon")
            assert refused.status_code == 503 and refused.text == UNAVAILABLE
            done = await answered_by_client(http, url, meanwhile, "meanwhile")
            assert done == '{"answer":"meanwhile"}'
        sent = await person.answer(call.ask_id, answer="after the lock")
        assert "Sent: the agent has your reply." in page_text(sent.text)
        assert text(await call.result()) == '{"answer":"after the lock"}'
        rows = await calls.records(http, url)
    assert by_message(rows, meanwhile)["answer"] == {"answer": "meanwhile"}
    assert by_message(rows, held)["answer"] == {"answer": "after the lock"}
