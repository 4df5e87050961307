"""Waits of hours: user_ask as a task of the MCP Tasks extension, over raw HTTP on a live server.

A declaring client gets a task handle; tasks/get shows the form as the task's input request;
tasks/update or a person in the inbox answers it (whichever first) and the task completes with
user_ask's own text; tasks/cancel withdraws the ask. Unknown and other principals' ids read the
same. A restart between two tasks/get calls loses nothing. Every message is checked against the
extension's shapes (tests/support/tasks.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from playwright.async_api import expect

from ask_mcp.server.errors import TIMED_OUT_TEXT
from ask_mcp.web.cards import TASK_POLLING
from tests.support.browser import WEB_CONFIG, OpenAs, Person, card, live_inbox, quickstart_admin
from tests.support.inbox_http import page_text, signed_in_http
from tests.support.live import LiveServer, LiveServers
from tests.support.names import unique
from tests.support.shell import shell
from tests.support.tasks import EXTENSION, INBOX_CAPS, TaskClient
from tests.support.wire import assert_valid
from tests.support.workers import shared_workers

pytestmark = pytest.mark.asyncio(loop_scope="session")

SHORT_TASKS = {**WEB_CONFIG, "TASK_TTL": 1, "TASK_LIMIT": 2}
"""Tasks whose asks expire after a second (the sweeper runs every 0.5 s), two open at most."""


def ask_of(server: LiveServer, task_id: str) -> dict[str, Any]:
    """The task's ask row: its id and status."""
    return dict(
        shell(
            server,
            "import json; from ask_mcp.models import Ask, Task;"
            f"t = Task.objects.get(pk={task_id!r}); a = Ask.objects.get(pk=t.ask_id);"
            "print(json.dumps({'id': a.id.hex, 'status': a.status}))",
        )
    )


@pytest.fixture(scope="module")
def server(web: LiveServer) -> LiveServer:
    """The shipped configuration's server; `admin` (tests/conftest.py) is its quickstart account."""
    return web


@pytest.fixture(scope="module")
def alice_token(server: LiveServer) -> str:
    token: str = shell(
        server,
        "import json; from django.contrib.auth.models import User;"
        "from ask_mcp.team.auth import issue_token;"
        "print(json.dumps(issue_token(User.objects.get_or_create(username='alice')[0],"
        " name='tasks')[1]))",
    )
    return token


async def test_discover_advertises_the_extension_and_tasks_methods_need_it_per_request(
    server: LiveServer,
) -> None:
    client = TaskClient(server.mcp_url)
    _, found = await client.rpc("server/discover", {})
    assert_valid("server/discover", found)
    assert found["result"]["capabilities"]["extensions"] == {EXTENSION: {}}
    assert "tasks" not in found["result"]["capabilities"]
    for method in ("tasks/get", "tasks/update", "tasks/cancel"):
        status, refused = await client.rpc(method, {"taskId": "no-such-task"}, caps={"x": {}})
        assert status == 400 and refused["error"]["code"] == -32021, refused
        assert refused["error"]["data"]["requiredCapabilities"] == {"extensions": {EXTENSION: {}}}
    # Without the declaration on this request, user_ask is the ordinary call.
    status, plain = await client.rpc(
        "tools/call", {"name": "user_ask", "arguments": {"questions": "bad"}}, caps={}
    )
    assert status == 200 and plain["result"]["isError"] is True, plain


