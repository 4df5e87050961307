"""The MCP engine: server, toolkits, Context, elicitation table and the ports its neighbours implement; no Django.

Layered inside, bottom up: errors, ids, state, question, ports, context, parked, elicitation,
toolkit (tools, prompts, resources), registry, catalog, results, era, modern and legacy, core.
It does not know Django, Channels, settings or any transport.
"""

from __future__ import annotations

from ask_mcp.protocol.forms import ElicitResult
from ask_mcp.server.context import AnswerUrl, Caller, Context, OnElicit
from ask_mcp.server.core import Server
from ask_mcp.server.errors import (
    ElicitationCapacityExceeded,
    ElicitationTimedOut,
    ElicitationUnavailable,
    MissingClientCapability,
    NoValidAnswer,
    PrincipalShareExceeded,
    QuestionNoLongerWaiting,
    ToolError,
)
from ask_mcp.server.ports import (
    InputChannel,
    NullStream,
    QuestionObserver,
    Relay,
    ResponseRouter,
    Stream,
)
from ask_mcp.server.prompts import Prompt, PromptArgument, PromptResult
from ask_mcp.server.question import Question
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
    "AnswerUrl",
    "Caller",
    "Completion",
    "Context",
    "ElicitResult",
    "ElicitationCapacityExceeded",
    "ElicitationTimedOut",
    "ElicitationUnavailable",
    "InputChannel",
    "MissingClientCapability",
    "NoValidAnswer",
    "NullStream",
    "OnElicit",
    "PrincipalShareExceeded",
    "Prompt",
    "PromptArgument",
    "PromptResult",
    "Question",
    "QuestionNoLongerWaiting",
    "QuestionObserver",
    "Relay",
    "Resource",
    "ResourceContents",
    "ResourceTemplate",
    "ResponseRouter",
    "Server",
    "Stream",
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
