"""MCPServer, the facade users write against: the engine plus `run()` and the LLM tool bridge.

It sits above the transports, as the official SDK's `mcpserver` sits above its `lowlevel`
server: the engine (:class:`ask_mcp.server.Server`) never imports a transport, and this module
imports them only inside the methods that need them, so `import ask_mcp` stays free of Django.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ask_mcp.server.core import Server


class MCPServer(Server):
    """An MCP server you can run: toolkits plugged under prefixes, served on stdio or HTTP.

    Everything the engine offers (`plug`, `tools=...`, the elicitation limits and hooks) is
    here; see :class:`ask_mcp.server.Server`.
    """

    def run(
        self,
        transport: str = "stdio",
        *,
        host: str = "127.0.0.1",
        port: int = 8000,
        inbox: bool = False,
    ) -> None:
        """Serve until stopped: stdio by default (newline-delimited JSON-RPC on stdin/stdout).

        `transport="http"` serves the Django project's /mcp with this server's tools (daphne,
        on `host`:`port`, loopback by default). `inbox=True` (stdio only) also serves the
        browser inbox over HTTP on `host`:`port` and sends questions there. Both need Django;
        plain stdio does not.
        """
        if transport not in ("stdio", "http"):
            raise ValueError(f"transport must be 'stdio' or 'http', got {transport!r}")
        if inbox and transport != "stdio":
            raise ValueError(
                "inbox=True is for the stdio transport; over HTTP the inbox is served already"
            )
        if transport == "stdio" and not inbox:
            from ask_mcp.transports.stdio import run_stdio

            run_stdio(self)
            return
        from ask_mcp.transports.daphne import serve_http

        serve_http(self, host=host, port=port, stdio=inbox)

    def tool_definitions(self, dialect: str = "openai") -> list[dict[str, Any]]:
        """The tools as an LLM API declares them: `dialect` is "openai" or "anthropic"."""
        from ask_mcp.transports.bridge import tool_definitions

        return tool_definitions(self, dialect)

    async def execute_tool_calls(self, calls: Iterable[Any]) -> list[dict[str, Any]]:
        """Run an LLM's tool calls (OpenAI `tool_calls` or Anthropic `tool_use` blocks).

        Returns the tool result messages in the calls' own dialect; see
        :mod:`ask_mcp.transports.bridge`.
        """
        from ask_mcp.transports.bridge import execute_tool_calls

        return await execute_tool_calls(self, calls)
