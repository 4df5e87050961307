"""askserver's MCP app: the user_ask tool, the elicitation engine, and the Django pieces around them.

`from ask_mcp import MCPServer, AskToolkit` needs no Django (`Ask` is the toolkit's earlier
name); the Django app is `"ask_mcp"` in INSTALLED_APPS. This module only re-exports: it knows
nothing the parts below it do not.
"""

from __future__ import annotations

from ask_mcp.mcpserver import MCPServer
from ask_mcp.server import Toolkit, ToolResult, tool
from ask_mcp.toolkits.ask import Ask, AskToolkit

__all__ = ["Ask", "AskToolkit", "MCPServer", "ToolResult", "Toolkit", "tool"]
