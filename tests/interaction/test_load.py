"""Load: a crowd of questions against a small table, and a crowd of people racing to answer.

More questions at once than the elicitation table holds: exactly `capacity` park, the rest are
refused with the clear error, and each parked one is answered exactly once. Then 200 answers
posted at once through the inbox's real form endpoint, by two signed-in people, for 100 waiting
questions: 100 winners, every call gets its winner's answer, every loser is told who answered.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import uuid
from collections import Counter
from typing import Any

import httpx2
import pytest

from tests.support import calls
from tests.support.browser import WEB_CONFIG, Person, add_user, quickstart_admin
from tests.support.calls import answer_round, call_body, probe, rpc
from tests.support.inbox_http import HeldCall, SignedIn, held_call, page_text, signed_in_http
from tests.support.live import LiveServer, LiveServers
from tests.support.results import text_of as text

CAPACITY = 8
CROWD = 24
ASKS = 100


@pytest.fixture(scope="module")
def small_table(live_servers: LiveServers) -> LiveServer:
    return live_servers.get({**WEB_CONFIG, "ELICITATION_CAPACITY": CAPACITY})


async def test_more_questions_than_the_table_holds(small_table: LiveServer) -> None:
    url = small_table.mcp_url
    run = uuid.uuid4().hex[:8]
    messages = [f"Crowd {index} [{run}]" for index in range(CROWD)]
    async with asyncio.timeout(60), calls.client() as http:
        replies = await asyncio.gather(
            *(rpc(http, url, call_body("user_ask", {"message": m})) for m in messages)
        )
        parked: dict[str, str] = {}
        refused: list[str] = []
        for message, (status, reply) in zip(messages, replies, strict=True):
            assert status == 200, reply
            result = reply["result"]
            if result["resultType"] == "input_required":
                parked[message] = result["requestState"]
            else:
                assert result["isError"] is True
                refused.append(text(reply))
        assert len(parked) == CAPACITY and len(refused) == CROWD - CAPACITY
        assert set(refused) == {
            f"{CAPACITY} questions are already waiting for answers, the most this server holds "
            "at once. Try again after some are answered, or carry on without asking."
        }
        assert (await probe(http, url, "table"))["waiting"] == CAPACITY

        # Every parked question answered twice at once (a double submit): one answer each.
        attempts = [(message, copy) for message in parked for copy in ("first", "second")]
        outcomes = await asyncio.gather(
            *(
                answer_round(
                    http,
                    url,
                    "user_ask",
                    parked[message],
                    {"action": "accept", "content": {"answer": f"{message} / {copy}"}},
                    message=message,
                )
                for message, copy in attempts
            )
        )
        answered: dict[str, list[str]] = {message: [] for message in parked}
        used = 0
        for (message, _), outcome in zip(attempts, outcomes, strict=True):
            if "result" in outcome:
                answered[message].append(json.loads(text(outcome))["answer"])
            else:
                assert outcome["error"]["data"] == {"reason": "used"}, outcome
                used += 1
        assert used == CAPACITY
        assert all(len(each) == 1 and each[0].startswith(m) for m, each in answered.items())
        assert (await probe(http, url, "table"))["waiting"] == 0
        rows = [r for r in (await calls.records(http, url)).values() if f"[{run}]" in r["message"]]
    assert sorted(row["message"] for row in rows) == sorted(parked)  # none lost, none extra
    assert all(
        row["status"] == "accepted" and row["answer"] == {"answer": answered[row["message"]][0]}
        for row in rows
    )


@pytest.fixture(scope="module")
def roomy(live_servers: LiveServers) -> tuple[LiveServer, Person, Person]:
    server = live_servers.get({**WEB_CONFIG, "ELICITATION_CAPACITY": 2 * ASKS})
    return server, quickstart_admin(server), add_user(server, "racer", staff=True)


async def _hold(
    stack: contextlib.AsyncExitStack, url: str, message: str, http: httpx2.AsyncClient
) -> HeldCall:
    return await stack.enter_async_context(held_call(url, message=message, http=http))


async def test_two_hundred_answers_racing_for_a_hundred_questions(
    roomy: tuple[LiveServer, Person, Person],
) -> None:
    server, ana, ben = roomy
    run = uuid.uuid4().hex[:8]
    messages = [f"Race {index} [{run}]" for index in range(ASKS)]
    async with (
        asyncio.timeout(120),
        calls.client() as http,
        signed_in_http(server, ana) as first,
        signed_in_http(server, ben) as second,
        contextlib.AsyncExitStack() as stack,
    ):
        held = await asyncio.gather(*(_hold(stack, server.mcp_url, m, http) for m in messages))
        people: dict[str, SignedIn] = {ana.username: first, ben.username: second}
        posts = [(call, name) for call in held for name in people]
        pages = await asyncio.gather(
            *(people[name].answer(call.ask_id, answer=f"{name} wins") for call, name in posts)
        )
        assert Counter(page.status_code for page in pages) == {200: 2 * ASKS}
        winners: dict[str, str] = {}
        for (call, name), page in zip(posts, pages, strict=True):
            shown = page_text(page.text)
            if "Sent: the agent has your reply." in shown:
                assert call.ask_id not in winners, "answered twice"
                winners[call.ask_id] = name
        assert len(winners) == ASKS  # every question has exactly one winner
        for (call, name), page in zip(posts, pages, strict=True):
            if winners[call.ask_id] != name:  # the other one is told who answered
                shown = page_text(page.text)
                assert f"Your reply was not sent. Answered by {winners[call.ask_id]}" in shown
        results = await asyncio.gather(*(call.result() for call in held))
        for call, result in zip(held, results, strict=True):
            assert text(result) == json.dumps(
                {"answer": f"{winners[call.ask_id]} wins"}, separators=(",", ":")
            )
        rows: dict[str, Any] = await calls.records(http, server.mcp_url)
    for call in held:
        row = rows[call.ask_id]
        assert (row["status"], row["answer"]) == (
            "accepted",
            {"answer": f"{winners[call.ask_id]} wins"},
        )
