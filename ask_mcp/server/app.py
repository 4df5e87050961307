"""MCPServer: the tools it offers, its methods, and the one boundary where exceptions become wire errors.

Transports hand it parsed requests (:meth:`MCPServer.handle_modern`) and write back what it
returns; it knows nothing of HTTP beyond the header values it must compare, and nothing of
Django. Pure asyncio.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any, Final, Protocol

from ask_mcp.protocol import mcp
from ask_mcp.protocol.envelope import (
    Envelope,
    check_headers,
    check_param_headers,
    check_version,
    read_envelope,
)
from ask_mcp.protocol.jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    JsonRpcError,
    Request,
    error_message,
    json_type,
    result_message,
)

from .context import Context, NullStream, Stream
from .elicitation import AnswerUrl, ElicitationTable, OnElicit, QuestionObserver, Relay
from .errors import ElicitationEnded, MissingClientCapability, ToolError
from .legacy import (
    LegacySession,
    PushChannel,
    SessionControl,
    legacy_capabilities,
    read_initialize,
)
from .state import InvalidState, StateSealer, request_binding
from .toolkit import Tool, Toolkit, ToolResult

logger = logging.getLogger("ask_mcp.server")

LIST_TTL_MS: Final = 60_000
"""How long clients may cache discover and list results; private, since lists may depend on auth."""

STATE_REJECTIONS: Final[Mapping[str, str]] = {
    "malformed": "requestState is malformed",
    "signature": "requestState failed its integrity check (altered, or sealed with a key this "
    "server does not hold)",
    "version": "requestState has a format version this server does not read",
    "principal": "requestState was issued to a different principal",
    "request": "requestState was issued for a different request (method, name or arguments differ)",
    "used": "requestState was already used: each state answers one round; retry with the newest "
    "state",
}
_UNSET: Final = object()


@dataclass(slots=True)
class Inbound:
    """A request that passed the envelope rungs, with what the transport knows about it."""

    request: Request
    envelope: Envelope
    principal: str | None
    stream: Stream
    headers: Mapping[str, str] | None
    base_url: str | None = None
    team: str | None = None


Method = Callable[[Inbound], Awaitable[dict[str, Any]]]


class ResponseRouter(Protocol):
    """Where an initialize-era client's responses to our requests are awaited."""

    def expect(self, request_id: str) -> asyncio.Future[dict[str, Any]]: ...

    def forget(self, request_id: str) -> None: ...


@dataclass(slots=True)
class LegacyInbound:
    """A request inside an initialize-era session, with what the transport knows about it."""

    request: Request
    session: LegacySession
    stream: Stream
    control: SessionControl | None
    responses: ResponseRouter | None
    base_url: str | None


LegacyMethod = Callable[[LegacyInbound], Awaitable[dict[str, Any]]]


