"""Tools as data, and toolkits contributing tools, prompts, resources and completions; knows no server.

A tool is a name, a description, an input schema and an async handler taking the call's
:class:`~ask_mcp.server.context.Context` and its arguments. A :class:`Toolkit` groups tools,
prompts, resources, resource templates and argument completions, marked on its methods with
:func:`tool`, :func:`prompt`, :func:`resource`, :func:`resource_template` and
:func:`completion`, and declares the prefix its tool and prompt names get by default (resource
URIs are absolute and keep theirs). Pure: no Django.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Coroutine, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Final, Literal, TypeVar

from ask_mcp.protocol.forms import ElicitResult
from ask_mcp.server.catalog.prompts import Prompt, PromptArgument, prompt_arguments
from ask_mcp.server.catalog.resources import CacheScope, Resource, ResourceTemplate

if TYPE_CHECKING:
    from ask_mcp.server.context import Context

TOOL_NAME: Final = re.compile(r"[A-Za-z0-9_.\-]{1,64}")
"""Tool names every client accepts: the spec's SHOULD, narrowed to the conformance suite's 64."""

EMPTY_OBJECT_SCHEMA: Final[Mapping[str, Any]] = {"type": "object", "additionalProperties": False}
"""The input schema of a tool that takes no arguments."""

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
class FromRecord:
    """How a tool's call is finished from its ask's record when its parked handler is gone.

    A parked handler dies with its process; the rule stands that no handler is re-run. A tool
    may declare this only when its result is a pure function of its arguments and the person's
    reply (``user_ask``'s is): the call is then finished by these two functions, with the answer
    checked against the same form, and gives what the handler would have given.
    """

    form: Callable[[Mapping[str, Any]], tuple[str, Mapping[str, Any]]]
    """The arguments' question: its message and its form's schema (what the handler asked)."""
    result: Callable[[Mapping[str, Any], ElicitResult], ToolOutput]
    """The tool's result for the arguments and the person's reply."""
    key: str
    """The input request key the form is offered under when no handler asks it (a record
    task's, :mod:`ask_mcp.server.eras.tasks`)."""

    def input_key(self, attempt: int) -> str:
        """The key of the form's `attempt`-th asking: :attr:`key`, then ``key.2``, ``key.3``…
        (an answer to an earlier asking is never taken for a later one)."""
        return self.key if attempt == 1 else f"{self.key}.{attempt}"


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
    from_record: FromRecord | None = None
    """How a call is finished from its ask's record when its parked handler is gone (None:
    such a call gets the plain "no longer waiting" result)."""
    task: str | None = None
    """Whether the handler runs as a task for a client declaring the Tasks extension:
    "optional", "required" (other clients get -32021), or None (a tool with `from_record`
    becomes a record task anyway; see :mod:`ask_mcp.server.eras.tasks`)."""

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
    from_record: tuple[str, str] | None = None
    """The names of the toolkit's methods giving :class:`FromRecord`'s form and result."""
    record_key: str | None = None
    """:attr:`FromRecord.key` (None: the tool's name under its prefix)."""
    task: str | None = None
    """See :attr:`Tool.task`."""


def tool(
    name: str,
    *,
    description: str | None = None,
    input_schema: Mapping[str, Any] | None = None,
    title: str | None = None,
    annotations: Mapping[str, Any] | None = None,
    required_capabilities: Mapping[str, Any] | None = None,
    from_record: tuple[str, str] | None = None,
    record_key: str | None = None,
    task: str | None = None,
) -> Callable[[_F], _F]:
    """Mark a toolkit method `async def m(self, ctx, arguments)` as the tool `name`.

    The description defaults to the method's docstring. `from_record` names two methods of the
    toolkit, ``form(arguments)`` and ``result(arguments, reply)``: give them only when the
    tool's result is a pure function of its arguments and the reply (see :class:`FromRecord`).
    `record_key` is the input request key its form is then offered under when no handler asks
    it; it defaults to the tool's name under its prefix, the key ``ctx.elicit`` uses.
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
            from_record=from_record,
            record_key=record_key,
            task=task,
        )
        return method

    return mark


@dataclass(frozen=True, slots=True)
class PromptSpec:
    """A toolkit method marked by :func:`prompt`, before a prefix makes it a :class:`Prompt`."""

    name: str
    description: str
    arguments: tuple[PromptArgument, ...]
    title: str | None
    required_capabilities: Mapping[str, Any] | None


def prompt(
    name: str,
    *,
    description: str | None = None,
    arguments: Sequence[PromptArgument | str] = (),
    title: str | None = None,
    required_capabilities: Mapping[str, Any] | None = None,
) -> Callable[[_F], _F]:
    """Mark a toolkit method `async def m(self, ctx, arguments) -> PromptResult | str` as a prompt.

    `arguments` declares what prompts/get accepts (a bare string is an optional argument); the
    description defaults to the method's docstring.
    """

    def mark(method: _F) -> _F:
        text = description if description is not None else inspect.getdoc(method) or ""
        method.__ask_mcp_prompt__ = PromptSpec(  # type: ignore[attr-defined]
            name, text, prompt_arguments(arguments), title, required_capabilities
        )
        return method

    return mark


@dataclass(frozen=True, slots=True)
class ResourceSpec:
    """A toolkit method marked by :func:`resource` or :func:`resource_template`."""

    uri: str
    template: bool
    name: str
    description: str | None
    mime_type: str | None
    title: str | None
    annotations: Mapping[str, Any] | None
    ttl_ms: int
    cache_scope: CacheScope
    required_capabilities: Mapping[str, Any] | None

    def options(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "mime_type": self.mime_type,
            "title": self.title,
            "annotations": self.annotations,
            "ttl_ms": self.ttl_ms,
            "cache_scope": self.cache_scope,
            "required_capabilities": self.required_capabilities,
        }


def resource(
    uri: str,
    *,
    name: str | None = None,
    description: str | None = None,
    mime_type: str | None = None,
    title: str | None = None,
    annotations: Mapping[str, Any] | None = None,
    ttl_ms: int = 0,
    cache_scope: CacheScope = "private",
    required_capabilities: Mapping[str, Any] | None = None,
) -> Callable[[_F], _F]:
    """Mark a toolkit method `async def m(self, ctx, uri, variables)` as the resource at `uri`.

    It returns text (`str`), bytes, or :class:`ResourceContents`; `name` defaults to the
    method's name and the description to its docstring. `ttl_ms`/`cache_scope` are the
    caching hints of its reads.
    """
    return _mark_resource(
        uri,
        False,
        name,
        description,
        mime_type,
        title,
        annotations,
        ttl_ms,
        cache_scope,
        required_capabilities,
    )


def resource_template(
    uri_template: str,
    *,
    name: str | None = None,
    description: str | None = None,
    mime_type: str | None = None,
    title: str | None = None,
    annotations: Mapping[str, Any] | None = None,
    ttl_ms: int = 0,
    cache_scope: CacheScope = "private",
    required_capabilities: Mapping[str, Any] | None = None,
) -> Callable[[_F], _F]:
    """Mark a toolkit method as reading every URI `uri_template` (`{var}` variables) matches.

    The method receives the matched URI and its variables, percent-decoded.
    """
    return _mark_resource(
        uri_template,
        True,
        name,
        description,
        mime_type,
        title,
        annotations,
        ttl_ms,
        cache_scope,
        required_capabilities,
    )


def _mark_resource(
    uri: str,
    template: bool,
    name: str | None,
    description: str | None,
    mime_type: str | None,
    title: str | None,
    annotations: Mapping[str, Any] | None,
    ttl_ms: int,
    cache_scope: CacheScope,
    required_capabilities: Mapping[str, Any] | None,
) -> Callable[[_F], _F]:
    def mark(method: _F) -> _F:
        text = description if description is not None else inspect.getdoc(method)
        method.__ask_mcp_resource__ = ResourceSpec(  # type: ignore[attr-defined]
            uri,
            template,
            name or method.__name__,
            text or None,
            mime_type,
            title,
            annotations,
            ttl_ms,
            cache_scope,
            required_capabilities,
        )
        return method

    return mark


Completer = Callable[["Context", str, dict[str, str]], Coroutine[Any, Any, Sequence[str]]]
"""`completer(ctx, value, context)`: suggestions for a partial `value`; `context` holds the other
arguments the client already filled in."""


@dataclass(frozen=True, slots=True)
class Completion:
    """Suggests values for one prompt argument (`ref/prompt`) or template variable (`ref/resource`)."""

    kind: Literal["ref/prompt", "ref/resource"]
    target: str
    """The prompt's name, or the resource template's URI template."""
    argument: str
    handler: Completer


@dataclass(frozen=True, slots=True)
class CompletionSpec:
    kind: Literal["ref/prompt", "ref/resource"]
    target: str
    argument: str


def completion(
    argument: str, *, prompt: str | None = None, template: str | None = None
) -> Callable[[_F], _F]:
    """Mark `async def m(self, ctx, value, context) -> list[str]` as completing `argument`.

    Name exactly one of `prompt` (the toolkit's prompt name, before any prefix) or `template`
    (a resource template's URI template). Stack it to complete several arguments.
    """
    if (prompt is None) == (template is None):
        raise TypeError("completion() needs exactly one of prompt= or template=")
    spec = (
        CompletionSpec("ref/prompt", prompt, argument)
        if prompt is not None
        else CompletionSpec("ref/resource", template or "", argument)
    )

    def mark(method: _F) -> _F:
        existing = getattr(method, "__ask_mcp_completions__", ())
        method.__ask_mcp_completions__ = (*existing, spec)  # type: ignore[attr-defined]
        return method

    return mark


def _prefixed(prefix: str, name: str) -> str:
    return f"{prefix}_{name}" if prefix else name


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
        for attr, spec in self._specs("__ask_mcp_tool__", ToolSpec):
            name = _prefixed(prefix, spec.name)
            yield Tool(
                name=name,
                description=spec.description,
                handler=getattr(self, attr),
                input_schema=spec.input_schema,
                title=spec.title,
                annotations=spec.annotations,
                required_capabilities=spec.required_capabilities,
                from_record=self._from_record(spec, name),
                task=spec.task,
            )

    def _from_record(self, spec: ToolSpec, name: str) -> FromRecord | None:
        if spec.from_record is None:
            return None
        form, result = spec.from_record
        return FromRecord(
            form=getattr(self, form), result=getattr(self, result), key=spec.record_key or name
        )

    @classmethod
    def _members(cls) -> list[str]:
        names: dict[str, None] = {}
        for klass in reversed(cls.__mro__):
            names.update(dict.fromkeys(vars(klass)))
        return list(names)

    def prompts(self, prefix: str) -> Iterator[Prompt]:
        """The toolkit's prompts under `prefix`, in the order the class defines them."""
        for attr, spec in self._specs("__ask_mcp_prompt__", PromptSpec):
            yield Prompt(
                name=_prefixed(prefix, spec.name),
                description=spec.description,
                handler=getattr(self, attr),
                arguments=spec.arguments,
                title=spec.title,
                required_capabilities=spec.required_capabilities,
            )

    def resources(self, prefix: str) -> Iterator[Resource]:
        """The toolkit's fixed resources (URIs are absolute: the prefix does not apply)."""
        for attr, spec in self._specs("__ask_mcp_resource__", ResourceSpec):
            if not spec.template:
                yield Resource(spec.uri, handler=getattr(self, attr), **spec.options())

    def resource_templates(self, prefix: str) -> Iterator[ResourceTemplate]:
        """The toolkit's resource templates (URIs are absolute: the prefix does not apply)."""
        for attr, spec in self._specs("__ask_mcp_resource__", ResourceSpec):
            if spec.template:
                yield ResourceTemplate(spec.uri, handler=getattr(self, attr), **spec.options())

    def completions(self, prefix: str) -> Iterator[Completion]:
        """The toolkit's argument completions, their prompt names under `prefix`."""
        for attr in self._members():
            specs = getattr(getattr(type(self), attr), "__ask_mcp_completions__", ())
            for spec in specs:
                if not isinstance(spec, CompletionSpec):
                    continue
                target = (
                    _prefixed(prefix, spec.target) if spec.kind == "ref/prompt" else spec.target
                )
                yield Completion(spec.kind, target, spec.argument, getattr(self, attr))

    def _specs[S](self, marker: str, kind: type[S]) -> Iterator[tuple[str, S]]:
        for attr in self._members():
            spec = getattr(getattr(type(self), attr), marker, None)
            if isinstance(spec, kind):
                yield attr, spec

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
