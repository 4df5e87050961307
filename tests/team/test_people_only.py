"""Asks go to people only: a token whose every ask a person answers in the inbox, in every era; the client's own answers are refused.

A live server as askserver ships, the official client declaring form elicitation (it would
answer its own question if offered), a real browser answering the card, and the raw tasks
client. Each test shows both halves: the client's form is never offered (its callback sees
nothing), and the person's answer is the one the call returns; the card, the ask's page and
its history say which route answered.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client import ClientRequestContext
from mcp.client.streamable_http import streamable_http_client
from mcp.types import (
    ClientCapabilities,
    ElicitationCapability,
    ElicitRequestParams,
    ElicitResult,
    UrlElicitationCapability,
)
from playwright.async_api import Page, expect

from ask_mcp.server.eras.modern import PEOPLE_ONLY_REFUSAL, PEOPLE_ONLY_STATE
from ask_mcp.server.eras.tasks import PEOPLE_WAIT
from ask_mcp.server.errors import PEOPLE_ONLY_TEXT
from ask_mcp.toolkits.ask import DECLINED_TEXT
from ask_mcp.web.naming import PEOPLE_ONLY_ROUTE
from tests.support.browser import (
    WEB_CONFIG,
    OpenAs,
    Person,
    add_user,
    card,
    live_inbox,
    open_card,
    quickstart_admin,
)
from tests.support.calls import call_body, client, rpc
from tests.support.clients import CapsClient, accept
from tests.support.clients import Person as ClientPerson
from tests.support.clients import authed as sdk_client
from tests.support.conformance import TOOLKIT as CONFORMANCE
from tests.support.inbox_http import held_call, signed_in_http
from tests.support.live import LiveServer, LiveServers
from tests.support.names import unique
from tests.support.results import text_of
from tests.support.shell import shell
from tests.support.tasks import TASK_CAPS, TaskClient
from tests.support.wire import FORM_CAPS, assert_valid

pytestmark = pytest.mark.asyncio(loop_scope="session")  # the browser lives in the session's loop


def ask_row(server: LiveServer, message: str) -> dict[str, Any]:
    """The one ask with `message`: its id, route, people-only mark, status and answerer."""
    row: dict[str, Any] = shell(
        server,
        "import json; from ask_mcp.models import Ask;"
        f"a = Ask.objects.select_related('answered_by').get(message={message!r});"
        "print(json.dumps({'id': a.id.hex, 'route': a.route, 'people_only': a.people_only,"
        " 'status': a.status, 'answered_by': a.answered_by.username if a.answered_by else None}))",
    )
    return row


class Holder:
    """A person with two tokens: one whose asks go to people only, and an ordinary one."""

    def __init__(self, web: LiveServer) -> None:
        self.person = add_user(web, f"pat{uuid.uuid4().hex[:6]}", staff=False)
        name = self.person.username
        self.people_only = web.manage(
            "createtoken", name, "--name", "approvals", "--people-only"
        ).strip()
        self.plain = web.manage("createtoken", name, "--name", "chat").strip()


@pytest.fixture
def holder(web: LiveServer) -> Holder:
    return Holder(web)


async def answer_card(page: Page, message: str, answer: str) -> None:
    """Answer the ask's card in the inbox, checking first that it says it is people-only."""
    shown = await open_card(page, message)
    await expect(shown.locator(".route.people-only")).to_have_text(PEOPLE_ONLY_ROUTE)
    await shown.get_by_label("answer").fill(answer)
    await shown.get_by_role("button", name="Send answer").click()


async def assert_history_says_inbox(page: Page, ask_id: str, username: str) -> None:
    """The ask's own page: answered by the person, in the inbox, and so says its history."""
    await page.goto(f"/asks/{uuid.UUID(ask_id)}/")
    await expect(page.locator(".decided")).to_contain_text(f"Answered by {username} in the inbox")
    answered = page.locator(".history li", has_text=f"Answered by {username}")
    await expect(answered).to_contain_text("(in the inbox)")