class MCPServer:
    """An MCP server: toolkits plugged under prefixes, an elicitation table, and the methods.

    `on_elicit` answers questions when the client cannot show forms; `elicitation_capacity`
    bounds how many questions wait at once; `elicitation_ttl` (seconds) is the longest any
    question waits. `state_keys` seal requestState (first seals, all open); without them a
    random per-process key is used, so parked calls do not survive a restart anyway.
    """

    def __init__(
        self,
        name: str,
        version: str = "0.1.0",
        instructions: str | None = None,
        *,
        on_elicit: OnElicit | None = None,
        elicitation_capacity: int = 64,
        elicitation_ttl: float = 600.0,
        state_keys: Iterable[bytes] | None = None,
        observer: QuestionObserver | None = None,
        relay: Relay | None = None,
        title: str | None = None,
        tools: Mapping[str, Mapping[str, Any] | None] | None = None,
        answer_url: AnswerUrl | None = None,
    ) -> None:
        if elicitation_capacity < 1:
            raise ValueError("elicitation_capacity must be at least 1")
        if elicitation_ttl <= 0:
            raise ValueError("elicitation_ttl must be a positive number of seconds")
        self.name = name
        self.version = version
        self.instructions = instructions
        self.title = title
        keys = list(state_keys) if state_keys is not None else [secrets.token_bytes(32)]
        self.table = ElicitationTable(
            sealer=StateSealer(keys),
            capacity=elicitation_capacity,
            ttl=elicitation_ttl,
            on_elicit=on_elicit,
            observer=observer,
            relay=relay,
            answer_url=answer_url,
        )
        self.tools: dict[str, Tool] = {}
        self.toolkits: list[tuple[Toolkit, str]] = []
        self._server_info: dict[str, Any] = {"name": name, "version": version}
        if title:
            self._server_info["title"] = title
        self._result_meta: Final = {mcp.META_SERVER_INFO: self._server_info}
        self._methods: dict[str, Method] = {
            "server/discover": self._discover,
            "tools/list": self._tools_list,
            "tools/call": self._tools_call,
        }
        self._legacy_methods: dict[str, LegacyMethod] = {
            "ping": self._legacy_ping,
            "tools/list": self._legacy_tools_list,
            "tools/call": self._legacy_tools_call,
            "logging/setLevel": self._legacy_set_level,
        }
        self.tool_config: dict[str, dict[str, Any]] = {}
        """The `tools` settings this server was built from, by toolkit name, as given."""
        if tools is not None:
            self.load_tools(tools)

    # ------------------------------------------------------------------ composition

    @property
    def on_elicit(self) -> OnElicit | None:
        return self.table.on_elicit

    @on_elicit.setter
    def on_elicit(self, hook: OnElicit | None) -> None:
        self.table.on_elicit = hook

    def plug(self, toolkit: Toolkit, prefix: Any = _UNSET) -> MCPServer:
        """Register a toolkit's tools under `prefix` (its default prefix when omitted; "" for none).

        Raises:
            ValueError: a tool name is taken already or not allowed.
        """
        chosen = toolkit.default_prefix if prefix is _UNSET else prefix
        if not isinstance(chosen, str):
            raise TypeError(f"prefix must be a string, got {type(chosen).__name__}")
        new_tools = list(toolkit.tools(chosen))
        for tool in new_tools:
            if tool.name in self.tools:
                raise ValueError(
                    f"Tool {tool.name!r} from {toolkit.toolkit_name()} is already registered; "
                    "plug the toolkit under another prefix"
                )
        for tool in new_tools:
            self.tools[tool.name] = tool
        self.toolkits.append((toolkit, chosen))
        return self

    def load_tools(self, tools: Mapping[str, Mapping[str, Any] | None]) -> MCPServer:
        """Plug toolkits named in a `{"Name": {settings, "prefix": ...}}` mapping, loaded by name.

        Names are the registry's (built-ins, the `ask_mcp.toolkits` entry-point group, dotted
        paths), so user code imports no toolkit.

        Raises:
            ToolkitConfigError: an unknown toolkit or setting, or a bad value (the message
                names the toolkit and its valid settings).
        """
        # Imported here: the registry imports the toolkit base class from this package.
        from ask_mcp.toolkits import ToolkitConfigError, build_toolkit

        if not isinstance(tools, Mapping):
            raise ToolkitConfigError(
                f"tools must be an object mapping toolkit names to their settings, got "
                f"{json_type(tools)}"
            )
        for name, settings in tools.items():
            toolkit, prefix = build_toolkit(name, settings)
            if prefix is None:
                self.plug(toolkit)
            else:
                self.plug(toolkit, prefix=prefix)
            self.tool_config[name] = dict(settings or {})
        return self

    def run(
        self,
        transport: str = "stdio",
        *,
        host: str = "127.0.0.1",
        port: int = 8000,
        inbox: bool = False,
    ) -> None:
        """Serve until stopped: stdio by default (newline-delimited JSON-RPC on stdin/stdout).

        `transport="http"` serves the askserver Django project's /mcp with this server's tools
        (daphne, on `host`:`port`, loopback by default). `inbox=True` (stdio only) also serves
        the browser inbox over HTTP on `host`:`port` and sends questions there. Both need
        Django; plain stdio does not.
        """
        if transport == "stdio" and not inbox:
            from ask_mcp.stdio import run_stdio

            run_stdio(self)
            return
        if transport not in ("stdio", "http"):
            raise ValueError(f"transport must be 'stdio' or 'http', got {transport!r}")
        if inbox and transport != "stdio":
            raise ValueError(
                "inbox=True is for the stdio transport; over HTTP the inbox is served already"
            )
        from ask_mcp.runner import serve

        serve(self, transport=transport, host=host, port=port)

    # ------------------------------------------------------------------ the LLM tool bridge

    def tool_definitions(self, dialect: str = "openai") -> list[dict[str, Any]]:
        """The tools as an LLM API declares them: `dialect` is "openai" or "anthropic"."""
        from ask_mcp.bridge import tool_definitions

        return tool_definitions(self, dialect)

    async def execute_tool_calls(self, calls: Iterable[Any]) -> list[dict[str, Any]]:
        """Run an LLM's tool calls (OpenAI `tool_calls` or Anthropic `tool_use` blocks).

        Returns the tool result messages in the calls' own dialect; see :mod:`ask_mcp.bridge`.
        """
        from ask_mcp.bridge import execute_tool_calls

        return await execute_tool_calls(self, calls)

    def capabilities(self) -> dict[str, Any]:
        capabilities: dict[str, Any] = {}
        if self.tools:
            capabilities["tools"] = {}
        return capabilities

    # ------------------------------------------------------------------ the modern path

    async def handle_modern(
        self,
        request: Request,
        *,
        headers: Mapping[str, str] | None = None,
        header_names: Iterable[str] = (),
        principal: str | None = None,
        stream: Stream | None = None,
        base_url: str | None = None,
        team: str | None = None,
    ) -> dict[str, Any] | None:
        """Answer one 2026-07-28 request (None for a notification): the dispatch boundary.

        Runs the validation ladder in the specification's order: `_meta`, headers, version,
        method, capability; then the method. Every exception ends here as a JSON-RPC error.
        """
        if request.is_notification:
            return None
        request_id = request.id
        assert request_id is not None
        try:
            envelope = read_envelope(request)
            if headers is not None:
                check_headers(request, envelope, headers, header_names)
            check_version(envelope, (mcp.MODERN_VERSION,))
            method = self._methods.get(request.method)
            if method is None:
                raise _unknown_method(request.method)
            inbound = Inbound(
                request, envelope, principal, stream or NullStream(), headers, base_url, team
            )
            result = await method(inbound)
        except JsonRpcError as exc:
            return error_message(request_id, exc)
        except MissingClientCapability as exc:
            return error_message(request_id, _missing_capability(exc))
        except Exception:
            logger.exception("%s failed", request.method)
            return error_message(request_id, JsonRpcError(INTERNAL_ERROR, "Internal error"))
        result.setdefault("resultType", mcp.RESULT_COMPLETE)
        result["_meta"] = self._result_meta
        return result_message(request_id, result)

    async def _discover(self, inbound: Inbound) -> dict[str, Any]:
        result: dict[str, Any] = {
            "supportedVersions": list(self.supported_versions()),
            "capabilities": self.capabilities(),
        }
        if self.instructions:
            result["instructions"] = self.instructions
        result["ttlMs"] = LIST_TTL_MS
        result["cacheScope"] = "private"
        return result

    def supported_versions(self) -> tuple[str, ...]:
        """Every version this server speaks: the modern one, and the initialize-era ones."""
        return mcp.SUPPORTED_VERSIONS

    async def _tools_list(self, inbound: Inbound) -> dict[str, Any]:
        return {
            "tools": [tool.listing() for tool in self.tools.values()],
            "ttlMs": LIST_TTL_MS,
            "cacheScope": "private",
        }

    async def _tools_call(self, inbound: Inbound) -> dict[str, Any]:
        params = inbound.request.params
        tool, arguments = self._tool_and_arguments(params)
        if inbound.headers is not None:
            check_param_headers(tool.input_schema, arguments, inbound.headers)
        envelope = inbound.envelope
        if tool.required_capabilities:
            _require(envelope.client_capabilities, tool.required_capabilities, tool.name)
        responses = _input_responses(params)
        binding = request_binding("tools/call", tool.name, arguments)
        table = self.table
        try:
            if "requestState" in params:
                claims = table.open_state(
                    params["requestState"], binding=binding, principal=inbound.principal
                )
                return await table.resume(
                    claims,
                    responses or {},
                    stream=inbound.stream,
                    progress_token=envelope.progress_token,
                    log_level=envelope.log_level,
                )
            ctx = Context(
                table=table,
                method="tools/call",
                name=tool.name,
                arguments=arguments,
                protocol_version=mcp.MODERN_VERSION,
                capabilities=envelope.client_capabilities,
                principal=inbound.principal,
                stream=inbound.stream,
                progress_token=envelope.progress_token,
                log_level=envelope.log_level,
                tool_title=tool.title,
                client_name=_client_name(envelope.client_info),
                base_url=inbound.base_url,
                team=inbound.team,
            )
            return await table.run(
                ctx,
                _bind(tool, ctx, arguments),
                binding=binding,
                preset=responses,
                finish=partial(finish_tool_call, tool.name),
            )
        except InvalidState as exc:
            raise JsonRpcError(
                INVALID_PARAMS,
                f"Invalid requestState: {STATE_REJECTIONS[exc.reason]}",
                {"reason": exc.reason},
            ) from exc
        except ElicitationEnded as exc:  # expired or lost before any handler ran
            return finish_tool_call(tool.name, None, exc)

    def _tool_and_arguments(self, params: Mapping[str, Any]) -> tuple[Tool, dict[str, Any]]:
        name = params.get("name")
        if not isinstance(name, str):
            raise JsonRpcError(
                INVALID_PARAMS, f"params.name must be a string naming a tool, got {json_type(name)}"
            )
        tool = self.tools.get(name)
        if tool is None:
            raise JsonRpcError(
                INVALID_PARAMS,
                f"Unknown tool: {name!r}; this server offers {', '.join(self.tools) or 'no tools'}",
            )
        arguments = params.get("arguments")
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            raise JsonRpcError(
                INVALID_PARAMS, f"params.arguments must be an object, got {json_type(arguments)}"
            )
        return tool, arguments

    # ------------------------------------------------------------------ the initialize-era path

    def initialize(
        self, request: Request
    ) -> tuple[dict[str, Any], str, dict[str, Any], dict[str, Any] | None]:
        """Answer initialize: the result, and the version, capabilities and client info to keep.

        Raises:
            JsonRpcError: -32602 for a malformed initialize.
        """
        version, capabilities, client_info = read_initialize(request.params)
        result: dict[str, Any] = {
            "protocolVersion": version,
            "capabilities": legacy_capabilities(self.capabilities()),
            "serverInfo": self._server_info,
        }
        if self.instructions:
            result["instructions"] = self.instructions
        return result, version, capabilities, client_info

    async def handle_legacy(
        self,
        request: Request,
        *,
        session: LegacySession,
        stream: Stream | None = None,
        control: SessionControl | None = None,
        responses: ResponseRouter | None = None,
        base_url: str | None = None,
    ) -> dict[str, Any] | None:
        """Answer one request inside an initialize-era session (None for a notification).

        Results carry no resultType and never `input_required`; a question reaches the client
        as a server-initiated request on `stream`, answered through `responses`.
        """
        if request.is_notification:
            return None
        request_id = request.id
        assert request_id is not None
        try:
            method = self._legacy_methods.get(request.method)
            if method is None:
                if request.method == "initialize":
                    raise JsonRpcError(
                        INVALID_REQUEST,
                        "Invalid request: this session is already initialized; start a new one "
                        "by sending initialize without an Mcp-Session-Id header",
                    )
                raise JsonRpcError(METHOD_NOT_FOUND, f"Method not found: {request.method!r}")
            inbound = LegacyInbound(
                request, session, stream or NullStream(), control, responses, base_url
            )
            result = await method(inbound)
        except JsonRpcError as exc:
            return error_message(request_id, exc)
        except Exception:
            logger.exception("%s failed", request.method)
            return error_message(request_id, JsonRpcError(INTERNAL_ERROR, "Internal error"))
        return result_message(request_id, result)

    async def _legacy_ping(self, inbound: LegacyInbound) -> dict[str, Any]:
        return {}

    async def _legacy_tools_list(self, inbound: LegacyInbound) -> dict[str, Any]:
        return {"tools": [tool.listing() for tool in self.tools.values()]}

    async def _legacy_set_level(self, inbound: LegacyInbound) -> dict[str, Any]:
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

    async def _legacy_tools_call(self, inbound: LegacyInbound) -> dict[str, Any]:
        params = inbound.request.params
        tool, arguments = self._tool_and_arguments(params)
        session = inbound.session
        meta = params.get("_meta")
        token = meta.get(mcp.META_PROGRESS_TOKEN) if isinstance(meta, dict) else None
        if isinstance(token, bool) or not isinstance(token, str | int):
            token = None
        channel = None
        stream = inbound.stream
        if inbound.responses is not None and getattr(stream, "allows_sse", False):
            channel = PushChannel(
                stream, session.protocol_version, inbound.responses.expect, inbound.responses.forget
            )
        ctx = Context(
            table=self.table,
            method="tools/call",
            name=tool.name,
            arguments=arguments,
            protocol_version=session.protocol_version,
            capabilities=session.capabilities,
            principal=session.principal,
            stream=stream,
            progress_token=token,
            log_level=session.log_level,
            input_channel=channel,
            tool_title=tool.title,
            client_name=session.client_name,
            base_url=inbound.base_url,
            team=session.team,
        )
        try:
            if tool.required_capabilities:
                _require(session.capabilities, tool.required_capabilities, tool.name)
            value = await tool.handler(ctx, arguments)
            return finish_tool_call(tool.name, value, None)
        except MissingClientCapability as exc:
            # initialize-era clients have no -32021: name what is missing in the result.
            return ToolResult.text(exc.message, is_error=True).to_dict()
        except JsonRpcError:
            raise
        except Exception as exc:
            try:
                return tool_failure(exc, tool.name)
            except MissingClientCapability as missing:
                return ToolResult.text(missing.message, is_error=True).to_dict()


