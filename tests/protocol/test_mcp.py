"""The MCP vocabulary's predicates: which elicitation modes a client declares and what an input request needs."""

from __future__ import annotations

from typing import Any

import pytest

from ask_mcp.protocol import mcp


@pytest.mark.parametrize(
    "capabilities, form, url",
    [
        ({"elicitation": {}}, True, False),  # the old empty object means form
        ({"elicitation": {"form": {}}}, True, False),
        ({"elicitation": {"url": {}}}, False, True),
        ({"elicitation": {"form": {}, "url": {}}}, True, True),
        ({"elicitation": True}, False, False),
        ({}, False, False),
    ],
)
def test_the_elicitation_modes_a_client_declares(
    capabilities: dict[str, Any], form: bool, url: bool
) -> None:
    assert mcp.supports_form_elicitation(capabilities) is form
    assert mcp.supports_url_elicitation(capabilities) is url


def test_each_input_request_names_the_capability_it_needs() -> None:
    form = {"method": mcp.ELICITATION_METHOD, "params": {"message": "?"}}
    url = {"method": mcp.ELICITATION_METHOD, "params": {"mode": "url"}}
    assert mcp.capability_for_request(form) == {"elicitation": {"form": {}}}
    assert mcp.capability_for_request(url) == {"elicitation": {"url": {}}}
    assert mcp.capability_for_request({"method": mcp.SAMPLING_METHOD}) == {"sampling": {}}
    assert mcp.capability_for_request({"method": mcp.ROOTS_METHOD}) == {"roots": {}}
    with pytest.raises(ValueError, match="'tools/call' is not an input request"):
        mcp.capability_for_request({"method": "tools/call"})


def test_declares_reads_what_capability_for_request_asks() -> None:
    client = {"elicitation": {}, "sampling": {}}
    assert mcp.declares(client, {"elicitation": {"form": {}}})
    assert not mcp.declares(client, {"elicitation": {"url": {}}})
    assert mcp.declares(client, {"sampling": {}})
    assert not mcp.declares(client, {"roots": {}})
    assert not mcp.has_capability({"roots": True}, "roots")  # a capability is an object


def test_the_versions_and_method_tables_agree_with_each_other() -> None:
    assert mcp.SUPPORTED_VERSIONS[0] == mcp.MODERN_VERSION
    assert set(mcp.LEGACY_VERSIONS) <= set(mcp.HANDSHAKE_VERSIONS)
    assert mcp.MODERN_VERSION not in mcp.HANDSHAKE_VERSIONS
    assert set(mcp.CAPABILITY_OF_METHOD) >= mcp.INPUT_REQUIRED_METHODS
    assert not mcp.REMOVED_IN_MODERN & mcp.INPUT_REQUIRED_METHODS
    assert list(mcp.LOG_LEVELS[:4]) == ["debug", "info", "notice", "warning"]
