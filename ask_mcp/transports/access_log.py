"""One line per MCP request, and its count in the metrics: method, tool, principal, outcome, duration; never its content.

The endpoint fills an :class:`Exchange` as it reads a request (what it was, who sent it) and
the exchange reads the outcome off the reply (ok, input_required, tool_error, error <code>) or
the HTTP status of a refusal. It logs to `ask_mcp.requests` at INFO: what a request carried
(arguments, answers, requestState, the token, the session id) is never part of the line.
"""

from __future__ import annotations

import logging
import time
from typing import Any, Final

from ask_mcp.ops import metrics
from ask_mcp.protocol import mcp

logger = logging.getLogger("ask_mcp.requests")

SELF_LOGGED: Final[set[str]] = set()
"""The paths whose requests have this module's line (the endpoint adds its own): the server's
access log leaves them out, so a request has one line."""
ANONYMOUS: Final = "anonymous"
"""The principal logged for a request let in without a token (ALLOW_ANONYMOUS_LOOPBACK)."""
NAME_CHARS: Final = 128
"""Characters of a method or tool name the line keeps: the agent chooses them, any length. Their
control characters are escaped by the log's formatter (:func:`ask_mcp.ops.logs.escaped`)."""


class Exchange:
    """What one request to /mcp was and how it ended, as far as the log line and metrics say."""

    __slots__ = ("method", "principal", "reply", "started", "status", "tool")

    def __init__(self, method: str) -> None:
        self.started = time.perf_counter()
        self.method = method
        self.tool: str | None = None
        self.principal = ANONYMOUS
        self.status: int | None = None
        self.reply: dict[str, Any] | None = None

    def read(self, method: str, params: Any) -> None:
        """The JSON-RPC method and, for a call or a prompt, the name it names."""
        self.method = method[:NAME_CHARS]
        if method in ("tools/call", "prompts/get") and isinstance(params, dict):
            name = params.get("name")
            if isinstance(name, str):
                self.tool = name[:NAME_CHARS]

    def outcome(self) -> str:
        reply = self.reply
        if reply is not None:
            if "error" in reply:
                return f"error {reply['error'].get('code')}"
            result = reply.get("result")
            if isinstance(result, dict):
                if result.get("resultType") == mcp.RESULT_INPUT_REQUIRED:
                    return mcp.RESULT_INPUT_REQUIRED
                if result.get("isError") is True:
                    return "tool_error"
            return "ok"
        if self.status is None:
            return "disconnected"
        if self.status < 300:
            return "ok" if self.status != 202 else "accepted"
        return f"http {self.status}"

    def finish(self) -> None:
        """Log the line and count the request (metrics only when on)."""
        outcome = self.outcome()
        if metrics.enabled():
            result = outcome.replace(" ", "_") if outcome.startswith("http") else outcome
            metrics.request_done(self.method, result.split(" ", 1)[0])
        if not logger.isEnabledFor(logging.INFO):
            return
        duration = (time.perf_counter() - self.started) * 1000.0
        # The record is made and handled directly: Logger.info would first walk the stack to
        # find its caller (this line, always), a third of the line's cost on this machine.
        logger.handle(
            logger.makeRecord(
                logger.name,
                logging.INFO,
                __file__,
                0,
                "%s %s by %s: %s in %.1f ms",
                (self.method, self.tool or "-", self.principal, outcome, duration),
                None,
                extra={
                    "method": self.method,
                    "tool": self.tool,
                    "principal": self.principal,
                    "outcome": outcome,
                    "status": self.status,
                    "duration_ms": round(duration, 3),
                },
            )
        )
