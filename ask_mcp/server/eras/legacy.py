"""The initialize era: sessions as handlers see them, their methods, questions pushed on the stream; no envelope.

:class:`LegacyEra` answers requests inside a session: results carry no resultType and never
``input_required``; a question goes out on the call's own stream (:class:`PushChannel`) and
its response comes back through the transport's :class:`~ask_mcp.server.ports.ResponseRouter`.
Transports own where sessions are stored and how a client's response finds the waiting call;
this module does not know them, nor the 2026-07-28 envelope. Pure asyncio: no Django.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

from ask_mcp.protocol import mcp
from ask_mcp.protocol.jsonrpc import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    RESOURCE_NOT_FOUND,
    JsonRpcError,
    Request,
    json_type,
    notification_message,
    request_message,
)
from ask_mcp.server.catalog import require
from ask_mcp.server.catalog.prompts import Prompt, finish_prompt
from ask_mcp.server.catalog.resources import Resource, ResourceTemplate, finish_read
from ask_mcp.server.catalog.results import finish_tool_call, tool_failure
from ask_mcp.server.catalog.toolkit import Tool, ToolResult
from ask_mcp.server.context import Caller, Context, client_name, client_version
from ask_mcp.server.eras.base import Era, Method
from ask_mcp.server.errors import (
    ElicitationTimedOut,
    MissingClientCapability,
    QuestionNoLongerWaiting,
)
from ask_mcp.server.identity import Identity
from ask_mcp.server.ports import ResponseRouter, Stream

SESSION_STORE_BYTES: Final = 16 * 1024
"""The most a session keeps of its client's `capabilities` and `clientInfo` together, as compact
JSON. It keeps them for as long as it lives (SESSION_IDLE_SECONDS), in memory and in a database
row: with no cap, 100 initialize requests of about 1 MiB each took a worker from 114 MB to
966 MB. Every capability the spec defines fits in well under 1 KiB."""


@dataclass(slots=True)
class LegacySession:
    """What one initialize handshake established."""

    id: str
    protocol_version: str
    capabilities: dict[str, Any]
    client_info: dict[str, Any] | None = None
    principal: str | None = None
    """Whose session it is: every request in it must come with this principal's identity."""
    log_level: str | None = None
    created_at: float = field(default_factory=time.time)
    subscriptions: set[str] = field(default_factory=set)
    """URIs whose notifications/resources/updated this session asked for."""

    @property
    def client_name(self) -> str | None:
        return client_name(self.client_info)


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
    client_info = info if isinstance(info, dict) else None
    size = len(json.dumps([capabilities, client_info], separators=(",", ":")).encode())
    if size > SESSION_STORE_BYTES:
        raise JsonRpcError(
            INVALID_PARAMS,
            f"initialize: params.capabilities and params.clientInfo take {size} bytes as JSON; a "
            f"session keeps at most {SESSION_STORE_BYTES}. Declare only the capabilities the "
            "client has.",
        )
    return negotiate_version(requested), *kept_of_client(capabilities, client_info)


