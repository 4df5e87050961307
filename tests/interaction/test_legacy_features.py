"""Prompts, resources, completions, subscriptions, logging, progress, sampling and roots for initialize-era clients.

The official client in `mode="legacy"` (2025-11-25) drives a live server; requests the server
needs answered (elicitation, sampling, roots) travel as server-initiated requests on the call's
stream. Raw HTTP checks the standalone GET stream that carries resource updates.
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
from mcp import Client, MCPError
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp.types import (
    LoggingMessageNotificationParams,
    PromptReference,
    ResourceTemplateReference,
    TextContent,
)

from tests.support.clients import Person, accept, roots_lister, sampler
from tests.support.conformance.toolkit import PNG
from tests.support.features import FEATURES_CONFIG
from tests.support.live import LiveServers
from tests.support.results import text_of
from tests.support.wire import assert_valid, http, legacy_headers, legacy_initialize, post


@pytest.fixture(scope="module")
def url(live_servers: LiveServers) -> str:
    return live_servers.get(FEATURES_CONFIG).mcp_url


def legacy(url: str, **kwargs: Any) -> Client:
    return Client(url, mode="legacy", **kwargs)


def test_initialize_advertises_subscribable_resources_and_logging(url: str) -> None:
    _, result = legacy_initialize(url)
    assert result["capabilities"] == {
        "tools": {},
        "prompts": {},
        "resources": {"subscribe": True},
        "completions": {},
        "logging": {},
    }


def test_a_session_without_prompts_or_resources_has_no_such_methods(mcp_url: str) -> None:
    session, result = legacy_initialize(mcp_url)
    assert result["capabilities"] == {"tools": {}, "logging": {}}
    headers = legacy_headers(session)
    for method in ("prompts/list", "resources/read", "resources/subscribe", "completion/complete"):
        body = {"jsonrpc": "2.0", "id": 3, "method": method, "params": {"uri": "x:y"}}
        reply = post(mcp_url, body, headers).json()
        assert reply["error"]["code"] == -32601, method


async def test_prompts_render_and_a_prompt_asks_over_the_pushed_request(url: str) -> None:
    person = Person(accept(topic="tides"))
    async with asyncio.timeout(15), legacy(url, elicitation_callback=person) as client:
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


async def test_a_prompt_needing_a_capability_the_session_lacks_is_refused(url: str) -> None:
    async with asyncio.timeout(15), legacy(url) as client:
        with pytest.raises(MCPError) as raised:
            await client.get_prompt("feat_sampled")
    # No -32021 in this era: the same data on an invalid-request error.
    assert raised.value.code == -32600
    assert raised.value.data == {"requiredCapabilities": {"sampling": {}}}


async def test_resources_templates_and_reads(url: str) -> None:
    async with (
        asyncio.timeout(15),
        legacy(url, elicitation_callback=Person(accept(ok=True))) as client,
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


def test_legacy_reads_carry_no_caching_hints(url: str) -> None:
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


async def test_completions(url: str) -> None:
    async with asyncio.timeout(15), legacy(url) as client:
        names = await client.complete(
            PromptReference(type="ref/prompt", name="feat_greet"), {"name": "name", "value": "a"}
        )
        ids = await client.complete(
            ResourceTemplateReference(type="ref/resource", uri="features://items/{id}"),
            {"name": "id", "value": "l"},
        )
    assert names.completion.values == ["alice", "albert"]
    assert ids.completion.values == ["locked"]


async def test_sampling_and_roots_are_pushed_to_the_client(url: str) -> None:
    async with asyncio.timeout(15):
        async with legacy(
            url, sampling_callback=sampler, list_roots_callback=roots_lister
        ) as client:
            sampled = await client.call_tool("feat_sample", {"prompt": "Hi?"})
            roots = await client.call_tool("feat_roots", {})
    assert json.loads(text_of(sampled)) == {"model": "test-model", "text": "echo: Hi? / Be brief."}
    assert json.loads(text_of(roots)) == ["file:///work/a", "file:///work/b"]


async def test_without_the_capability_sampling_and_roots_are_error_results(url: str) -> None:
    async with asyncio.timeout(15), legacy(url) as client:
        sampled = await client.call_tool("feat_sample", {"prompt": "Hi?"})
        roots = await client.call_tool("feat_roots", {})
    assert sampled.is_error is True and "'sampling'" in text_of(sampled)
    assert roots.is_error is True and "'roots'" in text_of(roots)


async def test_log_messages_follow_the_sessions_level(url: str) -> None:
    heard: list[LoggingMessageNotificationParams] = []

    async def on_log(params: LoggingMessageNotificationParams) -> None:
        heard.append(params)

    async with asyncio.timeout(15), legacy(url, logging_callback=on_log) as client:
        await client.call_tool("feat_log", {})
        assert heard == []  # no level set in this session yet
        with pytest.warns(MCPDeprecationWarning):  # logging is deprecated from 2026-07-28
            await client.set_logging_level("warning")
        await client.call_tool("feat_log", {})
    assert [(p.level, p.data) for p in heard] == [("warning", {"said": "warning"})]


async def test_progress_is_reported_on_the_calls_stream(url: str) -> None:
    seen: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append(progress)

    async with asyncio.timeout(15), legacy(url) as client:
        await client.call_tool("feat_progress", {}, progress_callback=on_progress)
    assert seen == [0, 50, 100]


# ---------------------------------------------------------------- subscriptions


def stream_messages(response: httpx2.Response) -> Iterator[dict[str, Any]]:
    for line in response.iter_lines():
        if line.startswith("data:") and line[5:].strip():
            yield json.loads(line[5:])


def call(url: str, headers: dict[str, str], method: str, params: dict[str, Any]) -> dict[str, Any]:
    reply = post(url, {"jsonrpc": "2.0", "id": 9, "method": method, "params": params}, headers)
    return assert_valid(method, reply.json(), "2025-11-25")


def test_a_subscribed_resource_update_arrives_on_the_sessions_get_stream(url: str) -> None:
    session, _ = legacy_initialize(url)
    headers = legacy_headers(session)
    touch = {"name": "feat_touch", "arguments": {"uri": "features://watched"}}
    with http().stream("GET", url, headers={**headers, "accept": "text/event-stream"}) as stream:
        assert stream.headers["content-type"] == "text/event-stream"
        messages = stream_messages(stream)
        assert call(url, headers, "resources/subscribe", {"uri": "features://watched"}) == {
            "jsonrpc": "2.0",
            "id": 9,
            "result": {},
        }
        call(url, headers, "resources/subscribe", {"uri": "features://note"})
        call(url, headers, "tools/call", touch)
        assert next(messages) == {
            "jsonrpc": "2.0",
            "method": "notifications/resources/updated",
            "params": {"uri": "features://watched"},
        }
        call(url, headers, "resources/unsubscribe", {"uri": "features://watched"})
        call(url, headers, "tools/call", touch)  # no longer subscribed: nothing is sent
        call(url, headers, "tools/call", {**touch, "arguments": {"uri": "features://note"}})
        # The stream is ordered, so the next message proves the unsubscribed touch sent nothing.
        assert next(messages)["params"] == {"uri": "features://note"}
        assert post(url, None, headers, raw=b"").status_code == 400  # still the same session
        http().delete(url, headers=headers)
        assert list(messages) == []  # ending the session ends its stream


def test_subscribing_to_an_unknown_resource_is_refused(url: str) -> None:
    session, _ = legacy_initialize(url)
    reply = call(url, legacy_headers(session), "resources/subscribe", {"uri": "features://nope"})
    assert reply["error"]["code"] == -32002
    assert reply["error"]["data"] == {"uri": "features://nope"}