@pytest.mark.parametrize("mode", ["2026-07-28", "legacy"])
async def test_a_people_only_token_s_client_that_shows_forms_is_never_asked_a_person_answers(
    web: LiveServer, holder: Holder, open_as: OpenAs, mode: str
) -> None:
    # The client would accept on its own ("approved") if it were offered the form.
    itself = ClientPerson(accept(answer="approved by the agent"))
    page = await open_as(holder.person)
    await live_inbox(page)
    message = unique(f"Deploy to production? ({mode})")

    async def ask() -> str:
        async with (
            asyncio.timeout(60),
            sdk_client(web.mcp_url, holder.people_only, itself, mode) as sdk,
        ):
            return text_of(await sdk.call_tool("user_ask", {"message": message}))

    call = asyncio.create_task(ask())
    await expect(card(page, message)).to_be_visible()
    await answer_card(page, message, "yes, after the freeze")
    async with asyncio.timeout(30):
        assert await call == '{"answer":"yes, after the freeze"}'
    assert itself.seen == []  # neither an MRTR input request nor an elicitation/create reached it

    row = ask_row(web, message)
    assert (row["route"], row["people_only"], row["status"], row["answered_by"]) == (
        "browser",
        True,
        "accepted",
        holder.person.username,
    )
    await assert_history_says_inbox(page, row["id"], holder.person.username)


async def test_the_same_person_s_ordinary_token_is_answered_by_its_client_and_the_history_says_so(
    web: LiveServer, holder: Holder, open_as: OpenAs
) -> None:
    itself = ClientPerson(accept(answer="from the form"))
    message = unique("Which branch?")
    async with asyncio.timeout(60), sdk_client(web.mcp_url, holder.plain, itself) as sdk:
        assert text_of(await sdk.call_tool("user_ask", {"message": message})) == (
            '{"answer":"from the form"}'
        )
    assert [seen["message"] for seen in itself.seen] == [message]
    row = ask_row(web, message)
    assert (row["route"], row["people_only"], row["answered_by"]) == ("client", False, None)
    page = await open_as(holder.person)
    await page.goto(f"/asks/{uuid.UUID(row['id'])}/")
    await expect(page.locator(".decided")).to_contain_text("in the client's own form")
    await expect(page.locator(".history li", has_text="Answered by")).to_contain_text(
        "(in the client's own form)"
    )


async def test_answers_sent_up_front_with_a_people_only_call_are_refused(
    web: LiveServer, holder: Holder
) -> None:
    message = unique("Approve the refund?")
    forged = {"user_ask": {"action": "accept", "content": {"answer": "approved"}}}
    async with client() as http:
        status, reply = await rpc(
            http,
            web.mcp_url,
            call_body("user_ask", {"message": message}, responses=forged),
            headers={"authorization": f"Bearer {holder.people_only}"},
        )
    assert status == 400, reply
    assert reply["error"] == {
        "code": -32602,
        "message": PEOPLE_ONLY_REFUSAL,
        "data": {"reason": "people_only"},
    }
    assert PEOPLE_ONLY_TEXT in reply["error"]["message"]
    no_ask = shell(
        web,
        f"from ask_mcp.models import Ask; print(Ask.objects.filter(message={message!r}).count())",
    )
    assert no_ask == 0  # refused before anything was asked


async def test_a_people_only_token_cannot_answer_a_round_another_token_was_offered(
    web: LiveServer, holder: Holder
) -> None:
    # The ordinary token's call parks on the client's form; the people-only token (the same
    # person, so the state's principal matches) retries it with an answer: refused, and the
    # round is still the ordinary token's to answer.
    message = unique("Merge it?")
    plain = {"authorization": f"Bearer {holder.plain}"}
    approvals = {"authorization": f"Bearer {holder.people_only}"}
    arguments = {"message": message}
    answer = {"user_ask": {"action": "accept", "content": {"answer": "merged"}}}
    async with client() as http, asyncio.timeout(60):
        status, first = await rpc(http, web.mcp_url, call_body("user_ask", arguments), plain)
        assert status == 200 and first["result"]["resultType"] == "input_required", first
        state = first["result"]["requestState"]
        retry = call_body("user_ask", arguments, state=state, responses=answer)
        status, refused = await rpc(http, web.mcp_url, retry, approvals)
        assert status == 400, refused
        assert refused["error"] == {
            "code": -32602,
            "message": PEOPLE_ONLY_STATE,
            "data": {"reason": "people_only"},
        }
        status, done = await rpc(http, web.mcp_url, retry, plain)
    assert status == 200 and done["result"]["content"][0]["text"] == '{"answer":"merged"}', done


