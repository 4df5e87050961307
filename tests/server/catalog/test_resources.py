"""Resource templates matching URIs, and resources/read results built from what handlers return."""

from __future__ import annotations

from typing import Any

import pytest

from ask_mcp.protocol.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, JsonRpcError
from ask_mcp.server.catalog.resources import ResourceContents, ResourceTemplate, finish_read
from ask_mcp.server.errors import ElicitationTimedOut, MissingClientCapability, ToolError


async def handler(ctx: Any, uri: str, variables: dict[str, str]) -> str:
    return ""


@pytest.mark.parametrize(
    "template, uri, expected",
    [
        ("test://template/{id}/data", "test://template/123/data", {"id": "123"}),
        ("test://template/{id}/data", "test://template/a%2Fb/data", {"id": "a/b"}),
        ("test://template/{id}/data", "test://template/1/2/data", None),
        ("test://template/{id}/data", "test://template//data", None),
        ("test://template/{id}/data", "test://template/1/data?x=1", None),
        ("files://{dir}/{name}.txt", "files://docs/a.b.txt", {"dir": "docs", "name": "a.b"}),
        ("a.b://{x}", "aXb://1", None),  # the template's dots are literal
    ],
)
def test_templates_match_one_segment_per_variable(
    template: str, uri: str, expected: dict[str, str] | None
) -> None:
    assert ResourceTemplate(template, "t", handler).match(uri) == expected


def test_a_read_result_holds_text_bytes_or_contents_given_as_is() -> None:
    assert finish_read("x://a", "text/plain", "hi", None) == {
        "contents": [{"uri": "x://a", "mimeType": "text/plain", "text": "hi"}]
    }
    assert finish_read("x://a", None, b"\x00\x01", None) == {
        "contents": [{"uri": "x://a", "blob": "AAE="}]
    }
    two = [ResourceContents("x://a/1", text="1"), ResourceContents("x://a/2", blob=b"2")]
    assert finish_read("x://a", None, two, None) == {
        "contents": [{"uri": "x://a/1", "text": "1"}, {"uri": "x://a/2", "blob": "Mg=="}]
    }


def test_resource_contents_hold_exactly_one_of_text_and_blob() -> None:
    with pytest.raises(ValueError, match="exactly one of text and blob"):
        ResourceContents("x://a")
    with pytest.raises(ValueError, match="exactly one of text and blob"):
        ResourceContents("x://a", text="t", blob=b"b")


@pytest.mark.parametrize(
    "value, error, code, data",
    [
        ([], None, INTERNAL_ERROR, None),  # never an empty contents array
        (42, None, INTERNAL_ERROR, None),
        (None, ToolError("not yours"), INVALID_PARAMS, {"uri": "x://a"}),
        (None, ElicitationTimedOut(), INVALID_PARAMS, {"uri": "x://a"}),
        (None, RuntimeError("boom"), INTERNAL_ERROR, None),
    ],
)
def test_failed_reads_are_errors_never_empty_results(
    value: Any, error: BaseException | None, code: int, data: Any
) -> None:
    with pytest.raises(JsonRpcError) as raised:
        finish_read("x://a", None, value, error)
    assert (raised.value.code, raised.value.data) == (code, data)


def test_a_missing_capability_propagates_to_the_boundary() -> None:
    missing = MissingClientCapability("needs sampling", {"sampling": {}})
    with pytest.raises(MissingClientCapability):
        finish_read("x://a", None, None, missing)
