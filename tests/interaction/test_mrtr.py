"""user_ask over real multi round-trip requests: a live daphne server driven by the official MCP client.

No local callback anywhere on the server side: the question travels to the client as
`input_required`, the client's elicitation callback plays the person, and the retry resumes
the handler that was parked in the server.
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

from tests.support.clients import QUESTIONS, Callback, CapsClient, Person, Rounds, accept
from tests.support.live import PROBE_CONFIG, LiveServer, LiveServers
from tests.support.results import text_of
from tests.support.wire import FORM_CAPS, assert_valid, post, request_body


async def call(
    url: str, callback: Callback | None, name: str, arguments: dict[str, Any]
) -> CallToolResult:
    """One tools/call through a fresh client; an MCPError is raised as itself, not in a group."""
    failure: MCPError | None = None
    async with (
        asyncio.timeout(15),
        Client(url, mode="2026-07-28", elicitation_callback=callback) as client,
    ):
        try:
            return await client.call_tool(name, arguments)
        except MCPError as exc:
            failure = exc
    raise failure


async def probe(url: str, name: str, **arguments: Any) -> dict[str, Any]:
    result = await call(url, None, f"probe_{name}", arguments)
    return json.loads(text_of(result))


async def test_accepted_answers_come_back_as_compact_sorted_json(mcp_url: str) -> None:
    person = Person(accept(severity=2, component="api", notes=""))
    result = await call(mcp_url, person, "user_ask", QUESTIONS)
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


async def test_auto_mode_discovers_the_modern_protocol(mcp_url: str) -> None:
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
async def test_decline_and_cancel_are_plain_results(mcp_url: str, action: str, text: str) -> None:
    result = await call(
        mcp_url, Person(ElicitResult(action=action)), "user_ask", {"message": "Deploy?"}
    )
    assert text_of(result) == text
    assert result.is_error is False


async def test_an_answer_not_matching_the_form_is_asked_again(mcp_url: str) -> None:
    person = Person(
        accept(component="database", severity="high"), accept(component="ui", severity=3)
    )
    result = await call(mcp_url, person, "user_ask", QUESTIONS)
    assert text_of(result) == '{"component":"ui","severity":3}'
    assert len(person.seen) == 2
    assert "component: must be one of: api, ui, docs" in person.seen[1]["message"]
    assert "severity: must be a number" in person.seen[1]["message"]


async def test_three_unusable_answers_end_without_an_error(mcp_url: str) -> None:
    person = Person(accept(severity="high"))
    result = await call(mcp_url, person, "user_ask", QUESTIONS)
    assert len(person.seen) == 3
    assert text_of(result).startswith("No valid answer came after 3 attempts")
    assert result.is_error is False


async def test_handler_code_before_each_question_runs_once_across_rounds(mcp_url: str) -> None:
    person = Person(accept(answer="one"), accept(answer="two"))
    result = await call(mcp_url, person, "probe_twice", {"key": "once"})
    outcome = json.loads(text_of(result))
    assert outcome["starts"] == 1
    assert outcome["first"]["content"] == {"answer": "one"}
    assert outcome["second"]["content"] == {"answer": "two"}
    assert [form["message"] for form in person.seen] == ["First?", "Second?"]
    assert await probe(mcp_url, "starts", key="once") == 1


async def test_without_form_elicitation_the_call_is_refused_with_32021(mcp_url: str) -> None:
    with pytest.raises(MCPError) as raised:
        await call(mcp_url, None, "user_ask", {"message": "Anyone?"})
    assert raised.value.code == -32021
    assert raised.value.data == {"requiredCapabilities": {"elicitation": {"form": {}}}}


async def test_form_only_capability_is_enough_and_url_only_is_not(mcp_url: str) -> None:
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


# ---------------------------------------------------------------- driving the rounds by hand


async def modern_client(url: str) -> Client:
    return Client(url, mode="2026-07-28", elicitation_callback=Person(accept(answer="x")))


async def test_the_first_round_names_one_form_request_and_a_sealed_state(mcp_url: str) -> None:
    async with asyncio.timeout(15), await modern_client(mcp_url) as client:
        first = await Rounds(client).first("user_ask", {"message": "Go?"})
    assert first.result_type == "input_required"
    ((key, request),) = first.input_requests.items()
    assert key == "user_ask"
    assert request.method == "elicitation/create" and request.params.mode == "form"
    assert first.request_state and "." in first.request_state


async def test_a_retry_missing_the_answer_gets_the_same_question_again(mcp_url: str) -> None:
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
@pytest.mark.parametrize("reply", [{"action": "maybe"}])
def test_a_reply_that_is_not_an_elicit_result_reads_as_a_decline(mcp_url: str, reply: Any) -> None:
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


@pytest.mark.parametrize("with_state", [True, False])
@pytest.mark.parametrize("reply", [12345, "accept", None, ["accept"]])
def test_an_input_response_that_is_not_an_object_is_invalid_params(
    mcp_url: str, reply: Any, with_state: bool
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


async def test_state_tampering_replay_and_other_arguments_are_refused(mcp_url: str) -> None:
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


async def test_a_state_is_bound_to_its_tool(mcp_url: str) -> None:
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


async def test_two_retries_with_one_state_answer_once(mcp_url: str) -> None:
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


async def test_closing_the_stream_cancels_the_handler_and_frees_its_place(mcp_url: str) -> None:
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


async def test_an_unanswered_question_expires_and_its_retry_says_so(
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


async def test_the_ttl_cancels_a_parked_handler_with_no_request_arriving(
    short_lived: LiveServer,
) -> None:
    url = short_lived.mcp_url
    async with asyncio.timeout(20), await modern_client(url) as client:
        await Rounds(client).first("probe_twice", {"key": "ttl"})
        ended = await probe(url, "wait", kind="ended", key="probe_twice")
    assert ended["fired"] is True
    assert {"tool": "probe_twice", "status": "expired", "route": "client"} in ended["ended"]
    assert ended["waiting"] == 0


async def test_capacity_refuses_the_extra_question_with_an_error_result(
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


async def test_a_state_whose_call_is_gone_after_a_restart_is_not_an_error(
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
