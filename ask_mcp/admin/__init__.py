"""The admin: asks, tokens and sessions, the reach models, refused asks, the admin's forms and the dashboard.

Django discovers this package (``ask_mcp.admin``); the imports below are where every model admin
is registered, in one place. Deciding an ask is :mod:`ask_mcp.records.decisions`'s; the admin
only asks for it.
"""

from __future__ import annotations

from ask_mcp.admin import asks, reach, refusals, tokens

__all__ = ["asks", "reach", "refusals", "tokens"]
