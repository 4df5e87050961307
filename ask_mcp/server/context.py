"""The Context a handler receives: who calls, and how to ask, sample, list roots, report or log; knows no wire.

A Context lives as long as the call, across every round of a multi round-trip request; the
stream it reports on is the current round's. Its constructor is the one factory: it reads a
:class:`Caller` (what one request's envelope or one session says about who calls, with the
request's :class:`~ask_mcp.server.identity.Identity`, kept by reference), which the eras build
in :meth:`ask_mcp.server.eras.base.Era.context` and the LLM bridge states once. Asking goes
through an :class:`Asker` (the elicitation table); this module does not know how a question
travels, nor the eras' methods. The hooks handed a Context (``OnElicit``, ``AnswerUrl``) are
declared here.
Pure: no Django.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol

from ask_mcp.protocol import mcp
from ask_mcp.protocol.era import era_of_version
from ask_mcp.protocol.forms import ElicitResult
from ask_mcp.protocol.jsonrpc import notification_message
from ask_mcp.server.errors import PeopleOnly, ToolError
from ask_mcp.server.identity import Identity
from ask_mcp.server.ports import NULL_STREAM, InputChannel, Notifier, Relay
from ask_mcp.server.question import Question


class Asker(Protocol):
    """What a Context asks through: the elicitation table of the server handling the call."""

    @property
    def relay(self) -> Relay | None:
        """The relay to the other worker processes, when the server has one."""

    @property
    def waiting(self) -> int:
        """Questions currently occupying a slot in the table."""

    async def elicit(
        self,
        ctx: Context,
        message: str,
        schema: Mapping[str, Any],
        *,
        timeout: float | None,
        key: str,
    ) -> ElicitResult: ...

    async def request_inputs(
        self, ctx: Context, requests: Mapping[str, Mapping[str, Any]]
    ) -> dict[str, Any]: ...


OnElicit = Callable[[Question, "Context"], Awaitable[ElicitResult | Mapping[str, Any]]]
"""A server-side way to ask: given the question, wait for the person's reply."""

AnswerUrl = Callable[[Question, "Context"], str]
"""Where a person answers a question that `on_elicit` is waiting on (its page in the inbox).

With one, a 2026-07-28 client that declared URL-mode elicitation but not forms is sent the
question as an `elicitation/create` in URL mode pointing there, instead of being held open.
"""


CLIENT_NAME_CHARS: Final = 100
"""The most characters of a client's name kept (real ones are a word or two; the record holds 200)."""
CLIENT_VERSION_CHARS: Final = 50
"""The most characters of a client's version kept (the record holds 100)."""
_UNPRINTABLE: Final = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
"""Controls, line separators and bidirectional overrides: nothing a name shows needs them, and a
newline in one wrote a fake "Answer at:" line into webhook text and mail."""


def one_line(text: str, limit: int) -> str:
    """`text` as one line of at most `limit` characters: controls and runs of spaces become one space.

    The client chooses its name and version; people read them in the inbox, mail and webhooks,
    above the server's own link, so they must not be able to pass for the server's lines.
    """
    text = text[: limit * 2]  # enough for the limit once spaces collapse; bounds the work
    if _UNPRINTABLE.search(text) is not None:
        text = _UNPRINTABLE.sub(" ", text)
    return " ".join(text.split())[:limit]


def client_name(info: Mapping[str, Any] | None) -> str | None:
    """The client's name from its clientInfo (an envelope's or an initialize request's), if it gave
    one: on one line, at most CLIENT_NAME_CHARS (:func:`one_line`)."""
    name = (info or {}).get("name")
    return (one_line(name, CLIENT_NAME_CHARS) or None) if isinstance(name, str) else None


def client_version(info: Mapping[str, Any] | None) -> str | None:
    """The client's version from its clientInfo, if it gave one: on one line, at most
    CLIENT_VERSION_CHARS."""
    version = (info or {}).get("version")
    return (one_line(version, CLIENT_VERSION_CHARS) or None) if isinstance(version, str) else None


@dataclass(frozen=True, slots=True)
class Caller:
    """Who is calling and how they are reached, as one request's envelope or one session states it."""

    protocol_version: str
    capabilities: Mapping[str, Any]
    who: Identity = Identity.ANONYMOUS
    """Who is asking, as the team layer built it from the request's credential."""
    stream: Notifier = NULL_STREAM
    progress_token: str | int | None = None
    log_level: str | None = None
    client_name: str | None = None
    base_url: str | None = None
    """Where the server is reached over HTTP (scheme://host), for links shown to people."""
    client_version: str | None = None
    session: str | None = None
    """The initialize-era session the call belongs to (the 2026-07-28 era has none)."""