async def test_the_client_answers_the_form_a_bad_answer_is_asked_again_under_a_new_key(
    server: LiveServer,
) -> None:
    client = TaskClient(server.mcp_url)
    async with asyncio.timeout(30):
        handle = await client.ask({"message": unique("Which region?")})
        assert handle["status"] == "input_required"
        task = await client.get(handle["taskId"])
        (key,) = task["inputRequests"]
        schema = task["inputRequests"][key]["params"]["requestedSchema"]
        assert schema["required"] == ["answer"]
        await client.update(handle["taskId"], {key: {"action": "accept", "content": {}}})
        again = await client.get(handle["taskId"])
        assert again["status"] == "input_required"
        (second,) = again["inputRequests"]
        assert second != key, "a re-ask must use a key never used before"
        assert "could not be used" in again["inputRequests"][second]["params"]["message"]
        # The stale key is ignored; an unknown key too, whatever it carries.
        await client.update(
            handle["taskId"],
            {key: {"action": "accept", "content": {"answer": "stale"}}, "x": {"ignored": True}},
        )
        assert (await client.get(handle["taskId"]))["status"] == "input_required"
        answer = {"action": "accept", "content": {"answer": "eu-west"}}
        await client.update(handle["taskId"], {second: answer})
        done = await client.get(handle["taskId"])
    assert done["status"] == "completed"
    assert done["result"]["content"][0]["text"] == '{"answer":"eu-west"}'
    assert done["result"]["isError"] is False
    assert ask_of(server, handle["taskId"])["status"] == "accepted"
    # Terminal is final: later updates and cancels are acknowledged and change nothing.
    await client.update(handle["taskId"], {second: {"action": "decline"}})
    await client.cancel(handle["taskId"])
    assert (await client.get(handle["taskId"]))["result"] == done["result"]


@pytest.mark.parametrize(
    ("action", "text"),
    [("decline", "The user declined to answer."), ("cancel", "The user cancelled the request.")],
)
async def test_a_decline_or_a_dismissed_form_completes_with_user_asks_text(
    server: LiveServer, action: str, text: str
) -> None:
    client = TaskClient(server.mcp_url)
    async with asyncio.timeout(30):
        handle = await client.ask({"message": unique("Proceed?")})
        (key,) = (await client.get(handle["taskId"]))["inputRequests"]
        await client.update(handle["taskId"], {key: {"action": action}})
        done = await client.get(handle["taskId"])
    assert done["status"] == "completed"
    assert done["result"]["content"][0]["text"] == text


async def test_tasks_cancel_ends_the_task_and_withdraws_its_ask(server: LiveServer) -> None:
    client = TaskClient(server.mcp_url)
    async with asyncio.timeout(30):
        handle = await client.ask({"message": unique("Rotate the keys?")})
        await client.cancel(handle["taskId"])
        done = await client.get(handle["taskId"])
        assert done["status"] == "cancelled"
        # The withdrawal lands with the recorder's next batch (25 ms); the row is read from
        # another process's database, with no event to wait on: polled, bounded at 10 s.
        for _ in range(100):
            if ask_of(server, handle["taskId"])["status"] == "withdrawn":
                break
            await asyncio.sleep(0.1)
    assert ask_of(server, handle["taskId"])["status"] == "withdrawn"


async def test_unknown_ids_and_another_principals_task_read_as_not_found(
    server: LiveServer, alice_token: str
) -> None:
    alice, anonymous = TaskClient(server.mcp_url, alice_token), TaskClient(server.mcp_url)
    async with asyncio.timeout(30):
        handle = await alice.ask({"message": unique("Alice's question")})
        task_id = handle["taskId"]
        for client, target in ((anonymous, task_id), (alice, "an-unknown-task-id")):
            for method, extra in (
                ("tasks/get", {}),
                ("tasks/update", {"inputResponses": {"user_ask": {"action": "decline"}}}),
                ("tasks/cancel", {}),
            ):
                status, refused = await client.rpc(method, {"taskId": target, **extra})
                assert status == 400 and refused["error"]["code"] == -32602, refused
                assert "Task not found" in refused["error"]["message"]
        # Nothing changed: alice's task still waits for her answer.
        assert (await alice.get(task_id))["status"] == "input_required"


