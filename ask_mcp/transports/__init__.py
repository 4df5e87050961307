"""The transports: how requests reach the engine and replies leave it — the /mcp HTTP endpoint, stdio, the LLM tool bridge, and daphne in this process.

Each hands the engine (:mod:`ask_mcp.server`) parsed requests and writes back what it returns,
implementing the engine's ports (:class:`ask_mcp.server.ports.Stream`). They may import the
runtime (the process's server), the records, team and workers below it, the engine and the
protocol; never the web, the facade or the CLI above them.
"""
