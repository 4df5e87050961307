"""Kept for one release: `ask_mcp.recorder` moved to `ask_mcp.records.recorder`; import from there."""

from __future__ import annotations

import warnings

from ask_mcp.records.recorder import AskRecorder, recorder

warnings.warn(
    "ask_mcp.recorder moved to ask_mcp.records.recorder; this alias goes in the next release",
    DeprecationWarning,
    stacklevel=2,
)

__all__ = ["AskRecorder", "recorder"]
