"""The 2026-07-28 era: the envelope ladder, discover and multi round-trip calls (MRTR); knows no sessions.

:class:`ModernEra` runs the validation ladder (`_meta`, headers, version; then method and
capability, in the specification's order), answers server/discover, and runs tools/call,
prompts/get and resources/read through the elicitation table, so a handler that asks parks and
the request is answered ``input_required``; the retry's requestState is opened and checked
against the retry, its inputResponses wake the same handler, and it is never re-run. It does
not know sessions, the initialize era or any transport. Pure asyncio.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Iterable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any, Final

from ask_mcp.protocol import mcp
from ask_mcp.protocol.envelope import (
    Envelope,
    check_headers,
    check_param_headers,
    check_version,
    read_envelope,
)
from ask_mcp.protocol.jsonrpc import (
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    JsonRpcError,
    Request,
    json_type,
)
from ask_mcp.server.asking.parked import Finish
from ask_mcp.server.asking.recovery import finish_from_record
from ask_mcp.server.asking.table import ElicitationTable
from ask_mcp.server.catalog import Catalog, require
from ask_mcp.server.catalog.prompts import finish_prompt
from ask_mcp.server.catalog.resources import finish_read
from ask_mcp.server.catalog.results import finish_tool_call
from ask_mcp.server.catalog.toolkit import FromRecord, Tool
from ask_mcp.server.context import Caller, Context, client_name, client_version
from ask_mcp.server.eras.base import Era, Method
from ask_mcp.server.eras.tasks import EXTENSION, REQUIRED, TaskEngine, declares_tasks, task_id_of
from ask_mcp.server.errors import (
    PEOPLE_ONLY_TEXT,
    ElicitationEnded,
    ElicitationTimedOut,
    MissingClientCapability,
    QuestionNoLongerWaiting,
    ToolError,
)
from ask_mcp.server.identity import Identity
from ask_mcp.server.ports import NULL_STREAM, Stream
from ask_mcp.server.request_state import InvalidState, request_binding

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
"""What the -32602 for a refused requestState says, by the check that refused it."""


PEOPLE_ONLY_REFUSAL: Final = (
    f"Invalid params: inputResponses refused: {PEOPLE_ONLY_TEXT}. Send the call without "
    "inputResponses; a person answers its question in the inbox"
)
"""The -32602 for answers a people-only caller sends up front with its call."""
PEOPLE_ONLY_STATE: Final = (
    f"Invalid params: requestState refused: {PEOPLE_ONLY_TEXT}, and this round waits on a "
    "question offered to the client. Retry with the token that started the call"
)
"""The -32602 for a people-only caller's retry of a round that waits on the client's form."""


@dataclass(slots=True)
class Inbound:
    """A request that passed the envelope rungs, with what the transport knows about it."""

    request: Request
    envelope: Envelope
    who: Identity
    """Who is asking, as the team layer built it from the request's credential."""
    stream: Stream
    headers: Mapping[str, str] | None
    base_url: str | None = None


@dataclass(frozen=True, slots=True)
class Parkable:
    """A tools/call, prompts/get or resources/read to run in the table: what it names, how it
    starts and how its outcome becomes its result."""

    name: str
    arguments: dict[str, Any]
    start: Callable[[Context], Coroutine[Any, Any, Any]]
    finish: Finish
    required: Mapping[str, Any] | None
    title: str | None
    toolkit: str | None
    from_record: FromRecord | None = None
    """How the call is finished from its ask's record if its parked handler is gone."""


