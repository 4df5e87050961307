"""Server, the engine: dispatch to either era and the one boundary where exceptions become wire errors; no transport.

Transports hand it parsed requests (:meth:`Server.handle_modern`, :meth:`Server.handle_legacy`)
and write back what it returns; the eras (:mod:`~ask_mcp.server.eras.modern`,
:mod:`~ask_mcp.server.eras.legacy`) hold the methods. It knows nothing of HTTP beyond the header
values it is handed, nothing of Django, and no transport. A method exists only when the server
advertises its capability (no prompts registered: no prompts/list). Pure asyncio.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Awaitable, Callable, Iterable, Mapping
from functools import partial
from typing import Any

from ask_mcp.protocol.jsonrpc import (
    INTERNAL_ERROR,
    JsonRpcError,
    Request,
    error_message,
    json_type,
    result_message,
)
from ask_mcp.server.asking.table import ElicitationTable
from ask_mcp.server.catalog import Catalog
from ask_mcp.server.catalog.registry import ToolkitConfigError, build_toolkit
from ask_mcp.server.context import AnswerUrl, OnElicit
from ask_mcp.server.eras.base import Admitted, Era
from ask_mcp.server.eras.legacy import (
    LegacyEra,
    LegacyInbound,
    LegacySession,
    SessionControl,
    legacy_capabilities,
    read_initialize,
)
from ask_mcp.server.eras.modern import ModernEra
from ask_mcp.server.errors import MissingClientCapability
from ask_mcp.server.identity import Identity
from ask_mcp.server.ports import NULL_STREAM, QuestionObserver, Relay, ResponseRouter, Stream
from ask_mcp.server.request_state import StateSealer

logger = logging.getLogger("ask_mcp.server")


class Server(Catalog):
    """The MCP engine: toolkits plugged under prefixes, an elicitation table, and the methods.

    `on_elicit` answers questions when the client cannot show forms; `elicitation_capacity`
    bounds how many questions wait at once, `elicitation_share` how many of them one principal
    holds (None: the whole table); `elicitation_ttl` (seconds) is the longest any
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
        elicitation_share: int | None = None,
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
        if elicitation_share is not None and elicitation_share < 1:
            raise ValueError("elicitation_share must be at least 1 (or None for no share)")
        if elicitation_ttl <= 0:
            raise ValueError("elicitation_ttl must be a positive number of seconds")
        super().__init__(name, version, instructions, title)
        keys = list(state_keys) if state_keys is not None else [secrets.token_bytes(32)]
        self.table = ElicitationTable(
            sealer=StateSealer(keys),
            capacity=elicitation_capacity,
            share=elicitation_share,
            ttl=elicitation_ttl,
            on_elicit=on_elicit,
            observer=observer,
            relay=relay,
            answer_url=answer_url,
        )
        self._modern = ModernEra(self, self.table)
        self.tasks = self._modern.tasks
        """The Tasks extension's engine: its store, TTL and per-principal limit are set here."""
        self._legacy = LegacyEra(self, self.table)
        self._resource_listeners: list[Callable[[str], Awaitable[None]]] = []
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

    def legacy_capabilities(self) -> dict[str, Any]:
        """Capabilities as initialize states them: resources can be subscribed to in this era."""
        return legacy_capabilities(self.capabilities())

    def add_resource_listener(self, listener: Callable[[str], Awaitable[None]]) -> None:
        """Have `listener(uri)` told of every :meth:`resource_updated` (transports deliver it)."""
        self._resource_listeners.append(listener)

    async def resource_updated(self, uri: str) -> None:
        """Tell subscribed clients that the resource at `uri` changed (resources/subscribe)."""
        for listener in list(self._resource_listeners):
            await listener(uri)

    # ------------------------------------------------------------------ the dispatch

    async def handle_modern(
        self,
        request: Request,
        *,
        headers: Mapping[str, str] | None = None,
        header_names: Iterable[str] = (),
        who: Identity = Identity.ANONYMOUS,
        stream: Stream | None = None,
        base_url: str | None = None,
    ) -> dict[str, Any] | None:
        """Answer one 2026-07-28 request (None for a notification), asked by `who`.

        Runs the validation ladder in the specification's order: `_meta`, headers, version,
        method, capability; then the method. Every exception ends as a JSON-RPC error.
        """
        admit = partial(
            self._modern.admit,
            request,
            headers=headers,
            header_names=header_names,
            who=who,
            stream=stream,
            base_url=base_url,
        )
        return await self._answer(self._modern, request, admit)

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
            "serverInfo": self.server_info,
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
        who: Identity = Identity.ANONYMOUS,
    ) -> dict[str, Any] | None:
        """Answer one request inside an initialize-era session (None for a notification), asked
        by `who` (whose principal is the session's).

        Results carry no resultType and never `input_required`; a question reaches the client
        as a server-initiated request on `stream`, answered through `responses`.
        """
        inbound = LegacyInbound(
            request, session, stream or NULL_STREAM, control, responses, base_url, who
        )
        return await self._answer(self._legacy, request, lambda: inbound)

    async def _answer[I: Admitted](
        self, era: Era[I], request: Request, admit: Callable[[], I]
    ) -> dict[str, Any] | None:
        """The dispatch boundary: admit the request, run its era's method, and turn every
        exception into the JSON-RPC error it means (capability errors as `era` reports them)."""
        if request.is_notification:
            return None
        request_id = request.id
        assert request_id is not None
        try:
            inbound = admit()
            result = await era.method(request.method)(inbound)
        except JsonRpcError as exc:
            return error_message(request_id, exc)
        except MissingClientCapability as exc:
            return error_message(request_id, era.capability_error(exc))
        except Exception:
            logger.exception("%s failed", request.method)
            return error_message(request_id, JsonRpcError(INTERNAL_ERROR, "Internal error"))
        return result_message(request_id, era.finish(result))