async def test_a_people_only_task_offers_no_input_request_refuses_updates_and_a_person_answers(
    web: LiveServer, holder: Holder
) -> None:
    tasks = TaskClient(web.mcp_url, holder.people_only)
    message = unique("Rotate the keys tonight?")
    async with asyncio.timeout(60):
        handle = await tasks.ask({"message": message}, caps=TASK_CAPS)  # it shows forms
        waiting = await tasks.get(handle["taskId"])
        assert waiting["status"] == "working" and waiting["statusMessage"] == PEOPLE_WAIT
        assert "inputRequests" not in waiting

        forged = {"user_ask": {"action": "accept", "content": {"answer": "rotated"}}}
        status, refused = await tasks.rpc(
            "tasks/update", {"taskId": handle["taskId"], "inputResponses": forged}
        )
        assert status == 400, refused
        assert_valid("tasks/update", refused)
        assert refused["error"] == {
            "code": -32602,
            "message": f"Invalid params: tasks/update refused for task {handle['taskId']!r}: "
            f"{PEOPLE_ONLY_TEXT}. Poll tasks/get; a person answers it in the inbox",
            "data": {"reason": "people_only"},
        }
        assert (await tasks.get(handle["taskId"]))["status"] == "working"

        row = ask_row(web, message)
        assert (row["route"], row["people_only"], row["status"]) == ("browser", True, "pending")
        async with signed_in_http(web, holder.person) as person:
            sent = await person.answer(row["id"], answer="not tonight")
            assert sent.status_code == 200, sent.text
        done = await tasks.get(handle["taskId"])
    assert done["status"] == "completed"
    assert done["result"]["content"][0]["text"] == '{"answer":"not tonight"}'
    assert ask_row(web, message)["answered_by"] == holder.person.username


async def test_the_admin_sets_a_token_people_only_and_its_next_ask_goes_to_the_inbox(
    web: LiveServer, holder: Holder, admin: Person, open_as: OpenAs
) -> None:
    page = await open_as(admin)
    await page.goto("/admin/ask_mcp/apitoken/?q=chat")
    row = page.locator("#result_list tbody tr", has_text=holder.person.username)
    await row.locator("th a").click()
    setting = page.get_by_label("Asks go to people only")
    await expect(setting).not_to_be_checked()
    await setting.check()
    await page.get_by_role("button", name="Save", exact=True).click()
    await expect(page.locator(".messagelist")).to_contain_text("was changed successfully")
    # The admin forgets the token in its own worker; this server has one worker, so the
    # next call sees the setting at once (others within auth.CACHE_SECONDS).
    message = unique("Drop the table?")
    forms = {"io.modelcontextprotocol/clientCapabilities": FORM_CAPS}
    bearer = {"authorization": f"Bearer {holder.plain}"}
    async with asyncio.timeout(60):
        # Held until a person answers: a client offered the form would have had input_required.
        async with held_call(web.mcp_url, headers=bearer, meta=forms, message=message) as call:
            async with signed_in_http(web, holder.person) as person:
                sent = await person.answer(call.ask_id, answer="no")
                assert sent.status_code == 200, sent.text
            reply = assert_valid("tools/call", await call.result())
    assert reply["result"]["content"][0]["text"] == '{"answer":"no"}'
    row = ask_row(web, message)
    assert (row["route"], row["people_only"], row["answered_by"]) == (
        "browser",
        True,
        holder.person.username,
    )
    await page.goto(f"/admin/ask_mcp/ask/{uuid.UUID(row['id'])}/change/")
    await expect(page.locator(".field-decided_by .readonly")).to_have_text(holder.person.username)
    await expect(page.locator(".field-answered .readonly")).to_have_text("in the inbox")


CONFORMANCE_WEB = {**WEB_CONFIG, "TOOLKITS": {"Ask": {}, CONFORMANCE: {}}}
"""The shipped configuration plus the conformance toolkit, whose tools send raw input requests."""


async def test_a_tool_s_raw_elicitation_request_for_a_people_only_token_is_an_error_result(
    live_servers: LiveServers,
) -> None:
    server = live_servers.get(CONFORMANCE_WEB)
    token = server.manage("createtoken", quickstart_admin(server).username, "--people-only")
    body = call_body("test_input_required_result_capabilities", {})  # declares form elicitation
    async with client() as http:
        status, reply = await rpc(
            http, server.mcp_url, body, headers={"authorization": f"Bearer {token.strip()}"}
        )
    assert status == 200, reply
    result = reply["result"]
    assert result["resultType"] == "complete" and result["isError"] is True, result
    assert result["content"][0]["text"] == (
        f"{PEOPLE_ONLY_TEXT}; the elicitation request 'user_name' was not sent to the client; "
        "ask it with ctx.elicit, which puts it in the inbox"
    )


