"""Live servers offering the FileSystem toolkit on a test's own root, and its tools called through the official client.

Knows the toolkit only by its settings and tool names; the trees each test needs are its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mcp import Client
from mcp.types import CallToolResult

from tests.support.live import LiveServer, LiveServers
from tests.support.results import text_of


def filesystem_server(live_servers: LiveServers, root: Path, **options: Any) -> LiveServer:
    """A live server (loopback, no tokens) whose only toolkit is FileSystem on `root`."""
    toolkit = {"root": str(root), **options}
    return live_servers.get({"ALLOW_ANONYMOUS_LOOPBACK": True, "TOOLKITS": {"FileSystem": toolkit}})


def client(server: LiveServer) -> Client:
    return Client(server.mcp_url, mode="2026-07-28")


def text(result: CallToolResult | Mapping[str, Any]) -> str:
    """The text of a FileSystem tool's result: its blocks joined (a truncated read has two)."""
    return text_of(result, joined=True)
