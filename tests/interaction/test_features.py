"""Prompts, resources, completions, progress, logging, sampling and roots in both eras, on a live server.

One suite, parametrized by era: the official client speaks 2026-07-28 (it resolves
input_required rounds on prompts/get and resources/read the way it does on tools/call) or an
initialize-era revision (2025-11-25: requests the server needs answered, such as elicitation,
sampling and roots, travel as server-initiated requests on the call's stream). A test that
checks what exists in one era only says so (`only`). Raw HTTP checks what the client hides:
caching hints, status codes, the stream's framing, and the standalone GET stream that carries
resource updates to a legacy session.
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
from mcp import MCPError
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp.types import (
    ElicitResult,
    GetPromptResult,
    InputRequiredResult,
    LoggingMessageNotificationParams,
    PromptReference,
    ReadResourceResult,
    ResourceTemplateReference,
    TextContent,
)

from tests.support.clients import Person, accept, roots_lister, sampler
from tests.support.conformance.toolkit import PNG
from tests.support.eras import ERAS, LEGACY, MODERN, Era, connect, only
from tests.support.features import FEATURES_CONFIG, STYLES
from tests.support.live import LiveServers
from tests.support.results import text_of
from tests.support.wire import (
    FORM_CAPS,
    assert_valid,
    http,
    legacy_headers,
    legacy_initialize,
    post,
    request_body,
    sse_messages,
)


@pytest.fixture(params=ERAS)
def era(request: pytest.FixtureRequest) -> Era:
    """The era a test runs in: each in turn, unless the test is marked `only`."""
    era_: Era = request.param
    return era_


@pytest.fixture(scope="module")
def url(live_servers: LiveServers) -> str:
    return live_servers.get(FEATURES_CONFIG).mcp_url


def result_of(response: Any, method: str) -> dict[str, Any]:
    assert response.status_code == 200, response.text
    return assert_valid(method, response.json())["result"]


def error_of(response: Any, method: str, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    return assert_valid(method, response.json())["error"]


def stream_messages(response: httpx2.Response) -> Iterator[dict[str, Any]]:
    for line in response.iter_lines():
        if line.startswith("data:") and line[5:].strip():
            yield json.loads(line[5:])


def session_call(
    url: str, headers: dict[str, str], method: str, params: dict[str, Any]
) -> dict[str, Any]:
    reply = post(url, {"jsonrpc": "2.0", "id": 9, "method": method, "params": params}, headers)
    return assert_valid(method, reply.json(), "2025-11-25")


# ---------------------------------------------------------------- discovery


def test_the_server_advertises_what_the_toolkits_register(url: str, era: Era) -> None:
    if era == MODERN:
        result = result_of(post(url, request_body("server/discover")), "server/discover")
        assert result["capabilities"] == {
            "tools": {},
            "prompts": {},
            "resources": {},
            "completions": {},
            "logging": {},
            "extensions": {"io.modelcontextprotocol/tasks": {}},  # user_ask runs as a task
        }
    else:  # initialize states them, and resources can be subscribed to in this era
        _, result = legacy_initialize(url)
        assert result["capabilities"] == {
            "tools": {},
            "prompts": {},
            "resources": {"subscribe": True},
            "completions": {},
            "logging": {},
        }


@only(MODERN)
@pytest.mark.parametrize(
    "method, params",
    [
        ("prompts/list", {}),
        ("prompts/get", {"name": "feat_greet"}),
        ("resources/list", {}),
        ("resources/read", {"uri": "features://note"}),
        ("resources/templates/list", {}),
        ("completion/complete", {}),
        ("resources/subscribe", {"uri": "features://note"}),
        ("subscriptions/listen", {}),
    ],
)
def test_methods_of_features_a_server_does_not_offer_are_not_found(
    era: Era, mcp_url: str, method: str, params: dict[str, Any]
) -> None:
    # The default test server registers tools only: no prompts, resources or completions.
    error = error_of(post(mcp_url, request_body(method, params, id=7)), method, 404)
    assert error["code"] == -32601


@only(LEGACY)
def test_a_session_without_prompts_or_resources_has_no_such_methods(era: Era, mcp_url: str) -> None:
    session, result = legacy_initialize(mcp_url)
    assert result["capabilities"] == {"tools": {}, "logging": {}}
    headers = legacy_headers(session)
    for method in ("prompts/list", "resources/read", "resources/subscribe", "completion/complete"):
        body = {"jsonrpc": "2.0", "id": 3, "method": method, "params": {"uri": "x:y"}}
        reply = post(mcp_url, body, headers).json()
        assert reply["error"]["code"] == -32601, method


# ---------------------------------------------------------------- prompts


@only(MODERN)
async def test_prompts_are_listed_with_their_arguments_and_rendered(era: Era, url: str) -> None:
    async with asyncio.timeout(15), connect(era, url) as client:
        listed = {p.name: p for p in (await client.list_prompts()).prompts}
        rendered = await client.get_prompt("feat_greet", {"name": "Ada", "style": "warm"})
    greet = listed["feat_greet"]
    assert greet.title == "Greeting" and greet.description == "Greets someone, in a style."
    assert [(a.name, a.required) for a in greet.arguments or []] == [
        ("name", True),
        ("style", False),
    ]
    assert {"feat_briefing", "feat_sampled"} <= set(listed)
    ((message),) = rendered.messages
    assert message.role == "user"
    assert message.content == TextContent(type="text", text="Say hello to Ada (warm).")


@only(MODERN)
@pytest.mark.parametrize(
    "params, fragment",
    [
        ({"name": "feat_greet"}, "needs the argument(s) name"),
        ({"name": "feat_greet", "arguments": {"name": 3}}, "argument 'name' must be a string"),
        ({"name": "feat_nope"}, "Unknown prompt: 'feat_nope'"),
        ({"name": 5}, "params.name must be a string"),
    ],
)
def test_bad_prompt_requests_are_invalid_params(
    era: Era, url: str, params: dict[str, Any], fragment: str
) -> None:
    error = error_of(post(url, request_body("prompts/get", params)), "prompts/get", 400)
    assert error["code"] == -32602
    assert fragment in error["message"]


@only(MODERN)
async def test_a_prompt_that_asks_parks_and_resumes_across_the_round(era: Era, url: str) -> None:
    person = Person(accept(topic="tides"))
    async with asyncio.timeout(15), connect(era, url, elicitation_callback=person) as client:
        result = await client.get_prompt("feat_briefing")
    assert isinstance(result, GetPromptResult)
    (message,) = result.messages
    assert message.content == TextContent(type="text", text="Brief me on tides.")
    (form,) = person.seen
    assert form["message"] == "What should the briefing cover?"
    starts = int((result.description or "").removeprefix("starts="))
    async with asyncio.timeout(15), connect(era, url, elicitation_callback=person) as client:
        again = await client.get_prompt("feat_briefing")
    # One start per call, not per round: the handler was parked, never re-run.
    assert again.description == f"starts={starts + 1}"


@only(MODERN)
def test_a_prompt_round_over_raw_http_has_no_caching_hints_and_binds_its_state(
    era: Era, url: str
) -> None:
    params = {"name": "feat_briefing"}
    first = result_of(post(url, request_body("prompts/get", params, caps=FORM_CAPS)), "prompts/get")
    assert first["resultType"] == "input_required"
    assert list(first["inputRequests"]) == ["topic"]
    assert "ttlMs" not in first and "cacheScope" not in first
    # The state names prompts/get of this prompt: a tools/call cannot use it.
    stolen = request_body(
        "tools/call",
        {
            "name": "feat_sample",
            "arguments": {"prompt": "x"},
            "requestState": first["requestState"],
            "inputResponses": {"topic": {"action": "accept", "content": {"topic": "x"}}},
        },
        caps={**FORM_CAPS, "sampling": {}},
    )
    error = error_of(post(url, stolen), "tools/call", 400)
    assert (error["code"], error["data"]) == (-32602, {"reason": "request"})
    retry = request_body(
        "prompts/get",
        {
            **params,
            "requestState": first["requestState"],
            "inputResponses": {"topic": {"action": "decline"}},
        },
        caps=FORM_CAPS,
    )
    done = result_of(post(url, retry), "prompts/get")
    assert done["resultType"] == "complete"
    assert done["messages"][0]["content"]["text"] == "Brief me on anything."


@only(LEGACY)
async def test_prompts_render_and_a_prompt_asks_over_the_pushed_request(era: Era, url: str) -> None:
    person = Person(accept(topic="tides"))
    async with asyncio.timeout(15), connect(era, url, elicitation_callback=person) as client:
        assert client.protocol_version == "2025-11-25"
        names = [p.name for p in (await client.list_prompts()).prompts]
        greeting = await client.get_prompt("feat_greet", {"name": "Ada"})
        briefing = await client.get_prompt("feat_briefing")
    assert names == ["feat_greet", "feat_briefing", "feat_sampled"]
    assert greeting.messages[0].content == TextContent(
        type="text", text="Say hello to Ada (plain)."
    )
    assert briefing.messages[0].content == TextContent(type="text", text="Brief me on tides.")
    assert [form["message"] for form in person.seen] == ["What should the briefing cover?"]


async def test_a_prompt_needing_a_capability_the_client_lacks_is_refused(
    url: str, era: Era
) -> None:
    async with asyncio.timeout(15), connect(era, url) as refused:
        with pytest.raises(MCPError) as raised:
            await refused.get_prompt("feat_sampled")
    # No -32021 in the initialize era: the same data on an invalid-request error.
    assert raised.value.code == (-32021 if era == MODERN else -32600)
    assert raised.value.data == {"requiredCapabilities": {"sampling": {}}}
    async with asyncio.timeout(15), connect(era, url, sampling_callback=sampler) as sampling:
        rendered = await sampling.get_prompt("feat_sampled")
    assert rendered.messages[0].content == TextContent(type="text", text="echo: A haiku? / None")


# ---------------------------------------------------------------- resources


@only(MODERN)
async def test_resources_and_templates_are_listed(era: Era, url: str) -> None:
    async with asyncio.timeout(15), connect(era, url) as client:
        resources = (await client.list_resources()).resources
        templates = (await client.list_resource_templates()).resource_templates
    assert [(str(r.uri), r.name, r.mime_type) for r in resources] == [
        ("features://note", "note", "text/plain"),
        ("features://logo", "logo", "image/png"),
        ("features://watched", "watched", "text/plain"),
    ]
    assert resources[1].title == "Logo"
    assert resources[0].description == "A note everyone may cache for five seconds."
    ((template),) = templates
    assert (template.uri_template, template.name) == ("features://items/{id}", "item")


@only(MODERN)
async def test_text_binary_and_templated_reads(era: Era, url: str) -> None:
    async with asyncio.timeout(15), connect(era, url) as client:
        note = await client.read_resource("features://note")
        logo = await client.read_resource("features://logo")
        item = await client.read_resource("features://items/a%20b")
    ((text),) = note.contents
    assert (str(text.uri), text.mime_type, text.text) == (  # type: ignore[union-attr]
        "features://note",
        "text/plain",
        "A note.",
    )
    ((blob),) = logo.contents
    assert base64.b64decode(blob.blob) == PNG  # type: ignore[union-attr]
    ((data),) = item.contents
    # Template variables arrive percent-decoded.
    assert json.loads(data.text)["id"] == "a b"  # type: ignore[union-attr]


@only(MODERN)
def test_reads_carry_the_resources_caching_hints(era: Era, url: str) -> None:
    note = result_of(
        post(url, request_body("resources/read", {"uri": "features://note"})), "resources/read"
    )
    assert (note["ttlMs"], note["cacheScope"]) == (5000, "public")
    logo = result_of(
        post(url, request_body("resources/read", {"uri": "features://logo"})), "resources/read"
    )
    assert (logo["ttlMs"], logo["cacheScope"]) == (0, "private")
    for method in ("resources/list", "resources/templates/list", "prompts/list", "tools/list"):
        listed = result_of(post(url, request_body(method)), method)
        assert listed["ttlMs"] >= 0 and listed["cacheScope"] == "private"


@only(MODERN)
@pytest.mark.parametrize(
    "uri", ["features://nothing", "features://items/1/extra", "other://note", "features://items/"]
)
def test_an_unknown_resource_is_invalid_params_naming_the_uri(era: Era, url: str, uri: str) -> None:
    response = post(url, request_body("resources/read", {"uri": uri}, id="r-1"))
    error = error_of(response, "resources/read", 400)
    assert (error["code"], error["data"]) == (-32602, {"uri": uri})
    assert response.json()["id"] == "r-1"


@only(MODERN)
async def test_a_read_that_asks_parks_and_resumes_and_is_not_cacheable(era: Era, url: str) -> None:
    person = Person(accept(ok=True))
    async with asyncio.timeout(15), connect(era, url, elicitation_callback=person) as client:
        read = await client.read_resource("features://items/locked")
    assert isinstance(read, ReadResourceResult)
    assert (read.ttl_ms, read.cache_scope) == (0, "private")
    ((content),) = read.contents
    assert json.loads(content.text)["id"] == "locked"  # type: ignore[union-attr]
    assert [form["message"] for form in person.seen] == ["Unlock the item?"]


@only(MODERN)
async def test_a_read_the_user_refuses_is_an_error_naming_the_uri(era: Era, url: str) -> None:
    async with asyncio.timeout(15):
        async with connect(era, url, elicitation_callback=Person(accept(ok=False))) as client:
            with pytest.raises(MCPError) as raised:
                await client.read_resource("features://items/locked")
    assert raised.value.code == -32602
    assert raised.value.data == {"uri": "features://items/locked"}
    assert "stays locked" in str(raised.value)


@only(MODERN)
async def test_read_rounds_by_hand_resume_the_same_handler(era: Era, url: str) -> None:
    async with asyncio.timeout(15), connect(era, url, elicitation_callback=Person()) as client:
        session = client.session
        first = await session.read_resource("features://items/locked", allow_input_required=True)
        assert isinstance(first, InputRequiredResult)
        assert list(first.input_requests or {}) == ["unlock"]
        done = await session.read_resource(
            "features://items/locked",
            input_responses={"unlock": ElicitResult(action="accept", content={"ok": True})},
            request_state=first.request_state,
            allow_input_required=True,
        )
    assert isinstance(done, ReadResourceResult)
    body = json.loads(done.contents[0].text)  # type: ignore[union-attr]
    assert body["starts"] >= 1


@only(LEGACY)
async def test_resources_templates_and_reads(era: Era, url: str) -> None:
    async with (
        asyncio.timeout(15),
        connect(era, url, elicitation_callback=Person(accept(ok=True))) as client,
    ):
        resources = [str(r.uri) for r in (await client.list_resources()).resources]
        templates = (await client.list_resource_templates()).resource_templates
        logo = await client.read_resource("features://logo")
        locked = await client.read_resource("features://items/locked")
        with pytest.raises(MCPError) as raised:
            await client.read_resource("features://nothing")
    assert resources == ["features://note", "features://logo", "features://watched"]
    assert [t.uri_template for t in templates] == ["features://items/{id}"]
    assert base64.b64decode(logo.contents[0].blob) == PNG  # type: ignore[union-attr]
    assert json.loads(locked.contents[0].text)["id"] == "locked"  # type: ignore[union-attr]
    # This era's code for an unknown resource, still naming the URI.
    assert raised.value.code == -32002
    assert raised.value.data == {"uri": "features://nothing"}


@only(LEGACY)
def test_legacy_reads_carry_no_caching_hints(era: Era, url: str) -> None:
    session, _ = legacy_initialize(url)
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "resources/read",
        "params": {"uri": "features://note"},
    }
    reply = assert_valid(
        "resources/read", post(url, body, legacy_headers(session)).json(), "2025-11-25"
    )
    assert set(reply["result"]) == {"contents"}


# ---------------------------------------------------------------- completions


async def test_completions_for_prompt_arguments_and_template_variables(url: str, era: Era) -> None:
    async with asyncio.timeout(15), connect(era, url) as completing:
        names = await completing.complete(
            PromptReference(type="ref/prompt", name="feat_greet"), {"name": "name", "value": "al"}
        )
        by_a = await completing.complete(
            PromptReference(type="ref/prompt", name="feat_greet"), {"name": "name", "value": "a"}
        )
        formal = await completing.complete(
            PromptReference(type="ref/prompt", name="feat_greet"),
            {"name": "name", "value": "b"},
            context_arguments={"style": "formal"},
        )
        ids = await completing.complete(
            ResourceTemplateReference(type="ref/resource", uri="features://items/{id}"),
            {"name": "id", "value": "4"},
        )
        locked = await completing.complete(
            ResourceTemplateReference(type="ref/resource", uri="features://items/{id}"),
            {"name": "id", "value": "l"},
        )
        nothing = await completing.complete(
            PromptReference(type="ref/prompt", name="feat_briefing"), {"name": "x", "value": ""}
        )
    assert names.completion.values == ["alice", "albert"]
    assert by_a.completion.values == ["alice", "albert"]
    assert (names.completion.total, names.completion.has_more) == (2, False)
    assert formal.completion.values == ["Bob"]
    assert ids.completion.values == ["42"]
    assert locked.completion.values == ["locked"]
    assert nothing.completion.values == []


@only(MODERN)
def test_at_most_a_hundred_completions_come_back(era: Era, url: str) -> None:
    body = request_body(
        "completion/complete",
        {
            "ref": {"type": "ref/prompt", "name": "feat_greet"},
            "argument": {"name": "style", "value": "style-"},
        },
    )
    completion = result_of(post(url, body), "completion/complete")["completion"]
    assert completion["values"] == list(STYLES[:100])
    assert (completion["total"], completion["hasMore"]) == (150, True)


@only(MODERN)
@pytest.mark.parametrize(
    "params",
    [
        {
            "ref": {"type": "ref/prompt", "name": "feat_nope"},
            "argument": {"name": "a", "value": ""},
        },
        {
            "ref": {"type": "ref/resource", "uri": "features://note"},
            "argument": {"name": "a", "value": ""},
        },
        {"ref": {"type": "ref/tool", "name": "x"}, "argument": {"name": "a", "value": ""}},
        {"ref": {"type": "ref/prompt", "name": "feat_greet"}, "argument": {"name": "name"}},
        {
            "ref": {"type": "ref/prompt", "name": "feat_greet"},
            "argument": {"name": "name", "value": ""},
            "context": {"arguments": {"style": 1}},
        },
    ],
)
def test_bad_completion_requests_are_invalid_params(
    era: Era, url: str, params: dict[str, Any]
) -> None:
    error = error_of(
        post(url, request_body("completion/complete", params)), "completion/complete", 400
    )
    assert error["code"] == -32602


# ---------------------------------------------------------------- progress and logging


async def test_progress_reaches_the_callback_of_a_call_that_asked_for_it(
    url: str, era: Era
) -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    async with asyncio.timeout(15), connect(era, url) as reporting:
        result = await reporting.call_tool("feat_progress", {}, progress_callback=on_progress)
    assert text_of(result) == "done"
    assert [progress for progress, _, _ in seen] == [0, 50, 100]
    assert seen == [(0, 100, "step 0"), (50, 100, "step 50"), (100, 100, "step 100")]


@only(MODERN)
def test_progress_turns_the_reply_into_an_event_stream_only_when_asked(era: Era, url: str) -> None:
    plain = post(url, request_body("tools/call", {"name": "feat_progress"}))
    assert plain.headers["content-type"] == "application/json"
    body = request_body("tools/call", {"name": "feat_progress"})
    body["params"]["_meta"]["progressToken"] = "p-1"
    streamed = post(url, body)
    assert streamed.headers["content-type"] == "text/event-stream"
    *notes, final = sse_messages(streamed.text)
    assert [n["params"]["progress"] for n in notes] == [0, 50, 100]
    assert {n["params"]["progressToken"] for n in notes} == {"p-1"}
    assert assert_valid("tools/call", final)["result"]["content"][0]["text"] == "done"


@only(MODERN)
async def test_log_messages_come_only_at_or_above_the_requested_level(era: Era, url: str) -> None:
    heard: list[LoggingMessageNotificationParams] = []

    async def on_log(params: LoggingMessageNotificationParams) -> None:
        heard.append(params)

    async with (
        asyncio.timeout(15),
        connect(era, url, logging_callback=on_log, log_level="info") as client,
    ):
        await client.call_tool("feat_log", {})
    assert [(p.level, p.data, p.logger) for p in heard] == [
        ("info", {"said": "info"}, "features"),
        ("warning", {"said": "warning"}, "features"),
    ]
    heard.clear()
    async with asyncio.timeout(15), connect(era, url, logging_callback=on_log) as client:
        await client.call_tool("feat_log", {})
    assert heard == []  # no logLevel in _meta: no notifications/message at all


@only(MODERN)
def test_without_a_log_level_the_reply_is_plain_json(era: Era, url: str) -> None:
    response = post(url, request_body("tools/call", {"name": "feat_log"}))
    assert response.headers["content-type"] == "application/json"
    assert result_of(response, "tools/call")["content"][0]["text"] == "logged"


@only(LEGACY)
async def test_log_messages_follow_the_sessions_level(era: Era, url: str) -> None:
    heard: list[LoggingMessageNotificationParams] = []

    async def on_log(params: LoggingMessageNotificationParams) -> None:
        heard.append(params)

    async with asyncio.timeout(15), connect(era, url, logging_callback=on_log) as client:
        await client.call_tool("feat_log", {})
        assert heard == []  # no level set in this session yet
        with pytest.warns(MCPDeprecationWarning):  # logging is deprecated from 2026-07-28
            await client.set_logging_level("warning")
        await client.call_tool("feat_log", {})
    assert [(p.level, p.data) for p in heard] == [("warning", {"said": "warning"})]


# ---------------------------------------------------------------- sampling and roots


async def test_sampling_and_roots_go_to_the_client(url: str, era: Era) -> None:
    # As input requests at 2026-07-28; pushed on the call's stream in the initialize era.
    async with asyncio.timeout(15):
        async with connect(
            era, url, sampling_callback=sampler, list_roots_callback=roots_lister
        ) as asking:
            sampled = await asking.call_tool("feat_sample", {"prompt": "Hi?"})
            roots = await asking.call_tool("feat_roots", {})
    assert json.loads(text_of(sampled)) == {"model": "test-model", "text": "echo: Hi? / Be brief."}
    assert json.loads(text_of(roots)) == ["file:///work/a", "file:///work/b"]


@only(MODERN)
@pytest.mark.parametrize("tool, capability", [("feat_sample", "sampling"), ("feat_roots", "roots")])
def test_sampling_and_roots_need_their_capability(
    era: Era, url: str, tool: str, capability: str
) -> None:
    body = request_body("tools/call", {"name": tool, "arguments": {"prompt": "x"}}, caps=FORM_CAPS)
    error = error_of(post(url, body), "tools/call", 400)
    assert error["code"] == -32021
    assert error["data"] == {"requiredCapabilities": {capability: {}}}


@only(MODERN)
def test_a_sampling_round_names_its_request_and_takes_a_raw_result(era: Era, url: str) -> None:
    caps = {"sampling": {}}
    params = {"name": "feat_sample", "arguments": {"prompt": "Raw?"}}
    first = result_of(post(url, request_body("tools/call", params, caps=caps)), "tools/call")
    ((key, request),) = first["inputRequests"].items()
    assert key == "sampling"
    assert request == {
        "method": "sampling/createMessage",
        "params": {
            "messages": [{"role": "user", "content": {"type": "text", "text": "Raw?"}}],
            "maxTokens": 50,
            "systemPrompt": "Be brief.",
        },
    }
    reply = {"role": "assistant", "content": {"type": "text", "text": "ok"}, "model": "m"}
    retry = request_body(
        "tools/call",
        {**params, "requestState": first["requestState"], "inputResponses": {key: reply}},
        caps=caps,
    )
    done = result_of(post(url, retry), "tools/call")
    assert json.loads(done["content"][0]["text"]) == {"model": "m", "text": "ok"}


@only(LEGACY)
async def test_without_the_capability_sampling_and_roots_are_error_results(
    era: Era, url: str
) -> None:
    async with asyncio.timeout(15), connect(era, url) as client:
        sampled = await client.call_tool("feat_sample", {"prompt": "Hi?"})
        roots = await client.call_tool("feat_roots", {})
    assert sampled.is_error is True and "'sampling'" in text_of(sampled)
    assert roots.is_error is True and "'roots'" in text_of(roots)


# ---------------------------------------------------------------- subscriptions (initialize era)


@only(LEGACY)
def test_a_subscribed_resource_update_arrives_on_the_sessions_get_stream(
    era: Era, url: str
) -> None:
    session, _ = legacy_initialize(url)
    headers = legacy_headers(session)
    touch = {"name": "feat_touch", "arguments": {"uri": "features://watched"}}
    with http().stream("GET", url, headers={**headers, "accept": "text/event-stream"}) as stream:
        assert stream.headers["content-type"] == "text/event-stream"
        messages = stream_messages(stream)
        assert session_call(url, headers, "resources/subscribe", {"uri": "features://watched"}) == {
            "jsonrpc": "2.0",
            "id": 9,
            "result": {},
        }
        session_call(url, headers, "resources/subscribe", {"uri": "features://note"})
        session_call(url, headers, "tools/call", touch)
        assert next(messages) == {
            "jsonrpc": "2.0",
            "method": "notifications/resources/updated",
            "params": {"uri": "features://watched"},
        }
        session_call(url, headers, "resources/unsubscribe", {"uri": "features://watched"})
        session_call(url, headers, "tools/call", touch)  # no longer subscribed: nothing is sent
        session_call(url, headers, "tools/call", {**touch, "arguments": {"uri": "features://note"}})
        # The stream is ordered, so the next message proves the unsubscribed touch sent nothing.
        assert next(messages)["params"] == {"uri": "features://note"}
        assert post(url, None, headers, raw=b"").status_code == 400  # still the same session
        http().delete(url, headers=headers)
        assert list(messages) == []  # ending the session ends its stream


@only(LEGACY)
def test_subscribing_to_an_unknown_resource_is_refused(era: Era, url: str) -> None:
    session, _ = legacy_initialize(url)
    reply = session_call(
        url, legacy_headers(session), "resources/subscribe", {"uri": "features://nope"}
    )
    assert reply["error"]["code"] == -32002
    assert reply["error"]["data"] == {"uri": "features://nope"}
