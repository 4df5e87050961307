"""Two daphne workers sharing Redis and PostgreSQL: every way a request can land on the other one.

Skipped with a reason when Redis or PostgreSQL is not running (ASKSERVER_REQUIRE_SERVICES=1, set by
CI, turns the skip into a failure).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from mcp import Client, MCPError
from mcp.types import CallToolResult, InputRequiredResult
from playwright.async_api import expect

from tests.support.browser import (
    WEB_CONFIG,
    add_user,
    card,
    live_inbox,
    open_card,
    signed_in,
)
from tests.support.clients import Person, Rounds, accept
from tests.support.live import LiveServers
from tests.support.results import text_of
from tests.support.wire import (
    LEGACY_HEADERS,
    http,
    legacy_headers,
    post,
    sse,
)
from tests.support.workers import SharedWorkers as Pair
from tests.support.workers import shared_workers


@pytest.fixture(scope="module")
def workers(live_servers: LiveServers) -> Iterator[Pair]:
    with shared_workers(live_servers, WEB_CONFIG) as both:
        yield both


async def probe(url: str, name: str, **arguments: Any) -> Any:
    async with asyncio.timeout(15), Client(url, mode="2026-07-28") as client:
        result = await client.call_tool(f"probe_{name}", arguments)
    return json.loads(text_of(result))


async def test_a_retry_on_worker_b_resumes_the_handler_parked_on_worker_a(workers: Pair) -> None:
    arguments = {"key": "across"}
    async with asyncio.timeout(30):
        async with Client(
            workers.a.mcp_url, mode="2026-07-28", elicitation_callback=Person(accept(answer="x"))
        ) as on_a:
            first = await Rounds(on_a).first("probe_twice", arguments)
        async with Client(
            workers.b.mcp_url, mode="2026-07-28", elicitation_callback=Person(accept(answer="x"))
        ) as on_b:
            rounds = Rounds(on_b)
            second = await rounds.retry(
                "probe_twice", arguments, first.request_state, {"probe_twice": accept(answer="one")}
            )
            assert isinstance(second, InputRequiredResult)
            final = await rounds.retry(
                "probe_twice",
                arguments,
                second.request_state,
                {"probe_twice": accept(answer="two")},
            )
    assert isinstance(final, CallToolResult)
    outcome = json.loads(text_of(final))
    assert outcome["starts"] == 1
    assert outcome["first"]["content"] == {"answer": "one"}
    assert outcome["second"]["content"] == {"answer": "two"}
    assert await probe(workers.a.mcp_url, "starts", key="across") == 1  # ran on A…
    assert await probe(workers.b.mcp_url, "starts", key="across") == 0  # …and never on B


def test_a_legacy_response_posted_to_worker_b_reaches_the_stream_on_worker_a(workers: Pair) -> None:
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {"elicitation": {}},
            "clientInfo": {"name": "two-workers", "version": "1"},
        },
    }
    session = post(workers.a.mcp_url, init, LEGACY_HEADERS).headers["mcp-session-id"]
    headers = legacy_headers(session)
    call = {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "tools/call",
        "params": {"name": "user_ask", "arguments": {"message": "Which worker answers?"}},
    }
    with http().stream("POST", workers.a.mcp_url, json=call, headers=headers) as response:
        messages = sse(response)
        pushed = next(messages)
        answer = {
            "jsonrpc": "2.0",
            "id": pushed["id"],
            "result": {"action": "accept", "content": {"answer": "B"}},
        }
        assert post(workers.b.mcp_url, answer, headers).status_code == 202
        final = next(messages)
    assert final["result"]["content"][0]["text"] == '{"answer":"B"}'


def test_a_legacy_session_opened_on_a_is_served_by_b(workers: Pair) -> None:
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }
    session = post(workers.a.mcp_url, init, LEGACY_HEADERS).headers["mcp-session-id"]
    tools = post(
        workers.b.mcp_url,
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        legacy_headers(session, "2025-06-18"),
    )
    assert tools.status_code == 200 and tools.json()["result"]["tools"]
    assert (
        http().delete(workers.b.mcp_url, headers=legacy_headers(session, "2025-06-18")).status_code
        == 204
    )
    ping = post(
        workers.a.mcp_url,
        {"jsonrpc": "2.0", "id": 2, "method": "ping"},
        legacy_headers(session, "2025-06-18"),
    )
    assert ping.status_code == 404


async def test_when_the_worker_holding_a_call_dies_another_finishes_it_from_the_record(
    live_servers: LiveServers,
    workers: Pair,
) -> None:
    doomed = live_servers.start(WEB_CONFIG, extra_env=workers.env)
    arguments = {"message": "Will you still be there?"}
    async with asyncio.timeout(30):
        async with Client(
            doomed.mcp_url, mode="2026-07-28", elicitation_callback=Person(accept(answer="x"))
        ) as client:
            first = await Rounds(client).first("user_ask", arguments)
        doomed.process.send_signal(signal.SIGKILL)
        doomed.process.wait(timeout=10)
        async with Client(
            workers.b.mcp_url, mode="2026-07-28", elicitation_callback=Person(accept(answer="x"))
        ) as client:
            late = await Rounds(client).retry(
                "user_ask", arguments, first.request_state, {"user_ask": accept(answer="too late")}
            )
    assert isinstance(late, CallToolResult) and late.is_error is False
    assert text_of(late) == '{"answer":"too late"}', "user_ask's result needs no parked handler"
    # The same state again is a replay: the ask was decided and collected once.
    async with asyncio.timeout(30), Client(workers.b.mcp_url, mode="2026-07-28") as client:
        with pytest.raises(MCPError) as replay:
            await Rounds(client).retry(
                "user_ask", arguments, first.request_state, {"user_ask": accept(answer="again")}
            )
    assert "already used" in str(replay.value)


@pytest.fixture(scope="module")
def staff_on_b(workers: Pair) -> Any:
    return add_user(workers.b, f"staff{uuid.uuid4().hex[:6]}", staff=True)


@pytest.mark.asyncio(loop_scope="session")  # the browser fixture lives in the session's loop
async def test_the_inbox_on_b_shows_an_ask_made_on_a_and_answering_there_resumes_the_call_on_a(
    workers: Pair, staff_on_b: Any, browser: Any
) -> None:
    page = await signed_in(browser, workers.b, staff_on_b)
    try:
        await live_inbox(page)
        message = f"Asked on A, answered on B [{uuid.uuid4().hex[:8]}]"
        call = asyncio.create_task(_ask_without_forms(workers.a.mcp_url, message))
        shown = await open_card(page, message)  # pushed live by B, though A recorded it
        await shown.get_by_label("answer").fill("from B")
        await shown.get_by_role("button", name="Send answer").click()
        async with asyncio.timeout(20):
            result = await call
        assert text_of(result) == '{"answer":"from B"}'
    finally:
        await page.context.close()


@pytest.mark.asyncio(loop_scope="session")
async def test_the_ask_of_a_worker_that_died_is_expired_by_another_worker(
    live_servers: LiveServers, workers: Pair, staff_on_b: Any, browser: Any
) -> None:
    doomed = live_servers.start({**WEB_CONFIG, "ELICITATION_TTL": 2}, extra_env=workers.env)
    page = await signed_in(browser, workers.b, staff_on_b)
    try:
        await live_inbox(page)
        message = f"Held by a worker about to die [{uuid.uuid4().hex[:8]}]"
        call = asyncio.create_task(_ask_without_forms(doomed.mcp_url, message))
        shown = card(page, message)
        await expect(shown).to_be_visible()
        ask_hex = await shown.get_attribute("data-ask")
        doomed.process.send_signal(signal.SIGKILL)
        doomed.process.wait(timeout=10)
        with contextlib.suppress(Exception):
            await call  # the client lost its server
        # B's sweeper expires the ask once its expiry has passed; its inbox drops it live.
        await expect(shown).to_have_count(0, timeout=30_000)
        status = (
            workers.b.manage(
                "shell",
                "-c",
                f"from ask_mcp.models import Ask; print(Ask.objects.get(pk={ask_hex!r}).status)",
            )
            .strip()
            .splitlines()[-1]
        )
        assert status == "expired"
    finally:
        await page.context.close()


async def _ask_without_forms(url: str, message: str) -> Any:
    async with asyncio.timeout(60), Client(url, mode="2026-07-28") as client:
        return await client.call_tool("user_ask", {"message": message})


async def test_an_admin_on_b_expires_a_call_parked_on_a_and_the_retry_on_b_reads_why(
    workers: Pair,
) -> None:
    """The expire crosses to A over Redis with its reason; the retry on B is forwarded to A, which
    says the call was expired (not "used"), and B finishes it from the record with the reason."""
    from tests.support import calls
    from tests.support.browser import Person as Staff
    from tests.support.inbox_http import page_text, signed_in_http

    name, password = f"root{uuid.uuid4().hex[:6]}", "pw-root-0123456789"
    workers.b.manage(
        "shell",
        "-c",
        "from django.contrib.auth.models import User;"
        f"User.objects.create_superuser({name!r}, password={password!r})",
    )
    message = f"Reindex tonight? [{uuid.uuid4().hex[:8]}]"
    async with asyncio.timeout(60), calls.client() as client:
        state = await calls.first_round(client, workers.a.mcp_url, "user_ask", message=message)
        ask_id = calls.by_message(await calls.records(client, workers.a.mcp_url), message)["id"]
        async with signed_in_http(workers.b, Staff(name, password)) as staff:
            done = await staff.client.post(
                f"/admin/ask_mcp/ask/{uuid.UUID(ask_id)}/expire/",
                data={"csrfmiddlewaretoken": staff.csrf, "reason": "the index moved to B"},
                follow_redirects=True,
            )
            assert "1 ask(s) expired." in page_text(done.text), page_text(done.text)
        reply = await calls.answer_round(
            client,
            workers.b.mcp_url,
            "user_ask",
            state,
            {"action": "accept", "content": {"answer": "yes"}},
            message=message,
        )
    assert text_of(reply).startswith(
        "The user did not answer in time: the index moved to B. Carry on"
    )
    assert reply["result"].get("isError") is not True
