"""askserver under uvicorn (`make run SERVER=uvicorn`): the same product as under daphne.

One live uvicorn process serves the default configuration: MRTR calls through the official
client, a held browser-fallback call answered in the inbox, and an initialize-era session. Every
reply is checked against mcp-types by the live servers' ASGI wrapper.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

import pytest
from mcp import Client

from tests.support import calls
from tests.support.browser import WEB_CONFIG, Person, quickstart_admin
from tests.support.clients import QUESTIONS, accept
from tests.support.clients import Person as Answerer
from tests.support.inbox_http import held_call, signed_in_http
from tests.support.live import LiveServer, LiveServers
from tests.support.results import text_of


@pytest.fixture(scope="module")
def uvicorn_server(live_servers: LiveServers) -> Iterator[tuple[LiveServer, Person]]:
    server = live_servers.start(WEB_CONFIG, server="uvicorn")
    try:
        yield server, quickstart_admin(server)
    finally:
        live_servers.stop(server)


async def test_an_mrtr_call_resumes_with_the_answer(
    uvicorn_server: tuple[LiveServer, Person],
) -> None:
    server, _ = uvicorn_server
    person = Answerer(accept(severity=3, component="ui"))
    async with (
        asyncio.timeout(15),
        Client(server.mcp_url, mode="2026-07-28", elicitation_callback=person) as client,
    ):
        result = await client.call_tool("user_ask", QUESTIONS)
    assert text_of(result) == '{"component":"ui","severity":3}'
    assert len(person.seen) == 1
    assert "uvicorn" in server.log().lower()  # it is uvicorn that served it


async def test_a_held_call_resumes_when_the_inbox_answers(
    uvicorn_server: tuple[LiveServer, Person],
) -> None:
    server, admin = uvicorn_server
    async with (
        asyncio.timeout(30),
        signed_in_http(server, admin) as person,
        held_call(server.mcp_url, message="Ship it under uvicorn?") as call,
    ):
        page = await person.answer(call.ask_id, answer="ship")
        assert page.status_code == 200, page.text
        reply = await call.result()
    assert json.loads(reply["result"]["content"][0]["text"]) == {"answer": "ship"}


async def test_an_initialize_era_client_is_served(
    uvicorn_server: tuple[LiveServer, Person],
) -> None:
    server, _ = uvicorn_server
    person = Answerer(accept(answer="yes"))
    async with (
        asyncio.timeout(15),
        Client(server.mcp_url, mode="legacy", elicitation_callback=person) as client,
    ):
        result = await client.call_tool("user_ask", {"message": "Proceed?"})
    assert text_of(result) == '{"answer":"yes"}'


async def test_records_show_every_ask_it_served(uvicorn_server: tuple[LiveServer, Person]) -> None:
    server, _ = uvicorn_server
    async with asyncio.timeout(15), calls.client() as http:
        rows = await calls.records(http, server.mcp_url)
    assert "Ship it under uvicorn?" in {row["message"] for row in rows.values()}
