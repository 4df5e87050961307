"""Nothing lost: asks outlive their process (SIGKILL, SIGTERM), their connection and the deploy.

Real daphne processes killed for real, restarted on the same port and database (as `make run`
again), the official SDK client with its form on screen across the restart, a person in a real
browser, and two workers on Redis and PostgreSQL where the survivor finishes the dead one's call.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import signal
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest
from mcp import Client
from mcp.client import ClientRequestContext
from mcp.types import (
    ClientCapabilities,
    ElicitationCapability,
    ElicitRequestParams,
    ElicitResult,
    UrlElicitationCapability,
)
from playwright.async_api import Browser, expect

from tests.support import calls
from tests.support.browser import WEB_CONFIG, Person, quickstart_admin, signed_in
from tests.support.clients import CapsClient
from tests.support.inbox_http import held_call, page_text, signed_in_http
from tests.support.live import LiveServer, LiveServers
from tests.support.names import unique
from tests.support.results import text_of
from tests.support.workers import shared_services, started

pytestmark = pytest.mark.asyncio(loop_scope="session")

DURABLE_CONFIG = {**WEB_CONFIG, "DETACHED_GRACE_SECONDS": 600}
"""The shipped grace window (10 minutes) for asks whose call left; WEB_CONFIG shortens it."""
URL_CAPS = ClientCapabilities(elicitation=ElicitationCapability(url=UrlElicitationCapability()))


def port_of(server: LiveServer) -> int:
    port = urlsplit(server.base_url).port
    assert port is not None
    return port


def kill(server: LiveServer) -> None:
    """SIGKILL: nothing in the process gets to record anything."""
    server.process.send_signal(signal.SIGKILL)
    server.process.wait(timeout=10)


@contextlib.contextmanager
def restarted(
    live_servers: LiveServers, server: LiveServer, config: dict[str, Any]
) -> Iterator[LiveServer]:
    """The same server started again on its port and database, as `make run` again."""
    again = live_servers.start(config, db=server.db, port=port_of(server), extra_env=_env(server))
    try:
        yield again
    finally:
        live_servers.stop(again)


def _env(server: LiveServer) -> dict[str, str]:
    keys = ("DATABASE_URL", "ASKSERVER_REDIS_URL", "ASKSERVER_REDIS_PREFIX")
    return {key: server.env[key] for key in keys if key in server.env}


async def rows_of(server: LiveServer) -> dict[str, dict[str, Any]]:
    async with calls.client() as http:
        return await calls.records(http, server.mcp_url)


# ---------------------------------------------------------------- one process, SQLite


async def test_a_form_on_screen_during_a_restart_is_finished_by_the_next_server(
    live_servers: LiveServers,
) -> None:
    """The 2026-07-28 client shows its form, the server is killed and started again, the person
    answers: the client's retry is finished from the ask's record (the handler is not re-run)."""
    first = live_servers.start(DURABLE_CONFIG)
    message = unique("Which colour for the release banner?")
    on_screen, answered = asyncio.Event(), asyncio.Event()

    async def person(ctx: ClientRequestContext, params: ElicitRequestParams) -> ElicitResult:
        on_screen.set()
        await answered.wait()  # the form stays on screen while the server restarts
        return ElicitResult(action="accept", content={"answer": "teal"})

    second: LiveServer | None = None
    try:
        async with (
            asyncio.timeout(120),
            Client(first.mcp_url, mode="2026-07-28", elicitation_callback=person) as client,
        ):
            calling = asyncio.ensure_future(client.call_tool("user_ask", {"message": message}))
            await on_screen.wait()
            kill(first)
            second = live_servers.start(DURABLE_CONFIG, db=first.db, port=port_of(first))
            answered.set()
            result = await calling
        row = calls.by_message(await rows_of(second), message)
    finally:
        live_servers.stop(first)
        if second is not None:
            live_servers.stop(second)
    assert text_of(result) == '{"answer":"teal"}' and result.is_error is False
    assert (row["status"], row["answer"]) == ("accepted", {"answer": "teal"})
    assert "from the record" in row["collected_by"]


@pytest.mark.parametrize(
    "late", [False, True], ids=["answered-after-restart", "retry-after-expiry"]
)
async def test_url_mode_an_answer_on_the_page_reaches_the_retry_after_a_restart(
    live_servers: LiveServers, late: bool
) -> None:
    """URL mode: the person answers on the ask's page (of the restarted server, or before the
    kill); the client's retry to the restarted server gets it, also when it comes after the
    ask's expiry, since the person answered in time."""
    timeout = 12 if late else 90
    config = {
        **DURABLE_CONFIG,
        "ANSWER_URL": "ask_mcp.web.elicit.page_url",
        "TOOLKITS": {**WEB_CONFIG["TOOLKITS"], "Ask": {"timeout": timeout}},
    }
    first = live_servers.start(config)
    admin = quickstart_admin(first)
    message = unique("Which key should the deploy use?")
    servers: list[LiveServer] = [first]
    pages: list[str] = []

    async def person(ctx: ClientRequestContext, params: ElicitRequestParams) -> ElicitResult:
        assert params.mode == "url"
        ask_id = params.url.rstrip("/").rsplit("/", 1)[1]  # type: ignore[union-attr]
        if late:  # answered on the first server, which then dies before the client checks back
            async with signed_in_http(first, admin) as signed:
                pages.append(
                    page_text((await signed.answer(ask_id, answer="the staging key")).text)
                )
        kill(first)
        second = live_servers.start(config, db=first.db, port=port_of(first))
        servers.append(second)
        if not late:
            async with signed_in_http(second, admin) as signed:
                pages.append(
                    page_text((await signed.answer(ask_id, answer="the staging key")).text)
                )
        else:
            expiry = (await rows_of(second))[uuid.UUID(ask_id).hex]["expires_at"]
            # The behaviour under test is the clock passing the ask's expiry before the retry.
            await asyncio.sleep(max(0.0, _seconds_until(expiry)) + 0.5)
        return ElicitResult(action="accept")  # consent: the client checks back for the answer

    try:
        async with (
            asyncio.timeout(150),
            CapsClient(
                first.mcp_url, mode="2026-07-28", elicitation_callback=person, caps=URL_CAPS
            ) as client,
        ):
            result = await client.call_tool("user_ask", {"message": message})
        row = calls.by_message(await rows_of(servers[-1]), message)
    finally:
        for server in servers:
            live_servers.stop(server)
    assert len(pages) == 1 and "Your reply was not sent" not in pages[0], pages
    assert text_of(result) == '{"answer":"the staging key"}'
    assert row["collected_at"] is not None


