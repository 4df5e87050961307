"""Server, the engine: the tools, prompts and resources it offers, its methods, and the one boundary where exceptions become wire errors.

Transports hand it parsed requests (:meth:`Server.handle_modern`, :meth:`Server.handle_legacy`)
and write back what it returns; it knows nothing of HTTP beyond the header values it must compare,
and nothing of Django. A method exists only when the server advertises its capability (no
prompts registered: no prompts/list). Pure asyncio.
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
    RESOURCE_NOT_FOUND,
    JsonRpcError,
    Request,
    error_message,
    json_type,
    result_message,
)
from ask_mcp.server.context import Context, NullStream, Stream
from ask_mcp.server.elicitation import (
    AnswerUrl,
    ElicitationTable,
    Finish,
    OnElicit,
    QuestionObserver,
    Relay,
)
from ask_mcp.server.errors import ElicitationEnded, MissingClientCapability, ToolError
from ask_mcp.server.legacy import (
    LegacySession,
    PushChannel,
    SessionControl,
    legacy_capabilities,
    read_initialize,
)
from ask_mcp.server.prompts import Prompt, finish_prompt
from ask_mcp.server.registry import ToolkitConfigError, build_toolkit
from ask_mcp.server.resources import Resource, ResourceTemplate, finish_read, resource_not_found
from ask_mcp.server.state import InvalidState, StateSealer, request_binding
from ask_mcp.server.toolkit import Completion, Tool, Toolkit, ToolResult

logger = logging.getLogger("ask_mcp.server")

LIST_TTL_MS: Final = 60_000
"""How long clients may cache discover and list results; private, since lists may depend on auth."""
MAX_COMPLETIONS: Final = 100
"""The most values one completion/complete result carries (the specification's limit)."""

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


class Server:
    """The MCP engine: toolkits plugged under prefixes, an elicitation table, and the methods.

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
        self.prompts: dict[str, Prompt] = {}
        self.resources: dict[str, Resource] = {}
        self.resource_templates: dict[str, ResourceTemplate] = {}
        self.completions: dict[tuple[str, str, str], Completion] = {}
        self.toolkits: list[tuple[Toolkit, str]] = []
        self._resource_listeners: list[Callable[[str], Awaitable[None]]] = []
        self._capabilities: dict[str, Any] | None = None
        self._server_info: dict[str, Any] = {"name": name, "version": version}
        if title:
            self._server_info["title"] = title
        self._result_meta: Final = {mcp.META_SERVER_INFO: self._server_info}
        self._methods: dict[str, Method] = {
            "server/discover": self._discover,
            "tools/list": self._tools_list,
            "tools/call": self._tools_call,
            "prompts/list": self._prompts_list,
            "prompts/get": self._prompts_get,
            "resources/list": self._resources_list,
            "resources/templates/list": self._resource_templates_list,
            "resources/read": self._resources_read,
            "completion/complete": self._complete,
        }
        self._legacy_methods: dict[str, LegacyMethod] = {
            "ping": self._legacy_ping,
            "tools/list": self._legacy_tools_list,
            "tools/call": self._legacy_tools_call,
            "prompts/list": self._legacy_prompts_list,
            "prompts/get": self._legacy_prompts_get,
            "resources/list": self._legacy_resources_list,
            "resources/templates/list": self._legacy_resource_templates_list,
            "resources/read": self._legacy_resources_read,
            "resources/subscribe": self._legacy_subscribe,
            "resources/unsubscribe": self._legacy_unsubscribe,
            "completion/complete": self._legacy_complete,
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

    def plug(self, toolkit: Toolkit, prefix: Any = _UNSET) -> Server:
        """Register a toolkit's tools, prompts, resources and completions.

        Tool and prompt names go under `prefix` (the toolkit's default prefix when omitted; ""
        for none); resource URIs are absolute and keep theirs.

        Raises:
            ValueError: a name or URI is taken already or not allowed, or a completion names a
                prompt or template the toolkit does not register.
        """
        chosen = toolkit.default_prefix if prefix is _UNSET else prefix
        if not isinstance(chosen, str):
            raise TypeError(f"prefix must be a string, got {type(chosen).__name__}")
        owner = toolkit.toolkit_name()
        tools = _unique("Tool", owner, self.tools, {t.name: t for t in toolkit.tools(chosen)})
        prompts = _unique(
            "Prompt", owner, self.prompts, {p.name: p for p in toolkit.prompts(chosen)}
        )
        resources = _unique(
            "Resource", owner, self.resources, {r.uri: r for r in toolkit.resources(chosen)}
        )
        templates = _unique(
            "Resource template",
            owner,
            self.resource_templates,
            {t.uri_template: t for t in toolkit.resource_templates(chosen)},
        )
        completions: dict[tuple[str, str, str], Completion] = {}
        for item in toolkit.completions(chosen):
            known = prompts if item.kind == "ref/prompt" else templates
            if item.target not in known:
                raise ValueError(
                    f"{owner} completes {item.argument!r} of {item.target!r}, which it does not "
                    "register"
                )
            completions[(item.kind, item.target, item.argument)] = item
        self.tools.update(tools)
        self.prompts.update(prompts)
        self.resources.update(resources)
        self.resource_templates.update(templates)
        self.completions.update(completions)
        self.toolkits.append((toolkit, chosen))
        self._capabilities = None
        return self

    def load_tools(self, tools: Mapping[str, Mapping[str, Any] | None]) -> Server:
        """Plug toolkits named in a `{"Name": {settings, "prefix": ...}}` mapping, loaded by name.

        Names are the registry's (built-ins, the `ask_mcp.toolkits` entry-point group, dotted
        paths), so user code imports no toolkit.

        Raises:
            ToolkitConfigError: an unknown toolkit or setting, or a bad value (the message
                names the toolkit and its valid settings).
        """
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

    def capabilities(self) -> dict[str, Any]:
        """What this server offers, as server/discover states it: only what is registered.

        `logging` is always there: any handler may log, and the client asks per request.
        """
        return {name: dict(value) for name, value in self._offers().items()}

    def _offers(self) -> Mapping[str, Any]:
        """The capabilities, shared and read-only: every request's method check reads them."""
        if self._capabilities is None:  # computed once per plug()
            capabilities: dict[str, Any] = {}
            if self.tools:
                capabilities["tools"] = {}
            if self.prompts:
                capabilities["prompts"] = {}
            if self.resources or self.resource_templates:
                capabilities["resources"] = {}
            if self.completions:
                capabilities["completions"] = {}
            capabilities["logging"] = {}
            self._capabilities = capabilities
        return self._capabilities

    def add_resource_listener(self, listener: Callable[[str], Awaitable[None]]) -> None:
        """Have `listener(uri)` told of every :meth:`resource_updated` (transports deliver it)."""
        self._resource_listeners.append(listener)

    async def resource_updated(self, uri: str) -> None:
        """Tell subscribed clients that the resource at `uri` changed (resources/subscribe)."""
        for listener in list(self._resource_listeners):
            await listener(uri)

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
            if method is None or not _offered(request.method, self._offers()):
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
        return _cacheable({"tools": [tool.listing() for tool in self.tools.values()]})

    async def _tools_call(self, inbound: Inbound) -> dict[str, Any]:
        tool, arguments = self._tool_and_arguments(inbound.request.params)
        if inbound.headers is not None:
            check_param_headers(tool.input_schema, arguments, inbound.headers)
        return await self._run_parkable(
            inbound,
            name=tool.name,
            arguments=arguments,
            start=lambda ctx: tool.handler(ctx, arguments),
            finish=partial(finish_tool_call, tool.name),
            required=tool.required_capabilities,
            title=tool.title,
        )

    async def _prompts_list(self, inbound: Inbound) -> dict[str, Any]:
        return _cacheable({"prompts": [prompt.listing() for prompt in self.prompts.values()]})

    async def _prompts_get(self, inbound: Inbound) -> dict[str, Any]:
        prompt, arguments = self._prompt_and_arguments(inbound.request.params)
        return await self._run_parkable(
            inbound,
            name=prompt.name,
            arguments=arguments,
            start=lambda ctx: prompt.handler(ctx, arguments),
            finish=partial(finish_prompt, prompt.name),
            required=prompt.required_capabilities,
            title=prompt.title,
        )

    async def _resources_list(self, inbound: Inbound) -> dict[str, Any]:
        return _cacheable({"resources": [r.listing() for r in self.resources.values()]})

    async def _resource_templates_list(self, inbound: Inbound) -> dict[str, Any]:
        templates = [t.listing() for t in self.resource_templates.values()]
        return _cacheable({"resourceTemplates": templates})

    async def _resources_read(self, inbound: Inbound) -> dict[str, Any]:
        uri, found, variables = self._resource_for(inbound.request.params)
        result = await self._run_parkable(
            inbound,
            name=uri,
            arguments=variables,
            start=lambda ctx: found.handler(ctx, uri, variables),
            finish=partial(finish_read, uri, found.mime_type),
            required=found.required_capabilities,
            title=found.title,
        )
        if result.get("resultType") == mcp.RESULT_INPUT_REQUIRED:
            return result  # interim results are never cacheable
        params = inbound.request.params
        if "inputResponses" in params or "requestState" in params:
            # A retry's result depends on inputs outside the cache key: immediately stale.
            return {**result, "ttlMs": 0, "cacheScope": "private"}
        return {**result, "ttlMs": found.ttl_ms, "cacheScope": found.cache_scope}

    async def _complete(self, inbound: Inbound) -> dict[str, Any]:
        return await self._completion(
            inbound.request.params,
            capabilities=inbound.envelope.client_capabilities,
            principal=inbound.principal,
            protocol_version=mcp.MODERN_VERSION,
        )

    async def _run_parkable(
        self,
        inbound: Inbound,
        *,
        name: str,
        arguments: dict[str, Any],
        start: Callable[[Context], Coroutine[Any, Any, Any]],
        finish: Finish,
        required: Mapping[str, Any] | None,
        title: str | None,
    ) -> dict[str, Any]:
        """Run a tools/call, prompts/get or resources/read whose handler may park for input.

        The first request starts the handler in the elicitation table; a retry carrying
        requestState resumes the same, still-suspended handler (it is never re-run).
        """
        method = inbound.request.method
        params = inbound.request.params
        envelope = inbound.envelope
        if required:
            _require(envelope.client_capabilities, required, name)
        responses = _input_responses(params)
        binding = request_binding(method, name, arguments)
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
                method=method,
                name=name,
                arguments=arguments,
                protocol_version=mcp.MODERN_VERSION,
                capabilities=envelope.client_capabilities,
                principal=inbound.principal,
                stream=inbound.stream,
                progress_token=envelope.progress_token,
                log_level=envelope.log_level,
                tool_title=title,
                client_name=_client_name(envelope.client_info),
                base_url=inbound.base_url,
                team=inbound.team,
            )
            return await table.run(
                ctx, partial(start, ctx), binding=binding, preset=responses, finish=finish
            )
        except InvalidState as exc:
            raise JsonRpcError(
                INVALID_PARAMS,
                f"Invalid requestState: {STATE_REJECTIONS[exc.reason]}",
                {"reason": exc.reason},
            ) from exc
        except ElicitationEnded as exc:  # expired or lost before any handler ran
            return finish(None, exc)

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

    def _prompt_and_arguments(self, params: Mapping[str, Any]) -> tuple[Prompt, dict[str, str]]:
        name = params.get("name")
        if not isinstance(name, str):
            raise JsonRpcError(
                INVALID_PARAMS,
                f"params.name must be a string naming a prompt, got {json_type(name)}",
            )
        prompt = self.prompts.get(name)
        if prompt is None:
            raise JsonRpcError(
                INVALID_PARAMS,
                f"Unknown prompt: {name!r}; this server offers "
                f"{', '.join(self.prompts) or 'no prompts'}",
            )
        return prompt, prompt.read_arguments(params.get("arguments"))

    def _resource_for(
        self, params: Mapping[str, Any]
    ) -> tuple[str, Resource | ResourceTemplate, dict[str, str]]:
        """The resource (or template, with its variables) a resources/read names.

        Raises:
            JsonRpcError: -32602 for a missing URI, or one nothing matches (with `data.uri`).
        """
        uri = params.get("uri")
        if not isinstance(uri, str):
            raise JsonRpcError(
                INVALID_PARAMS,
                f"params.uri must be a string naming a resource, got {json_type(uri)}",
            )
        fixed = self.resources.get(uri)
        if fixed is not None:
            return uri, fixed, {}
        for template in self.resource_templates.values():
            variables = template.match(uri)
            if variables is not None:
                return uri, template, variables
        raise resource_not_found(uri)

    async def _completion(
        self,
        params: Mapping[str, Any],
        *,
        capabilities: Mapping[str, Any],
        principal: str | None,
        protocol_version: str,
    ) -> dict[str, Any]:
        """completion/complete in either era: suggestions for one prompt argument or template variable."""
        ref = params.get("ref")
        argument = params.get("argument")
        if not isinstance(ref, dict) or ref.get("type") not in ("ref/prompt", "ref/resource"):
            raise JsonRpcError(
                INVALID_PARAMS,
                'params.ref must be {"type": "ref/prompt", "name": …} or '
                '{"type": "ref/resource", "uri": …}',
            )
        if not (
            isinstance(argument, dict)
            and isinstance(argument.get("name"), str)
            and isinstance(argument.get("value"), str)
        ):
            raise JsonRpcError(
                INVALID_PARAMS, 'params.argument must be {"name": <string>, "value": <string>}'
            )
        context = params.get("context")
        given = context.get("arguments") if isinstance(context, dict) else None
        if given is not None and not (
            isinstance(given, dict) and all(isinstance(v, str) for v in given.values())
        ):
            raise JsonRpcError(
                INVALID_PARAMS, "params.context.arguments must be an object of strings"
            )
        kind = ref["type"]
        target = ref.get("name") if kind == "ref/prompt" else ref.get("uri")
        known: Mapping[str, Any] = self.prompts if kind == "ref/prompt" else self.resource_templates
        if not isinstance(target, str) or target not in known:
            what = "prompt" if kind == "ref/prompt" else "resource template"
            raise JsonRpcError(INVALID_PARAMS, f"Unknown {what}: {target!r}")
        completion = self.completions.get((kind, target, argument["name"]))
        values: list[str] = []
        if completion is not None:
            filled = dict(given or {})
            ctx = Context(
                table=self.table,
                method="completion/complete",
                name=target,
                arguments=filled,
                protocol_version=protocol_version,
                capabilities=capabilities,
                principal=principal,
                stream=NullStream(),
            )
            values = [str(v) for v in await completion.handler(ctx, argument["value"], filled)]
        return {
            "completion": {
                "values": values[:MAX_COMPLETIONS],
                "total": len(values),
                "hasMore": len(values) > MAX_COMPLETIONS,
            }
        }

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
            "capabilities": self.legacy_capabilities(),
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
            if method is None and request.method == "initialize":
                raise JsonRpcError(
                    INVALID_REQUEST,
                    "Invalid request: this session is already initialized; start a new one "
                    "by sending initialize without an Mcp-Session-Id header",
                )
            if method is None or not _offered(request.method, legacy_capabilities(self._offers())):
                raise JsonRpcError(METHOD_NOT_FOUND, f"Method not found: {request.method!r}")
            inbound = LegacyInbound(
                request, session, stream or NullStream(), control, responses, base_url
            )
            result = await method(inbound)
        except JsonRpcError as exc:
            return error_message(request_id, exc)
        except MissingClientCapability as exc:
            # initialize-era clients have no -32021: the same data on an invalid-request error.
            return error_message(
                request_id,
                JsonRpcError(INVALID_REQUEST, exc.message, {"requiredCapabilities": exc.required}),
            )
        except Exception:
            logger.exception("%s failed", request.method)
            return error_message(request_id, JsonRpcError(INTERNAL_ERROR, "Internal error"))
        return result_message(request_id, result)

    def legacy_capabilities(self) -> dict[str, Any]:
        """Capabilities as initialize states them: resources can be subscribed to in this era."""
        return legacy_capabilities(self.capabilities())

    async def _legacy_ping(self, inbound: LegacyInbound) -> dict[str, Any]:
        return {}

    async def _legacy_tools_list(self, inbound: LegacyInbound) -> dict[str, Any]:
        return {"tools": [tool.listing() for tool in self.tools.values()]}

    async def _legacy_prompts_list(self, inbound: LegacyInbound) -> dict[str, Any]:
        return {"prompts": [prompt.listing() for prompt in self.prompts.values()]}

    async def _legacy_resources_list(self, inbound: LegacyInbound) -> dict[str, Any]:
        return {"resources": [r.listing() for r in self.resources.values()]}

    async def _legacy_resource_templates_list(self, inbound: LegacyInbound) -> dict[str, Any]:
        return {"resourceTemplates": [t.listing() for t in self.resource_templates.values()]}

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

    async def _legacy_subscribe(self, inbound: LegacyInbound) -> dict[str, Any]:
        uri = self._legacy_resource_uri(inbound.request.params)
        inbound.session.subscriptions.add(uri)
        if inbound.control is not None:
            await inbound.control.set_subscription(inbound.session, uri, subscribed=True)
        return {}

    async def _legacy_unsubscribe(self, inbound: LegacyInbound) -> dict[str, Any]:
        uri = inbound.request.params.get("uri")
        if not isinstance(uri, str):
            raise JsonRpcError(INVALID_PARAMS, f"params.uri must be a string, got {json_type(uri)}")
        inbound.session.subscriptions.discard(uri)
        if inbound.control is not None:
            await inbound.control.set_subscription(inbound.session, uri, subscribed=False)
        return {}

    def _legacy_resource_uri(self, params: Mapping[str, Any]) -> str:
        return self._legacy_resource_for(params)[0]

    def _legacy_resource_for(
        self, params: Mapping[str, Any]
    ) -> tuple[str, Resource | ResourceTemplate, dict[str, str]]:
        try:
            return self._resource_for(params)
        except JsonRpcError as exc:
            if isinstance(exc.data, dict) and "uri" in exc.data:
                # This era's code for an unknown resource (2026-07-28 moved it to -32602).
                raise JsonRpcError(RESOURCE_NOT_FOUND, exc.message, exc.data) from exc
            raise

    async def _legacy_complete(self, inbound: LegacyInbound) -> dict[str, Any]:
        session = inbound.session
        return await self._completion(
            inbound.request.params,
            capabilities=session.capabilities,
            principal=session.principal,
            protocol_version=session.protocol_version,
        )

    async def _legacy_tools_call(self, inbound: LegacyInbound) -> dict[str, Any]:
        tool, arguments = self._tool_and_arguments(inbound.request.params)
        try:
            if tool.required_capabilities:
                _require(inbound.session.capabilities, tool.required_capabilities, tool.name)
            ctx = self._legacy_context(inbound, tool.name, arguments, tool.title)
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

    async def _legacy_prompts_get(self, inbound: LegacyInbound) -> dict[str, Any]:
        prompt, arguments = self._prompt_and_arguments(inbound.request.params)
        if prompt.required_capabilities:
            _require(inbound.session.capabilities, prompt.required_capabilities, prompt.name)
        ctx = self._legacy_context(inbound, prompt.name, arguments, prompt.title)
        try:
            value = await prompt.handler(ctx, arguments)
        except Exception as exc:
            return finish_prompt(prompt.name, None, exc)
        return finish_prompt(prompt.name, value, None)

    async def _legacy_resources_read(self, inbound: LegacyInbound) -> dict[str, Any]:
        uri, found, variables = self._legacy_resource_for(inbound.request.params)
        if found.required_capabilities:
            _require(inbound.session.capabilities, found.required_capabilities, uri)
        ctx = self._legacy_context(inbound, uri, variables, found.title)
        try:
            value = await found.handler(ctx, uri, variables)
        except Exception as exc:
            return finish_read(uri, found.mime_type, None, exc)
        return finish_read(uri, found.mime_type, value, None)

    def _legacy_context(
        self, inbound: LegacyInbound, name: str, arguments: Mapping[str, Any], title: str | None
    ) -> Context:
        """A handler's Context in a session: questions go out as requests on the call's stream."""
        session = inbound.session
        meta = inbound.request.params.get("_meta")
        token = meta.get(mcp.META_PROGRESS_TOKEN) if isinstance(meta, dict) else None
        if isinstance(token, bool) or not isinstance(token, str | int):
            token = None
        channel = None
        stream = inbound.stream
        if inbound.responses is not None and getattr(stream, "allows_sse", False):
            channel = PushChannel(
                stream, session.protocol_version, inbound.responses.expect, inbound.responses.forget
            )
        return Context(
            table=self.table,
            method=inbound.request.method,
            name=name,
            arguments=arguments,
            protocol_version=session.protocol_version,
            capabilities=session.capabilities,
            principal=session.principal,
            stream=stream,
            progress_token=token,
            log_level=session.log_level,
            input_channel=channel,
            tool_title=title,
            client_name=session.client_name,
            base_url=inbound.base_url,
            team=session.team,
        )


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


