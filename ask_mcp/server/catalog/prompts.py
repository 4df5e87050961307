"""Prompts as data: their arguments, their handler and prompts/get's result; knows no era or transport.

A prompt is a name, a description, declared arguments and an async handler taking the call's
:class:`~ask_mcp.server.context.Context` and the string arguments; like a tool's, the handler may
ask the person (prompts/get may answer `input_required` and resume). Pure: no Django.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from ask_mcp.protocol.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, JsonRpcError, json_type
from ask_mcp.server.errors import ElicitationEnded, MissingClientCapability, ToolError

if TYPE_CHECKING:
    from ask_mcp.server.context import Context

logger = logging.getLogger("ask_mcp.server")

PROMPT_NAME: Final = re.compile(r"[A-Za-z0-9_.\-/]{1,128}")
"""Prompt names: the characters tool names allow, plus `/`; clients show them in menus."""


@dataclass(frozen=True, slots=True)
class PromptArgument:
    """One argument a prompt accepts; every value arrives as a string."""

    name: str
    description: str | None = None
    required: bool = False
    title: str | None = None

    def listing(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"name": self.name}
        if self.title:
            entry["title"] = self.title
        if self.description:
            entry["description"] = self.description
        entry["required"] = self.required
        return entry


@dataclass(slots=True)
class PromptResult:
    """What a prompt renders: messages for the model, and optionally a description of them."""

    messages: list[dict[str, Any]]
    description: str | None = None

    @classmethod
    def text(cls, text: str, *, role: str = "user") -> PromptResult:
        return cls([{"role": role, "content": {"type": "text", "text": text}}])

    def to_dict(self) -> dict[str, Any]:
        result: dict[str, Any] = {}
        if self.description:
            result["description"] = self.description
        result["messages"] = self.messages
        return result


PromptOutput = PromptResult | str
PromptHandler = Callable[["Context", dict[str, str]], Coroutine[Any, Any, PromptOutput]]


@dataclass(frozen=True, slots=True)
class Prompt:
    """One prompt as prompts/list shows it, with the handler that renders it."""

    name: str
    description: str
    handler: PromptHandler
    arguments: tuple[PromptArgument, ...] = ()
    title: str | None = None
    required_capabilities: Mapping[str, Any] | None = None
    """Client capabilities the prompt cannot render without; missing ones answer -32021."""

    def __post_init__(self) -> None:
        if not PROMPT_NAME.fullmatch(self.name):
            raise ValueError(
                f"Prompt name {self.name!r} is not allowed: use 1-128 characters from "
                "A-Z a-z 0-9 _ . - /"
            )
        if not self.description.strip():
            raise ValueError(f"Prompt {self.name!r} needs a description: clients show it")
        names = [argument.name for argument in self.arguments]
        if len(set(names)) != len(names):
            raise ValueError(f"Prompt {self.name!r} declares the same argument twice")

    def listing(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"name": self.name}
        if self.title:
            entry["title"] = self.title
        entry["description"] = self.description
        if self.arguments:
            entry["arguments"] = [argument.listing() for argument in self.arguments]
        return entry

    def read_arguments(self, value: Any) -> dict[str, str]:
        """The prompts/get arguments, checked against what the prompt declares.

        Raises:
            JsonRpcError: -32602 naming a missing required argument or a non-string value.
        """
        if value is None:
            value = {}
        if not isinstance(value, dict):
            raise JsonRpcError(
                INVALID_PARAMS, f"params.arguments must be an object, got {json_type(value)}"
            )
        for key, item in value.items():
            if not isinstance(item, str):
                raise JsonRpcError(
                    INVALID_PARAMS,
                    f"Prompt {self.name!r}: argument {key!r} must be a string, got "
                    f"{json_type(item)}",
                )
        missing = [a.name for a in self.arguments if a.required and a.name not in value]
        if missing:
            raise JsonRpcError(
                INVALID_PARAMS,
                f"Prompt {self.name!r} needs the argument(s) {', '.join(missing)}",
                {"missing": missing},
            )
        return dict(value)


def finish_prompt(prompt_name: str, value: Any, error: BaseException | None) -> dict[str, Any]:
    """The wire result of a finished prompts/get: the rendered messages, or what the failure means.

    A question that ended unanswered renders as a message saying so (the model reads it, as it
    would a tool's); a :class:`ToolError` is the caller's mistake (-32602); protocol errors
    propagate to the dispatch boundary.
    """
    if error is None:
        if isinstance(value, str):
            value = PromptResult.text(value)
        if isinstance(value, PromptResult):
            return value.to_dict()
        error = TypeError(
            f"a prompt returned {type(value).__name__}; return a PromptResult or a str"
        )
    if isinstance(error, JsonRpcError | MissingClientCapability):
        raise error
    if isinstance(error, ElicitationEnded):
        return PromptResult.text(error.text).to_dict()
    if isinstance(error, ToolError):
        raise JsonRpcError(INVALID_PARAMS, str(error)) from error
    logger.error("prompt %s failed", prompt_name, exc_info=error)
    raise JsonRpcError(INTERNAL_ERROR, "Internal error") from error


def prompt_arguments(arguments: Sequence[PromptArgument | str]) -> tuple[PromptArgument, ...]:
    """Arguments as a prompt stores them; a bare string is an optional argument of that name."""
    return tuple(a if isinstance(a, PromptArgument) else PromptArgument(a) for a in arguments)
