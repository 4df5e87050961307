"""The /mcp endpoint over raw HTTP: the validation ladder, statuses, framing and limits.

Raw HTTP because these assertions are about what a client library hides: status codes,
headers, ids and the exact error codes.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator

import httpx2
import pytest

from tests.support.live import LiveServer
from tests.support.wire import (
    FORM_CAPS,
    assert_valid,
    headers_for,
    http,
    post,
    raw_http,
    request_body,
    sse_messages,
)


def error_of(response: httpx2.Response) -> dict:
    body = response.json()
    assert "result" not in body
    return body["error"]


def test_discover_describes_the_server(mcp_url: str) -> None:
    body = request_body("server/discover")
    response = post(mcp_url, body)
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    result = assert_valid("server/discover", response.json())["result"]
    assert result["resultType"] == "complete"
    assert "2026-07-28" in result["supportedVersions"]
    # Only what is registered: tools (no prompts or resources in this server), and logging.
    assert result["capabilities"] == {
        "tools": {},
        "logging": {},
        "extensions": {"io.modelcontextprotocol/tasks": {}},  # user_ask runs as a task
    }
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "askserver"
    assert result["instructions"]
    assert result["ttlMs"] >= 0 and result["cacheScope"] in ("public", "private")


def test_tools_list_is_deterministic_and_describes_user_ask(mcp_url: str) -> None:
    body = request_body("tools/list")
    first = assert_valid("tools/list", post(mcp_url, body).json())["result"]
    second = assert_valid("tools/list", post(mcp_url, body).json())["result"]
    assert first == second
    tools = {tool["name"]: tool for tool in first["tools"]}
    assert next(iter(tools)) == "user_ask"
    assert all(tool["description"] for tool in tools.values())
    ask = tools["user_ask"]
    assert ask["annotations"] == {
        "title": "Ask the user",
        "readOnlyHint": True,
        "openWorldHint": False,
    }
    assert ask["inputSchema"]["required"] == ["message"]
    assert "secret" in ask["description"]


@pytest.mark.parametrize(
    "meta, missing",
    [
        (None, "_meta"),
        ({"io.modelcontextprotocol/clientCapabilities": {}}, "protocolVersion"),
        ({"io.modelcontextprotocol/protocolVersion": "2026-07-28"}, "clientCapabilities"),
    ],
)
def test_missing_meta_fields_are_invalid_params(
    mcp_url: str, meta: dict | None, missing: str
) -> None:
    body = {"jsonrpc": "2.0", "id": "m-1", "method": "tools/list", "params": {}}
    if meta is not None:
        body["params"]["_meta"] = meta
    response = post(mcp_url, body)
    assert response.status_code == 400
    reply = assert_valid("tools/list", response.json())
    assert reply["id"] == "m-1"
    assert reply["error"]["code"] == -32602
    assert missing in reply["error"]["message"]


def test_meta_without_client_info_is_served(mcp_url: str) -> None:
    body = request_body(
        "tools/list",
        meta={
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
        },
    )
    assert post(mcp_url, body).status_code == 200


def mismatch_cases() -> Iterator[tuple[str, dict, dict[str, str | None]]]:
    lst = request_body("tools/list")
    call = request_body(
        "tools/call", {"name": "user_ask", "arguments": {"message": "hi"}}, caps=FORM_CAPS
    )
    yield "version header missing", lst, {"mcp-protocol-version": None}
    yield "version header differs from body", lst, {"mcp-protocol-version": "2025-11-25x"}
    yield "method header missing", lst, {"mcp-method": None}
    yield "method header differs", lst, {"mcp-method": "prompts/list"}
    yield "method header case differs", lst, {"mcp-method": "TOOLS/LIST"}
    yield "name header missing", call, {"mcp-name": None}
    yield "name header differs", call, {"mcp-name": "wrong_tool_name"}
    yield "name header bad base64", call, {"mcp-name": "=?base64?dXNlcl9hc2s?="}
    yield "name header non-alphabet base64", call, {"mcp-name": "=?base64?dXNl!!cl9hc2s=?="}


@pytest.mark.parametrize("case", list(mismatch_cases()), ids=lambda case: case[0])
def test_header_problems_are_header_mismatch(mcp_url: str, case: tuple) -> None:
    _, body, changes = case
    headers = headers_for(body)
    for name, value in changes.items():
        headers.pop(name, None)
        if value is not None:
            headers[name] = value
    response = post(mcp_url, body, headers)
    assert response.status_code == 400
    reply = assert_valid(body["method"], response.json())
    assert reply["error"]["code"] == -32020
    assert reply["id"] == 1


def test_header_checks_decode_base64_ignore_outer_whitespace_and_name_case(mcp_url: str) -> None:
    body = request_body("tools/call", {"name": "probe_table"})
    headers = headers_for(body)
    headers["mcp-name"] = "=?base64?" + base64.b64encode(b"probe_table").decode() + "?="
    assert post(mcp_url, body, headers).status_code == 200
    payload = json.dumps(body).encode()
    status, _ = raw_http(
        mcp_url,
        (
            f"POST /mcp HTTP/1.1\nHost: {mcp_url.split('/')[2]}\nContent-Type: application/json\n"
            f"MCP-Protocol-Version: 2026-07-28\nMcp-Method:  tools/call \nMcp-Name: \t probe_table  \n"
            f"Content-Length: {len(payload)}\nConnection: close\n"
        ),
        payload,
    )
    assert status == 200
    upper = {key.upper(): value for key, value in headers_for(body).items()}
    assert post(mcp_url, body, upper).status_code == 200


def test_a_routing_header_sent_twice_is_a_mismatch(mcp_url: str) -> None:
    body = request_body("tools/list")
    headers = [*list(headers_for(body).items()), ("Mcp-Method", "tools/list")]
    response = http().post(mcp_url, content=json.dumps(body), headers=headers)
    assert response.status_code == 400
    assert error_of(response)["code"] == -32020


def test_header_check_comes_before_the_version_check(mcp_url: str) -> None:
    body = request_body(
        "tools/list",
        meta={
            "io.modelcontextprotocol/protocolVersion": "v999.0.0",
            "io.modelcontextprotocol/clientCapabilities": {},
        },
    )
    response = post(mcp_url, body, {**headers_for(body), "mcp-protocol-version": "2026-07-28"})
    assert response.status_code == 400
    assert error_of(response)["code"] == -32020


def test_unsupported_version_lists_supported_and_echoes_requested(mcp_url: str) -> None:
    body = request_body(
        "tools/list",
        meta={
            "io.modelcontextprotocol/protocolVersion": "2099-01-01",
            "io.modelcontextprotocol/clientCapabilities": {},
        },
    )
    response = post(mcp_url, body, {**headers_for(body), "mcp-protocol-version": "2099-01-01"})
    assert response.status_code == 400
    reply = assert_valid("tools/list", response.json())
    error = reply["error"]
    assert error["code"] == -32022
    assert error["data"] == {"supported": ["2026-07-28"], "requested": "2099-01-01"}
    discover = post(mcp_url, request_body("server/discover")).json()["result"]
    assert set(error["data"]["supported"]) <= set(discover["supportedVersions"])


@pytest.mark.parametrize(
    "method",
    [
        "initialize",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
        "unknown/method",
        "prompts/list",
        "subscriptions/listen",
    ],
)
def test_unknown_and_removed_methods_are_404_method_not_found(mcp_url: str, method: str) -> None:
    body = request_body(method, id=7)
    response = post(mcp_url, body)
    assert response.status_code == 404
    reply = response.json()
    assert reply == {"jsonrpc": "2.0", "id": 7, "error": reply["error"]}
    assert reply["error"]["code"] == -32601
    assert method in reply["error"]["message"]


def test_missing_elicitation_capability_is_32021_naming_both_fixes(mcp_url: str) -> None:
    body = request_body("tools/call", {"name": "user_ask", "arguments": {"message": "Deploy?"}})
    response = post(mcp_url, body)
    assert response.status_code == 400
    error = assert_valid("tools/call", response.json())["error"]
    assert error["code"] == -32021
    assert error["data"] == {"requiredCapabilities": {"elicitation": {"form": {}}}}
    assert "declares elicitation" in error["message"] and "on_elicit" in error["message"]


def test_notifications_are_accepted_with_202(mcp_url: str) -> None:
    body = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
    response = post(mcp_url, body, headers_for(body))
    assert response.status_code == 202
    assert response.content == b""


@pytest.mark.parametrize("method", ["GET", "DELETE", "PUT"])
def test_other_http_methods_are_405_with_allow_post(mcp_url: str, method: str) -> None:
    response = http().request(method, mcp_url, headers={"accept": "text/event-stream"})
    assert response.status_code == 405
    assert response.headers["allow"] == "POST"
    assert response.json()["error"]["code"] == -32600


def test_a_body_over_the_limit_is_413_without_reading_it_all(mcp_url: str) -> None:
    big = (
        b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"x":"' + b"a" * (2 << 20) + b'"}}'
    )
    response = post(mcp_url, None, headers_for({"method": "tools/list"}), raw=big)
    assert response.status_code == 413
    assert "1048576" in response.json()["error"]["message"]

    def chunks() -> Iterator[bytes]:  # no Content-Length: the limit is enforced while reading
        for _ in range(20):
            yield b"a" * (100 << 10)

    response = http().post(mcp_url, content=chunks(), headers=headers_for({"method": "tools/list"}))
    assert response.status_code == 413


def test_cross_site_origin_and_foreign_host_are_403(mcp_url: str, live: LiveServer) -> None:
    body = request_body("tools/list")
    host = live.base_url.removeprefix("http://")
    evil = post(mcp_url, body, {**headers_for(body), "origin": "http://evil.example.com"})
    assert evil.status_code == 403
    assert "Origin" in evil.json()["error"]["message"]
    port = host.rsplit(":", 1)[1]
    rebound = post(
        mcp_url,
        body,
        {
            **headers_for(body),
            "host": f"evil.example.com:{port}",
            "origin": f"http://evil.example.com:{port}",
        },
    )
    assert rebound.status_code == 403  # the server's port, another name: ALLOWED_HOSTS refuses
    # Without a port the Host names port 80, not the server's: refused before any name is read.
    other_port = post(mcp_url, body, {**headers_for(body), "host": "evil.example.com"})
    assert other_port.status_code == 421
    same = post(mcp_url, body, {**headers_for(body), "origin": f"http://{host}"})
    assert same.status_code == 200


def test_wrong_content_type_is_415_and_unacceptable_accept_is_406(mcp_url: str) -> None:
    body = request_body("tools/list")
    assert (
        post(mcp_url, body, {**headers_for(body), "content-type": "text/plain"}).status_code == 415
    )
    assert post(mcp_url, body, {**headers_for(body), "accept": "text/html"}).status_code == 406


def test_progress_switches_the_response_to_sse(mcp_url: str) -> None:
    body = request_body("tools/call", {"name": "probe_progress"})
    body["params"]["_meta"]["progressToken"] = "tok-1"
    response = post(mcp_url, body)
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/event-stream"
    assert response.headers["x-accel-buffering"] == "no"
    messages = sse_messages(response.text)
    progress = [m for m in messages if m.get("method") == "notifications/progress"]
    assert [m["params"]["progress"] for m in progress] == [0, 50, 100]
    assert all(m["params"]["progressToken"] == "tok-1" for m in progress)
    final = messages[-1]
    assert (
        final["id"] == 1
        and assert_valid("tools/call", final)["result"]["content"][0]["text"] == "done"
    )


def test_without_a_progress_token_the_same_call_answers_json(mcp_url: str) -> None:
    response = post(mcp_url, request_body("tools/call", {"name": "probe_progress"}))
    assert response.headers["content-type"] == "application/json"


@pytest.mark.parametrize(
    "params, fragment",
    [
        ({"name": 5}, "params.name"),
        ({"name": "no_such_tool"}, "Unknown tool"),
        ({"name": "user_ask", "arguments": [1]}, "params.arguments"),
        (
            {"name": "user_ask", "arguments": {"message": "m"}, "inputResponses": []},
            "inputResponses",
        ),
        (
            {"name": "user_ask", "arguments": {"message": "m"}, "inputResponses": None},
            "inputResponses",
        ),
        ({"name": "user_ask", "arguments": {"message": "m"}, "requestState": 12}, "requestState"),
        (
            {"name": "user_ask", "arguments": {"message": "m"}, "requestState": "x.y"},
            "requestState",
        ),
    ],
)
def test_bad_tools_call_params_are_invalid_params(
    mcp_url: str, params: dict, fragment: str
) -> None:
    body = request_body("tools/call", params, caps=FORM_CAPS)
    headers = headers_for(body)
    if not isinstance(params.get("name"), str):
        headers.pop("mcp-name", None)
    response = post(mcp_url, body, headers)
    assert response.status_code == 400
    error = assert_valid("tools/call", response.json())["error"]
    assert error["code"] == -32602
    assert fragment in error["message"]