def _input_responses(params: Mapping[str, Any]) -> dict[str, Any] | None:
    """The retry's inputResponses; every input response (ElicitResult, CreateMessageResult,
    ListRootsResult) is an object, so anything else is malformed, whatever its key."""
    if "inputResponses" not in params:
        return None
    responses = params["inputResponses"]
    if not isinstance(responses, dict):
        raise JsonRpcError(
            INVALID_PARAMS,
            f"params.inputResponses must be an object keyed by the server's inputRequests keys, "
            f"got {json_type(responses)}",
        )
    for key, response in responses.items():
        if not isinstance(response, dict):
            raise JsonRpcError(
                INVALID_PARAMS,
                f"params.inputResponses[{key!r}] must be an object (an ElicitResult, "
                f"CreateMessageResult or ListRootsResult), got {json_type(response)}",
            )
    return responses


def _cacheable(result: dict[str, Any]) -> dict[str, Any]:
    """A list result with its caching hints: private, since lists may depend on authorization."""
    result["ttlMs"] = LIST_TTL_MS
    result["cacheScope"] = "private"
    return result


def _unique[T](
    kind: str, owner: str, registered: Mapping[str, Any], new: dict[str, T]
) -> dict[str, T]:
    taken = [key for key in new if key in registered]
    if taken:
        raise ValueError(
            f"{kind} {taken[0]!r} from {owner} is already registered; plug the toolkit under "
            "another prefix"
        )
    return new


def _offered(method: str, capabilities: Mapping[str, Any]) -> bool:
    """Whether a server with `capabilities` has `method` (methods of unadvertised features do not exist)."""
    capability = mcp.CAPABILITY_OF_METHOD.get(method)
    if capability is None:
        return True
    if method in ("resources/subscribe", "resources/unsubscribe"):
        return bool(capabilities.get("resources", {}).get("subscribe"))
    return capability in capabilities


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
    capability = mcp.CAPABILITY_OF_METHOD.get(method)
    if capability is not None:
        return JsonRpcError(
            METHOD_NOT_FOUND,
            f"Method not found: {method!r}; this server does not offer {capability}",
        )
    return JsonRpcError(METHOD_NOT_FOUND, f"Method not found: {method!r}")


def _client_name(info: Mapping[str, Any] | None) -> str | None:
    if info is None:
        return None
    name = info.get("name")
    return name if isinstance(name, str) else None
