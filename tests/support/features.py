"""A toolkit exercising every generic feature a toolkit can contribute: prompts, resources, templates,
completions, and tools that sample, list roots, log, report progress and announce resource changes.

Live tests plug it (prefix `feat`) into their own server, so the default test server keeps the
capabilities of a plain askserver.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Final

from ask_mcp.server import (
    Context,
    PromptArgument,
    PromptResult,
    ResourceContents,
    ToolError,
    Toolkit,
    ToolResult,
    completion,
    prompt,
    resource,
    resource_template,
    tool,
)
from tests.support.conformance.toolkit import PNG

FEATURES_CONFIG: Final[dict[str, Any]] = {
    "TOOLKITS": {"Ask": {}, "tests.support.features.Features": {}},
    "ALLOW_ANONYMOUS_LOOPBACK": True,
}
NAMES: Final = ("alice", "albert", "bob")
STYLES: Final = tuple(f"style-{n:03}" for n in range(150))
TOPIC_FORM: Final = {
    "type": "object",
    "properties": {"topic": {"type": "string"}},
    "required": ["topic"],
}
UNLOCK_FORM: Final = {
    "type": "object",
    "properties": {"ok": {"type": "boolean"}},
    "required": ["ok"],
}
STARTS: dict[str, int] = {}
"""How many times each parking handler started (they must run once across rounds)."""

URI_ARGUMENT: Final = {
    "type": "object",
    "properties": {"uri": {"type": "string"}},
    "required": ["uri"],
}


class Features(Toolkit):
    default_prefix = "feat"

    # ------------------------------------------------------------------ prompts

    @prompt(
        "greet",
        arguments=[
            PromptArgument("name", "Who to greet", required=True),
            PromptArgument("style", "How formal"),
        ],
        title="Greeting",
    )
    async def greet(self, ctx: Context, arguments: dict[str, str]) -> str:
        """Greets someone, in a style."""
        return f"Say hello to {arguments['name']} ({arguments.get('style', 'plain')})."

    @prompt("briefing")
    async def briefing(self, ctx: Context, arguments: dict[str, str]) -> PromptResult:
        """Asks the user what to cover, then renders a briefing request."""
        STARTS["briefing"] = STARTS.get("briefing", 0) + 1
        reply = await ctx.elicit("What should the briefing cover?", TOPIC_FORM, key="topic")
        topic = (reply.content or {}).get("topic") if reply.action == "accept" else None
        return PromptResult(
            [
                {
                    "role": "user",
                    "content": {"type": "text", "text": f"Brief me on {topic or 'anything'}."},
                }
            ],
            description=f"starts={STARTS['briefing']}",
        )

    @prompt("sampled", required_capabilities={"sampling": {}})
    async def sampled(self, ctx: Context, arguments: dict[str, str]) -> str:
        """Renders with the client's model, so it needs sampling."""
        reply = await ctx.create_message(
            [{"role": "user", "content": {"type": "text", "text": "A haiku?"}}], max_tokens=30
        )
        return str(reply.get("content", {}).get("text"))

    @completion("name", prompt="greet")
    async def complete_name(
        self, ctx: Context, value: str, context: dict[str, str]
    ) -> Sequence[str]:
        """Names starting with what was typed; upper-case when the style is formal."""
        names = [name for name in NAMES if name.startswith(value)]
        return [name.title() for name in names] if context.get("style") == "formal" else names

    @completion("style", prompt="greet")
    async def complete_style(self, ctx: Context, value: str, context: dict[str, str]) -> list[str]:
        """More styles than one result may carry."""
        return [style for style in STYLES if style.startswith(value)]

    # ------------------------------------------------------------------ resources

    @resource(
        "features://note", name="note", mime_type="text/plain", ttl_ms=5000, cache_scope="public"
    )
    async def note(self, ctx: Context, uri: str, variables: dict[str, str]) -> str:
        """A note everyone may cache for five seconds."""
        return "A note."

    @resource("features://logo", name="logo", mime_type="image/png", title="Logo")
    async def logo(self, ctx: Context, uri: str, variables: dict[str, str]) -> bytes:
        """A 1x1 PNG."""
        return PNG

    @resource("features://watched", name="watched", mime_type="text/plain")
    async def watched(self, ctx: Context, uri: str, variables: dict[str, str]) -> str:
        """A resource clients subscribe to."""
        return "Watched."

    @resource_template("features://items/{id}", name="item", mime_type="application/json")
    async def item(self, ctx: Context, uri: str, variables: dict[str, str]) -> ResourceContents:
        """One item; the locked one asks the user before it is read."""
        if variables["id"] == "locked":
            STARTS["locked"] = STARTS.get("locked", 0) + 1
            reply = await ctx.elicit("Unlock the item?", UNLOCK_FORM, key="unlock")
            if reply.action != "accept" or not (reply.content or {}).get("ok"):
                raise ToolError("The item stays locked.")
        body = {"id": variables["id"], "starts": STARTS.get("locked", 0)}
        return ResourceContents(uri, text=json.dumps(body), mime_type="application/json")

    @completion("id", template="features://items/{id}")
    async def complete_id(self, ctx: Context, value: str, context: dict[str, str]) -> list[str]:
        """Item ids starting with what was typed."""
        return [item for item in ("1", "2", "42", "locked") if item.startswith(value)]

    # ------------------------------------------------------------------ tools that reach the client

    @tool(
        "sample",
        input_schema={
            "type": "object",
            "properties": {"prompt": {"type": "string"}},
            "required": ["prompt"],
        },
    )
    async def sample(self, ctx: Context, arguments: dict[str, Any]) -> str:
        """Asks the client's model."""
        reply = await ctx.create_message(
            [{"role": "user", "content": {"type": "text", "text": arguments["prompt"]}}],
            max_tokens=50,
            systemPrompt="Be brief.",
        )
        return json.dumps({"model": reply.get("model"), "text": reply["content"]["text"]})

    @tool("roots")
    async def roots(self, ctx: Context, arguments: dict[str, Any]) -> str:
        """Lists the client's roots."""
        return json.dumps([root["uri"] for root in await ctx.list_roots()])

    @tool("log")
    async def log(self, ctx: Context, arguments: dict[str, Any]) -> str:
        """Logs at debug, info and warning."""
        for level in ("debug", "info", "warning"):
            await ctx.log(level, {"said": level}, logger="features")
        return "logged"

    @tool("progress")
    async def progress(self, ctx: Context, arguments: dict[str, Any]) -> ToolResult:
        """Reports progress 0, 50, 100 of 100."""
        for step in (0, 50, 100):
            await ctx.report_progress(step, 100, f"step {step}")
        return ToolResult.text("done")

    @tool("touch", input_schema=URI_ARGUMENT)
    async def touch(self, ctx: Context, arguments: dict[str, Any]) -> str:
        """Announces that a resource changed (subscribed sessions hear of it)."""
        from ask_mcp.runtime import get_server  # the live server's process: Django is set up

        await get_server().resource_updated(arguments["uri"])
        return "touched"
