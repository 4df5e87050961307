"""The initialize-era protocol (2025-06-18, 2025-11-25): version negotiation, sessions as handlers see
them, and asking the client with a server-initiated request on the call's stream.

Transports own where sessions are stored and how a client's response finds the waiting call;
this module only needs a `Stream` to write the request on and an `expect` function returning a
future for the response. Pure asyncio: no Django.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from ask_mcp.protocol import mcp
from ask_mcp.protocol.jsonrpc import INVALID_PARAMS, JsonRpcError, json_type, request_message
from ask_mcp.server.context import Stream
from ask_mcp.server.errors import ElicitationTimedOut, QuestionNoLongerWaiting


@dataclass(slots=True)
class LegacySession:
    """What one initialize handshake established."""

    id: str
    protocol_version: str
    capabilities: dict[str, Any]
    client_info: dict[str, Any] | None = None
    principal: str | None = None
    team: str | None = None
    log_level: str | None = None
    created_at: float = field(default_factory=time.time)
    subscriptions: set[str] = field(default_factory=set)
    """URIs whose notifications/resources/updated this session asked for."""

    @property
    def client_name(self) -> str | None:
        name = (self.client_info or {}).get("name")
        return name if isinstance(name, str) else None


class SessionControl(Protocol):
    """What a legacy method may change about its session (the transport makes it last)."""

    async def set_log_level(self, session: LegacySession, level: str) -> None: ...

    async def set_subscription(
        self, session: LegacySession, uri: str, *, subscribed: bool
    ) -> None: ...


def negotiate_version(requested: Any) -> str:
    """The version to speak: the client's when we speak it, else our newest initialize-era one."""
    if requested in mcp.LEGACY_VERSIONS:
        return str(requested)
    return mcp.LEGACY_VERSIONS[-1]


def read_initialize(params: Mapping[str, Any]) -> tuple[str, dict[str, Any], dict[str, Any] | None]:
    """The negotiated version, capabilities and client info of an initialize request.

    Raises:
        JsonRpcError: -32602 naming the malformed field.
    """
    requested = params.get("protocolVersion")
    if not isinstance(requested, str):
        raise JsonRpcError(
            INVALID_PARAMS,
            f"initialize: params.protocolVersion must be a string, got {json_type(requested)}",
        )
    capabilities = params.get("capabilities", {})
    if not isinstance(capabilities, dict):
        raise JsonRpcError(
            INVALID_PARAMS,
            f"initialize: params.capabilities must be an object, got {json_type(capabilities)}",
        )
    info = params.get("clientInfo")
    return negotiate_version(requested), capabilities, info if isinstance(info, dict) else None


class PushChannel:
    """InputChannel for initialize-era clients: the request goes out on the call's own stream.

    `expect(request_id)` must register the id *before* the request is written, and return the
    future the client's JSON-RPC response will resolve (on whichever worker it arrives).
    """

    def __init__(
        self,
        stream: Stream,
        protocol_version: str,
        expect: Callable[[str], asyncio.Future[dict[str, Any]]],
        forget: Callable[[str], None],
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.stream = stream
        self.protocol_version = protocol_version
        self._expect = expect
        self._forget = forget
        self._clock = clock

    async def request(self, key: str, request: dict[str, Any], deadline: float) -> Any:
        request_id = f"ask-{secrets.token_hex(8)}"
        params = dict(request.get("params", {}))
        if self.protocol_version == "2025-06-18":
            params.pop("mode", None)  # form is the only mode there, and the field did not exist
        future = self._expect(request_id)
        try:
            if getattr(self.stream, "closed", False):
                raise QuestionNoLongerWaiting  # the client's stream is gone: it cannot see this
            await self.stream.notify(request_message(request_id, request["method"], params))
            try:
                async with asyncio.timeout(max(0.0, deadline - self._clock())):
                    response = await future
            except TimeoutError as exc:
                raise ElicitationTimedOut from exc
        finally:
            self._forget(request_id)
        # An error response is a refusal; the caller reads a non-result as a decline.
        return response.get("result")


def legacy_capabilities(server_capabilities: Mapping[str, Any]) -> dict[str, Any]:
    """Server capabilities as an initialize result states them.

    Resources can be subscribed to in this era (resources/subscribe; 2026-07-28 replaced it
    with subscriptions/listen, which this server does not offer).
    """
    capabilities = dict(server_capabilities)
    if "resources" in capabilities:
        capabilities["resources"] = {**capabilities["resources"], "subscribe": True}
    return capabilities