class Context:
    """One call's view of its caller and of the ways to reach them."""

    __slots__ = (
        "arguments",
        "base_url",
        "capabilities",
        "client_name",
        "client_version",
        "era",
        "idempotency_key",
        "input_channel",
        "log_level",
        "method",
        "name",
        "progress_token",
        "protocol_version",
        "session",
        "stream",
        "table",
        "tool_title",
        "toolkit",
        "who",
    )

    def __init__(
        self,
        table: Asker,
        caller: Caller,
        *,
        method: str,
        name: str,
        arguments: Mapping[str, Any],
        title: str | None = None,
        toolkit: str | None = None,
        input_channel: InputChannel | None = None,
        idempotency_key: str | None = None,
    ) -> None:
        self.table = table
        self.idempotency_key = idempotency_key
        """The call's own key for "the same question" (`_meta`), replacing its arguments' digest."""
        self.method = method
        self.name = name
        self.arguments = arguments
        self.tool_title = title
        self.toolkit = toolkit
        """The name of the toolkit whose tool, prompt or resource this call runs."""
        self.input_channel = input_channel
        self.protocol_version = caller.protocol_version
        self.era = era_of_version(caller.protocol_version)
        self.capabilities = caller.capabilities
        self.who = caller.who
        """Who is asking: the caller's identity itself, never a copy of its fields."""
        self.stream = caller.stream
        self.progress_token = caller.progress_token
        self.log_level = caller.log_level
        self.client_name = caller.client_name
        self.base_url = caller.base_url
        self.client_version = caller.client_version
        self.session = caller.session

    @property
    def client_shows_forms(self) -> bool:
        """True when a question can go to the client itself rather than to `on_elicit`."""
        return self.input_channel is not None and mcp.supports_form_elicitation(self.capabilities)

    async def elicit(
        self,
        message: str,
        requested_schema: Mapping[str, Any],
        *,
        timeout: float | None = None,
        key: str | None = None,
    ) -> ElicitResult:
        """Ask the person a form question and wait for their reply.

        The question goes to the client when it shows forms, else to the server's `on_elicit`;
        a caller whose asks go to people only (``who.people_only``) always gets `on_elicit`.
        An accepted answer has been checked against `requested_schema` (a mismatch is asked
        again, at most twice) and holds only the schema's fields.

        Raises:
            ElicitationUnavailable: nobody can be asked.
            ElicitationTimedOut: `timeout` (or the server TTL) passed without an answer.
            NoValidAnswer: every attempt failed the schema.
            ElicitationCapacityExceeded: too many questions are already waiting.
        """
        return await self.table.elicit(
            self, message, requested_schema, timeout=timeout, key=key or self.name
        )

    async def request_inputs(self, requests: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
        """Send the client several input requests at once (elicitation, sampling, roots).

        Returns the client's raw responses by key. Each request must be allowed by a declared
        capability.

        Raises:
            MissingClientCapability: a request needs a capability the client did not declare.
            PeopleOnly: an elicitation request from a people-only caller (its client may not
                answer its own questions; :meth:`elicit` puts them in the inbox).
        """
        for key, request in requests.items():
            if self.who.people_only and request.get("method") == mcp.ELICITATION_METHOD:
                raise PeopleOnly(
                    f"the elicitation request {key!r} was not sent to the client; ask it with "
                    "ctx.elicit, which puts it in the inbox"
                )
        return await self.table.request_inputs(self, requests)

    async def create_message(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        max_tokens: int,
        key: str = "sampling",
        **params: Any,
    ) -> dict[str, Any]:
        """Ask the client's model for a reply (sampling/createMessage); the CreateMessageResult.

        Extra `params` (systemPrompt, temperature, …) go into the request as given.

        Raises:
            MissingClientCapability: the client did not declare `sampling`.
            ToolError: the client answered with something that is not a result.
        """
        request = {"messages": list(messages), "maxTokens": max_tokens, **params}
        replies = await self.request_inputs(
            {key: {"method": mcp.SAMPLING_METHOD, "params": request}}
        )
        reply = replies[key]
        if not isinstance(reply, dict):
            raise ToolError("The client did not return a sampling result.")
        return reply

    async def list_roots(self, *, key: str = "roots") -> list[dict[str, Any]]:
        """The client's roots (roots/list): the directories or files it lets the server see.

        Raises:
            MissingClientCapability: the client did not declare `roots`.
            ToolError: the client answered with something that is not a ListRootsResult.
        """
        replies = await self.request_inputs({key: {"method": mcp.ROOTS_METHOD, "params": {}}})
        roots = replies[key].get("roots") if isinstance(replies[key], dict) else None
        if not isinstance(roots, list) or not all(isinstance(root, dict) for root in roots):
            raise ToolError("The client did not return a list of roots.")
        return roots

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Send notifications/progress, if the request asked for progress."""
        if self.progress_token is None:
            return
        params: dict[str, Any] = {"progressToken": self.progress_token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        await self.stream.notify(notification_message("notifications/progress", params))

    async def log(self, level: str, data: Any, logger: str | None = None) -> None:
        """Send notifications/message, only when the request set a log level at or below `level`."""
        if self.log_level not in mcp.LOG_LEVELS or level not in mcp.LOG_LEVELS:
            return
        if mcp.LOG_LEVELS.index(level) < mcp.LOG_LEVELS.index(self.log_level):
            return
        params: dict[str, Any] = {"level": level, "data": data}
        if logger is not None:
            params["logger"] = logger
        await self.stream.notify(notification_message("notifications/message", params))


__all__ = [
    "AnswerUrl",
    "Asker",
    "Caller",
    "Context",
    "OnElicit",
    "client_name",
    "client_version",
]
