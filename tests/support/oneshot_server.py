"""The README's one-shot server, verbatim: toolkits named, not imported; `.run()` serves stdio."""

from __future__ import annotations

from ask_mcp import MCPServer

MCPServer(name="assistant", tools={"Ask": {"timeout": 120}}).run()
