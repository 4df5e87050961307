"""`python -m ask_mcp.cli`: the `ask-mcp` command."""

from __future__ import annotations

from ask_mcp.cli import main

main()
