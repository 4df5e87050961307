"""The `ask-mcp` command's runner: options in, a server built and served; usage errors out through `fail`.

It knows the options (:mod:`ask_mcp.cli` defines them) and the facade it builds; how a server
is served over stdio or HTTP is the transports' business, reached through `MCPServer.run`.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ask_mcp.cli.config import (
    DEFAULT_HTTP_PORT,
    DEFAULT_NAME,
    DEFAULT_TOOLS,
    ConfigError,
    read_config,
    read_tool_flag,
)
from ask_mcp.mcpserver import MCPServer
from ask_mcp.toolkits import ToolkitConfigError
from ask_mcp.transports.daphne import is_loopback

__all__ = ["ConfigError", "run", "server_from_options"]


def server_from_options(options: argparse.Namespace) -> MCPServer:
    """The server the options describe.

    Raises:
        ConfigError: a bad config file or flag.
        ToolkitConfigError: an unknown toolkit or setting.
    """
    config = read_config(options.config) if options.config else {}
    tools: dict[str, Any] = dict(config.get("tools", {}))
    for flag in options.tool:
        name, settings = read_tool_flag(flag)
        tools[name] = settings
    return MCPServer(
        name=options.name or config.get("name") or DEFAULT_NAME,
        version=config.get("version", "0.1.0"),
        instructions=config.get("instructions"),
        tools=tools or DEFAULT_TOOLS,
    )


def run(options: argparse.Namespace, fail: Any) -> None:
    """Build and serve; `fail(message)` reports a usage error and does not return."""
    if options.inbox and options.transport != "stdio":
        fail("--inbox goes with --transport=stdio; over HTTP the inbox is served anyway")
    if options.inbox and not is_loopback(options.host):
        fail(f"--inbox serves on loopback only; {options.host!r} is not a loopback address")
    try:
        server = server_from_options(options)
    except (ConfigError, ToolkitConfigError) as exc:
        fail(str(exc))
        return
    port = options.port
    if port is None:
        port = 0 if options.inbox else DEFAULT_HTTP_PORT
    if options.transport == "http" and not is_loopback(options.host):
        print(
            f"ask-mcp: warning: serving on {options.host}, not loopback: put authentication "
            "and TLS in front of it and list the host in ASKSERVER_ALLOWED_HOSTS",
            file=sys.stderr,
        )
    server.run(options.transport, host=options.host, port=port, inbox=options.inbox)