async def test_a_person_answering_in_the_inbox_completes_the_task(
    server: LiveServer, admin: Person
) -> None:
    client = TaskClient(server.mcp_url)
    async with asyncio.timeout(60):
        message = unique("Ship on Friday?")
        handle = await client.ask({"message": message}, caps=INBOX_CAPS)
        waiting = await client.get(handle["taskId"], caps=INBOX_CAPS)
        assert waiting["status"] == "working" and "inbox" in waiting["statusMessage"]
        ask = ask_of(server, handle["taskId"])
        async with signed_in_http(server, admin) as person:
            # Searched for: the inbox draws the 20 that expire soonest, and this module's server
            # may hold more than 20 waiting asks by now (a task's expires last).
            page = await person.client.get("/", params={"q": message})
            assert message in page_text(page.text)
            assert TASK_POLLING in page_text(page.text)
            sent = await person.answer(ask["id"], answer="yes, after lunch")
            assert sent.status_code == 200, sent.text
        done = await client.get(handle["taskId"], caps=INBOX_CAPS)
    assert done["status"] == "completed"
    assert done["result"]["content"][0]["text"] == '{"answer":"yes, after lunch"}'


async def test_a_tasks_question_is_pushed_to_an_open_inbox_and_leaves_it_when_cancelled(
    server: LiveServer, admin: Person, open_as: OpenAs
) -> None:
    page = await open_as(admin)
    await live_inbox(page)
    message = unique("Run the migration tonight?")
    client = TaskClient(server.mcp_url)
    async with asyncio.timeout(60):
        handle = await client.ask({"message": message}, caps=INBOX_CAPS)
        shown = card(page, message)
        await expect(shown).to_be_visible()  # pushed over the socket: the page was never reloaded
        await expect(shown).to_contain_text("waits until")
        # No call holds a task's ask, and none needs to: the card says the agent checks back.
        await expect(shown).to_contain_text(TASK_POLLING)
        await expect(shown).not_to_contain_text("No agent is waiting")
        await client.cancel(handle["taskId"])
        await expect(shown).to_have_count(0)


async def test_the_inbox_and_the_client_race_and_the_first_answer_wins(
    server: LiveServer, admin: Person
) -> None:
    client = TaskClient(server.mcp_url)
    async with asyncio.timeout(60):
        handle = await client.ask({"message": unique("Which colour?")})
        (key,) = (await client.get(handle["taskId"]))["inputRequests"]
        async with signed_in_http(server, admin) as person:
            await person.answer(ask_of(server, handle["taskId"])["id"], answer="blue")
        # The client's answer comes second: the person's is the one the task completes with.
        await client.update(
            handle["taskId"], {key: {"action": "accept", "content": {"answer": "red"}}}
        )
        done = await client.get(handle["taskId"])
    assert done["status"] == "completed"
    assert done["result"]["content"][0]["text"] == '{"answer":"blue"}'


@pytest.mark.parametrize("verb", ["cancel", "expire"])
async def test_an_admins_cancel_or_expire_completes_the_task_with_their_reason(
    server: LiveServer, admin: Person, verb: str
) -> None:
    client = TaskClient(server.mcp_url)
    async with asyncio.timeout(60):
        handle = await client.ask({"message": unique(f"Purge the CDN ({verb})?")})
        ask = ask_of(server, handle["taskId"])
        async with signed_in_http(server, admin) as staff:
            # The row's confirmation page posts this (tests/browser/test_admin.py drives it).
            done = await staff.client.post(
                f"/admin/ask_mcp/ask/{uuid.UUID(ask['id'])}/{verb}/",
                data={"csrfmiddlewaretoken": staff.csrf, "reason": "the CDN is being replaced"},
                follow_redirects=True,
            )
            assert f"1 ask(s) {verb}" in page_text(done.text), page_text(done.text)
        task = await client.get(handle["taskId"])  # validated against the extension's shapes
    assert task["status"] == "completed"
    text = task["result"]["content"][0]["text"]
    if verb == "cancel":
        assert text == "The user cancelled the request: the CDN is being replaced."
    else:
        rest = TIMED_OUT_TEXT.partition(". ")[2]
        assert text == f"The user did not answer in time: the CDN is being replaced. {rest}"
    assert task["result"].get("isError") is not True