URL_CAPS = ClientCapabilities(elicitation=ElicitationCapability(url=UrlElicitationCapability()))
"""A client that opens links and shows no forms: URL mode, where a call attaches by key."""
URL_CONFIG: dict[str, Any] = {**WEB_CONFIG, "ANSWER_URL": "ask_mcp.web.elicit.page_url"}
"""The shipped server with URL mode on (the inbox's page is the link)."""


@contextlib.asynccontextmanager
async def url_client(url: str, token: str, callback: Any) -> AsyncIterator[Client]:
    """The official client in URL mode, sending `token`; `callback` gets each link."""
    headers = {"authorization": f"Bearer {token}"}
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=60.0)) as http:
        transport = streamable_http_client(url, http_client=http)
        async with CapsClient(
            transport, mode="2026-07-28", elicitation_callback=callback, caps=URL_CAPS
        ) as sdk:
            yield sdk


class Refuser:
    """A URL-mode client's person who refuses to open the link; keeps the links it was sent."""

    def __init__(self) -> None:
        self.links: list[str] = []

    async def __call__(
        self, ctx: ClientRequestContext, params: ElicitRequestParams
    ) -> ElicitResult:
        assert params.mode == "url"
        self.links.append(str(params.url))
        return ElicitResult(action="decline")


async def test_another_token_of_the_same_person_never_attaches_to_a_people_only_ask(
    live_servers: LiveServers,
) -> None:
    server = live_servers.get(URL_CONFIG)
    holder = Holder(server)
    key = {"askserver/idempotencyKey": f"deploy-{uuid.uuid4().hex}"}
    message = unique("Deploy to production?")
    refuser = Refuser()
    async with asyncio.timeout(60), client() as http:
        approvals = {"authorization": f"Bearer {holder.people_only}"}
        async with held_call(
            server.mcp_url, message=message, http=http, meta=key, headers=approvals
        ) as held:
            async with url_client(server.mcp_url, holder.plain, refuser) as sdk:
                refused = await sdk.call_tool("user_ask", {"message": message}, meta=key)
            # The chat token asked a question of its own, and only that one was declined.
            assert text_of(refused) == DECLINED_TEXT
            (link,) = refuser.links
            assert uuid.UUID(link.rstrip("/").rsplit("/", 1)[1]).hex != held.ask_id
            assert ask_status(server, held.ask_id) == "pending"
            async with signed_in_http(server, holder.person) as person:
                await person.answer(held.ask_id, answer="after the freeze")
            answered = assert_valid("tools/call", await held.result())
            assert text_of(answered["result"]) == '{"answer":"after the freeze"}'


async def test_a_decision_on_a_shared_ask_wakes_every_call_attached_to_it(
    live_servers: LiveServers,
) -> None:
    server = live_servers.get(URL_CONFIG)
    holder = Holder(server)
    key = {"askserver/idempotencyKey": f"merge-{uuid.uuid4().hex}"}
    message = unique("Merge the release branch?")
    refuser = Refuser()
    async with asyncio.timeout(60), client() as http:
        chat = {"authorization": f"Bearer {holder.plain}"}
        async with held_call(
            server.mcp_url, message=message, http=http, meta=key, headers=chat
        ) as held:
            async with url_client(server.mcp_url, holder.plain, refuser) as sdk:
                refused = await sdk.call_tool("user_ask", {"message": message}, meta=key)
            (link,) = refuser.links  # the same ask: the URL-mode call attached to it
            assert uuid.UUID(link.rstrip("/").rsplit("/", 1)[1]).hex == held.ask_id
            # The held call is woken by the refusal, well before the ask's 600 s TTL.
            woken = assert_valid("tools/call", await held.result())
    assert text_of(woken["result"]) == text_of(refused)
    assert ask_status(server, held.ask_id) == "declined"


def ask_status(server: LiveServer, ask_id: str) -> str:
    """The status the record holds for `ask_id`."""
    status: str = shell(
        server,
        "import json; from ask_mcp.models import Ask;"
        f"print(json.dumps(Ask.objects.get(pk={ask_id!r}).status))",
    )
    return status
