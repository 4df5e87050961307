"""The eras that answer requests: 2026-07-28 (modern, with the Tasks extension) and initialize-era (legacy).

Each era admits a request, builds the handler's :class:`~ask_mcp.server.context.Context` and
answers it behind one :class:`~.base.Era` ABC; :mod:`.tasks` is the extension the modern era
serves. :class:`~ask_mcp.server.core.Server` dispatches to them.
"""