class ModernEra(Era[Inbound]):
    """The 2026-07-28 methods and wire conventions."""

    def __init__(self, catalog: Catalog, table: ElicitationTable) -> None:
        super().__init__(catalog, table)
        self.result_meta: Final = {mcp.META_SERVER_INFO: catalog.server_info}
        """Every result's `_meta`: who answered."""
        self.tasks: Final = TaskEngine(table, catalog.tools)
        """The Tasks extension's tasks (a tools/call answered by a task, and tasks/*)."""

    def own_methods(self) -> Mapping[str, Method[Inbound]]:
        return {
            "server/discover": self.discover,
            "tools/call": self.tools_call,
            "prompts/get": self.prompts_get,
            "resources/read": self.resources_read,
            "tasks/get": self.tasks_get,
            "tasks/update": self.tasks_update,
            "tasks/cancel": self.tasks_cancel,
        }

    def admit(
        self,
        request: Request,
        *,
        headers: Mapping[str, str] | None,
        header_names: Iterable[str],
        who: Identity,
        stream: Stream | None,
        base_url: str | None,
    ) -> Inbound:
        """The envelope rungs of the ladder: `_meta`, then the headers (over HTTP), then the version.

        Raises:
            JsonRpcError: the rung's error.
        """
        envelope = read_envelope(request)
        if headers is not None:
            check_headers(request, envelope, headers, header_names)
        check_version(envelope, (mcp.MODERN_VERSION,))
        return Inbound(request, envelope, who, stream or NULL_STREAM, headers, base_url)

    def offers(self) -> Mapping[str, Any]:
        return self.catalog.offers()

    def unknown_method(self, method: str) -> JsonRpcError:
        if method in mcp.REMOVED_IN_MODERN:
            return JsonRpcError(
                METHOD_NOT_FOUND,
                f"Method not found: {method!r} does not exist in protocol version "
                f"{mcp.MODERN_VERSION}",
            )
        capability = mcp.CAPABILITY_OF_METHOD.get(method)
        if capability is not None:
            return JsonRpcError(
                METHOD_NOT_FOUND,
                f"Method not found: {method!r}; this server does not offer {capability}",
            )
        return JsonRpcError(METHOD_NOT_FOUND, f"Method not found: {method!r}")

    def caller(self, inbound: Inbound) -> Caller:
        envelope = inbound.envelope
        return Caller(
            protocol_version=mcp.MODERN_VERSION,
            capabilities=envelope.client_capabilities,
            who=inbound.who,
            stream=inbound.stream,
            progress_token=envelope.progress_token,
            log_level=envelope.log_level,
            client_name=client_name(envelope.client_info),
            base_url=inbound.base_url,
            client_version=client_version(envelope.client_info),
        )

    def list_hints(self, result: dict[str, Any]) -> dict[str, Any]:
        """Private caching hints: lists may depend on authorization."""
        result["ttlMs"] = LIST_TTL_MS
        result["cacheScope"] = "private"
        return result

    def finish(self, result: dict[str, Any]) -> dict[str, Any]:
        result.setdefault("resultType", mcp.RESULT_COMPLETE)
        result["_meta"] = self.result_meta
        return result

    def capability_error(self, exc: MissingClientCapability) -> JsonRpcError:
        return JsonRpcError(
            MISSING_REQUIRED_CLIENT_CAPABILITY, exc.message, {"requiredCapabilities": exc.required}
        )

    # ------------------------------------------------------------------ the methods

    async def discover(self, inbound: Inbound) -> dict[str, Any]:
        """server/discover: the versions, the capabilities and the instructions."""
        catalog = self.catalog
        result: dict[str, Any] = {
            "supportedVersions": list(catalog.supported_versions()),
            "capabilities": catalog.capabilities(),
        }
        if any(self.tasks.runs_as_task(tool) for tool in catalog.tools.values()):
            result["capabilities"]["extensions"] = {EXTENSION: {}}
        if catalog.instructions:
            result["instructions"] = catalog.instructions
        return self.list_hints(result)

    async def tools_call(self, inbound: Inbound) -> dict[str, Any]:
        tool, arguments = self.catalog.tool_named(inbound.request.params)
        if inbound.headers is not None:
            check_param_headers(tool.input_schema, arguments, inbound.headers)
        if self.tasks.runs_as_task(tool):
            task = await self._as_task(inbound, tool, arguments)
            if task is not None:
                return task
        call = Parkable(
            tool.name,
            arguments,
            lambda ctx: tool.handler(ctx, arguments),
            partial(finish_tool_call, tool.name),
            tool.required_capabilities,
            tool.title,
            self.catalog.toolkit_of(tool),
            tool.from_record,
        )
        result = await self.run_parkable(inbound, call)
        if (
            tool.task == "after_input"
            and "requestState" in inbound.request.params
            and result.get("resultType", mcp.RESULT_COMPLETE) == mcp.RESULT_COMPLETE
            and declares_tasks(inbound.envelope.client_capabilities)
        ):
            # Its input came by MRTR rounds first (resolved synchronously, as the spec
            # advises); the last round is answered with the task that holds the outcome.
            ctx = self.context(
                inbound, name=tool.name, arguments=arguments, title=None, toolkit=None
            )
            return await self.tasks.create_settled(ctx, tool, result)
        return result

    async def _as_task(
        self, inbound: Inbound, tool: Tool, arguments: dict[str, Any]
    ) -> dict[str, Any] | None:
        """A tools/call answered with a task, when this request declares the extension and is
        no MRTR retry; None: the ordinary call (a tool that runs only as a task refuses)."""
        capabilities = inbound.envelope.client_capabilities
        params = inbound.request.params
        if not declares_tasks(capabilities):
            if tool.task == "required":
                raise MissingClientCapability(
                    f"Missing required client capability: tool {tool.name!r} runs only as a "
                    "task; declare the io.modelcontextprotocol/tasks extension",
                    REQUIRED,
                )
            return None
        if "requestState" in params or "inputResponses" in params or tool.task == "after_input":
            return None
        if tool.required_capabilities:
            require(capabilities, tool.required_capabilities, tool.name)
        ctx = self.context(
            inbound,
            name=tool.name,
            arguments=arguments,
            title=tool.title,
            toolkit=self.catalog.toolkit_of(tool),
        )
        try:
            return await self.tasks.create(ctx, tool)
        except ToolError as exc:
            return finish_tool_call(tool.name, None, exc)

    def _task_request(self, inbound: Inbound) -> str:
        """The taskId of a tasks/* request that declares the extension.

        Raises:
            MissingClientCapability: the request does not declare it (-32021, before any lookup).
        """
        if not declares_tasks(inbound.envelope.client_capabilities):
            raise MissingClientCapability(
                f"Missing required client capability: {inbound.request.method} needs the "
                "io.modelcontextprotocol/tasks extension declared on the request",
                REQUIRED,
            )
        return task_id_of(inbound.request.params)

    async def tasks_get(self, inbound: Inbound) -> dict[str, Any]:
        task_id = self._task_request(inbound)
        return await self.tasks.get(task_id, inbound.who.principal)

    async def tasks_update(self, inbound: Inbound) -> dict[str, Any]:
        task_id = self._task_request(inbound)
        responses = input_responses(inbound.request.params) or {}
        return await self.tasks.update(task_id, inbound.who.principal, responses)

    async def tasks_cancel(self, inbound: Inbound) -> dict[str, Any]:
        task_id = self._task_request(inbound)
        return await self.tasks.cancel(task_id, inbound.who.principal)

    async def prompts_get(self, inbound: Inbound) -> dict[str, Any]:
        prompt, arguments = self.catalog.prompt_named(inbound.request.params)
        call = Parkable(
            prompt.name,
            arguments,
            lambda ctx: prompt.handler(ctx, arguments),
            partial(finish_prompt, prompt.name),
            prompt.required_capabilities,
            prompt.title,
            self.catalog.toolkit_of(prompt),
        )
        return await self.run_parkable(inbound, call)

    async def resources_read(self, inbound: Inbound) -> dict[str, Any]:
        uri, found, variables = self.catalog.resource_named(inbound.request.params)
        call = Parkable(
            uri,
            variables,
            lambda ctx: found.handler(ctx, uri, variables),
            partial(finish_read, uri, found.mime_type),
            found.required_capabilities,
            found.title,
            self.catalog.toolkit_of(found),
        )
        result = await self.run_parkable(inbound, call)
        if result.get("resultType") == mcp.RESULT_INPUT_REQUIRED:
            return result  # interim results are never cacheable
        params = inbound.request.params
        if "inputResponses" in params or "requestState" in params:
            # A retry's result depends on inputs outside the cache key: immediately stale.
            return {**result, "ttlMs": 0, "cacheScope": "private"}
        return {**result, "ttlMs": found.ttl_ms, "cacheScope": found.cache_scope}

    async def run_parkable(self, inbound: Inbound, call: Parkable) -> dict[str, Any]:
        """Run a tools/call, prompts/get or resources/read whose handler may park for input.

        The first request starts the handler in the elicitation table; a retry carrying
        requestState resumes the same, still-suspended handler (it is never re-run).
        """
        params = inbound.request.params
        if call.required:
            require(inbound.envelope.client_capabilities, call.required, call.name)
        responses = input_responses(params)
        if responses and inbound.who.people_only and "requestState" not in params:
            # Answers sent up front would answer the call's first question from the client:
            # a people-only token's questions are answered in the inbox, so none is taken.
            raise JsonRpcError(INVALID_PARAMS, PEOPLE_ONLY_REFUSAL, {"reason": "people_only"})
        binding = request_binding(inbound.request.method, call.name, call.arguments)
        try:
            if "requestState" in params:
                return await self._resume(inbound, call, binding, responses or {})
            ctx = self.context(
                inbound,
                name=call.name,
                arguments=call.arguments,
                title=call.title,
                toolkit=call.toolkit,
            )
            return await self.table.run(
                ctx, partial(call.start, ctx), binding=binding, preset=responses, finish=call.finish
            )
        except InvalidState as exc:
            raise JsonRpcError(
                INVALID_PARAMS,
                f"Invalid requestState: {STATE_REJECTIONS[exc.reason]}",
                {"reason": exc.reason},
            ) from exc
        except ElicitationEnded as exc:  # expired or lost before any handler ran
            return call.finish(None, exc)

    async def _resume(
        self, inbound: Inbound, call: Parkable, binding: str, responses: Mapping[str, Any]
    ) -> dict[str, Any]:
        """A retry: open its requestState against the retry, and wake the call it names; when
        no worker holds that call any more, finish it from its ask's record if the tool allows."""
        table = self.table
        claims = table.sealer.open_for(
            inbound.request.params["requestState"], binding=binding, principal=inbound.who.principal
        )
        if inbound.who.people_only and claims.question is not None:
            # The round waits on a question the client was offered (another token of the same
            # person started the call): a people-only token's request does not answer it.
            raise JsonRpcError(INVALID_PARAMS, PEOPLE_ONLY_STATE, {"reason": "people_only"})
        try:
            return await table.resume(
                claims,
                responses,
                stream=inbound.stream,
                progress_token=inbound.envelope.progress_token,
                log_level=inbound.envelope.log_level,
            )
        except (QuestionNoLongerWaiting, ElicitationTimedOut):
            if call.from_record is None or claims.question is None or table.records is None:
                raise
        ctx = self.context(
            inbound,
            name=call.name,
            arguments=call.arguments,
            title=call.title,
            toolkit=call.toolkit,
        )
        return await finish_from_record(
            table, ctx, claims, responses, call.from_record, call.finish
        )


def input_responses(params: Mapping[str, Any]) -> dict[str, Any] | None:
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
