"""The project's ASGI app for live test servers, with every reply checked against mcp-types.

A reply that does not validate is replaced by an internal error naming the problem, so the
test that caused it fails wherever it looks.
"""

from __future__ import annotations

from typing import Any

from askserver.asgi import application  # first: it sets Django up

# isort: split
from ask_mcp.protocol.jsonrpc import INTERNAL_ERROR, JsonRpcError, Request, error_message
from ask_mcp.server.core import Server
from ask_mcp.transports.http import HttpStream
from tests.support.wire import MODERN, reply_problem

_handle_modern = Server.handle_modern
_handle_legacy = Server.handle_legacy
_notify = HttpStream.notify


async def _checked_handle_modern(self: Server, request: Request, **kwargs: Any) -> Any:
    reply = await _handle_modern(self, request, **kwargs)
    if reply is not None and (problem := reply_problem(request.method, MODERN, reply)):
        return error_message(request.id, JsonRpcError(INTERNAL_ERROR, f"INVALID REPLY: {problem}"))
    return reply


async def _checked_handle_legacy(self: Server, request: Request, **kwargs: Any) -> Any:
    reply = await _handle_legacy(self, request, **kwargs)
    version = kwargs["session"].protocol_version
    if reply is not None and "result" in reply and "resultType" in reply["result"]:
        problem = "an initialize-era result carries resultType"
    else:
        problem = reply_problem(request.method, version, reply) if reply is not None else None
    if problem:
        return error_message(request.id, JsonRpcError(INTERNAL_ERROR, f"INVALID REPLY: {problem}"))
    return reply


async def _checked_notify(self: HttpStream, message: dict[str, Any]) -> None:
    from mcp_types import methods

    if "id" not in message:  # requests (legacy elicitation/create) are checked by the client
        methods.parse_server_notification(message["method"], MODERN, message.get("params"))
    await _notify(self, message)


Server.handle_modern = _checked_handle_modern  # type: ignore[method-assign]
Server.handle_legacy = _checked_handle_legacy  # type: ignore[method-assign]
HttpStream.notify = _checked_notify  # type: ignore[method-assign]

__all__ = ["application"]