def _seconds_until(iso: str) -> float:
    return (dt.datetime.fromisoformat(iso) - dt.datetime.now(dt.UTC)).total_seconds()


@pytest.fixture(scope="module")
def durable(live_servers: LiveServers) -> LiveServer:
    return live_servers.get(DURABLE_CONFIG)


@pytest.fixture(scope="module")
def durable_admin(durable: LiveServer) -> Person:
    return quickstart_admin(durable)


async def test_an_answer_given_while_no_agent_waits_is_collected_by_the_next_call(
    durable: LiveServer, durable_admin: Person
) -> None:
    message = unique("Ship on Friday?")
    async with asyncio.timeout(60), calls.client() as http:
        async with held_call(durable.mcp_url, message=message, http=http) as call:
            pass  # the client's connection drops (a proxy timeout, a laptop lid)
        assert (await calls.probe(http, durable.mcp_url, "wait", kind="ended", key=call.ask_id))[
            "fired"
        ]
        async with signed_in_http(durable, durable_admin) as person:
            page = await person.client.get(f"/asks/{uuid.UUID(call.ask_id)}/")
            assert "No agent is waiting right now" in page_text(page.text)
            sent = await person.answer(call.ask_id, answer="yes, after lunch")
            assert "Saved: your reply is kept until the agent collects it" in page_text(sent.text)
            assert "Answered, waiting for the agent to collect it" in page_text(sent.text)
            # The agent asks the same again: it gets the answer at once, from the record.
            status, again = await calls.rpc(
                http,
                durable.mcp_url,
                calls.call_body("user_ask", {"message": message}, forms=False),
            )
            assert status == 200 and text_of(again) == '{"answer":"yes, after lunch"}'
            rows = await calls.records(http, durable.mcp_url)  # the recorder has written it
            shown = await person.client.get(f"/asks/{uuid.UUID(call.ask_id)}/")
    assert "The agent has this answer." in page_text(shown.text)
    assert "delivered" in page_text(shown.text).lower()
    assert len([row for row in rows.values() if row["message"] == message]) == 1
    # Asking again after the answer was delivered is a new question.
    async with (
        asyncio.timeout(60),
        calls.client() as http,
        held_call(durable.mcp_url, message=message, http=http) as fresh,
    ):
        assert fresh.ask_id != call.ask_id


