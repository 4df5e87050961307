"""The Conformance toolkit: the `test_*` tools, prompts and `test://` resources the official MCP conformance suite calls.

Names, texts and input-request keys are the ones the suite's scenarios check (register it with
prefix "" so names are exact). It exists to prove the server's generic features against the
suite, is loaded only when a configuration names it by its dotted path (`make conformance`
does), and is never part of the default server nor of the wheel. Pure: no Django.
"""

from __future__ import annotations

import base64
import io
import json
import wave
from collections.abc import Mapping, Sequence
from typing import Any, Final

from ask_mcp.protocol import mcp
from ask_mcp.protocol.forms import read_elicit_result
from ask_mcp.server.catalog.prompts import PromptArgument, PromptResult
from ask_mcp.server.catalog.resources import ResourceContents
from ask_mcp.server.catalog.toolkit import (
    Toolkit,
    ToolResult,
    completion,
    prompt,
    resource,
    resource_template,
    tool,
)
from ask_mcp.server.context import Context
from ask_mcp.server.errors import ToolError
from tests.support.conformance.tasks import TaskFixtures

PNG: Final = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"
)
"""A 1x1 red pixel."""
PNG_B64: Final = base64.b64encode(PNG).decode("ascii")
"""The image, base64-encoded as image content carries it."""


def _silence() -> bytes:
    """10 ms of 8 kHz mono silence as a WAV file."""
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(8000)
        out.writeframes(b"\0\0" * 80)
    return buffer.getvalue()


WAV_B64: Final = base64.b64encode(_silence()).decode("ascii")
"""A short silent WAV, base64-encoded as audio content carries it."""

NAME_FORM: Final[Mapping[str, Any]] = {
    "type": "object",
    "properties": {"name": {"type": "string"}},
    "required": ["name"],
}
"""A one-field form asking for a name."""
CONFIRM_FORM: Final[Mapping[str, Any]] = {
    "type": "object",
    "properties": {"ok": {"type": "boolean"}},
    "required": ["ok"],
}
"""A one-checkbox confirmation form."""
CONTACT_FORM: Final[Mapping[str, Any]] = {
    "type": "object",
    "properties": {
        "username": {"type": "string", "description": "User's response"},
        "email": {"type": "string", "description": "User's email address"},
    },
    "required": ["username", "email"],
}
"""The username-and-email form of the suite's elicitation tool."""
DEFAULTS_FORM: Final[Mapping[str, Any]] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "default": "John Doe"},
        "age": {"type": "integer", "default": 30},
        "score": {"type": "number", "default": 95.5},
        "status": {
            "type": "string",
            "enum": ["active", "inactive", "pending"],
            "default": "active",
        },
        "verified": {"type": "boolean", "default": True},
    },
}
"""A form whose every field has a default (SEP-1034)."""
ENUMS_FORM: Final[Mapping[str, Any]] = {
    "type": "object",
    "properties": {
        "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
        "titledSingle": {
            "type": "string",
            "oneOf": [
                {"const": "value1", "title": "First Option"},
                {"const": "value2", "title": "Second Option"},
                {"const": "value3", "title": "Third Option"},
            ],
        },
        "legacyEnum": {
            "type": "string",
            "enum": ["opt1", "opt2", "opt3"],
            "enumNames": ["Option One", "Option Two", "Option Three"],
        },
        "untitledMulti": {
            "type": "array",
            "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
        },
        "titledMulti": {
            "type": "array",
            "items": {
                "anyOf": [
                    {"const": "value1", "title": "First Choice"},
                    {"const": "value2", "title": "Second Choice"},
                    {"const": "value3", "title": "Third Choice"},
                ]
            },
        },
    },
}
"""A form with every kind of enum field (SEP-1330)."""
JSON_SCHEMA_2020_12: Final[Mapping[str, Any]] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}
"""The input schema of json_schema_2020_12_tool, written in JSON Schema 2020-12."""
WORDS: Final = ("paris", "park", "party", "test", "testing", "tested", "value")
"""What completion/complete suggests from, by prefix."""


def _text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def _user_text(message: str) -> dict[str, Any]:
    return {"role": "user", "content": {"type": "text", "text": message}}