def finish_tool_call(tool_name: str, value: Any, error: BaseException | None) -> dict[str, Any]:
    """The wire result of a finished tools/call: the tool's value, or what its exception means.

    Errors the protocol defines propagate (and become JSON-RPC errors); everything a model can
    read and act on becomes a result.
    """
    if error is None:
        if isinstance(value, str):
            value = ToolResult.text(value)
        if isinstance(value, ToolResult):
            return value.to_dict()
        error = TypeError(f"a tool returned {type(value).__name__}; return a ToolResult or a str")
    return tool_failure(error, tool_name)


def tool_failure(exc: BaseException, tool_name: str) -> dict[str, Any]:
    """The exception-to-result half of the boundary for tools/call."""
    if isinstance(exc, JsonRpcError | MissingClientCapability):
        raise exc
    if isinstance(exc, ElicitationEnded):
        return ToolResult.text(exc.text).to_dict()
    if isinstance(exc, ToolError):
        return ToolResult.text(str(exc), is_error=True).to_dict()
    logger.error("tool %s failed", tool_name, exc_info=exc)
    return ToolResult.text(
        f"The tool {tool_name} failed with an internal error; the server log has the details.",
        is_error=True,
    ).to_dict()


def _bind(
    tool: Tool, ctx: Context, arguments: dict[str, Any]
) -> Callable[[], Coroutine[Any, Any, Any]]:
    def start() -> Coroutine[Any, Any, Any]:
        return tool.handler(ctx, arguments)

    return start


