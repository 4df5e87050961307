"""The MCP engine: the server, what it offers, how a call waits for a person, and the eras; no Django.

Three rooms above a shared ground, each importing only downwards (an import-linter contract):

- :mod:`.core`: :class:`Server`, the dispatch boundary;
- :mod:`.eras`: the eras that answer requests (modern, legacy, and the Tasks extension);
- :mod:`.asking`: how a call waits for a person (the elicitation table, parked calls, slots,
  settlement from outside the call, recovery, forwarding observers);
- :mod:`.catalog`: what the server offers (toolkits with their tools, prompts and resources,
  the registry of named toolkits, results);
- the ground: :mod:`.context`, :mod:`.ports`, :mod:`.question`, :mod:`.request_state`,
  :mod:`.errors`, :mod:`.ids`, and under them :mod:`.identity` (who is asking).

It does not know Django, Channels, settings or any transport.
"""

from __future__ import annotations

from ask_mcp.protocol.forms import ElicitResult
from ask_mcp.server.catalog.prompts import Prompt, PromptArgument, PromptResult
from ask_mcp.server.catalog.resources import Resource, ResourceContents, ResourceTemplate
from ask_mcp.server.catalog.toolkit import (
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
from ask_mcp.server.identity import Credential, CredentialKind, Identity
from ask_mcp.server.ports import (
    InputChannel,
    NullStream,
    QuestionObserver,
    Relay,
    ResponseRouter,
    Stream,
)
from ask_mcp.server.question import Question

__all__ = [
    "AnswerUrl",
    "Caller",
    "Completion",
    "Context",
    "Credential",
    "CredentialKind",
    "ElicitResult",
    "ElicitationCapacityExceeded",
    "ElicitationTimedOut",
    "ElicitationUnavailable",
    "Identity",
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
