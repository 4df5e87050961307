"""The LLM tool bridge: a server's tools offered straight to a chat-completions loop, without MCP on the wire.

:func:`tool_definitions` states the tools as the OpenAI Chat Completions API (`tools=[...]`)
or the Anthropic Messages API expects them; :func:`execute_tool_calls` runs the calls a model
made (OpenAI `tool_calls`, Anthropic `tool_use` blocks) through the same handlers MCP clients
reach, and answers with tool result messages in the calls' own dialect. There is no client to
show a form, so questions go to the server's `on_elicit`; without one, `user_ask` answers an
error result saying so. Nothing a model sends raises: a bad call becomes an error result.
Pure: no Django.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Final, Literal

from ask_mcp.protocol import mcp
from ask_mcp.protocol.jsonrpc import JsonRpcError, json_type, loads
from ask_mcp.server.catalog.results import tool_outcome
from ask_mcp.server.catalog.toolkit import ToolResult
from ask_mcp.server.context import Caller, Context
from ask_mcp.server.errors import ElicitationUnavailable, MissingClientCapability
from ask_mcp.server.identity import Identity

if TYPE_CHECKING:
    from ask_mcp.server.core import Server

Dialect = Literal["openai", "anthropic"]
DIALECTS: Final = ("openai", "anthropic")
"""The LLM APIs whose tool declarations and tool calls the bridge speaks."""

BRIDGE_CALLER: Final = Caller(
    mcp.MODERN_VERSION, {}, who=Identity.ANONYMOUS, client_name="llm-bridge"
)
"""Who calls through the bridge: no client, so no capabilities (every question goes to
on_elicit), and no credential (the program running the model loop is trusted as it is)."""

NOBODY_TO_ASK: Final = (
    "This tool needs to ask the user a question, and nobody can be asked: the LLM tool bridge "
    "has no client to show a form, and the server has no on_elicit. Configure on_elicit on "
    "the server (Server(..., on_elicit=...)), or carry on without asking."
)
"""The error result of a tool that asks when there is no on_elicit."""


def tool_definitions(server: Server, dialect: str = "openai") -> list[dict[str, Any]]:
    """Every tool of `server` as `dialect`'s API declares tools.

    Raises:
        ValueError: an unknown dialect.
    """
    chosen = _dialect(dialect)
    definitions: list[dict[str, Any]] = []
    for tool in server.tools.values():
        schema = dict(tool.input_schema)
        if chosen == "openai":
            definitions.append(
                {
                    "type": "function",
                    "function": {
                        "name": tool.name,
                        "description": tool.description,
                        "parameters": schema,
                    },
                }
            )
        else:
            definitions.append(
                {"name": tool.name, "description": tool.description, "input_schema": schema}
            )
    return definitions


async def execute_tool_calls(server: Server, calls: Iterable[Any]) -> list[dict[str, Any]]:
    """Run a model's tool calls in order and answer them in their own dialect.

    `calls` holds OpenAI Chat Completions `tool_calls` entries
    (`{"id", "type": "function", "function": {"name", "arguments": "<JSON>"}}`) or Anthropic
    `tool_use` content blocks (`{"type": "tool_use", "id", "name", "input"}`), as dicts or as
    the SDKs' pydantic objects. The calls run one after another, so a person is asked one
    question at a time.

    Returns one `{"role": "tool", "tool_call_id", "content"}` message per OpenAI call, and
    one `{"role": "user", "content": [tool_result blocks]}` message for all Anthropic calls
    (the Messages API wants every result of a turn in the next user message).
    """
    openai: list[dict[str, Any]] = []
    anthropic: list[dict[str, Any]] = []
    for raw in calls:
        call = _as_dict(raw)
        dialect = _dialect_of(call)
        call_id = _call_id(call, dialect)
        name, arguments, problem = _read_call(call, dialect)
        if problem is not None:
            result = ToolResult.text(problem, is_error=True)
        else:
            assert name is not None and arguments is not None
            result = await _run(server, name, arguments)
        if dialect == "openai":
            openai.append(_openai_message(call_id, result))
        else:
            anthropic.append(_anthropic_block(call_id, result))
    messages = openai
    if anthropic:
        messages.append({"role": "user", "content": anthropic})
    return messages


async def _run(server: Server, name: str, arguments: dict[str, Any]) -> ToolResult:
    tool = server.tools.get(name)
    if tool is None:
        offered = ", ".join(server.tools) or "no tools"
        return ToolResult.text(
            f"Unknown tool {name!r}; this server offers {offered}.", is_error=True
        )
    ctx = Context(
        server.table,
        BRIDGE_CALLER,
        method="tools/call",
        name=tool.name,
        arguments=arguments,
        title=tool.title,
        toolkit=server.toolkit_of(tool),
    )
    try:
        return tool_outcome(tool.name, await tool.handler(ctx, arguments), None)
    except ElicitationUnavailable:
        return ToolResult.text(NOBODY_TO_ASK, is_error=True)
    except MissingClientCapability as exc:
        return ToolResult.text(exc.message, is_error=True)
    except JsonRpcError as exc:
        return ToolResult.text(exc.message, is_error=True)
    except Exception as exc:
        return tool_outcome(tool.name, None, exc)


def _read_call(
    call: Mapping[str, Any], dialect: Dialect
) -> tuple[str | None, dict[str, Any] | None, str | None]:
    """The tool name and arguments of one call, or the problem that makes it unusable."""
    if dialect == "openai":
        function = call.get("function")
        if not isinstance(function, Mapping):
            return None, None, "The tool call has no `function` object naming the tool."
        name = function.get("name")
        raw = function.get("arguments")
        if raw is None or raw == "":
            arguments: Any = {}
        elif isinstance(raw, str):
            try:
                arguments = loads(raw)
            except json.JSONDecodeError as exc:
                return (
                    None,
                    None,
                    f"The arguments of {name!r} are not valid JSON ({exc.msg} at line "
                    f"{exc.lineno} column {exc.colno}); send them as one JSON object.",
                )
            except ValueError as exc:  # NaN, Infinity, 1e999: JSON no reply can carry
                return None, None, f"The arguments of {name!r} are not usable JSON: {exc}."
        else:
            arguments = raw  # some gateways send the object itself
    else:
        name = call.get("name")
        arguments = call.get("input", {})
    if not isinstance(name, str) or not name:
        return None, None, "The tool call does not name a tool."
    if not isinstance(arguments, dict):
        return (
            None,
            None,
            f"The arguments of {name!r} must be a JSON object, got {json_type(arguments)}.",
        )
    return name, arguments, None


def _openai_message(call_id: str, result: ToolResult) -> dict[str, Any]:
    text = _text_of(result)
    if result.is_error:
        # Chat Completions tool messages have no error flag: say it in the content.
        text = f"Error: {text}"
    return {"role": "tool", "tool_call_id": call_id, "content": text}


def _anthropic_block(call_id: str, result: ToolResult) -> dict[str, Any]:
    block: dict[str, Any] = {
        "type": "tool_result",
        "tool_use_id": call_id,
        "content": [{"type": "text", "text": _text_of(result)}],
    }
    if result.is_error:
        block["is_error"] = True
    return block


def _text_of(result: ToolResult) -> str:
    parts = []
    for block in result.content:
        if block.get("type") == "text":
            parts.append(str(block.get("text", "")))
        else:
            parts.append(json.dumps(block, separators=(",", ":"), ensure_ascii=False))
    return "\n".join(parts)


def _as_dict(call: Any) -> Mapping[str, Any]:
    if isinstance(call, Mapping):
        return call
    dump = getattr(call, "model_dump", None)  # the OpenAI and Anthropic SDKs' pydantic objects
    if callable(dump):
        value = dump()
        if isinstance(value, Mapping):
            return value
    return {}


def _dialect_of(call: Mapping[str, Any]) -> Dialect:
    if call.get("type") == "tool_use" or "input" in call:
        return "anthropic"
    return "openai"


def _call_id(call: Mapping[str, Any], dialect: Dialect) -> str:
    value = call.get("id")
    return value if isinstance(value, str) else ""


def _dialect(dialect: str) -> Dialect:
    if dialect == "openai":
        return "openai"
    if dialect == "anthropic":
        return "anthropic"
    raise ValueError(f"dialect must be one of {', '.join(DIALECTS)}, got {dialect!r}")
