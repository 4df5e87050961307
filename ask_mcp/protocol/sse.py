"""Server-Sent Events framing for MCP response streams. Pure: bytes in, bytes out."""

from __future__ import annotations

from typing import Final

KEEPALIVE: Final = b":\n\n"
"""A comment line: keeps proxies and client idle timers from closing a quiet stream."""


def event(data: bytes, *, event_id: str | None = None) -> bytes:
    """Frame one JSON-RPC message as an SSE `message` event.

    JSON encoded by :mod:`.jsonrpc` never holds a raw newline, so the data fits one line.
    """
    head = b"id: " + event_id.encode("ascii") + b"\n" if event_id is not None else b""
    return head + b"data: " + data + b"\n\n"


def priming_event(event_id: str) -> bytes:
    """An event with an id and empty data, sent first on legacy streams."""
    return b"id: " + event_id.encode("ascii") + b"\ndata: \n\n"
