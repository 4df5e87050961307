"""The MCP server core, free of Django: server, toolkits, context, the elicitation table."""

from __future__ import annotations

from ask_mcp.protocol.forms import ElicitResult

from .app import MCPServer
from .context import Context
from .elicitation import Question
from .errors import (
    ElicitationCapacityExceeded,
    ElicitationTimedOut,
    ElicitationUnavailable,
    MissingClientCapability,
    NoValidAnswer,
    QuestionNoLongerWaiting,
    ToolError,
)
from .toolkit import Tool, Toolkit, ToolResult, tool

__all__ = [
    "Context",
    "ElicitResult",
    "ElicitationCapacityExceeded",
    "ElicitationTimedOut",
    "ElicitationUnavailable",
    "MCPServer",
    "MissingClientCapability",
    "NoValidAnswer",
    "Question",
    "QuestionNoLongerWaiting",
    "Tool",
    "ToolError",
    "ToolResult",
    "Toolkit",
    "tool",
]
