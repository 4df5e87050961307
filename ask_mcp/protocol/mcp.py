"""MCP wire vocabulary: protocol versions, `_meta` keys, header names, method names, result types.

Pure constants and tiny predicates; no Django, no IO.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

MODERN_VERSION: Final = "2026-07-28"
"""The stateless, per-request-envelope revision; served on every request that names it."""
LEGACY_VERSIONS: Final = ("2025-06-18", "2025-11-25")
"""initialize-era revisions this server negotiates, oldest first."""
HANDSHAKE_VERSIONS: Final = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
"""Every revision that uses the initialize handshake (a header naming one routes to the legacy path)."""
SUPPORTED_VERSIONS: Final = (MODERN_VERSION, *reversed(LEGACY_VERSIONS))
"""What server/discover advertises, newest first."""

META_PROTOCOL_VERSION: Final = "io.modelcontextprotocol/protocolVersion"
META_CLIENT_CAPABILITIES: Final = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT_INFO: Final = "io.modelcontextprotocol/clientInfo"
META_LOG_LEVEL: Final = "io.modelcontextprotocol/logLevel"
META_SERVER_INFO: Final = "io.modelcontextprotocol/serverInfo"
META_PROGRESS_TOKEN: Final = "progressToken"
META_IDEMPOTENCY_KEY: Final = "askserver/idempotencyKey"
"""A call's own key for "the same question": a call asking again with it attaches to the ask
the earlier call left waiting, instead of a digest of its arguments (docs/agents/nothing-lost.md)."""
IDEMPOTENCY_KEY_MAX: Final = 200
"""The longest idempotency key taken (characters)."""

HEADER_PROTOCOL_VERSION: Final = "mcp-protocol-version"
HEADER_METHOD: Final = "mcp-method"
HEADER_NAME: Final = "mcp-name"
HEADER_SESSION_ID: Final = "mcp-session-id"
HEADER_PARAM_PREFIX: Final = "mcp-param-"

CONTENT_TYPE_JSON: Final = "application/json"
CONTENT_TYPE_SSE: Final = "text/event-stream"

RESULT_COMPLETE: Final = "complete"
RESULT_INPUT_REQUIRED: Final = "input_required"

NAME_PARAM_OF_METHOD: Final[Mapping[str, str]] = {
    "tools/call": "name",
    "prompts/get": "name",
    "resources/read": "uri",
    "tasks/get": "taskId",
    "tasks/update": "taskId",
    "tasks/cancel": "taskId",
}
"""Methods whose Mcp-Name header mirrors a body param, and which param it mirrors."""

INPUT_REQUIRED_METHODS: Final = frozenset({"tools/call", "prompts/get", "resources/read"})
"""The only methods that may answer with an InputRequiredResult."""

REMOVED_IN_MODERN: Final = frozenset(
    {
        "initialize",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
        "notifications/initialized",
        "notifications/roots/list_changed",
    }
)
"""Methods the 2026-07-28 revision removed; on the modern path they are unknown methods."""

CAPABILITY_OF_METHOD: Final[Mapping[str, str]] = {
    "tools/list": "tools",
    "tools/call": "tools",
    "prompts/list": "prompts",
    "prompts/get": "prompts",
    "resources/list": "resources",
    "resources/read": "resources",
    "resources/templates/list": "resources",
    "resources/subscribe": "resources",
    "resources/unsubscribe": "resources",
    "completion/complete": "completions",
    "logging/setLevel": "logging",
}
"""The server capability a method belongs to: a server that does not advertise it has no such method."""

ELICITATION_METHOD: Final = "elicitation/create"
SAMPLING_METHOD: Final = "sampling/createMessage"
ROOTS_METHOD: Final = "roots/list"

LOG_LEVELS: Final = (
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
)
"""Syslog severities in increasing order, as MCP's logging uses them."""


def supports_form_elicitation(capabilities: Mapping[str, Any]) -> bool:
    """True when the client may be sent a form-mode elicitation.

    `elicitation: {}` means form only (kept for backwards compatibility); otherwise the
    `form` mode must be named.
    """
    elicitation = capabilities.get("elicitation")
    if not isinstance(elicitation, Mapping):
        return False
    return "form" in elicitation or "url" not in elicitation


def supports_url_elicitation(capabilities: Mapping[str, Any]) -> bool:
    elicitation = capabilities.get("elicitation")
    return isinstance(elicitation, Mapping) and "url" in elicitation


def has_capability(capabilities: Mapping[str, Any], name: str) -> bool:
    return isinstance(capabilities.get(name), Mapping)


def capability_for_request(request: Mapping[str, Any]) -> dict[str, Any]:
    """The client capability an input request (elicitation, sampling, roots) needs.

    Raises:
        ValueError: `request` is not an input request.
    """
    method = request.get("method")
    if method == ELICITATION_METHOD:
        mode = request.get("params", {}).get("mode", "form")
        return {"elicitation": {mode: {}}}
    if method == SAMPLING_METHOD:
        return {"sampling": {}}
    if method == ROOTS_METHOD:
        return {"roots": {}}
    raise ValueError(f"{method!r} is not an input request method")


def declares(capabilities: Mapping[str, Any], needed: Mapping[str, Any]) -> bool:
    """Whether `capabilities` declare what :func:`capability_for_request` says is `needed`."""
    ((name, detail),) = needed.items()
    if name == "elicitation":
        if "form" in detail:
            return supports_form_elicitation(capabilities)
        return supports_url_elicitation(capabilities)
    return has_capability(capabilities, name)
