"""Kept for one release: `ask_mcp.inbox` moved to `ask_mcp.web.elicit`; import from there."""

from __future__ import annotations

import warnings

from ask_mcp.web.elicit import answer_url, ask_in_browser, on_elicit

warnings.warn(
    "ask_mcp.inbox moved to ask_mcp.web.elicit; this alias goes in the next release",
    DeprecationWarning,
    stacklevel=2,
)

__all__ = ["answer_url", "ask_in_browser", "on_elicit"]
