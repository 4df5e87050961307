"""What operating askserver needs and nothing of how it serves: the environment's variables, the metrics, the log format.

Pure: no Django, no engine, nothing of ask_mcp. Environment variables are read through
:mod:`ask_mcp.ops.environment` (ask_mcp.conf's rows, one per ASK_MCP key, and askserver's own),
every part counts through :mod:`ask_mcp.ops.metrics`, and the LOGGING setting names
:class:`ask_mcp.ops.logs.JsonFormatter`.
"""
