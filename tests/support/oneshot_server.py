"""The one-shot server of docs/library/servers.md, verbatim: toolkits named, not imported; `.run()` serves stdio."""

from __future__ import annotations

from ask_mcp import MCPServer

MCPServer(name="assistant", tools={"Ask": {"timeout": 120}}).run()
