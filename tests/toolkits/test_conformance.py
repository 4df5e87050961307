"""The Conformance fixture: the names the official suite calls, and that only its own settings load it."""

from __future__ import annotations

import importlib

from ask_mcp import MCPServer, conf
from ask_mcp.toolkits import build_toolkit
from tests.support.conformance import TOOLKIT
from tests.support.conformance.toolkit import JSON_SCHEMA_2020_12

SUITE_TOOLS = {
    "test_simple_text",
    "test_image_content",
    "test_audio_content",
    "test_embedded_resource",
    "test_multiple_content_types",
    "test_error_handling",
    "test_tool_with_progress",
    "test_tool_with_logging",
    "test_logging_tool",
    "test_sampling",
    "test_elicitation",
    "test_elicitation_sep1034_defaults",
    "test_elicitation_sep1330_enums",
    "test_missing_capability",
    "test_streaming_elicitation",
    "test_input_required_result_elicitation",
    "test_input_required_result_sampling",
    "test_input_required_result_list_roots",
    "test_input_required_result_request_state",
    "test_input_required_result_multiple_inputs",
    "test_input_required_result_multi_round",
    "test_input_required_result_tampered_state",
    "test_input_required_result_capabilities",
    "json_schema_2020_12_tool",
}
SUITE_PROMPTS = {
    "test_simple_prompt",
    "test_prompt_with_arguments",
    "test_prompt_with_embedded_resource",
    "test_prompt_with_image",
    "test_input_required_result_prompt",
}


def fixture_server() -> MCPServer:
    toolkit, prefix = build_toolkit(TOOLKIT, {})
    assert prefix is None
    return MCPServer("conformance").plug(toolkit)


def test_it_registers_the_exact_names_the_suite_calls() -> None:
    server = fixture_server()
    assert set(server.tools) >= SUITE_TOOLS
    assert set(server.prompts) == SUITE_PROMPTS
    assert set(server.resources) == {
        "test://static-text",
        "test://static-binary",
        "test://watched-resource",
    }
    assert set(server.resource_templates) == {"test://template/{id}/data"}
    assert ("ref/prompt", "test_prompt_with_arguments", "arg1") in server.completions


def test_it_advertises_no_list_changed_so_the_suite_skips_subscription_checks() -> None:
    capabilities = fixture_server().capabilities()
    assert capabilities == {
        "tools": {},
        "prompts": {},
        "resources": {},
        "completions": {},
        "logging": {},
    }


def test_tool_input_schemas_are_listed_exactly_as_declared() -> None:
    tools = fixture_server().tools
    assert tools["json_schema_2020_12_tool"].listing()["inputSchema"] == JSON_SCHEMA_2020_12
    region = tools["test_custom_header"].listing()["inputSchema"]["properties"]["region"]
    assert region["x-mcp-header"] == "Region"


def test_only_the_conformance_settings_load_it() -> None:
    assert "Conformance" not in conf.DEFAULTS["TOOLKITS"]
    settings = importlib.import_module("tests.support.conformance.settings")
    assert settings.ASK_MCP["TOOLKITS"] == {"Ask": {}, TOOLKIT: {}}