def _input_responses(params: Mapping[str, Any]) -> dict[str, Any] | None:
    if "inputResponses" not in params:
        return None
    responses = params["inputResponses"]
    if not isinstance(responses, dict):
        raise JsonRpcError(
            INVALID_PARAMS,
            f"params.inputResponses must be an object keyed by the server's inputRequests keys, "
            f"got {json_type(responses)}",
        )
    return responses


def _require(capabilities: Mapping[str, Any], required: Mapping[str, Any], what: str) -> None:
    missing = {name: value for name, value in required.items() if name not in capabilities}
    if missing:
        raise MissingClientCapability(
            f"{what} needs the client capabilities {', '.join(missing)}, which the client did not "
            "declare",
            missing,
        )


def _missing_capability(exc: MissingClientCapability) -> JsonRpcError:
    return JsonRpcError(
        MISSING_REQUIRED_CLIENT_CAPABILITY, exc.message, {"requiredCapabilities": exc.required}
    )


def _unknown_method(method: str) -> JsonRpcError:
    if method in mcp.REMOVED_IN_MODERN:
        return JsonRpcError(
            METHOD_NOT_FOUND,
            f"Method not found: {method!r} does not exist in protocol version {mcp.MODERN_VERSION}",
        )
    return JsonRpcError(METHOD_NOT_FOUND, f"Method not found: {method!r}")


def _client_name(info: Mapping[str, Any] | None) -> str | None:
    if info is None:
        return None
    name = info.get("name")
    return name if isinstance(name, str) else None
