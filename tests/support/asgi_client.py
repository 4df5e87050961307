"""Driving an ASGI app in-process, one request at a time, with control over when the client leaves."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from ask_mcp.transports.http import Scope


class AsgiRequest:
    """One HTTP request to an ASGI app: its response arrives message by message."""

    def __init__(self, app: Any, method: str, headers: dict[str, str], body: Any = None) -> None:
        raw = b"" if body is None else json.dumps(body).encode()
        self.scope: Scope = {
            "type": "http",
            "method": method,
            "path": "/mcp",
            "raw_path": b"/mcp",
            "query_string": b"",
            "scheme": "http",
            "http_version": "1.1",
            "headers": [
                (k.lower().encode(), v.encode())
                for k, v in {"host": "127.0.0.1:8000", **headers}.items()
            ],
            "server": ("127.0.0.1", 8000),
            "client": ("127.0.0.1", 50000),
        }
        self._body = raw
        self._body_sent = False
        self._left = asyncio.Event()
        self.messages: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.task = asyncio.ensure_future(app(self.scope, self._receive, self._send))
        self._buffer = b""

    async def _receive(self) -> dict[str, Any]:
        if not self._body_sent:
            self._body_sent = True
            return {"type": "http.request", "body": self._body, "more_body": False}
        await self._left.wait()
        return {"type": "http.disconnect"}

    async def _send(self, message: dict[str, Any]) -> None:
        await self.messages.put(message)

    def leave(self) -> None:
        """The client closes the connection."""
        self._left.set()

    async def start(self) -> dict[str, Any]:
        message = await self.messages.get()
        assert message["type"] == "http.response.start", message
        return message

    async def event(self) -> dict[str, Any]:
        """The next SSE data message of the response."""
        while b"\n\n" not in self._buffer:
            message = await self.messages.get()
            self._buffer += message.get("body", b"")
        frame, _, self._buffer = self._buffer.partition(b"\n\n")
        data = [line[5:] for line in frame.split(b"\n") if line.startswith(b"data:")]
        if not data or not data[0].strip():
            return await self.event()
        return json.loads(data[0])

    async def body(self) -> dict[str, Any]:
        chunks = []
        while True:
            message = await self.messages.get()
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                return json.loads(b"".join(chunks))
