"""Resources and resource templates as data: URIs, template matching, resources/read's result; knows no era.

A resource is a fixed URI with a handler that reads it; a template is an RFC 6570 level-1 URI
template (`test://items/{id}`) whose variables the handler receives. Handlers take the call's
:class:`~ask_mcp.server.context.Context`, so a read may ask the person (resources/read may answer
`input_required` and resume). Pure: no Django.
"""

from __future__ import annotations

import base64
import logging
import re
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Literal
from urllib.parse import unquote

from ask_mcp.protocol.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, JsonRpcError
from ask_mcp.server.errors import ElicitationEnded, MissingClientCapability, ToolError

if TYPE_CHECKING:
    from ask_mcp.server.context import Context

logger = logging.getLogger("ask_mcp.server")

CacheScope = Literal["public", "private"]
_VARIABLE: Final = re.compile(r"\{([A-Za-z0-9_]+)\}")
"""A `{name}` variable of a URI template (RFC 6570 level 1)."""
_URI: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:\S*")
"""An absolute URI: a scheme, a colon, and no whitespace."""


@dataclass(slots=True)
class ResourceContents:
    """One item of a resources/read result: text, or bytes sent as base64."""

    uri: str
    text: str | None = None
    blob: bytes | None = None
    mime_type: str | None = None

    def __post_init__(self) -> None:
        if (self.text is None) == (self.blob is None):
            raise ValueError("ResourceContents holds exactly one of text and blob")

    def to_dict(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"uri": self.uri}
        if self.mime_type:
            entry["mimeType"] = self.mime_type
        if self.text is not None:
            entry["text"] = self.text
        else:
            assert self.blob is not None
            entry["blob"] = base64.b64encode(self.blob).decode("ascii")
        return entry


ResourceOutput = ResourceContents | list[ResourceContents] | str | bytes
ResourceHandler = Callable[["Context", str, dict[str, str]], Coroutine[Any, Any, ResourceOutput]]
"""`handler(ctx, uri, variables)`: variables are the template's, or empty for a fixed resource."""


@dataclass(frozen=True, slots=True)
class Resource:
    """A fixed-URI resource as resources/list shows it, with the handler that reads it.

    `ttl_ms` and `cache_scope` are the caching hints of its read results (2026-07-28); the
    default says "immediately stale, this caller only", which is always safe.
    """

    uri: str
    name: str
    handler: ResourceHandler
    description: str | None = None
    mime_type: str | None = None
    title: str | None = None
    annotations: Mapping[str, Any] | None = None
    ttl_ms: int = 0
    cache_scope: CacheScope = "private"
    required_capabilities: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        if not _URI.fullmatch(self.uri):
            raise ValueError(f"Resource URI {self.uri!r} is not an absolute URI")
        _check_common(self.name, self.ttl_ms, self.cache_scope, what=f"Resource {self.uri!r}")

    def listing(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"uri": self.uri, "name": self.name}
        _describe(entry, self.title, self.description, self.mime_type, self.annotations)
        return entry


