"""Kept for one release: `ask_mcp.terminal` moved to `ask_mcp.cli.terminal`; import from there."""

from __future__ import annotations

import warnings

from ask_mcp.cli.terminal import TerminalPrompt

warnings.warn(
    "ask_mcp.terminal moved to ask_mcp.cli.terminal; this alias goes in the next release",
    DeprecationWarning,
    stacklevel=2,
)

__all__ = ["TerminalPrompt"]
