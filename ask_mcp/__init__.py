"""askserver's MCP app: the user_ask tool, the elicitation engine, and the Django pieces around them.

`from ask_mcp import MCPServer, Ask` needs no Django; the Django app is `"ask_mcp"` in
INSTALLED_APPS.
"""

from __future__ import annotations

from ask_mcp.mcpserver import MCPServer
from ask_mcp.server import Toolkit, ToolResult, tool
from ask_mcp.toolkits.ask import Ask

__all__ = ["Ask", "MCPServer", "ToolResult", "Toolkit", "tool"]