@dataclass(frozen=True, slots=True)
class ResourceTemplate:
    """A family of resources named by a URI template; `{var}` matches one path segment."""

    uri_template: str
    name: str
    handler: ResourceHandler
    description: str | None = None
    mime_type: str | None = None
    title: str | None = None
    annotations: Mapping[str, Any] | None = None
    ttl_ms: int = 0
    cache_scope: CacheScope = "private"
    required_capabilities: Mapping[str, Any] | None = None
    pattern: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not _URI.fullmatch(self.uri_template):
            raise ValueError(f"Resource template {self.uri_template!r} is not an absolute URI")
        _check_common(
            self.name,
            self.ttl_ms,
            self.cache_scope,
            what=f"Resource template {self.uri_template!r}",
        )
        names = _VARIABLE.findall(self.uri_template)
        if not names:
            raise ValueError(
                f"Resource template {self.uri_template!r} has no {{variable}}; register it as "
                "a resource"
            )
        if len(set(names)) != len(names):
            raise ValueError(f"Resource template {self.uri_template!r} repeats a variable")
        leftover = _VARIABLE.sub("", self.uri_template)
        if "{" in leftover or "}" in leftover:
            raise ValueError(
                f"Resource template {self.uri_template!r}: only simple {{name}} variables "
                "(RFC 6570 level 1) are supported"
            )
        parts: list[str] = []
        last = 0
        for match in _VARIABLE.finditer(self.uri_template):
            parts.append(re.escape(self.uri_template[last : match.start()]))
            parts.append(f"(?P<{match.group(1)}>[^/?#]+)")
            last = match.end()
        parts.append(re.escape(self.uri_template[last:]))
        object.__setattr__(self, "pattern", re.compile("".join(parts)))

    @property
    def variables(self) -> list[str]:
        return _VARIABLE.findall(self.uri_template)

    def match(self, uri: str) -> dict[str, str] | None:
        """The template's variables in `uri` (percent-decoded), or None when it does not match."""
        found = self.pattern.fullmatch(uri)
        if found is None:
            return None
        return {name: unquote(value) for name, value in found.groupdict().items()}

    def listing(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"uriTemplate": self.uri_template, "name": self.name}
        _describe(entry, self.title, self.description, self.mime_type, self.annotations)
        return entry


def _check_common(name: str, ttl_ms: int, cache_scope: str, *, what: str) -> None:
    if not name.strip():
        raise ValueError(f"{what} needs a name")
    if isinstance(ttl_ms, bool) or not isinstance(ttl_ms, int) or ttl_ms < 0:
        raise ValueError(f"{what}: ttl_ms must be a non-negative integer, got {ttl_ms!r}")
    if cache_scope not in ("public", "private"):
        raise ValueError(f"{what}: cache_scope must be 'public' or 'private', got {cache_scope!r}")


def _describe(
    entry: dict[str, Any],
    title: str | None,
    description: str | None,
    mime_type: str | None,
    annotations: Mapping[str, Any] | None,
) -> None:
    if title:
        entry["title"] = title
    if description:
        entry["description"] = description
    if mime_type:
        entry["mimeType"] = mime_type
    if annotations:
        entry["annotations"] = dict(annotations)


def resource_not_found(uri: str) -> JsonRpcError:
    """-32602 with the URI in `data`: the 2026-07-28 answer for a URI no resource matches."""
    return JsonRpcError(INVALID_PARAMS, f"Resource not found: {uri!r}", {"uri": uri})


def finish_read(
    uri: str, mime_type: str | None, value: Any, error: BaseException | None
) -> dict[str, Any]:
    """The wire result of a finished resources/read (without caching hints, which the method adds).

    Contents are never empty: a handler returning none is a failure, not an empty read. A
    question that ended unanswered, or a :class:`ToolError`, is -32602 naming the URI.
    """
    if error is None:
        try:
            contents = _contents(uri, mime_type, value)
        except TypeError as exc:
            error = exc
        else:
            if contents:
                return {"contents": [item.to_dict() for item in contents]}
            error = ValueError("a resource handler returned no contents")
    if isinstance(error, JsonRpcError | MissingClientCapability):
        raise error
    if isinstance(error, ElicitationEnded | ToolError):
        text = error.text if isinstance(error, ElicitationEnded) else str(error)
        raise JsonRpcError(INVALID_PARAMS, text, {"uri": uri}) from error
    logger.error("reading %s failed", uri, exc_info=error)
    raise JsonRpcError(INTERNAL_ERROR, "Internal error") from error


def _contents(uri: str, mime_type: str | None, value: Any) -> list[ResourceContents]:
    if isinstance(value, str):
        return [ResourceContents(uri, text=value, mime_type=mime_type)]
    if isinstance(value, bytes):
        return [ResourceContents(uri, blob=value, mime_type=mime_type)]
    if isinstance(value, ResourceContents):
        return [value]
    if isinstance(value, list) and all(isinstance(item, ResourceContents) for item in value):
        return value
    raise TypeError(
        f"a resource handler returned {type(value).__name__}; return str, bytes, "
        "ResourceContents or a list of them"
    )
