"""Era detection: the transport's signs first (version header, session id), then the body's modern `_meta`."""

from __future__ import annotations

import pytest

from ask_mcp.protocol import mcp
from ask_mcp.protocol.era import (
    LEGACY,
    MODERN,
    declared_era,
    era_of,
    era_of_version,
    has_modern_meta,
)
from ask_mcp.protocol.jsonrpc import Request, Response

MODERN_CALL = Request(
    method="tools/list", params={"_meta": {mcp.META_PROTOCOL_VERSION: mcp.MODERN_VERSION}}, id=1
)
PLAIN_CALL = Request(method="tools/list", params={}, id=1)


def test_the_version_names_its_era() -> None:
    assert era_of_version(mcp.MODERN_VERSION) == MODERN
    assert {era_of_version(version) for version in mcp.LEGACY_VERSIONS} == {LEGACY}


@pytest.mark.parametrize(
    "header, session, era",
    [
        (mcp.MODERN_VERSION, None, MODERN),
        ("2099-01-01", "s1", MODERN),  # an unknown revision is not a handshake one
        ("2025-11-25", None, LEGACY),
        ("2024-11-05", "s1", LEGACY),
        (None, "s1", LEGACY),
        (None, None, None),
    ],
)
def test_the_transports_signs_declare_an_era_or_leave_it_to_the_body(
    header: str | None, session: str | None, era: str | None
) -> None:
    assert declared_era(header, session) == era


def test_without_a_declaration_modern_meta_says_modern_and_anything_else_is_legacy() -> None:
    assert era_of(MODERN_CALL) == MODERN
    assert era_of(PLAIN_CALL) == LEGACY
    assert era_of(Response(id=1, result={})) == LEGACY
    assert era_of(MODERN_CALL, declared=LEGACY) == LEGACY  # the transport's word wins


def test_only_a_request_whose_meta_names_a_version_has_modern_meta() -> None:
    assert has_modern_meta(MODERN_CALL)
    assert not has_modern_meta(PLAIN_CALL)
    assert not has_modern_meta(Request(method="x", params={"_meta": "not an object"}, id=1))
    assert not has_modern_meta(Request(method="x", params={"_meta": {"progressToken": 1}}, id=1))
    assert not has_modern_meta(Response(id=1, result={}))
