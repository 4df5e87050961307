"""The one boundary where a tool's value or exception becomes its result, for both eras and the bridge; no wire.

A string or :class:`~ask_mcp.server.catalog.toolkit.ToolResult` is the result; a question that ended
unanswered is a plain result saying so; a :class:`~ask_mcp.server.errors.ToolError` is an
`isError` result the model can act on; anything else is logged and becomes an `isError` result
that gives nothing away. Errors the protocol defines propagate, for the dispatch boundary to
map. It does not know the wire's eras or who called. Pure.
"""

from __future__ import annotations

import logging
from typing import Any

from ask_mcp.protocol.jsonrpc import JsonRpcError
from ask_mcp.server.catalog.toolkit import ToolResult
from ask_mcp.server.errors import ElicitationEnded, MissingClientCapability, ToolError

logger = logging.getLogger("ask_mcp.server")


def tool_outcome(tool_name: str, value: Any, error: BaseException | None) -> ToolResult:
    """What a finished tool call amounts to: its value as a result, or what its exception means.

    Raises:
        JsonRpcError, MissingClientCapability: `error` is one (the protocol's, not the model's).
    """
    if error is None:
        if isinstance(value, str):
            return ToolResult.text(value)
        if isinstance(value, ToolResult):
            return value
        error = TypeError(f"a tool returned {type(value).__name__}; return a ToolResult or a str")
    if isinstance(error, JsonRpcError | MissingClientCapability):
        raise error
    if isinstance(error, ElicitationEnded):
        return ToolResult.text(error.text)
    if isinstance(error, ToolError):
        return ToolResult.text(str(error), is_error=True)
    logger.error("tool %s failed", tool_name, exc_info=error)
    return ToolResult.text(
        f"The tool {tool_name} failed with an internal error; the server log has the details.",
        is_error=True,
    )


def finish_tool_call(tool_name: str, value: Any, error: BaseException | None) -> dict[str, Any]:
    """The wire result of a finished tools/call: the tool's value, or what its exception means.

    Errors the protocol defines propagate (and become JSON-RPC errors); everything a model can
    read and act on becomes a result.
    """
    return tool_outcome(tool_name, value, error).to_dict()


def tool_failure(exc: BaseException, tool_name: str) -> dict[str, Any]:
    """The exception-to-result half of the boundary for tools/call."""
    return tool_outcome(tool_name, None, exc).to_dict()