@contextlib.contextmanager
def restarted(live_servers: LiveServers, server: LiveServer) -> Iterator[LiveServer]:
    again = live_servers.start(server.config, db=server.db)
    try:
        yield again
    finally:
        live_servers.stop(again)


async def test_a_restart_between_two_reads_loses_nothing(live_servers: LiveServers) -> None:
    first = live_servers.start(WEB_CONFIG)
    try:
        client = TaskClient(first.mcp_url)
        async with asyncio.timeout(60):
            handle = await client.ask({"message": unique("Still there?")})
            before = await client.get(handle["taskId"])
        first.process.send_signal(signal.SIGKILL)
        first.process.wait(timeout=10)
    finally:
        live_servers.stop(first)
    with restarted(live_servers, first) as second:
        second.warm()
        client = TaskClient(second.mcp_url)
        async with asyncio.timeout(60):
            after = await client.get(handle["taskId"])
            assert after["status"] == "input_required"
            assert after["inputRequests"] == before["inputRequests"]
            (key,) = after["inputRequests"]
            answer = {"action": "accept", "content": {"answer": "yes"}}
            await client.update(handle["taskId"], {key: answer})
            done = await client.get(handle["taskId"])
    assert done["status"] == "completed"
    assert done["result"]["content"][0]["text"] == '{"answer":"yes"}'


async def test_an_ask_that_expires_completes_its_task_with_the_timeout_text(
    live_servers: LiveServers,
) -> None:
    server = live_servers.get(SHORT_TASKS)
    client = TaskClient(server.mcp_url)
    async with asyncio.timeout(30):
        handle = await client.ask({"message": unique("Anyone there?")})
        assert handle["ttlMs"] == (1 + 86_400) * 1000, "the ask's TTL plus the retention"
        task = await client.get(handle["taskId"])
        # What is tested is the clock passing the ask's expiry (1 s); tasks/get is how a client
        # learns of it (it polls by design), bounded by the 30 s timeout above.
        while task["status"] != "completed":
            await asyncio.sleep(0.2)
            task = await client.get(handle["taskId"])
    assert task["result"]["content"][0]["text"] == TIMED_OUT_TEXT
    assert ask_of(server, handle["taskId"])["status"] == "expired"


async def test_one_principal_may_hold_only_task_limit_open_tasks(
    live_servers: LiveServers,
) -> None:
    server = live_servers.get({**SHORT_TASKS, "TASK_TTL": 600})
    client = TaskClient(server.mcp_url)
    async with asyncio.timeout(30):
        first = await client.ask({"message": unique("One?")})
        await client.ask({"message": unique("Two?")})
        status, refused = await client.rpc(
            "tools/call", {"name": "user_ask", "arguments": {"message": unique("Three?")}}
        )
        assert status == 200 and refused["result"]["isError"] is True, refused
        assert "TASK_LIMIT" in refused["result"]["content"][0]["text"]
        await client.cancel(first["taskId"])  # an ended task frees its place
        await client.ask({"message": unique("Three, again?")})


@contextlib.asynccontextmanager
async def two_workers(live_servers: LiveServers) -> AsyncIterator[tuple[LiveServer, ...]]:
    """Two workers on a database and Redis prefix of their own, for one test."""
    with shared_workers(live_servers, WEB_CONFIG) as both:
        yield both.servers


