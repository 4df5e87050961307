"""The MCP wire, free of Django and of IO: JSON-RPC framing, the request envelope, SSE, form schemas, era detection.

The bottom layer: it imports nothing of ask_mcp and nothing outside the standard library, and
knows no server, table or transport. Everything above it may use it.
"""
