"""The toolkits that ship with ask_mcp, and the registry that loads any by name; knows no wire or Django.

The registry itself is the engine's (:mod:`ask_mcp.server.catalog.registry`, since `Server(tools=...)`
loads by name); it is re-exported here, where configuration code looks for it. This package
does not know the wire. Pure: no Django.
"""

from __future__ import annotations

from ask_mcp.server.catalog.registry import (
    BUILTIN,
    ENTRY_POINT_GROUP,
    PREFIX_KEY,
    ToolkitConfigError,
    available,
    build_toolkit,
    load_toolkit_class,
)

__all__ = [
    "BUILTIN",
    "ENTRY_POINT_GROUP",
    "PREFIX_KEY",
    "ToolkitConfigError",
    "available",
    "build_toolkit",
    "load_toolkit_class",
]