def _sampled_text(reply: Mapping[str, Any]) -> str:
    content = reply.get("content")
    text = content.get("text") if isinstance(content, Mapping) else None
    return text if isinstance(text, str) else "(no text)"


def _outcome(reply: Any) -> str:
    return f"action={reply.action}, content={json.dumps(reply.content, sort_keys=True)}"


def _string_argument(arguments: Mapping[str, Any], name: str) -> str:
    value = arguments.get(name)
    if not isinstance(value, str):
        raise ToolError(f"`{name}` must be a string")
    return value


class Conformance(TaskFixtures, Toolkit):
    """The conformance suite's fixture: register with prefix "" (its default)."""

    default_prefix = ""

    # ------------------------------------------------------------------ content tools

    @tool("test_simple_text")
    async def simple_text(self, ctx: Context, arguments: dict[str, Any]) -> str:
        """Returns one text block."""
        return "This is a simple text response for testing."

    @tool("test_image_content")
    async def image_content(self, ctx: Context, arguments: dict[str, Any]) -> ToolResult:
        """Returns a 1x1 PNG image."""
        return ToolResult([{"type": "image", "data": PNG_B64, "mimeType": "image/png"}])

    @tool("test_audio_content")
    async def audio_content(self, ctx: Context, arguments: dict[str, Any]) -> ToolResult:
        """Returns a short WAV clip."""
        return ToolResult([{"type": "audio", "data": WAV_B64, "mimeType": "audio/wav"}])

    @tool("test_embedded_resource")
    async def embedded_resource(self, ctx: Context, arguments: dict[str, Any]) -> ToolResult:
        """Returns an embedded text resource."""
        return ToolResult(
            [
                {
                    "type": "resource",
                    "resource": {
                        "uri": "test://embedded-resource",
                        "mimeType": "text/plain",
                        "text": "This is an embedded resource content.",
                    },
                }
            ]
        )

    @tool("test_multiple_content_types")
    async def multiple_content_types(self, ctx: Context, arguments: dict[str, Any]) -> ToolResult:
        """Returns text, an image and an embedded resource."""
        return ToolResult(
            [
                _text("Multiple content types test:"),
                {"type": "image", "data": PNG_B64, "mimeType": "image/png"},
                {
                    "type": "resource",
                    "resource": {
                        "uri": "test://mixed-content-resource",
                        "mimeType": "application/json",
                        "text": json.dumps({"test": "data", "value": 123}),
                    },
                },
            ]
        )

    @tool("test_error_handling")
    async def error_handling(self, ctx: Context, arguments: dict[str, Any]) -> str:
        """Always fails, as an `isError` result."""
        raise ToolError("This tool intentionally returns an error for testing")

    @tool("json_schema_2020_12_tool", input_schema=JSON_SCHEMA_2020_12)
    async def json_schema_2020_12(self, ctx: Context, arguments: dict[str, Any]) -> str:
        """Declares an input schema using JSON Schema 2020-12 keywords ($defs, $ref, if/then/else)."""
        return f"Received: {json.dumps(arguments, sort_keys=True)}"

    @tool(
        "test_custom_header",
        input_schema={
            "type": "object",
            "properties": {
                "region": {
                    "type": "string",
                    "description": "Where to run; mirrored in the Mcp-Param-Region header.",
                    "x-mcp-header": "Region",
                }
            },
        },
    )
    async def custom_header(self, ctx: Context, arguments: dict[str, Any]) -> str:
        """Echoes `region`, which travels in an Mcp-Param-Region header too (x-mcp-header)."""
        return f"Region: {arguments.get('region', '(none)')}"

    # ------------------------------------------------------------------ notifications

    @tool("test_tool_with_progress")
    async def tool_with_progress(self, ctx: Context, arguments: dict[str, Any]) -> str:
        """Reports progress 0, 50 and 100 of 100 (when the request asked for progress)."""
        for step in (0, 50, 100):
            await ctx.report_progress(step, 100, f"Step {step // 50 + 1} of 3")
        return "Progress reported: 0, 50, 100 of 100."

    @tool("test_tool_with_logging")
    async def tool_with_logging(self, ctx: Context, arguments: dict[str, Any]) -> str:
        """Logs three info messages (sent only when the client set a log level)."""
        return await self._log_three(ctx)

    @tool("test_logging_tool")
    async def logging_tool(self, ctx: Context, arguments: dict[str, Any]) -> str:
        """Logs three info messages (sent only when the request's _meta sets logLevel)."""
        return await self._log_three(ctx)

    async def _log_three(self, ctx: Context) -> str:
        for text in ("Tool execution started", "Tool processing data", "Tool execution completed"):
            await ctx.log("info", text, logger="conformance")
        return "Logged three messages."

    # ------------------------------------------------------------------ asking the client

    @tool(
        "test_sampling",
        input_schema={
            "type": "object",
            "properties": {"prompt": {"type": "string"}},
            "required": ["prompt"],
        },
    )
    async def sampling(self, ctx: Context, arguments: dict[str, Any]) -> str:
        """Asks the client's model to answer `prompt` (sampling/createMessage)."""
        reply = await ctx.create_message(
            [_user_text(_string_argument(arguments, "prompt"))], max_tokens=100
        )
        return f"LLM response: {_sampled_text(reply)}"

    @tool(
        "test_elicitation",
        input_schema={
            "type": "object",
            "properties": {"message": {"type": "string"}},
            "required": ["message"],
        },
    )
    async def elicitation(self, ctx: Context, arguments: dict[str, Any]) -> str:
        """Asks the user for a username and an email address."""
        reply = await ctx.elicit(_string_argument(arguments, "message"), CONTACT_FORM)
        return f"User response: {_outcome(reply)}"

    @tool("test_elicitation_sep1034_defaults")
    async def elicitation_defaults(self, ctx: Context, arguments: dict[str, Any]) -> str:
        """Asks a form whose every primitive field has a default (SEP-1034)."""
        reply = await ctx.elicit("Please review your profile.", DEFAULTS_FORM)
        return f"Elicitation completed: {_outcome(reply)}"

    @tool("test_elicitation_sep1330_enums")
    async def elicitation_enums(self, ctx: Context, arguments: dict[str, Any]) -> str:
        """Asks a form with every enum shape: titled, untitled, legacy, multi-select (SEP-1330)."""
        reply = await ctx.elicit("Please choose your options.", ENUMS_FORM)
        return f"Elicitation completed: {_outcome(reply)}"

    @tool("test_missing_capability", required_capabilities={"sampling": {}})
    async def missing_capability(self, ctx: Context, arguments: dict[str, Any]) -> str:
        """Needs the client's sampling capability; without it the call is refused (-32021)."""
        reply = await ctx.create_message([_user_text("Say hello.")], max_tokens=20)
        return f"Sampled: {_sampled_text(reply)}"

    @tool("test_streaming_elicitation")
    async def streaming_elicitation(self, ctx: Context, arguments: dict[str, Any]) -> str:
        """Reports progress, then asks the user a question (never a request on the stream)."""
        await ctx.report_progress(0, 1, "About to ask")
        reply = await ctx.elicit("What is your name?", NAME_FORM, key="user_name")
        await ctx.report_progress(1, 1, "Answered")
        return f"Hello, {(reply.content or {}).get('name', 'stranger')}!"

    # ------------------------------------------------------------------ multi round-trip requests

    @tool("test_input_required_result_elicitation")
    async def ir_elicitation(self, ctx: Context, arguments: dict[str, Any]) -> str:
        """Asks the user's name (input request key `user_name`), then greets them."""
        reply = await ctx.elicit("What is your name?", NAME_FORM, key="user_name")
        if reply.action != "accept":
            return f"No name given ({reply.action})."
        return f"Hello, {(reply.content or {})['name']}!"

    @tool("test_input_required_result_sampling")
    async def ir_sampling(self, ctx: Context, arguments: dict[str, Any]) -> str:
        """Asks the client's model a question (input request key `capital_question`)."""
        reply = await ctx.create_message(
            [_user_text("What is the capital of France?")],
            max_tokens=100,
            key="capital_question",
        )
        return f"The model said: {_sampled_text(reply)}"

    @tool("test_input_required_result_list_roots")
    async def ir_list_roots(self, ctx: Context, arguments: dict[str, Any]) -> str:
        """Asks for the client's roots (input request key `client_roots`)."""
        roots = await ctx.list_roots(key="client_roots")
        return "Roots: " + ", ".join(str(root.get("uri")) for root in roots)

    @tool("test_input_required_result_request_state")
    async def ir_request_state(self, ctx: Context, arguments: dict[str, Any]) -> str:
        """Asks for a confirmation; the retry must echo the requestState to finish."""
        reply = await ctx.elicit("Please confirm", CONFIRM_FORM, key="confirm")
        return f"state-ok: {_outcome(reply)}"

    @tool("test_input_required_result_multiple_inputs")
    async def ir_multiple_inputs(self, ctx: Context, arguments: dict[str, Any]) -> str:
        """Asks for a name, a sampled greeting and the roots in one round."""
        replies = await ctx.request_inputs(
            {
                "user_name": {
                    "method": mcp.ELICITATION_METHOD,
                    "params": {
                        "mode": "form",
                        "message": "What is your name?",
                        "requestedSchema": NAME_FORM,
                    },
                },
                "greeting": {
                    "method": mcp.SAMPLING_METHOD,
                    "params": {"messages": [_user_text("Generate a greeting")], "maxTokens": 50},
                },
                "client_roots": {"method": mcp.ROOTS_METHOD, "params": {}},
            }
        )
        answer = read_elicit_result(replies["user_name"])
        name = (answer.content or {}).get("name") if answer is not None else None
        greeting = _sampled_text(replies["greeting"])
        roots = replies["client_roots"].get("roots", [])
        return f"name={name}, greeting={greeting}, roots={len(roots)}"

    @tool("test_input_required_result_multi_round")
    async def ir_multi_round(self, ctx: Context, arguments: dict[str, Any]) -> str:
        """Asks a name, then (in a second round) a favourite colour."""
        name = await ctx.elicit("What is your name?", NAME_FORM, key="user_name")
        color = await ctx.elicit(
            "What is your favourite colour?",
            {
                "type": "object",
                "properties": {"color": {"type": "string"}},
                "required": ["color"],
            },
            key="favorite_color",
        )
        return f"{(name.content or {}).get('name')} likes {(color.content or {}).get('color')}."

    @tool("test_input_required_result_tampered_state")
    async def ir_tampered_state(self, ctx: Context, arguments: dict[str, Any]) -> str:
        """Asks for a confirmation; a retry with an altered requestState is refused."""
        reply = await ctx.elicit("Please confirm", CONFIRM_FORM, key="confirm")
        return f"Confirmed: {_outcome(reply)}"

    @tool("test_input_required_result_capabilities")
    async def ir_capabilities(self, ctx: Context, arguments: dict[str, Any]) -> str:
        """Asks only through the input requests the client's declared capabilities allow."""
        requests: dict[str, Mapping[str, Any]] = {}
        if mcp.supports_form_elicitation(ctx.capabilities):
            requests["user_name"] = {
                "method": mcp.ELICITATION_METHOD,
                "params": {
                    "mode": "form",
                    "message": "What is your name?",
                    "requestedSchema": NAME_FORM,
                },
            }
        if mcp.has_capability(ctx.capabilities, "sampling"):
            requests["greeting"] = {
                "method": mcp.SAMPLING_METHOD,
                "params": {"messages": [_user_text("Generate a greeting")], "maxTokens": 50},
            }
        if mcp.has_capability(ctx.capabilities, "roots"):
            requests["client_roots"] = {"method": mcp.ROOTS_METHOD, "params": {}}
        if not requests:
            return "The client declared nothing to ask through."
        replies = await ctx.request_inputs(requests)
        return "Answered: " + ", ".join(sorted(replies))

    # ------------------------------------------------------------------ prompts

    @prompt("test_simple_prompt")
    async def simple_prompt(self, ctx: Context, arguments: dict[str, str]) -> str:
        """A prompt without arguments."""
        return "This is a simple prompt for testing."

    @prompt(
        "test_prompt_with_arguments",
        arguments=[
            PromptArgument("arg1", "First test argument", required=True),
            PromptArgument("arg2", "Second test argument", required=True),
        ],
    )
    async def prompt_with_arguments(self, ctx: Context, arguments: dict[str, str]) -> str:
        """A prompt that puts its two arguments into the text."""
        return f"Prompt with arguments: arg1='{arguments['arg1']}', arg2='{arguments['arg2']}'"

    @prompt(
        "test_prompt_with_embedded_resource",
        arguments=[PromptArgument("resourceUri", "URI of the resource to embed", required=True)],
    )
    async def prompt_with_embedded_resource(
        self, ctx: Context, arguments: dict[str, str]
    ) -> PromptResult:
        """A prompt that embeds the resource it is given."""
        return PromptResult(
            [
                {
                    "role": "user",
                    "content": {
                        "type": "resource",
                        "resource": {
                            "uri": arguments["resourceUri"],
                            "mimeType": "text/plain",
                            "text": "Embedded resource content for testing.",
                        },
                    },
                },
                _user_text("Please process the embedded resource above."),
            ]
        )

    @prompt("test_prompt_with_image")
    async def prompt_with_image(self, ctx: Context, arguments: dict[str, str]) -> PromptResult:
        """A prompt with an image."""
        return PromptResult(
            [
                {
                    "role": "user",
                    "content": {"type": "image", "data": PNG_B64, "mimeType": "image/png"},
                },
                _user_text("Please analyze the image above."),
            ]
        )

    @prompt("test_input_required_result_prompt")
    async def ir_prompt(self, ctx: Context, arguments: dict[str, str]) -> PromptResult:
        """Asks the user for context (input request key `user_context`) before rendering."""
        reply = await ctx.elicit(
            "What context should the prompt use?",
            {
                "type": "object",
                "properties": {"context": {"type": "string"}},
                "required": ["context"],
            },
            key="user_context",
        )
        context = (reply.content or {}).get("context", "(none given)")
        return PromptResult([_user_text(f"Use this context: {context}")])

    @completion("arg1", prompt="test_prompt_with_arguments")
    @completion("arg2", prompt="test_prompt_with_arguments")
    async def complete_words(
        self, ctx: Context, value: str, context: dict[str, str]
    ) -> Sequence[str]:
        """Suggests words starting with what was typed."""
        return [word for word in WORDS if word.startswith(value)]

    # ------------------------------------------------------------------ resources

    @resource(
        "test://static-text",
        name="static-text",
        mime_type="text/plain",
        ttl_ms=60_000,
        cache_scope="public",
    )
    async def static_text(self, ctx: Context, uri: str, variables: dict[str, str]) -> str:
        """A fixed text resource."""
        return "This is the content of the static text resource."

    @resource(
        "test://static-binary",
        name="static-binary",
        mime_type="image/png",
        ttl_ms=60_000,
        cache_scope="public",
    )
    async def static_binary(self, ctx: Context, uri: str, variables: dict[str, str]) -> bytes:
        """A fixed binary resource (a 1x1 PNG)."""
        return PNG

    @resource("test://watched-resource", name="watched-resource", mime_type="text/plain")
    async def watched(self, ctx: Context, uri: str, variables: dict[str, str]) -> str:
        """A resource clients may subscribe to."""
        return "Watched resource content."

    @resource_template(
        "test://template/{id}/data", name="template-data", mime_type="application/json"
    )
    async def template_data(
        self, ctx: Context, uri: str, variables: dict[str, str]
    ) -> ResourceContents:
        """Data for any id, as JSON."""
        item = variables["id"]
        body = {"id": item, "templateTest": True, "data": f"Data for ID: {item}"}
        return ResourceContents(uri, text=json.dumps(body), mime_type="application/json")

    @completion("id", template="test://template/{id}/data")
    async def complete_ids(self, ctx: Context, value: str, context: dict[str, str]) -> list[str]:
        """Suggests ids starting with what was typed."""
        return [item for item in ("1", "2", "3", "123") if item.startswith(value)]
