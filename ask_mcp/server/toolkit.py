"""Tools as data, and toolkits that contribute them under a prefix.

A tool is a name, a description, an input schema and an async handler taking the call's
:class:`~ask_mcp.server.context.Context` and its arguments. A :class:`Toolkit` groups tools
(and prompts and resources) and declares the prefix they are registered under by default.
Pure: no Django.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Coroutine, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Final, TypeVar

if TYPE_CHECKING:
    from .context import Context

TOOL_NAME: Final = re.compile(r"[A-Za-z0-9_.\-]{1,64}")
"""Tool names every client accepts: the spec's SHOULD, narrowed to the conformance suite's 64."""

EMPTY_OBJECT_SCHEMA: Final[Mapping[str, Any]] = {"type": "object", "additionalProperties": False}

ToolHandler = Callable[["Context", dict[str, Any]], Coroutine[Any, Any, "ToolOutput"]]
_F = TypeVar("_F", bound=Callable[..., Any])


@dataclass(slots=True)
class ToolResult:
    """What a tool returns: content blocks, and whether they describe a failure."""

    content: list[dict[str, Any]]
    is_error: bool = False
    structured_content: dict[str, Any] | None = None

    @classmethod
    def text(cls, text: str, *, is_error: bool = False) -> ToolResult:
        return cls([{"type": "text", "text": text}], is_error=is_error)

    def to_dict(self) -> dict[str, Any]:
        result: dict[str, Any] = {"content": self.content, "isError": self.is_error}
        if self.structured_content is not None:
            result["structuredContent"] = self.structured_content
        return result


ToolOutput = ToolResult | str


@dataclass(frozen=True, slots=True)
class Tool:
    """One callable tool as tools/list shows it, with the handler that runs it."""

    name: str
    description: str
    handler: ToolHandler
    input_schema: Mapping[str, Any] = field(default_factory=lambda: dict(EMPTY_OBJECT_SCHEMA))
    title: str | None = None
    annotations: Mapping[str, Any] | None = None
    required_capabilities: Mapping[str, Any] | None = None
    """Client capabilities the tool cannot run without; missing ones answer -32021 up front."""

    def __post_init__(self) -> None:
        if not TOOL_NAME.fullmatch(self.name):
            raise ValueError(
                f"Tool name {self.name!r} is not allowed: use 1-64 characters from A-Z a-z 0-9 _ . -"
            )
        if not self.description.strip():
            raise ValueError(f"Tool {self.name!r} needs a description: clients show it to models")

    def listing(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"name": self.name}
        if self.title:
            entry["title"] = self.title
        entry["description"] = self.description
        entry["inputSchema"] = self.input_schema
        if self.annotations:
            entry["annotations"] = self.annotations
        return entry


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A toolkit method marked by :func:`tool`, before a prefix makes it a :class:`Tool`."""

    name: str
    description: str
    input_schema: Mapping[str, Any]
    title: str | None
    annotations: Mapping[str, Any] | None
    required_capabilities: Mapping[str, Any] | None


def tool(
    name: str,
    *,
    description: str | None = None,
    input_schema: Mapping[str, Any] | None = None,
    title: str | None = None,
    annotations: Mapping[str, Any] | None = None,
    required_capabilities: Mapping[str, Any] | None = None,
) -> Callable[[_F], _F]:
    """Mark a toolkit method `async def m(self, ctx, arguments)` as the tool `name`.

    The description defaults to the method's docstring.
    """

    def mark(method: _F) -> _F:
        text = description if description is not None else inspect.getdoc(method) or ""
        method.__ask_mcp_tool__ = ToolSpec(  # type: ignore[attr-defined]
            name=name,
            description=text,
            input_schema=input_schema or dict(EMPTY_OBJECT_SCHEMA),
            title=title,
            annotations=annotations,
            required_capabilities=required_capabilities,
        )
        return method

    return mark


class Toolkit:
    """A set of related tools, prompts and resources registered together under one prefix.

    Subclasses set `default_prefix` and mark handler methods with :func:`tool`; settings are
    keyword-only `__init__` arguments, so unknown ones are refused by name.
    """

    default_prefix: ClassVar[str] = ""
    name: ClassVar[str] = ""
    """The name a config file uses for this toolkit; defaults to the class name."""

    def tools(self, prefix: str) -> Iterator[Tool]:
        """The toolkit's tools under `prefix`, in the order the class defines them."""
        for attr in self._members():
            spec = getattr(getattr(type(self), attr), "__ask_mcp_tool__", None)
            if isinstance(spec, ToolSpec):
                yield Tool(
                    name=f"{prefix}_{spec.name}" if prefix else spec.name,
                    description=spec.description,
                    handler=getattr(self, attr),
                    input_schema=spec.input_schema,
                    title=spec.title,
                    annotations=spec.annotations,
                    required_capabilities=spec.required_capabilities,
                )

    @classmethod
    def _members(cls) -> list[str]:
        names: dict[str, None] = {}
        for klass in reversed(cls.__mro__):
            names.update(dict.fromkeys(vars(klass)))
        return list(names)

    def prompts(self, prefix: str) -> Iterator[Any]:
        return iter(())

    def resources(self, prefix: str) -> Iterator[Any]:
        return iter(())

    @classmethod
    def toolkit_name(cls) -> str:
        return cls.name or cls.__name__

    @classmethod
    def setting_names(cls) -> list[str]:
        """The keyword settings this toolkit accepts, for error messages and docs."""
        parameters = inspect.signature(cls.__init__).parameters.values()
        return [p.name for p in parameters if p.kind is inspect.Parameter.KEYWORD_ONLY]

    @classmethod
    def required_setting_names(cls) -> list[str]:
        """The settings without a default, which every configuration must give."""
        parameters = inspect.signature(cls.__init__).parameters.values()
        return [
            p.name
            for p in parameters
            if p.kind is inspect.Parameter.KEYWORD_ONLY and p.default is inspect.Parameter.empty
        ]