def kept_of_client(
    capabilities: Mapping[str, Any], client_info: Mapping[str, Any] | None
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """What a session keeps of its client's declaration: only what the server reads.

    The server reads which capabilities are declared (a name with an object, or a name at all for
    a tool's required capabilities), the elicitation modes named, and the client's name and
    version; nothing below them. A session lives SESSION_IDLE_SECONDS in memory and in a row: one
    token opened 499 sessions a second, each keeping up to SESSION_STORE_BYTES (about 28 GB an
    hour); the rest of what the client sent (an ``experimental`` tree, say) is not kept.
    """
    kept: dict[str, Any] = {}
    for name, value in capabilities.items():
        if not isinstance(value, Mapping):
            kept[name] = None  # declared, but not as an object: `require` still sees the name
        elif name == "elicitation":
            kept[name] = {mode: {} for mode in ("form", "url") if mode in value}
        elif name == "extensions":  # which extensions, each declared as an object
            kept[name] = {key: {} for key, each in value.items() if isinstance(each, Mapping)}
        else:
            kept[name] = {}
    info = None
    if client_info is not None:
        info = {key: client_info[key] for key in ("name", "version") if key in client_info}
    return kept, info


WITHDRAW_SECONDS: Final = 1.0
"""How long telling a client to drop its form may take: a write to a live stream takes well under
a millisecond, so a second means its reader has stalled and the ending call should not wait."""


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
            if self.stream.closed:
                raise QuestionNoLongerWaiting  # the client's stream is gone: it cannot see this
            await self.stream.notify(request_message(request_id, request["method"], params))
            try:
                async with asyncio.timeout(max(0.0, deadline - self._clock())):
                    response = await future
            except TimeoutError as exc:
                await self._withdraw(request_id, "the question timed out")
                raise ElicitationTimedOut from exc
            except asyncio.CancelledError:
                # Ended without the client: staff cancelled or expired the ask, a person answered
                # it in the inbox, or the server is stopping. The client's form is pointless now.
                await self._withdraw(request_id, "the question was ended on the server")
                raise
        finally:
            self._forget(request_id)
        # An error response is a refusal; the caller reads a non-result as a decline.
        return response.get("result")

    async def _withdraw(self, request_id: str, reason: str) -> None:
        """Tell the client to drop the form it shows (`notifications/cancelled` for the server's
        own request, as either side may send for a request it issued); best effort, never raises."""
        if self.stream.closed:
            return
        notice = {"requestId": request_id, "reason": reason}
        with contextlib.suppress(Exception):
            async with asyncio.timeout(WITHDRAW_SECONDS):  # a stalled reader holds up no one
                await self.stream.notify(notification_message("notifications/cancelled", notice))


def legacy_capabilities(server_capabilities: Mapping[str, Any]) -> dict[str, Any]:
    """Server capabilities as an initialize result states them.

    Resources can be subscribed to in this era (resources/subscribe; 2026-07-28 replaced it
    with subscriptions/listen, which this server does not offer).
    """
    capabilities = dict(server_capabilities)
    if "resources" in capabilities:
        capabilities["resources"] = {**capabilities["resources"], "subscribe": True}
    return capabilities


@dataclass(slots=True)
class LegacyInbound:
    """A request inside an initialize-era session, with what the transport knows about it."""

    request: Request
    session: LegacySession
    stream: Stream
    control: SessionControl | None
    responses: ResponseRouter | None
    base_url: str | None
    who: Identity = Identity.ANONYMOUS
    """Who is asking, decided per request, not per session: the credential the tools/call came
    with is the one whose team and rules count (its principal is the session's)."""


ALREADY_INITIALIZED: Final = (
    "Invalid request: this session is already initialized; start a new one by sending "
    "initialize without an Mcp-Session-Id header"
)
"""The error for a second initialize inside a session."""


class LegacyEra(Era[LegacyInbound]):
    """The initialize-era methods and wire conventions."""

    def own_methods(self) -> Mapping[str, Method[LegacyInbound]]:
        return {
            "ping": self.ping,
            "tools/call": self.tools_call,
            "prompts/get": self.prompts_get,
            "resources/read": self.resources_read,
            "resources/subscribe": self.subscribe,
            "resources/unsubscribe": self.unsubscribe,
            "logging/setLevel": self.set_level,
        }

    def offers(self) -> Mapping[str, Any]:
        return legacy_capabilities(self.catalog.offers())

    def unknown_method(self, method: str) -> JsonRpcError:
        if method == "initialize":
            return JsonRpcError(INVALID_REQUEST, ALREADY_INITIALIZED)
        return JsonRpcError(METHOD_NOT_FOUND, f"Method not found: {method!r}")

    def caller(self, inbound: LegacyInbound) -> Caller:
        session = inbound.session
        meta = inbound.request.params.get("_meta")
        token = meta.get(mcp.META_PROGRESS_TOKEN) if isinstance(meta, dict) else None
        if isinstance(token, bool) or not isinstance(token, str | int):
            token = None
        return Caller(
            protocol_version=session.protocol_version,
            capabilities=session.capabilities,
            who=inbound.who,
            stream=inbound.stream,
            progress_token=token,
            log_level=session.log_level,
            client_name=session.client_name,
            base_url=inbound.base_url,
            client_version=client_version(session.client_info),
            session=session.id,
        )

    def list_hints(self, result: dict[str, Any]) -> dict[str, Any]:
        return result  # this era's lists carry no caching hints

    def finish(self, result: dict[str, Any]) -> dict[str, Any]:
        return result

    def capability_error(self, exc: MissingClientCapability) -> JsonRpcError:
        # initialize-era clients have no -32021: the same data on an invalid-request error.
        return JsonRpcError(INVALID_REQUEST, exc.message, {"requiredCapabilities": exc.required})

    def channel(self, inbound: LegacyInbound) -> PushChannel | None:
        """How a handler asks the client: a request on the call's stream, when it can carry one."""
        stream, responses = inbound.stream, inbound.responses
        if responses is None or not stream.allows_sse:
            return None
        return PushChannel(
            stream, inbound.session.protocol_version, responses.expect, responses.forget
        )

    # ------------------------------------------------------------------ the methods

    async def ping(self, inbound: LegacyInbound) -> dict[str, Any]:
        return {}

    async def tools_call(self, inbound: LegacyInbound) -> dict[str, Any]:
        tool, arguments = self.catalog.tool_named(inbound.request.params)
        try:
            if tool.required_capabilities:
                require(inbound.session.capabilities, tool.required_capabilities, tool.name)
            ctx = self._context(inbound, tool, tool.name, arguments)
            value = await tool.handler(ctx, arguments)
            return finish_tool_call(tool.name, value, None)
        except MissingClientCapability as exc:
            # initialize-era clients have no -32021: name what is missing in the result.
            return ToolResult.text(exc.message, is_error=True).to_dict()
        except JsonRpcError:
            raise
        except Exception as exc:
            return tool_failure(exc, tool.name)

    async def prompts_get(self, inbound: LegacyInbound) -> dict[str, Any]:
        prompt, arguments = self.catalog.prompt_named(inbound.request.params)
        if prompt.required_capabilities:
            require(inbound.session.capabilities, prompt.required_capabilities, prompt.name)
        ctx = self._context(inbound, prompt, prompt.name, arguments)
        try:
            value = await prompt.handler(ctx, arguments)
        except Exception as exc:
            return finish_prompt(prompt.name, None, exc)
        return finish_prompt(prompt.name, value, None)

    async def resources_read(self, inbound: LegacyInbound) -> dict[str, Any]:
        uri, found, variables = self._resource_named(inbound.request.params)
        if found.required_capabilities:
            require(inbound.session.capabilities, found.required_capabilities, uri)
        ctx = self._context(inbound, found, uri, variables)
        try:
            value = await found.handler(ctx, uri, variables)
        except Exception as exc:
            return finish_read(uri, found.mime_type, None, exc)
        return finish_read(uri, found.mime_type, value, None)

    async def set_level(self, inbound: LegacyInbound) -> dict[str, Any]:
        level = inbound.request.params.get("level")
        if level not in mcp.LOG_LEVELS:
            raise JsonRpcError(
                INVALID_PARAMS,
                f"logging/setLevel: level must be one of {', '.join(mcp.LOG_LEVELS)}, got {level!r}",
            )
        inbound.session.log_level = level
        if inbound.control is not None:
            await inbound.control.set_log_level(inbound.session, level)
        return {}

    async def subscribe(self, inbound: LegacyInbound) -> dict[str, Any]:
        uri = self._resource_named(inbound.request.params)[0]
        inbound.session.subscriptions.add(uri)
        if inbound.control is not None:
            await inbound.control.set_subscription(inbound.session, uri, subscribed=True)
        return {}

    async def unsubscribe(self, inbound: LegacyInbound) -> dict[str, Any]:
        uri = inbound.request.params.get("uri")
        if not isinstance(uri, str):
            raise JsonRpcError(INVALID_PARAMS, f"params.uri must be a string, got {json_type(uri)}")
        inbound.session.subscriptions.discard(uri)
        if inbound.control is not None:
            await inbound.control.set_subscription(inbound.session, uri, subscribed=False)
        return {}

    def _context(
        self,
        inbound: LegacyInbound,
        entry: Tool | Prompt | Resource | ResourceTemplate,
        name: str,
        arguments: Mapping[str, Any],
    ) -> Context:
        """A handler's Context in a session: questions go out as requests on the call's stream."""
        return self.context(
            inbound,
            name=name,
            arguments=arguments,
            title=entry.title,
            toolkit=self.catalog.toolkit_of(entry),
            channel=self.channel(inbound),
        )

    def _resource_named(
        self, params: Mapping[str, Any]
    ) -> tuple[str, Resource | ResourceTemplate, dict[str, str]]:
        try:
            return self.catalog.resource_named(params)
        except JsonRpcError as exc:
            if isinstance(exc.data, dict) and "uri" in exc.data:
                # This era's code for an unknown resource (2026-07-28 moved it to -32602).
                raise JsonRpcError(RESOURCE_NOT_FOUND, exc.message, exc.data) from exc
            raise