async def test_two_identical_calls_at_once_share_one_ask_and_its_answer(
    durable: LiveServer, durable_admin: Person
) -> None:
    message = unique("Which region?")
    async with (
        asyncio.timeout(60),
        calls.client() as http,
        held_call(durable.mcp_url, message=message, http=http) as one,
        held_call(durable.mcp_url, message=message, http=http) as two,
        signed_in_http(durable, durable_admin) as person,
    ):
        assert one.ask_id == two.ask_id, "no second card"
        sent = await person.answer(one.ask_id, answer="eu-west")
        assert "Sent: the agent has your reply." in page_text(sent.text)
        results = [await one.result(), await two.result()]
        again = await person.answer(one.ask_id, answer="us-east")  # a second, racing answer
    assert [text_of(result) for result in results] == ['{"answer":"eu-west"}'] * 2
    assert "Your reply was not sent." in page_text(again.text)


async def test_an_idempotency_key_attaches_a_call_whose_arguments_changed(
    durable: LiveServer, durable_admin: Person
) -> None:
    key = {"askserver/idempotencyKey": f"deploy-{uuid.uuid4().hex}"}
    async with asyncio.timeout(60), calls.client() as http:
        async with held_call(
            durable.mcp_url, message=unique("Deploy now?"), http=http, meta=key
        ) as first:
            pass
        async with (
            held_call(
                durable.mcp_url, message=unique("Deploy now??"), http=http, meta=key
            ) as again,
            signed_in_http(durable, durable_admin) as person,
        ):
            assert again.ask_id == first.ask_id
            await person.answer(again.ask_id, answer="go")
            assert text_of(await again.result()) == '{"answer":"go"}'
        bad = calls.call_body("user_ask", {"message": "x"}, forms=False)
        bad["params"]["_meta"]["askserver/idempotencyKey"] = 42
        _, refused = await calls.rpc(http, durable.mcp_url, bad)
    assert refused["error"]["code"] == -32602
    assert "askserver/idempotencyKey" in refused["error"]["message"]


async def test_a_person_answering_while_the_server_is_down_is_told_and_keeps_what_they_typed(
    live_servers: LiveServers, browser: Browser
) -> None:
    first = live_servers.start(DURABLE_CONFIG)
    admin = quickstart_admin(first)
    message = unique("What should the changelog say?")
    async with asyncio.timeout(90), calls.client() as http:
        async with held_call(first.mcp_url, message=message, http=http) as call:
            page = await signed_in(browser, first, admin)
            await page.goto(f"/asks/{uuid.UUID(call.ask_id)}/")
            await page.get_by_label("answer").fill("Faster builds; fewer surprises.")
            kill(first)
            await page.get_by_role("button", name="Send answer").click()
            await expect(page.get_by_role("alert")).to_contain_text("could not be reached")
            await expect(page.get_by_label("answer")).to_have_value(
                "Faster builds; fewer surprises."
            )
        with restarted(live_servers, first, DURABLE_CONFIG) as second:
            await page.get_by_role("button", name="Send answer").click()
            await expect(page.get_by_text("Saved: your reply is kept")).to_be_visible()
            _, collected = await calls.rpc(
                http, second.mcp_url, calls.call_body("user_ask", {"message": message}, forms=False)
            )
            await page.context.close()
    live_servers.stop(first)
    assert text_of(collected) == '{"answer":"Faster builds; fewer surprises."}'


