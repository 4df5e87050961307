"""JSON-RPC framing: what parse_message takes and refuses (each refusal naming its code), and the messages built back."""

from __future__ import annotations

import json

import pytest

from ask_mcp.protocol.jsonrpc import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    MAX_DEPTH,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    RESOURCE_NOT_FOUND,
    JsonRpcError,
    MessageError,
    Request,
    Response,
    encode,
    error_message,
    http_status,
    invalid_params,
    json_type,
    notification_message,
    parse_message,
    request_message,
    result_message,
)


def test_a_request_a_notification_and_a_response_are_told_apart() -> None:
    request = parse_message(b'{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"a":1}}')
    notification = parse_message(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
    response = parse_message(b'{"jsonrpc":"2.0","id":"r1","result":{"action":"accept"}}')
    assert request == Request(method="tools/list", params={"a": 1}, id=7)
    assert isinstance(notification, Request) and notification.is_notification
    assert notification.params == {} and notification.params_given is False
    assert response == Response(id="r1", result={"action": "accept"})


@pytest.mark.parametrize(
    "body, code, words",
    [
        (b"\xff{}", PARSE_ERROR, "not valid UTF-8"),
        (b'{"jsonrpc":', PARSE_ERROR, "line 1 column 12"),
        (b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"n":NaN}}', PARSE_ERROR, "NaN"),
        (
            b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"s":"\\ud800"}}',
            PARSE_ERROR,
            "surrogate",
        ),
        (b"[]", INVALID_REQUEST, "batches are not supported"),
        (b'"hello"', INVALID_REQUEST, "got a string"),
        (b'{"jsonrpc":"1.0","id":1,"method":"x"}', INVALID_REQUEST, '"jsonrpc" must be'),
        (b'{"jsonrpc":"2.0","id":true,"method":"x"}', INVALID_REQUEST, "got a boolean"),
        (b'{"jsonrpc":"2.0","id":1,"method":""}', INVALID_REQUEST, "non-empty string"),
        (b'{"jsonrpc":"2.0","id":1,"method":"x","result":{}}', INVALID_REQUEST, "cannot also"),
        (b'{"jsonrpc":"2.0","id":1,"method":"x","params":[1]}', INVALID_REQUEST, "got an array"),
        (b'{"jsonrpc":"2.0","result":{}}', INVALID_REQUEST, 'needs the "id"'),
        (b'{"jsonrpc":"2.0","id":1,"result":{},"error":{}}', INVALID_REQUEST, "not both"),
        (b'{"jsonrpc":"2.0","id":1,"result":3}', INVALID_REQUEST, "got a number"),
        (b'{"jsonrpc":"2.0","id":1}', INVALID_REQUEST, 'needs "method"'),
    ],
)
def test_a_body_that_is_not_one_message_is_refused_with_its_code_and_reason(
    body: bytes, code: int, words: str
) -> None:
    with pytest.raises(MessageError) as refused:
        parse_message(body)
    assert refused.value.error.code == code
    assert words in refused.value.error.message


def test_a_refused_request_keeps_its_id_when_it_could_be_read() -> None:
    with pytest.raises(MessageError) as refused:
        parse_message(b'{"jsonrpc":"2.0","id":"abc","method":"x","params":5}')
    assert refused.value.request_id == "abc"
    assert error_message(refused.value.request_id, refused.value.error)["id"] == "abc"


def test_nesting_past_the_limit_is_a_parse_error_and_at_the_limit_is_read() -> None:
    def nested(depth: int) -> bytes:
        # The envelope and params are two levels; the rest are arrays inside params.
        inner = "[" * (depth - 2) + "]" * (depth - 2)
        return f'{{"jsonrpc":"2.0","id":1,"method":"x","params":{{"v":{inner}}}}}'.encode()

    assert isinstance(parse_message(nested(MAX_DEPTH)), Request)
    with pytest.raises(MessageError) as refused:
        parse_message(nested(MAX_DEPTH + 1))
    assert f"more than {MAX_DEPTH} levels" in refused.value.error.message


def test_errors_carry_their_data_and_http_status() -> None:
    error = invalid_params("Unknown tool: 'x'", name="x")
    assert error.to_dict() == {
        "code": INVALID_PARAMS,
        "message": "Unknown tool: 'x'",
        "data": {"name": "x"},
    }
    assert error.http_status == 400
    assert JsonRpcError(RESOURCE_NOT_FOUND, "gone").to_dict() == {"code": -32002, "message": "gone"}
    assert http_status(METHOD_NOT_FOUND) == 404
    assert http_status(RESOURCE_NOT_FOUND) == 200  # not listed: the error rides a 200
    assert "code=-32602" in repr(error)


def test_an_error_without_a_known_id_leaves_the_id_out_rather_than_null() -> None:
    message = error_message(None, JsonRpcError(PARSE_ERROR, "Parse error"))
    assert message == {"jsonrpc": "2.0", "error": {"code": -32700, "message": "Parse error"}}


def test_built_messages_encode_compactly_as_utf8_and_read_back() -> None:
    built = [
        result_message(1, {"text": "café"}),
        notification_message("notifications/progress", {"progress": 1}),
        request_message("e1", "elicitation/create", {"message": "Name?"}),
    ]
    for message in built:
        data = encode(message)
        assert b" " not in data.replace(b"Name?", b"") and "café".encode() in encode(built[0])
        assert json.loads(data) == message
    assert isinstance(parse_message(encode(built[2])), Request)
    with pytest.raises(ValueError):
        encode({"n": float("nan")})


@pytest.mark.parametrize(
    "value, named",
    [
        (None, "null"),
        (True, "a boolean"),
        (1.5, "a number"),
        ("s", "a string"),
        ([], "an array"),
        ({}, "an object"),
    ],
)
def test_json_type_names_a_value_as_errors_say_it(value: object, named: str) -> None:
    assert json_type(value) == named