async def test_a_task_made_on_one_worker_is_read_and_answered_on_the_other(
    live_servers: LiveServers,
) -> None:
    async with two_workers(live_servers) as (a, b):
        on_a, on_b = TaskClient(a.mcp_url), TaskClient(b.mcp_url)
        async with asyncio.timeout(60):
            handle = await on_a.ask({"message": unique("Which worker?")})
            seen = await on_b.get(handle["taskId"])  # at once: the handle left after the commit
            assert seen["status"] == "input_required"
            (key,) = seen["inputRequests"]
            answer = {"action": "accept", "content": {"answer": "either"}}
            await on_b.update(handle["taskId"], {key: answer})
            done = await on_a.get(handle["taskId"])
            assert done["status"] == "completed"
            assert done["result"]["content"][0]["text"] == '{"answer":"either"}'
            # And one a person answers in the inbox, read on the other worker.
            other = await on_a.ask({"message": unique("Inbox on B?")}, caps=INBOX_CAPS)
            admin = quickstart_admin(b)
            async with signed_in_http(b, admin) as person:
                await person.answer(ask_of(b, other["taskId"])["id"], answer="from B")
            finished = await on_a.get(other["taskId"], caps=INBOX_CAPS)
    assert finished["status"] == "completed"
    assert finished["result"]["content"][0]["text"] == '{"answer":"from B"}'


CUT_CONNECTIONS = (
    "import json; from django.db import connection; cursor = connection.cursor();"
    "cursor.execute('SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
    " WHERE datname = current_database() AND pid <> pg_backend_pid()');"
    "print(json.dumps(cursor.fetchone()[0]))"
)
"""PostgreSQL closing every other connection to the database, as a restart or an idle timeout
does; prints how many it closed."""


async def test_tasks_get_survives_postgresql_closing_the_task_stores_connection(
    live_servers: LiveServers,
) -> None:
    # The task store keeps its connection from call to call (a new one per call was about a
    # third of a tasks/get's CPU); a connection the database closed must fail no call.
    async with two_workers(live_servers) as (a, _):
        client = TaskClient(a.mcp_url)
        async with asyncio.timeout(60):
            handle = await client.ask({"message": unique("Still there?")})
            assert (await client.get(handle["taskId"]))["status"] == "input_required"
            assert shell(a, CUT_CONNECTIONS) >= 1, "the workers held no connection to close"
            seen = await client.get(handle["taskId"])
            again = await client.get(handle["taskId"])
    assert seen["status"] == again["status"] == "input_required"
    assert seen["inputRequests"] == again["inputRequests"]


async def test_tasks_update_racing_tasks_cancel_decides_the_task_and_its_ask_together(
    server: LiveServer,
) -> None:
    """Each try sends the answer and the cancel at once: whichever wins, the task and its ask
    say the same (answered and accepted, or cancelled and withdrawn), never a task cancelled
    beside an ask recorded accepted and delivered to nobody (on main: 15 races in 15)."""
    client = TaskClient(server.mcp_url)
    ended: dict[str, dict[str, Any]] = {}
    answer = {"action": "accept", "content": {"answer": "yes"}}
    async with asyncio.timeout(120):
        for _ in range(15):
            handle = await client.ask({"message": unique("Roll back the deploy?")})
            task_id = handle["taskId"]
            (key,) = (await client.get(task_id))["inputRequests"]
            await asyncio.gather(client.update(task_id, {key: answer}), client.cancel(task_id))
            ended[task_id] = await client.get(task_id)
    # Both were acknowledged, so the decision is written: each ask read once, in one query.
    asks: dict[str, str] = shell(
        server,
        "import json; from ask_mcp.models import Ask, Task;"
        f"ids = {list(ended)!r};"
        "print(json.dumps({t.id: Ask.objects.get(pk=t.ask_id).status"
        " for t in Task.objects.filter(pk__in=ids)}))",
    )
    for task_id, done in ended.items():
        if done["status"] == "cancelled":
            assert asks[task_id] == "withdrawn", (done, asks[task_id])
        else:
            assert done["status"] == "completed", done
            if asks[task_id] == "accepted":
                assert done["result"]["content"][0]["text"] == '{"answer":"yes"}', done
            else:
                assert asks[task_id] == "withdrawn", (done, asks[task_id])