async def test_sigterm_leaves_every_ask_pending_and_the_recorder_written(
    live_servers: LiveServers,
) -> None:
    """A deploy's SIGTERM: held streams end (the client can call again), the question just
    parked at the client is on record, nothing is withdrawn, and the next server finishes both."""
    first = live_servers.start(DURABLE_CONFIG)
    parked, held = unique("Parked at the deploy"), unique("Held at the deploy")
    async with asyncio.timeout(90), calls.client() as http:
        waiting = held_call(first.mcp_url, message=held, http=http)
        call = await waiting.__aenter__()
        state = await calls.first_round(http, first.mcp_url, "user_ask", message=parked)
        first.process.send_signal(signal.SIGTERM)  # at once: the recorder has not written it
        with contextlib.suppress(Exception):
            await call.result()  # the stream ends: the client may call again
        assert first.process.wait(timeout=20) is not None
        with contextlib.suppress(Exception):
            await waiting.__aexit__(None, None, None)
        with restarted(live_servers, first, DURABLE_CONFIG) as second:
            rows = await calls.records(http, second.mcp_url)
            finished = await calls.answer_round(
                http,
                second.mcp_url,
                "user_ask",
                state,
                {"action": "accept", "content": {"answer": "after the deploy"}},
                message=parked,
            )
    live_servers.stop(first)
    for message in (parked, held):
        row = calls.by_message(rows, message)
        assert (row["status"], row["worker"]) == ("pending", ""), row
    assert text_of(finished) == '{"answer":"after the deploy"}'
    assert "pending for the next worker" in first.log()


# ---------------------------------------------------------------- two workers, Redis + PostgreSQL


@pytest.fixture(scope="module")
def shared_env(live_servers: LiveServers) -> Iterator[dict[str, str]]:
    """One database and Redis prefix for the module; each test starts its own two workers on it."""
    with shared_services(live_servers) as services:
        yield services.env


@contextlib.asynccontextmanager
async def two_workers(
    live_servers: LiveServers, env: dict[str, str]
) -> AsyncIterator[tuple[LiveServer, ...]]:
    with started(live_servers, DURABLE_CONFIG, env) as both:
        yield both


async def test_the_surviving_worker_finishes_the_dead_ones_inbox_call(
    live_servers: LiveServers, shared_env: dict[str, str]
) -> None:
    message = unique("Roll back the migration?")
    async with two_workers(live_servers, shared_env) as (a, b):
        admin = quickstart_admin(a)
        async with asyncio.timeout(60), calls.client() as http:
            waiting = held_call(a.mcp_url, message=message, http=http)
            call = await waiting.__aenter__()
            kill(a)  # the worker holding the call dies; the proxy sends the client to b
            with contextlib.suppress(Exception):
                await waiting.__aexit__(None, None, None)
            async with (
                held_call(b.mcp_url, message=message, http=http) as again,
                signed_in_http(b, admin) as person,
            ):
                assert again.ask_id == call.ask_id, "the dead worker's ask, not a new one"
                sent = await person.answer(again.ask_id, answer="no, fix forward")
                assert "Sent: the agent has your reply." in page_text(sent.text)
                result = await again.result()
            rows = await calls.records(http, b.mcp_url)
    assert text_of(result) == '{"answer":"no, fix forward"}'
    row = rows[call.ask_id]
    assert (row["status"], row["answer"]) == ("accepted", {"answer": "no, fix forward"})
    assert row["collected_at"] is not None


async def test_an_answer_to_a_dead_workers_ask_is_kept_until_the_retry_on_another(
    live_servers: LiveServers, shared_env: dict[str, str]
) -> None:
    """The 2026-07-28 client-form call parked on a; a dies; an admin cancels the ask meanwhile;
    the client's retry on b gets that decision (cancelled, with the admin's reason, read from
    the record), not its own late answer."""
    message = unique("Delete the old bucket?")
    async with (
        two_workers(live_servers, shared_env) as (a, b),
        asyncio.timeout(60),
        calls.client() as http,
    ):
        state = await calls.first_round(http, a.mcp_url, "user_ask", message=message)
        rows = await calls.records(http, a.mcp_url)
        ask_id = calls.by_message(rows, message)["id"]
        kill(a)
        b.manage(
            "shell",
            "-c",
            "from ask_mcp.models import Ask;"
            "from ask_mcp.records.decisions import ask_cancel;"
            "from ask_mcp import runtime;"
            "from django.contrib.auth.models import AnonymousUser;"
            f"ask = Ask.objects.get(pk={ask_id!r});"
            "print(ask_cancel(ask=ask, user=AnonymousUser(), relay=runtime.relay(),"
            " reason='the bucket still serves the old site'))",
        )
        reply = await calls.answer_round(
            http,
            b.mcp_url,
            "user_ask",
            state,
            {"action": "accept", "content": {"answer": "yes"}},
            message=message,
        )
    assert text_of(reply) == "The user cancelled the request: the bucket still serves the old site."
