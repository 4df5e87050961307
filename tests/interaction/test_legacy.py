"""Initialize-era clients (2025-11-25 and 2025-06-18) on the same /mcp: sessions and pushed questions.

The official client in `mode="legacy"` plays a client people run today; raw HTTP checks the
framing it hides (the pushed request on the call's stream, status codes of sessions).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from mcp.types import ElicitResult
from mcp_types import methods

from tests.support.clients import Person, accept, legacy_call
from tests.support.live import PROBE_CONFIG, LiveServer, LiveServers
from tests.support.results import text_of
from tests.support.wire import (
    LEGACY_HEADERS,
    assert_valid,
    http,
    legacy_headers,
    legacy_initialize,
    post,
    sse,
)

ELICITING = {"elicitation": {}}


@pytest.mark.parametrize("version", ["2025-11-25", "2025-06-18"])
async def test_a_legacy_client_gets_the_question_pushed_and_answers_it(
    mcp_url: str, version: str
) -> None:
    person = Person(accept(component="ui", severity=1))
    spoken, result = await legacy_call(
        mcp_url,
        person,
        "user_ask",
        {
            "message": "Which part?",
            "questions": [
                {"name": "component", "options": ["api", "ui"]},
                {"name": "severity", "type": "integer"},
            ],
        },
        version=version,
    )
    assert spoken == version
    assert text_of(result) == '{"component":"ui","severity":1}'
    assert result.is_error is False
    (form,) = person.seen
    assert form["message"] == "Which part?"
    assert form["requestedSchema"]["required"] == ["component", "severity"]


@pytest.mark.parametrize(
    "action, text",
    [("decline", "The user declined to answer."), ("cancel", "The user cancelled the request.")],
)
async def test_legacy_decline_and_cancel_are_plain_results(
    mcp_url: str, action: str, text: str
) -> None:
    _, result = await legacy_call(
        mcp_url, Person(ElicitResult(action=action)), "user_ask", {"message": "Go?"}
    )
    assert text_of(result) == text and result.is_error is False


async def test_a_legacy_answer_not_matching_the_form_is_asked_again(mcp_url: str) -> None:
    person = Person(accept(n="many"), accept(n=4))
    _, result = await legacy_call(
        mcp_url,
        person,
        "user_ask",
        {"message": "How many?", "questions": [{"name": "n", "type": "integer"}]},
    )
    assert text_of(result) == '{"n":4}' and len(person.seen) == 2


async def test_a_legacy_client_without_elicitation_gets_an_error_result_naming_the_gap(
    mcp_url: str,
) -> None:
    _, result = await legacy_call(mcp_url, None, "user_ask", {"message": "Anyone?"})
    assert result.is_error is True
    assert "did not declare the elicitation capability" in text_of(result)
    assert "on_elicit" in text_of(result)


async def test_handler_code_before_a_pushed_question_runs_once(mcp_url: str) -> None:
    person = Person(accept(answer="a"), accept(answer="b"))
    _, result = await legacy_call(mcp_url, person, "probe_twice", {"key": "legacy-once"})
    assert json.loads(text_of(result))["starts"] == 1


def test_the_pushed_request_has_no_mode_for_2025_06_18_and_the_answer_returns_on_the_stream(
    mcp_url: str,
) -> None:
    session, result = legacy_initialize(mcp_url, "2025-06-18", ELICITING)
    assert result["protocolVersion"] == "2025-06-18"
    headers = legacy_headers(session, "2025-06-18")
    call = {
        "jsonrpc": "2.0",
        "id": 5,
        "method": "tools/call",
        "params": {"name": "user_ask", "arguments": {"message": "Raw?"}},
    }
    with http().stream("POST", mcp_url, json=call, headers=headers) as response:
        assert response.headers["content-type"] == "text/event-stream"
        messages = sse(response)
        pushed = next(messages)
        assert pushed["method"] == "elicitation/create" and isinstance(pushed["id"], str)
        assert "mode" not in pushed["params"]
        assert pushed["params"]["requestedSchema"]["required"] == ["answer"]
        answer = {
            "jsonrpc": "2.0",
            "id": pushed["id"],
            "result": {"action": "accept", "content": {"answer": "raw yes"}},
        }
        assert post(mcp_url, answer, headers).status_code == 202
        final = next(messages)
    assert final["id"] == 5
    assert final["result"] == {
        "content": [{"type": "text", "text": '{"answer":"raw yes"}'}],
        "isError": False,
    }
    assert_valid("tools/call", final, "2025-06-18")


@pytest.mark.parametrize(
    "reply",
    [{"result": {"action": "maybe"}}, {"error": {"code": -32601, "message": "no forms here"}}],
)
def test_an_unreadable_or_error_response_reads_as_a_decline(mcp_url: str, reply: dict) -> None:
    session, _ = legacy_initialize(mcp_url, capabilities=ELICITING)
    headers = legacy_headers(session)
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "user_ask", "arguments": {"message": "Hm?"}},
    }
    with http().stream("POST", mcp_url, json=call, headers=headers) as response:
        messages = sse(response)
        pushed = next(messages)
        assert (
            post(mcp_url, {"jsonrpc": "2.0", "id": pushed["id"], **reply}, headers).status_code
            == 202
        )
        final = next(messages)
    assert final["result"]["content"][0]["text"] == "The user declined to answer."


def test_notifications_cancelled_stops_the_call(mcp_url: str) -> None:
    session, _ = legacy_initialize(mcp_url, capabilities=ELICITING)
    headers = legacy_headers(session)
    call = {
        "jsonrpc": "2.0",
        "id": "c-1",
        "method": "tools/call",
        "params": {"name": "probe_hang", "arguments": {"key": "legacy-cancel"}},
    }
    with http().stream("POST", mcp_url, json=call, headers=headers) as response:
        messages = sse(response)
        pushed = next(messages)
        post(
            mcp_url,
            {
                "jsonrpc": "2.0",
                "id": pushed["id"],
                "result": {"action": "accept", "content": {"answer": "go"}},
            },
            headers,
        )
        blocked = probe_wait(mcp_url, "blocked", "legacy-cancel")
        assert blocked["fired"] is True
        cancel = {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": "c-1", "reason": "user pressed stop"},
        }
        assert post(mcp_url, cancel, headers).status_code == 202
        assert probe_wait(mcp_url, "cancelled", "legacy-cancel")["fired"] is True
        assert list(messages) == []  # the stream ends without a response


def probe_wait(url: str, kind: str, key: str) -> dict[str, Any]:
    session, _ = legacy_initialize(url)
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "probe_wait", "arguments": {"kind": kind, "key": key}},
    }
    response = post(url, body, legacy_headers(session), timeout=15)
    return json.loads(response.json()["result"]["content"][0]["text"])


def test_initialize_negotiates_a_version_we_speak(mcp_url: str) -> None:
    for requested, expected in [
        ("2025-06-18", "2025-06-18"),
        ("2025-11-25", "2025-11-25"),
        ("2024-11-05", "2025-11-25"),
        ("1999-01-01", "2025-11-25"),
    ]:
        _, result = legacy_initialize(mcp_url, requested)
        assert result["protocolVersion"] == expected
        assert result["serverInfo"]["name"] == "askserver"
        assert result["capabilities"]["tools"] == {}
        assert "resultType" not in result


def test_legacy_lists_and_pings_without_modern_fields(mcp_url: str) -> None:
    session, _ = legacy_initialize(mcp_url)
    headers = legacy_headers(session)
    tools = post(mcp_url, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, headers).json()
    assert_valid("tools/list", tools, "2025-11-25")
    assert not {"resultType", "ttlMs", "cacheScope"} & set(tools["result"])
    assert (
        post(mcp_url, {"jsonrpc": "2.0", "id": 2, "method": "ping"}, headers).json()["result"] == {}
    )


def test_sessions_are_required_known_and_ended_by_delete(mcp_url: str) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    missing = post(mcp_url, body, {**LEGACY_HEADERS, "mcp-protocol-version": "2025-11-25"})
    assert missing.status_code == 400 and "Mcp-Session-Id" in missing.json()["error"]["message"]
    unknown = post(mcp_url, body, legacy_headers("no-such-session"))
    assert unknown.status_code == 404
    session, _ = legacy_initialize(mcp_url)
    assert post(mcp_url, body, legacy_headers(session)).status_code == 200
    assert http().delete(mcp_url, headers=legacy_headers(session)).status_code == 204
    assert post(mcp_url, body, legacy_headers(session)).status_code == 404
    assert http().delete(mcp_url, headers=legacy_headers(session)).status_code == 404


def test_a_version_header_disagreeing_with_the_session_is_refused(mcp_url: str) -> None:
    session, _ = legacy_initialize(mcp_url, "2025-06-18")
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    response = post(mcp_url, body, legacy_headers(session, "2025-11-25"))
    assert response.status_code == 400
    assert "negotiated version '2025-06-18'" in response.json()["error"]["message"]


# ---------------------------------------------------------------- time and capacity


@pytest.fixture(scope="module")
def idle_server(live_servers: LiveServers) -> LiveServer:
    return live_servers.get({**PROBE_CONFIG, "SESSION_IDLE_SECONDS": 1})


def test_an_idle_session_ends_and_cancels_its_waiting_question(idle_server: LiveServer) -> None:
    url = idle_server.mcp_url
    session, _ = legacy_initialize(url, capabilities=ELICITING)
    headers = legacy_headers(session)
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "user_ask", "arguments": {"message": "Waiting…"}},
    }
    with http().stream("POST", url, json=call, headers=headers) as response:
        messages = sse(response)
        pushed = next(messages)
        assert pushed["method"] == "elicitation/create"
        # Nobody answers: the sweeper ends the session, which cancels the call. The client is
        # told to drop its form, then the stream ends without a result (bounded by the client's
        # read timeout).
        assert list(messages) == [
            {
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {
                    "requestId": pushed["id"],
                    "reason": "the question was ended on the server",
                },
            }
        ]
    ended = probe_wait(url, "ended", "user_ask")
    assert {"tool": "user_ask", "status": "withdrawn", "route": "client"} in ended["ended"]
    assert ended["waiting"] == 0
    assert post(url, {"jsonrpc": "2.0", "id": 2, "method": "ping"}, headers).status_code == 404


async def test_a_pushed_question_times_out_into_a_plain_result(live_servers: LiveServers) -> None:
    url = live_servers.get(
        {**PROBE_CONFIG, "TOOLKITS": {"Ask": {"timeout": 0.3}, "tests.support.probe.Probe": {}}}
    ).mcp_url
    never = asyncio.Event()

    async def walks_away(ctx: Any, params: Any) -> ElicitResult:
        await never.wait()
        raise AssertionError("unreachable")

    _, result = await legacy_call(url, walks_away, "user_ask", {"message": "Hello?"})
    assert text_of(result).startswith("The user did not answer in time.")
    assert result.is_error is False


def test_a_question_that_times_out_tells_the_client_to_drop_its_form(
    live_servers: LiveServers,
) -> None:
    url = live_servers.get(
        {**PROBE_CONFIG, "TOOLKITS": {"Ask": {"timeout": 0.3}, "tests.support.probe.Probe": {}}}
    ).mcp_url
    session, _ = legacy_initialize(url, capabilities=ELICITING)
    headers = legacy_headers(session)
    call = {
        "jsonrpc": "2.0",
        "id": 9,
        "method": "tools/call",
        "params": {"name": "user_ask", "arguments": {"message": "Still there?"}},
    }
    with http().stream("POST", url, json=call, headers=headers) as response:
        pushed, withdrawn, final = list(sse(response))
    assert pushed["method"] == "elicitation/create"
    assert withdrawn == {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": pushed["id"], "reason": "the question timed out"},
    }
    methods.parse_server_notification("notifications/cancelled", "2025-11-25", withdrawn["params"])
    assert final["id"] == 9
    assert final["result"]["content"][0]["text"].startswith("The user did not answer in time.")
    assert_valid("tools/call", final, "2025-11-25")


async def test_legacy_questions_share_the_table_capacity(live_servers: LiveServers) -> None:
    url = live_servers.get({**PROBE_CONFIG, "ELICITATION_CAPACITY": 1}).mcp_url
    asked, release = asyncio.Event(), asyncio.Event()

    async def slow_person(ctx: Any, params: Any) -> ElicitResult:
        asked.set()
        await release.wait()
        return accept(answer="late")

    async with asyncio.timeout(20):
        first = asyncio.create_task(legacy_call(url, slow_person, "user_ask", {"message": "1"}))
        await asked.wait()
        _, refused = await legacy_call(url, slow_person, "user_ask", {"message": "2"})
        release.set()
        _, done = await first
    assert refused.is_error is True and text_of(refused).startswith("1 question is already waiting")
    assert text_of(done) == '{"answer":"late"}'
