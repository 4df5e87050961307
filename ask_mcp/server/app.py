"""The engine's earlier home, kept one release for importers of `ask_mcp.server.app`; it only re-exports.

The engine is :mod:`ask_mcp.server.core`; the tool-result boundary is :mod:`ask_mcp.server.results`.
"""

from __future__ import annotations

from ask_mcp.server.core import Server
from ask_mcp.server.results import finish_tool_call, tool_failure

__all__ = ["Server", "finish_tool_call", "tool_failure"]
