"""The catalog: who the server is, what it offers and how a request names an entry; knows no era or table.

:class:`Catalog` holds the registries :meth:`Catalog.plug` fills, remembers which toolkit
registered each entry, derives the capabilities, and resolves the name, URI or reference a
request carries (raising the -32602 each era shares). :class:`~ask_mcp.server.core.Server`
extends it; the era modules read it. It does not know the eras, the elicitation table or any
transport. Pure.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final, Literal, NamedTuple, Self

from ask_mcp.protocol import mcp
from ask_mcp.protocol.jsonrpc import INVALID_PARAMS, JsonRpcError, json_type
from ask_mcp.server.catalog.prompts import Prompt
from ask_mcp.server.catalog.resources import Resource, ResourceTemplate, resource_not_found
from ask_mcp.server.catalog.toolkit import Completion, Tool, Toolkit
from ask_mcp.server.errors import MissingClientCapability

_Kind = Literal["tool", "prompt", "resource", "template"]
_UNSET: Final = object()
"""plug()'s default prefix: the toolkit's own, told apart from an explicit ""."""

LISTS: Final[Mapping[str, str]] = {
    "tools/list": "tools",
    "prompts/list": "prompts",
    "resources/list": "resources",
    "resources/templates/list": "resourceTemplates",
}
"""The list methods, each with the result field that holds its entries."""


class CompletionAsk(NamedTuple):
    """A completion/complete request, checked: the completer (None when there is none), the
    prompt or template it belongs to, the partial value and the arguments already filled in."""

    completion: Completion | None
    target: str
    toolkit: str | None
    value: str
    filled: dict[str, str]


class Catalog:
    """Who the server is, and the tools, prompts, resources and completions plugged into it."""

    def __init__(
        self,
        name: str,
        version: str = "0.1.0",
        instructions: str | None = None,
        title: str | None = None,
    ) -> None:
        self.name = name
        self.version = version
        self.instructions = instructions
        self.title = title
        self.server_info: Final[dict[str, Any]] = {"name": name, "version": version}
        """serverInfo, as initialize results and every 2026-07-28 result's `_meta` state it."""
        if title:
            self.server_info["title"] = title
        self.tools: dict[str, Tool] = {}
        self.prompts: dict[str, Prompt] = {}
        self.resources: dict[str, Resource] = {}
        self.resource_templates: dict[str, ResourceTemplate] = {}
        self.completions: dict[tuple[str, str, str], Completion] = {}
        self.toolkits: list[tuple[Toolkit, str]] = []
        self._owners: dict[tuple[_Kind, str], str] = {}
        self._capabilities: dict[str, Any] | None = None

    def plug(self, toolkit: Toolkit, prefix: Any = _UNSET) -> Self:
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
        registered: tuple[tuple[_Kind, Iterable[str]], ...] = (
            ("tool", tools),
            ("prompt", prompts),
            ("resource", resources),
            ("template", templates),
        )
        for kind, keys in registered:
            for key in keys:
                self._owners[(kind, key)] = owner
        self.toolkits.append((toolkit, chosen))
        self._capabilities = None
        return self

    def toolkit_of(self, entry: Tool | Prompt | Resource | ResourceTemplate) -> str | None:
        """The name of the toolkit that registered `entry`, None for one it does not hold."""
        if isinstance(entry, Tool):
            return self._owners.get(("tool", entry.name))
        if isinstance(entry, Prompt):
            return self._owners.get(("prompt", entry.name))
        if isinstance(entry, Resource):
            return self._owners.get(("resource", entry.uri))
        return self._owners.get(("template", entry.uri_template))

    def capabilities(self) -> dict[str, Any]:
        """What this server offers, as server/discover states it: only what is registered.

        `logging` is always there: any handler may log, and the client asks per request.
        """
        return {name: dict(value) for name, value in self.offers().items()}

    def offers(self) -> Mapping[str, Any]:
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

    def supported_versions(self) -> tuple[str, ...]:
        """Every version this server speaks: the modern one, and the initialize-era ones."""
        return mcp.SUPPORTED_VERSIONS

    # ------------------------------------------------------------------ what a request names

    def listing(self, method: str) -> dict[str, Any]:
        """The result of one of the four list methods, before its era's caching hints."""
        registries: Mapping[str, Mapping[str, Tool | Prompt | Resource | ResourceTemplate]] = {
            "tools/list": self.tools,
            "prompts/list": self.prompts,
            "resources/list": self.resources,
            "resources/templates/list": self.resource_templates,
        }
        entries = registries[method].values()
        return {LISTS[method]: [entry.listing() for entry in entries]}

    def tool_named(self, params: Mapping[str, Any]) -> tuple[Tool, dict[str, Any]]:
        """The tool a tools/call names, and its arguments.

        Raises:
            JsonRpcError: -32602 for a missing or unknown name, or arguments that are no object.
        """
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

    def prompt_named(self, params: Mapping[str, Any]) -> tuple[Prompt, dict[str, str]]:
        """The prompt a prompts/get names, and its checked arguments.

        Raises:
            JsonRpcError: -32602 for a missing or unknown name, or arguments it does not accept.
        """
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

    def resource_named(
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

    def completion_for(self, params: Mapping[str, Any]) -> CompletionAsk:
        """What a completion/complete asks for: one prompt argument or template variable.

        Raises:
            JsonRpcError: -32602 for a malformed ref, argument or context, or an unknown target.
        """
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
        known: Mapping[str, Prompt | ResourceTemplate] = (
            self.prompts if kind == "ref/prompt" else self.resource_templates
        )
        if not isinstance(target, str) or target not in known:
            what = "prompt" if kind == "ref/prompt" else "resource template"
            raise JsonRpcError(INVALID_PARAMS, f"Unknown {what}: {target!r}")
        completion = self.completions.get((kind, target, argument["name"]))
        toolkit = self.toolkit_of(known[target])
        return CompletionAsk(completion, target, toolkit, argument["value"], dict(given or {}))


def offered(method: str, capabilities: Mapping[str, Any]) -> bool:
    """Whether a server with `capabilities` has `method` (methods of unadvertised features do not exist)."""
    capability = mcp.CAPABILITY_OF_METHOD.get(method)
    if capability is None:
        return True
    if method in ("resources/subscribe", "resources/unsubscribe"):
        return bool(capabilities.get("resources", {}).get("subscribe"))
    return capability in capabilities


def require(capabilities: Mapping[str, Any], required: Mapping[str, Any], what: str) -> None:
    """Refuse to run `what` for a client that did not declare the capabilities it needs.

    Raises:
        MissingClientCapability: naming what is missing.
    """
    missing = {name: value for name, value in required.items() if name not in capabilities}
    if missing:
        raise MissingClientCapability(
            f"{what} needs the client capabilities {', '.join(missing)}, which the client did not "
            "declare",
            missing,
        )


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
