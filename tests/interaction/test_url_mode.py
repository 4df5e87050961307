"""URL-mode elicitation at the server's dispatch: consent first, the answer from the inbox page after."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from ask_mcp import MCPServer
from tests.support.inbox_stub import StubInbox
from tests.support.results import text_of as text
from tests.support.scripted import call_tool

URL_ONLY = {"elicitation": {"url": {}}}
ARGUMENTS = {"message": "Which API key should the deploy use?"}


def server_with(inbox: StubInbox, **settings: Any) -> MCPServer:
    return MCPServer("url", tools={"Ask": settings}, on_elicit=inbox, answer_url=inbox.answer_url)


async def first_round(server: MCPServer, caps: dict[str, Any] = URL_ONLY) -> dict[str, Any]:
    reply = await call_tool(server, "user_ask", ARGUMENTS, caps=caps)
    return reply["result"]


async def retry(
    server: MCPServer, first: dict[str, Any], response: dict[str, Any]
) -> dict[str, Any]:
    reply = await call_tool(
        server,
        "user_ask",
        ARGUMENTS,
        caps=URL_ONLY,
        inputResponses={"user_ask": response},
        requestState=first["requestState"],
    )
    return reply


async def test_a_url_only_client_is_sent_the_questions_page_without_an_elicitation_id() -> None:
    inbox = StubInbox()
    first = await first_round(server_with(inbox))
    (question,) = inbox.questions  # already waiting in the inbox before the client opens the page
    assert first["resultType"] == "input_required"
    assert first["inputRequests"] == {
        "user_ask": {
            "method": "elicitation/create",
            "params": {
                "mode": "url",
                "message": ARGUMENTS["message"],
                "url": f"http://127.0.0.1:8000/asks/{question.id}/",
            },
        }
    }
    assert question.route == "url" and question.call_id is not None


async def test_consent_then_the_retry_waits_for_the_submission() -> None:
    inbox = StubInbox()
    server = server_with(inbox)
    first = await first_round(server)
    waiting = asyncio.ensure_future(retry(server, first, {"action": "accept"}))
    for _ in range(20):  # let the retry run until it blocks (yields only, no clock)
        await asyncio.sleep(0)
    assert not waiting.done()
    await inbox.submit(None, {"action": "accept", "content": {"answer": "the staging key"}}, 5)
    async with asyncio.timeout(5):
        final = await waiting
    assert text(final) == '{"answer":"the staging key"}'
    assert server.table.waiting == 0


async def test_a_submission_before_the_retry_is_returned_at_once() -> None:
    inbox = StubInbox()
    server = server_with(inbox)
    first = await first_round(server)
    await inbox.submit(None, {"action": "accept", "content": {"answer": "prod"}}, 5)
    async with asyncio.timeout(5):
        final = await retry(server, first, {"action": "accept"})
    assert text(final) == '{"answer":"prod"}'


@pytest.mark.parametrize(
    "action, said", [("decline", "The user declined to answer."), ("cancel", "The user cancelled")]
)
async def test_refusing_to_open_the_page_ends_the_question(action: str, said: str) -> None:
    inbox = StubInbox()
    server = server_with(inbox)
    first = await first_round(server)
    async with asyncio.timeout(5):
        final = await retry(server, first, {"action": action})
    assert text(final).startswith(said)
    assert final["result"]["isError"] is False
    assert inbox.waiting == {}  # the inbox stopped waiting too


async def test_consent_without_a_submission_ends_at_the_toolkits_timeout() -> None:
    inbox = StubInbox()
    server = server_with(inbox, timeout=0.3)
    first = await first_round(server)
    async with asyncio.timeout(5):
        final = await retry(server, first, {"action": "accept"})
    assert text(final).startswith("The user did not answer in time.")


async def test_a_client_that_shows_forms_gets_the_form_not_the_url() -> None:
    inbox = StubInbox()
    first = await first_round(server_with(inbox), {"elicitation": {"form": {}, "url": {}}})
    params = first["inputRequests"]["user_ask"]["params"]
    assert params["mode"] == "form" and "url" not in params
    assert inbox.questions == []


async def test_without_an_answer_url_a_url_only_client_is_held_on_on_elicit() -> None:
    inbox = StubInbox()
    server = MCPServer("url", tools={"Ask": {}}, on_elicit=inbox)
    call = asyncio.ensure_future(call_tool(server, "user_ask", ARGUMENTS, caps=URL_ONLY))
    await inbox.submit(None, {"action": "accept", "content": {"answer": "held"}}, 5)
    async with asyncio.timeout(5):
        final = await call
    assert text(final) == '{"answer":"held"}'
    assert inbox.questions[0].route == "browser"


async def test_url_mode_without_on_elicit_is_missing_a_capability() -> None:
    server = MCPServer("url", tools={"Ask": {}}, answer_url=StubInbox().answer_url)
    reply = await call_tool(server, "user_ask", ARGUMENTS, caps=URL_ONLY)
    assert reply["error"]["code"] == -32021
