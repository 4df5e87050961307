"""What operating askserver needs and nothing of how it serves: the environment's variables, the metrics, the log format.

Pure: no Django, no engine, nothing of ask_mcp. The settings read the environment through
:mod:`ask_mcp.ops.environment`, every part counts through :mod:`ask_mcp.ops.metrics`, and the
LOGGING setting names :class:`ask_mcp.ops.logs.JsonFormatter`.
"""
