"""Property-based fuzzing of /mcp on a live server: whatever arrives, the answer is a proper one.

Properties, for every generated request: never a 5xx and never a traceback; every error is a
JSON-RPC error with a known code, the HTTP status that code calls for, and the request id echoed
when it was readable; every result validates against mcp-types; the server keeps serving.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.live import LiveServer
from tests.support.wire import FORM_CAPS, META, headers_for, post, reply_problem, request_body

KNOWN_CODES = {-32700, -32600, -32601, -32602, -32603, -32020, -32021, -32022}
STATUS = {
    -32700: 400,
    -32600: 400,
    -32602: 400,
    -32020: 400,
    -32021: 400,
    -32022: 400,
    -32601: 404,
    -32603: 200,
}
METHODS = [
    "server/discover",
    "tools/list",
    "tools/call",
    "initialize",
    "ping",
    "prompts/list",
    "resources/read",
    "notifications/cancelled",
    "x/y",
    "",
]
FUZZ = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**40), 2**40)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=40),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=12,
)
ids = st.one_of(
    st.integers(-1000, 10**12), st.text(max_size=12), st.none(), st.booleans(), st.floats()
)


def check(
    response: Any, method: str, request_id: Any = None, id_readable: bool = False
) -> dict[str, Any] | None:
    """The properties every response must have; returns the parsed reply (None for 202)."""
    assert response.status_code < 500, response.text
    assert "Traceback" not in response.text
    if response.status_code == 202:
        assert response.content == b""
        return None
    if response.headers["content-type"] == "text/event-stream":
        data = [line[5:] for line in response.text.splitlines() if line.startswith("data:")]
        reply = json.loads(data[-1])
    else:
        reply = response.json()
    assert reply["jsonrpc"] == "2.0"
    if "error" in reply:
        code = reply["error"]["code"]
        assert code in KNOWN_CODES, reply
        assert isinstance(reply["error"]["message"], str) and reply["error"]["message"]
        if response.status_code not in (401, 403, 405, 406, 413, 415):
            assert response.status_code == STATUS[code], (response.status_code, reply)
        assert "id" not in reply or reply["id"] is not None
        if id_readable:
            assert reply.get("id") == request_id, reply
    else:
        assert reply["id"] == request_id
        problem = reply_problem(method, "2026-07-28", reply)
        assert problem is None, problem
    return reply


@FUZZ
@given(body=st.binary(max_size=300))
def test_random_bytes_get_a_json_rpc_error(live: LiveServer, body: bytes) -> None:
    response = post(live.mcp_url, None, headers_for({"method": "tools/list"}), raw=body)
    assert response.status_code in (202, 400, 404), response.text
    check(response, "tools/list")


@FUZZ
@given(value=json_values)
def test_random_json_gets_a_proper_answer(live: LiveServer, value: Any) -> None:
    response = post(
        live.mcp_url, None, headers_for({"method": "tools/list"}), raw=json.dumps(value).encode()
    )
    check(response, "tools/list")


@FUZZ
@given(
    method=st.sampled_from(METHODS),
    request_id=ids,
    params=json_values,
    meta=st.one_of(st.just(META), json_values),
    header_method=st.booleans(),
    version=st.sampled_from(["2026-07-28", "2025-11-25", "2099-01-01", "", "v1"]),
)
def test_random_requests_get_proper_answers(
    live: LiveServer,
    method: str,
    request_id: Any,
    params: Any,
    meta: Any,
    header_method: bool,
    version: str,
) -> None:
    body: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if request_id is not None:
        body["id"] = request_id
    if isinstance(params, dict):
        params = {**params, "_meta": meta}
    body["params"] = params
    headers = headers_for(body)
    headers["mcp-protocol-version"] = version or "2026-07-28"
    if not header_method:
        headers["mcp-method"] = "tools/list"
    readable = (isinstance(request_id, int) and not isinstance(request_id, bool)) or isinstance(
        request_id, str
    )
    check(
        post(live.mcp_url, body, headers), method, request_id, id_readable=readable and bool(method)
    )


question = st.fixed_dictionaries(
    {},
    optional={
        "name": json_values | st.text(max_size=8),
        "prompt": json_values,
        "type": st.sampled_from(["string", "number", "integer", "boolean", "date", 3]),
        "options": json_values | st.lists(st.text(max_size=5), max_size=4),
        "required": json_values,
        "default": json_values,
        "multiple": json_values,
        "extra": json_values,
    },
)


@FUZZ
@given(
    message=json_values | st.text(max_size=200),
    questions=st.none() | json_values | st.lists(question, max_size=4),
    caps=st.sampled_from([FORM_CAPS, {}, {"elicitation": {"url": {}}}, {"elicitation": 3}]),
)
def test_random_user_ask_arguments_never_break_the_tool(
    live: LiveServer, message: Any, questions: Any, caps: Any
) -> None:
    arguments: dict[str, Any] = {"message": message}
    if questions is not None:
        arguments["questions"] = questions
    reply = check(
        post(
            live.mcp_url,
            request_body("tools/call", {"name": "user_ask", "arguments": arguments}, caps=caps),
        ),
        "tools/call",
        1,
    )
    assert reply is not None
    if "result" in reply:
        result = reply["result"]
        assert result.get("isError") is True or result["resultType"] == "input_required", result
    else:
        assert reply["error"]["code"] in (-32021, -32602), reply


@pytest.fixture(scope="module")
def parked_state(live: LiveServer) -> str:
    reply = post(
        live.mcp_url,
        request_body(
            "tools/call", {"name": "user_ask", "arguments": {"message": "fuzz"}}, caps=FORM_CAPS
        ),
    ).json()
    return str(reply["result"]["requestState"])


@FUZZ
@given(responses=json_values, mangle=st.sampled_from(["keep", "truncate", "flip", "swap"]))
def test_random_input_responses_and_states_never_break_a_round(
    live: LiveServer, parked_state: str, responses: Any, mangle: str
) -> None:
    state = {
        "keep": parked_state,
        "truncate": parked_state[:-3],
        "flip": parked_state[::-1],
        "swap": parked_state.replace(".", "x", 1),
    }[mangle]
    params = {
        "name": "user_ask",
        "arguments": {"message": "fuzz"},
        "requestState": state,
        "inputResponses": responses,
    }
    check(post(live.mcp_url, request_body("tools/call", params, caps=FORM_CAPS)), "tools/call", 1)


def test_the_server_still_serves_after_the_fuzzing(live: LiveServer) -> None:
    reply = post(live.mcp_url, request_body("server/discover")).json()
    assert "2026-07-28" in reply["result"]["supportedVersions"]
