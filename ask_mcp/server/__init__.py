"""The MCP server core, free of Django: server, toolkits (tools, prompts, resources), context, the elicitation table."""

from __future__ import annotations

from ask_mcp.protocol.forms import ElicitResult
from ask_mcp.server.app import Server
from ask_mcp.server.context import Context
from ask_mcp.server.elicitation import Question
from ask_mcp.server.errors import (
    ElicitationCapacityExceeded,
    ElicitationTimedOut,
    ElicitationUnavailable,
    MissingClientCapability,
    NoValidAnswer,
    QuestionNoLongerWaiting,
    ToolError,
)
from ask_mcp.server.prompts import Prompt, PromptArgument, PromptResult
from ask_mcp.server.resources import Resource, ResourceContents, ResourceTemplate
from ask_mcp.server.toolkit import (
    Completion,
    Tool,
    Toolkit,
    ToolResult,
    completion,
    prompt,
    resource,
    resource_template,
    tool,
)

__all__ = [
    "Completion",
    "Context",
    "ElicitResult",
    "ElicitationCapacityExceeded",
    "ElicitationTimedOut",
    "ElicitationUnavailable",
    "MissingClientCapability",
    "NoValidAnswer",
    "Prompt",
    "PromptArgument",
    "PromptResult",
    "Question",
    "QuestionNoLongerWaiting",
    "Resource",
    "ResourceContents",
    "ResourceTemplate",
    "Server",
    "Tool",
    "ToolError",
    "ToolResult",
    "Toolkit",
    "completion",
    "prompt",
    "resource",
    "resource_template",
    "tool",
]
