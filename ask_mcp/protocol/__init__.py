"""The MCP wire, free of Django and of IO: JSON-RPC framing, the request envelope, SSE, form schemas."""
