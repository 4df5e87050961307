"""user_ask in both eras on one /mcp, a live daphne server driven by the official MCP client.

One suite, parametrized by era. At 2026-07-28 the question travels to the client as
`input_required` (multi round-trip requests): no local callback anywhere on the server side,
the client's elicitation callback plays the person, and the retry resumes the handler that was
parked in the server. In the initialize era (2025-11-25 and 2025-06-18, clients people run
today) it is pushed as a server-initiated request on the call's stream, inside a session. A
test that checks what exists in one era only says so (`only`); raw HTTP checks the framing
the client hides (the rounds' state, the pushed request, status codes of sessions).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from mcp import Client, MCPError
from mcp.types import (
    CallToolResult,
    ClientCapabilities,
    ElicitationCapability,
    ElicitResult,
    FormElicitationCapability,
    InputRequiredResult,
    UrlElicitationCapability,
)
from mcp_types import methods

from tests.support.clients import QUESTIONS, CapsClient, Person, Rounds, accept, legacy_call
from tests.support.eras import ERAS, LEGACY, MODERN, OLDEST, Era, call, only
from tests.support.live import PROBE_CONFIG, LiveServer, LiveServers
from tests.support.results import text_of
from tests.support.wire import (
    FORM_CAPS,
    LEGACY_HEADERS,
    assert_valid,
    http,
    legacy_headers,
    legacy_initialize,
    post,
    request_body,
    sse,
)

ELICITING = {"elicitation": {}}


@pytest.fixture(params=ERAS)
def era(request: pytest.FixtureRequest) -> Era:
    """The era a test runs in: each in turn, unless the test is marked `only`."""
    era_: Era = request.param
    return era_


async def probe(url: str, name: str, **arguments: Any) -> dict[str, Any]:
    result = await call(MODERN, url, None, f"probe_{name}", arguments)
    return json.loads(text_of(result))


@only(MODERN)
async def test_accepted_answers_come_back_as_compact_sorted_json(era: Era, mcp_url: str) -> None:
    person = Person(accept(severity=2, component="api", notes=""))
    result = await call(era, mcp_url, person, "user_ask", QUESTIONS)
    assert text_of(result) == '{"component":"api","notes":"","severity":2}'
    assert result.is_error is False
    (form,) = person.seen
    assert form == {
        "mode": "form",
        "message": QUESTIONS["message"],
        "requestedSchema": {
            "type": "object",
            "properties": {
                "component": {
                    "type": "string",
                    "description": "Which component?",
                    "enum": ["api", "ui", "docs"],
                },
                "severity": {"type": "number", "description": "How bad is it?"},
                "notes": {"type": "string", "description": "Anything else?"},
            },
            "required": ["component", "severity"],
        },
    }


@only(LEGACY, OLDEST)
async def test_a_legacy_client_gets_the_question_pushed_and_answers_it(
    mcp_url: str, era: Era
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
        version=era,
    )
    assert spoken == era
    assert text_of(result) == '{"component":"ui","severity":1}'
    assert result.is_error is False
    (form,) = person.seen
    assert form["message"] == "Which part?"
    assert form["requestedSchema"]["required"] == ["component", "severity"]


@only(MODERN)
async def test_auto_mode_discovers_the_modern_protocol(era: Era, mcp_url: str) -> None:
    async with (
        asyncio.timeout(15),
        Client(mcp_url, elicitation_callback=Person(accept(answer="go"))) as client,
    ):
        result = await client.call_tool("user_ask", {"message": "Ship it?"})
        assert client.protocol_version == "2026-07-28"
    assert text_of(result) == '{"answer":"go"}'


@pytest.mark.parametrize(
    "action, text",
    [("decline", "The user declined to answer."), ("cancel", "The user cancelled the request.")],
)
async def test_decline_and_cancel_are_plain_results(
    mcp_url: str, era: Era, action: str, text: str
) -> None:
    result = await call(
        era, mcp_url, Person(ElicitResult(action=action)), "user_ask", {"message": "Deploy?"}
    )
    assert text_of(result) == text
    assert result.is_error is False


async def test_an_answer_not_matching_the_form_is_asked_again(mcp_url: str, era: Era) -> None:
    person = Person(
        accept(component="database", severity="high"), accept(component="ui", severity=3)
    )
    result = await call(era, mcp_url, person, "user_ask", QUESTIONS)
    assert text_of(result) == '{"component":"ui","severity":3}'
    assert len(person.seen) == 2
    assert "component: must be one of: api, ui, docs" in person.seen[1]["message"]
    assert "severity: must be a number" in person.seen[1]["message"]
    counting = Person(accept(n="many"), accept(n=4))
    integer = {"message": "How many?", "questions": [{"name": "n", "type": "integer"}]}
    result = await call(era, mcp_url, counting, "user_ask", integer)
    assert text_of(result) == '{"n":4}' and len(counting.seen) == 2


@only(MODERN)
async def test_three_unusable_answers_end_without_an_error(era: Era, mcp_url: str) -> None:
    person = Person(accept(severity="high"))
    result = await call(era, mcp_url, person, "user_ask", QUESTIONS)
    assert len(person.seen) == 3
    assert text_of(result).startswith("No valid answer came after 3 attempts")
    assert result.is_error is False


async def test_handler_code_before_each_question_runs_once_across_rounds(
    mcp_url: str, era: Era
) -> None:
    # Parked across rounds at 2026-07-28; waiting on the pushed request in the initialize era.
    key = f"once-{era}"
    person = Person(accept(answer="one"), accept(answer="two"))
    result = await call(era, mcp_url, person, "probe_twice", {"key": key})
    outcome = json.loads(text_of(result))
    assert outcome["starts"] == 1
    assert outcome["first"]["content"] == {"answer": "one"}
    assert outcome["second"]["content"] == {"answer": "two"}
    assert [form["message"] for form in person.seen] == ["First?", "Second?"]
    assert await probe(mcp_url, "starts", key=key) == 1


async def test_without_form_elicitation_the_call_is_refused_naming_the_gap(
    mcp_url: str, era: Era
) -> None:
    if era == MODERN:  # refused up front, with the capability the call needs
        with pytest.raises(MCPError) as raised:
            await call(era, mcp_url, None, "user_ask", {"message": "Anyone?"})
        assert raised.value.code == -32021
        assert raised.value.data == {"requiredCapabilities": {"elicitation": {"form": {}}}}
    else:  # no -32021 in the initialize era: an error result the model reads
        result = await call(era, mcp_url, None, "user_ask", {"message": "Anyone?"})
        assert result.is_error is True
        assert "did not declare the elicitation capability" in text_of(result)
        assert "on_elicit" in text_of(result)


@only(MODERN)
async def test_form_only_capability_is_enough_and_url_only_is_not(era: Era, mcp_url: str) -> None:
    form_only = ClientCapabilities(
        elicitation=ElicitationCapability(form=FormElicitationCapability())
    )
    url_only = ClientCapabilities(elicitation=ElicitationCapability(url=UrlElicitationCapability()))
    async with asyncio.timeout(15):
        async with CapsClient(
            mcp_url,
            mode="2026-07-28",
            caps=form_only,
            elicitation_callback=Person(accept(answer="ok")),
        ) as client:
            assert (
                text_of(await client.call_tool("user_ask", {"message": "Form?"}))
                == '{"answer":"ok"}'
            )
        async with CapsClient(
            mcp_url,
            mode="2026-07-28",
            caps=url_only,
            elicitation_callback=Person(accept(answer="ok")),
        ) as client:
            with pytest.raises(MCPError) as raised:
                await client.call_tool("user_ask", {"message": "Url?"})
    assert raised.value.code == -32021


# ---------------------------------------------------------------- driving the rounds by hand (2026-07-28)


async def modern_client(url: str) -> Client:
    return Client(url, mode="2026-07-28", elicitation_callback=Person(accept(answer="x")))


@only(MODERN)
async def test_the_first_round_names_one_form_request_and_a_sealed_state(
    era: Era, mcp_url: str
) -> None:
    async with asyncio.timeout(15), await modern_client(mcp_url) as client:
        first = await Rounds(client).first("user_ask", {"message": "Go?"})
    assert first.result_type == "input_required"
    ((key, request),) = first.input_requests.items()
    assert key == "user_ask"
    assert request.method == "elicitation/create" and request.params.mode == "form"
    assert first.request_state and "." in first.request_state


@only(MODERN)
async def test_a_retry_missing_the_answer_gets_the_same_question_again(
    era: Era, mcp_url: str
) -> None:
    arguments = {"message": "Go?"}
    async with asyncio.timeout(15), await modern_client(mcp_url) as client:
        rounds = Rounds(client)
        first = await rounds.first("user_ask", arguments)
        again = await rounds.retry(
            "user_ask",
            arguments,
            first.request_state,
            {"wrong_key": accept(answer="no").model_dump()},
        )
        assert isinstance(again, InputRequiredResult)
        assert again.input_requests == first.input_requests
        assert again.request_state != first.request_state
        done = await rounds.retry(
            "user_ask",
            arguments,
            again.request_state,
            {"user_ask": accept(answer="yes"), "extra": accept(answer="ignored")},
        )
    assert isinstance(done, CallToolResult) and text_of(done) == '{"answer":"yes"}'


# An accept whose content is not an object is asked again, never read as a decline (issue 20;
# tests/interaction/test_hardening.py shows it).
@only(MODERN)
@pytest.mark.parametrize("reply", [{"action": "maybe"}])
def test_a_reply_that_is_not_an_elicit_result_reads_as_a_decline(
    era: Era, mcp_url: str, reply: Any
) -> None:
    # Raw HTTP: the SDK client will not send a malformed ElicitResult.
    params = {"name": "user_ask", "arguments": {"message": "Go?"}}
    first = assert_valid(
        "tools/call", post(mcp_url, request_body("tools/call", params, caps=FORM_CAPS)).json()
    )
    retry = request_body(
        "tools/call",
        {
            **params,
            "requestState": first["result"]["requestState"],
            "inputResponses": {"user_ask": reply},
        },
        caps=FORM_CAPS,
    )
    result = assert_valid("tools/call", post(mcp_url, retry).json())["result"]
    assert result["content"] == [{"type": "text", "text": "The user declined to answer."}]
    assert result["isError"] is False


@only(MODERN)
@pytest.mark.parametrize("with_state", [True, False])
@pytest.mark.parametrize("reply", [12345, "accept", None, ["accept"]])
def test_an_input_response_that_is_not_an_object_is_invalid_params(
    era: Era, mcp_url: str, reply: Any, with_state: bool
) -> None:
    # Every input response type is an object; anything else is malformed whatever its key,
    # and is refused before it reaches the parked call, which stays parked.
    params = {"name": "user_ask", "arguments": {"message": "Go?"}}
    retry_params: dict[str, Any] = {**params, "inputResponses": {"user_ask": reply}}
    if with_state:
        first = post(mcp_url, request_body("tools/call", params, caps=FORM_CAPS)).json()
        retry_params["requestState"] = assert_valid("tools/call", first)["result"]["requestState"]
    response = post(mcp_url, request_body("tools/call", retry_params, caps=FORM_CAPS))
    assert response.status_code == 400
    error = assert_valid("tools/call", response.json())["error"]
    assert error["code"] == -32602
    assert "inputResponses['user_ask'] must be an object" in error["message"]


@only(MODERN)
async def test_state_tampering_replay_and_other_arguments_are_refused(
    era: Era, mcp_url: str
) -> None:
    arguments = {"message": "Deploy?"}
    answer = {"user_ask": accept(answer="yes")}
    async with asyncio.timeout(15), await modern_client(mcp_url) as client:
        rounds = Rounds(client)
        first = await rounds.first("user_ask", arguments)
        state = first.request_state
        assert state is not None
        tampered = state[:-4] + ("AAAA" if not state.endswith("AAAA") else "BBBB")
        for bad_state, args, reason in [
            (tampered, arguments, "signature"),
            (state + "-TAMPERED", arguments, "malformed"),
            (state, {"message": "Deploy elsewhere?"}, "request"),
        ]:
            with pytest.raises(MCPError) as raised:
                await rounds.retry("user_ask", args, bad_state, answer)
            assert raised.value.code == -32602
            assert raised.value.data == {"reason": reason}
        done = await rounds.retry("user_ask", arguments, state, answer)
        assert isinstance(done, CallToolResult) and text_of(done) == '{"answer":"yes"}'
        with pytest.raises(MCPError) as raised:
            await rounds.retry("user_ask", arguments, state, answer)
    assert raised.value.code == -32602
    assert raised.value.data == {"reason": "used"}


@only(MODERN)
async def test_a_state_is_bound_to_its_tool(era: Era, mcp_url: str) -> None:
    async with asyncio.timeout(15), await modern_client(mcp_url) as client:
        rounds = Rounds(client)
        first = await rounds.first("probe_twice", {"key": "bound"})
        with pytest.raises(MCPError) as raised:
            await rounds.retry(
                "user_ask",
                {"key": "bound"},
                first.request_state,
                {"probe_twice": accept(answer="x")},
            )
    assert raised.value.code == -32602
    assert raised.value.data == {"reason": "request"}


@only(MODERN)
async def test_two_retries_with_one_state_answer_once(era: Era, mcp_url: str) -> None:
    arguments = {"message": "Which?"}
    async with asyncio.timeout(15), await modern_client(mcp_url) as client:
        rounds = Rounds(client)
        first = await rounds.first("user_ask", arguments)
        outcomes = await asyncio.gather(
            rounds.retry(
                "user_ask", arguments, first.request_state, {"user_ask": accept(answer="a")}
            ),
            rounds.retry(
                "user_ask", arguments, first.request_state, {"user_ask": accept(answer="b")}
            ),
            return_exceptions=True,
        )
    results = [o for o in outcomes if isinstance(o, CallToolResult)]
    errors = [o for o in outcomes if isinstance(o, MCPError)]
    assert len(results) == 1 and len(errors) == 1
    assert text_of(results[0]) in ('{"answer":"a"}', '{"answer":"b"}')
    assert errors[0].code == -32602 and errors[0].data == {"reason": "used"}


@only(MODERN)
async def test_closing_the_stream_cancels_the_handler_and_frees_its_place(
    era: Era, mcp_url: str
) -> None:
    before = await probe(mcp_url, "table")
    async with asyncio.timeout(20):
        async with Client(
            mcp_url, mode="2026-07-28", elicitation_callback=Person(accept(answer="go"))
        ) as client:
            hanging = asyncio.create_task(client.call_tool("probe_hang", {"key": "drop"}))
            blocked = await probe(mcp_url, "wait", kind="blocked", key="drop")
            assert blocked["fired"] is True
            assert blocked["waiting"] == before["waiting"] + 1
            hanging.cancel()
            with pytest.raises(asyncio.CancelledError):
                await hanging
        cancelled = await probe(mcp_url, "wait", kind="cancelled", key="drop")
    assert cancelled["fired"] is True
    assert cancelled["waiting"] == before["waiting"]


# ---------------------------------------------------------------- the pushed request and sessions (initialize era)


@only(LEGACY)
def test_the_pushed_request_has_no_mode_for_2025_06_18_and_the_answer_returns_on_the_stream(
    era: Era,
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


@only(LEGACY)
@pytest.mark.parametrize(
    "reply",
    [{"result": {"action": "maybe"}}, {"error": {"code": -32601, "message": "no forms here"}}],
)
def test_an_unreadable_or_error_response_reads_as_a_decline(
    era: Era, mcp_url: str, reply: dict
) -> None:
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


@only(LEGACY)
def test_notifications_cancelled_stops_the_call(era: Era, mcp_url: str) -> None:
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


@only(LEGACY)
def test_initialize_negotiates_a_version_we_speak(era: Era, mcp_url: str) -> None:
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


@only(LEGACY)
def test_legacy_lists_and_pings_without_modern_fields(era: Era, mcp_url: str) -> None:
    session, _ = legacy_initialize(mcp_url)
    headers = legacy_headers(session)
    tools = post(mcp_url, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, headers).json()
    assert_valid("tools/list", tools, "2025-11-25")
    assert not {"resultType", "ttlMs", "cacheScope"} & set(tools["result"])
    assert (
        post(mcp_url, {"jsonrpc": "2.0", "id": 2, "method": "ping"}, headers).json()["result"] == {}
    )


@only(LEGACY)
def test_sessions_are_required_known_and_ended_by_delete(era: Era, mcp_url: str) -> None:
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


@only(LEGACY)
def test_a_version_header_disagreeing_with_the_session_is_refused(era: Era, mcp_url: str) -> None:
    session, _ = legacy_initialize(mcp_url, "2025-06-18")
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    response = post(mcp_url, body, legacy_headers(session, "2025-11-25"))
    assert response.status_code == 400
    assert "negotiated version '2025-06-18'" in response.json()["error"]["message"]


# ---------------------------------------------------------------- time, capacity, restarts


@pytest.fixture(scope="module")
def short_lived(live_servers: LiveServers) -> LiveServer:
    return live_servers.get(
        {
            **PROBE_CONFIG,
            "TOOLKITS": {"Ask": {"timeout": 0.3}, "tests.support.probe.Probe": {}},
            "ELICITATION_TTL": 0.5,
        }
    )


@only(MODERN)
async def test_an_unanswered_question_expires_and_its_retry_says_so(
    era: Era,
    short_lived: LiveServer,
) -> None:
    url = short_lived.mcp_url
    arguments = {"message": "Still there?"}
    async with asyncio.timeout(20), await modern_client(url) as client:
        rounds = Rounds(client)
        first = await rounds.first("user_ask", arguments)
        ended = await probe(url, "wait", kind="ended", key="user_ask")
        assert ended["fired"] is True
        assert ended["waiting"] == 0 and ended["parked"] == 0
        assert {"tool": "user_ask", "status": "expired", "route": "client"} in ended["ended"]
        late = await rounds.retry(
            "user_ask", arguments, first.request_state, {"user_ask": accept(answer="here")}
        )
    assert isinstance(late, CallToolResult)
    assert text_of(late).startswith("The user did not answer in time.")
    assert late.is_error is False


@only(MODERN)
async def test_the_ttl_cancels_a_parked_handler_with_no_request_arriving(
    era: Era,
    short_lived: LiveServer,
) -> None:
    url = short_lived.mcp_url
    async with asyncio.timeout(20), await modern_client(url) as client:
        await Rounds(client).first("probe_twice", {"key": "ttl"})
        ended = await probe(url, "wait", kind="ended", key="probe_twice")
    assert ended["fired"] is True
    assert {"tool": "probe_twice", "status": "expired", "route": "client"} in ended["ended"]
    assert ended["waiting"] == 0


@only(MODERN)
async def test_capacity_refuses_the_extra_question_with_an_error_result(
    era: Era,
    live_servers: LiveServers,
) -> None:
    url = live_servers.get({**PROBE_CONFIG, "ELICITATION_CAPACITY": 2}).mcp_url
    arguments = {"message": "Queue?"}
    async with asyncio.timeout(20), await modern_client(url) as client:
        rounds = Rounds(client)
        parked = [await rounds.first("user_ask", arguments) for _ in range(2)]
        refused = await client.session.call_tool("user_ask", arguments, allow_input_required=True)
        assert isinstance(refused, CallToolResult) and refused.is_error is True
        assert text_of(refused).startswith("2 questions are already waiting for answers")
        done = await rounds.retry(
            "user_ask", arguments, parked[0].request_state, {"user_ask": accept(answer="first")}
        )
        assert isinstance(done, CallToolResult) and text_of(done) == '{"answer":"first"}'
        assert isinstance(await rounds.first("user_ask", arguments), InputRequiredResult)


@only(MODERN)
async def test_a_state_whose_call_is_gone_after_a_restart_is_not_an_error(
    era: Era,
    live_servers: LiveServers,
) -> None:
    config = {**PROBE_CONFIG, "INSTRUCTIONS": "restart test"}
    old = live_servers.start(config)
    arguments = {"message": "Before the restart?"}
    try:
        async with asyncio.timeout(20), await modern_client(old.mcp_url) as client:
            first = await Rounds(client).first("user_ask", arguments)
    finally:
        live_servers.stop(old)
    new = live_servers.get(config)
    async with asyncio.timeout(20), await modern_client(new.mcp_url) as client:
        late = await Rounds(client).retry(
            "user_ask", arguments, first.request_state, {"user_ask": accept(answer="after")}
        )
    assert isinstance(late, CallToolResult) and late.is_error is False
    assert text_of(late).startswith("That question is no longer waiting")


@pytest.fixture(scope="module")
def idle_server(live_servers: LiveServers) -> LiveServer:
    return live_servers.get({**PROBE_CONFIG, "SESSION_IDLE_SECONDS": 1})


@only(LEGACY)
def test_an_idle_session_ends_and_cancels_its_waiting_question(
    era: Era, idle_server: LiveServer
) -> None:
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


@only(LEGACY)
async def test_a_pushed_question_times_out_into_a_plain_result(
    era: Era, live_servers: LiveServers
) -> None:
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


@only(LEGACY)
def test_a_question_that_times_out_tells_the_client_to_drop_its_form(
    era: Era,
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


@only(LEGACY)
async def test_legacy_questions_share_the_table_capacity(
    era: Era, live_servers: LiveServers
) -> None:
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
