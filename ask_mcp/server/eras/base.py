"""The interface both protocol eras implement, and what they share (lists, completion, the Context); no envelope.

An :class:`Era` owns its method table, says which methods exist (only those whose capability
the era advertises), how its results are finished for the wire and how a missing client
capability is reported. The four list methods, completion/complete and the building of a
handler's Context are written once here. The boundary that turns exceptions into wire errors is
:meth:`ask_mcp.server.core.Server._answer`; this module does not know the envelope, sessions or
any transport. Pure.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final, Protocol

from ask_mcp.protocol import mcp
from ask_mcp.protocol.jsonrpc import INVALID_PARAMS, JsonRpcError, Request, json_type
from ask_mcp.server.asking.table import ElicitationTable
from ask_mcp.server.catalog import LISTS, Catalog, offered
from ask_mcp.server.context import Caller, Context
from ask_mcp.server.errors import MissingClientCapability
from ask_mcp.server.ports import InputChannel

MAX_COMPLETIONS: Final = 100
"""The most values one completion/complete result carries (the specification's limit)."""


class Admitted(Protocol):
    """A request that passed its era's checks, with what the transport knows about it."""

    @property
    def request(self) -> Request: ...


type Method[I] = Callable[[I], Awaitable[dict[str, Any]]]
"""One method of an era: the admitted request in, the result (before :meth:`Era.finish`) out."""


class Era[I: Admitted](ABC):
    """One protocol era: its methods, which of them exist, and its wire conventions."""

    def __init__(self, catalog: Catalog, table: ElicitationTable) -> None:
        self.catalog = catalog
        self.table = table
        self.methods: dict[str, Method[I]] = dict.fromkeys(LISTS, self.list)
        self.methods["completion/complete"] = self.complete
        self.methods.update(self.own_methods())

    @abstractmethod
    def own_methods(self) -> Mapping[str, Method[I]]:
        """The methods only this era has, or has differently from the other."""

    @abstractmethod
    def offers(self) -> Mapping[str, Any]:
        """The server capabilities as this era advertises them (a method exists only with its)."""

    @abstractmethod
    def unknown_method(self, method: str) -> JsonRpcError:
        """The error for a method this era does not have."""

    @abstractmethod
    def caller(self, inbound: I) -> Caller:
        """Who is calling, as this era states it."""

    @abstractmethod
    def list_hints(self, result: dict[str, Any]) -> dict[str, Any]:
        """A list result with the caching hints this era gives lists (if any)."""

    @abstractmethod
    def finish(self, result: dict[str, Any]) -> dict[str, Any]:
        """A method's result as this era's wire carries it."""

    @abstractmethod
    def capability_error(self, exc: MissingClientCapability) -> JsonRpcError:
        """How this era reports a client capability a request needs and the client did not declare."""

    def method(self, name: str) -> Method[I]:
        """The method `name`, if this era has it and advertises its capability.

        Raises:
            JsonRpcError: :meth:`unknown_method`'s error.
        """
        found = self.methods.get(name)
        if found is None or not offered(name, self.offers()):
            raise self.unknown_method(name)
        return found

    def context(
        self,
        inbound: I,
        *,
        name: str,
        arguments: Mapping[str, Any],
        title: str | None,
        toolkit: str | None,
        channel: InputChannel | None = None,
        caller: Caller | None = None,
    ) -> Context:
        """The Context of a handler run for `inbound`: the one place either era builds one.

        `caller` replaces :meth:`caller`'s, for a handler that is to see less of it.
        """
        return Context(
            self.table,
            caller or self.caller(inbound),
            method=inbound.request.method,
            name=name,
            arguments=arguments,
            title=title,
            toolkit=toolkit,
            input_channel=channel,
            idempotency_key=idempotency_key(inbound.request.params),
        )

    async def list(self, inbound: I) -> dict[str, Any]:
        """tools/list, prompts/list, resources/list and resources/templates/list."""
        return self.list_hints(self.catalog.listing(inbound.request.method))

    async def complete(self, inbound: I) -> dict[str, Any]:
        """completion/complete: suggestions for one prompt argument or template variable."""
        asked = self.catalog.completion_for(inbound.request.params)
        values: list[str] = []
        if asked.completion is not None:
            caller = self.caller(inbound)
            # A completer reports nothing and is not asked along: it sees only who calls.
            quiet = Caller(caller.protocol_version, caller.capabilities, caller.who)
            ctx = self.context(
                inbound,
                name=asked.target,
                arguments=asked.filled,
                title=None,
                toolkit=asked.toolkit,
                caller=quiet,
            )
            found = await asked.completion.handler(ctx, asked.value, asked.filled)
            values = [str(value) for value in found]
        return {
            "completion": {
                "values": values[:MAX_COMPLETIONS],
                "total": len(values),
                "hasMore": len(values) > MAX_COMPLETIONS,
            }
        }


def idempotency_key(params: Mapping[str, Any]) -> str | None:
    """The call's `_meta` idempotency key, if it gives one.

    Raises:
        JsonRpcError: -32602 naming the key, when it is not a short non-empty string.
    """
    meta = params.get("_meta")
    if not isinstance(meta, Mapping) or mcp.META_IDEMPOTENCY_KEY not in meta:
        return None
    key = meta[mcp.META_IDEMPOTENCY_KEY]
    if not isinstance(key, str) or not key.strip() or len(key) > mcp.IDEMPOTENCY_KEY_MAX:
        raise JsonRpcError(
            INVALID_PARAMS,
            f"params._meta[{mcp.META_IDEMPOTENCY_KEY!r}] must be a non-empty string of at most "
            f"{mcp.IDEMPOTENCY_KEY_MAX} characters, got {json_type(key)}",
        )
    return key
