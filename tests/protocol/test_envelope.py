"""Header value decoding and the Mcp-Param header mirror."""

from __future__ import annotations

import pytest

from ask_mcp.protocol.envelope import check_param_headers, decode_header_value
from ask_mcp.protocol.jsonrpc import HEADER_MISMATCH, JsonRpcError


@pytest.mark.parametrize(
    "raw, decoded",
    [
        ("plain", "plain"),
        ("=?base64?SGVsbG8=?=", "Hello"),
        ("=?base64?w6lsw6g=?=", "élè"),
        ("=?base64?SGVsbG8?=", None),  # missing padding
        ("=?base64?SGVs!!!bG8=?=", None),  # outside the alphabet
        ("=?base64?SGVsbG9=?=", None),  # non-canonical trailing bits
        ("=?base64?/w==?=", None),  # not UTF-8
        ("SGVsbG8=", "SGVsbG8="),  # no sentinel: literal
        ("=?base64?SGVsbG8=", "=?base64?SGVsbG8="),  # no closing marker: literal
    ],
)
def test_decode_header_value(raw: str, decoded: str | None) -> None:
    assert decode_header_value(raw) == decoded


SCHEMA = {
    "type": "object",
    "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"},
        "count": {"type": "integer", "x-mcp-header": "Count"},
        "flag": {"type": "boolean", "x-mcp-header": "Flag"},
    },
}


def test_param_headers_that_mirror_the_arguments_pass() -> None:
    check_param_headers(
        SCHEMA,
        {"region": "eu", "count": 3, "flag": True},
        {"mcp-param-region": "eu", "mcp-param-count": "3", "mcp-param-flag": "true"},
    )
    check_param_headers(SCHEMA, {"region": "é"}, {"mcp-param-region": "=?base64?w6k=?="})


@pytest.mark.parametrize(
    "arguments, headers",
    [
        ({"region": "eu"}, {}),
        ({}, {"mcp-param-region": "eu"}),
        ({"region": "eu"}, {"mcp-param-region": "us"}),
        ({"count": 3}, {"mcp-param-count": "three"}),
        ({"region": "eu"}, {"mcp-param-region": "=?base64?ZXU?="}),
    ],
)
def test_param_headers_that_disagree_are_mismatches(arguments: dict, headers: dict) -> None:
    with pytest.raises(JsonRpcError) as raised:
        check_param_headers(SCHEMA, arguments, headers)
    assert raised.value.code == HEADER_MISMATCH
