"""The MCP server core, free of Django: server, toolkits (tools, prompts, resources), context, the elicitation table."""

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
from .prompts import Prompt, PromptArgument, PromptResult
from .resources import Resource, ResourceContents, ResourceTemplate
from .toolkit import (
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
    "MCPServer",
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
