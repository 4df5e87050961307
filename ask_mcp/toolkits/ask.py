"""The Ask toolkit (AskToolkit): `user_ask`, a form question for the person; knows no route a question takes.

It turns the model's questions into a form schema, asks through the Context, and hands the
answers back as compact JSON. Argument mistakes are `isError` results the model can fix; a
person saying no is a plain result. It does not know how the question travels or who answers
it. Pure: no Django.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any, Final

from ask_mcp.protocol.forms import ElicitResult
from ask_mcp.protocol.jsonrpc import json_type
from ask_mcp.server.catalog.toolkit import Toolkit, ToolResult, tool
from ask_mcp.server.context import Context
from ask_mcp.server.errors import with_reason

DECLINED_TEXT: Final = "The user declined to answer."
"""The result when the person declines."""
CANCELLED_TEXT: Final = "The user cancelled the request."
"""The result when the person cancels."""
QUESTION_TYPES: Final = ("string", "number", "integer", "boolean")
"""The `type`s a question may have."""
QUESTION_KEYS: Final = ("name", "prompt", "type", "options", "required", "default", "multiple")
"""Every key a question object may carry."""

DESCRIPTION: Final = """\
Put a question to the person you are working for, as a short form, and wait for their reply.

Use this only when you cannot go on without information that only they have: a choice between \
options you cannot rank yourself, a missing fact, or a go-ahead for something you were not \
asked to do. Do not use it to confirm what you were already told, to chat, or for anything you \
can find out with your other tools: every call interrupts a person.

`message` says what you need and why. With no `questions`, the form has one free-text field, \
`answer`. Otherwise each question becomes a field: `name` is the answer's key, `prompt` the \
text shown, `type` one of string, number, integer, boolean (default string), `options` a list \
of choices for a string question (with `multiple: true` the person may pick several), \
`required` (default true) and `default`.

The answers come back as JSON keyed by question name. If the person declines or cancels, \
that is their answer: carry on without it, or stop and explain what you cannot do without it. \
Do not ask the same thing again straight away. Never ask for passwords, API keys, tokens or \
other secrets."""
"""The tool's description as models read it: when to ask, and what comes back."""

_QUESTION_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 1, "description": "Key of this answer."},
        "prompt": {"type": "string", "description": "The question as the person sees it."},
        "type": {"type": "string", "enum": list(QUESTION_TYPES), "default": "string"},
        "options": {
            "type": "array",
            "items": {"type": "string"},
            "minItems": 1,
            "description": "Choices for a string question.",
        },
        "multiple": {
            "type": "boolean",
            "default": False,
            "description": "With options: let the person pick several.",
        },
        "required": {"type": "boolean", "default": True},
        "default": {"description": "Pre-filled answer; must fit the type (and the options)."},
    },
    "required": ["name"],
    "additionalProperties": False,
}
"""The schema of one question object in `questions`."""

INPUT_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "message": {
            "type": "string",
            "minLength": 1,
            "description": "What you need from the person, and why.",
        },
        "questions": {
            "type": "array",
            "items": _QUESTION_SCHEMA,
            "description": "The form's fields; leave out for a single free-text answer.",
        },
    },
    "required": ["message"],
    "additionalProperties": False,
}
"""The input schema of `user_ask`: a message, and optionally the form's questions."""


class ArgumentProblem(Exception):
    """An argument the model can correct; the text says which and how."""


class AskToolkit(Toolkit):
    """Registers `ask` (as `user_ask` under the default prefix); configured as "Ask"."""

    default_prefix = "user"
    name = "Ask"

    def __init__(self, *, timeout: float | None = None) -> None:
        if timeout is not None and (
            isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0
        ):
            raise ValueError(f"Ask: timeout must be a positive number of seconds, got {timeout!r}")
        self.timeout = None if timeout is None else float(timeout)

    @tool(
        "ask",
        description=DESCRIPTION,
        input_schema=INPUT_SCHEMA,
        title="Ask the user",
        annotations={"title": "Ask the user", "readOnlyHint": True, "openWorldHint": False},
        # The result depends only on the arguments and the reply: a call whose parked handler
        # is gone (a restart) is finished from its ask's record with the same two functions.
        from_record=("form_of", "result_of"),
        # A task offers the form under this key whatever the prefix, as tasks always have.
        record_key="user_ask",
    )
    async def ask(self, ctx: Context, arguments: dict[str, Any]) -> ToolResult:
        try:
            message, schema = self.form_of(arguments)
        except ArgumentProblem as problem:
            return ToolResult.text(str(problem), is_error=True)
        reply = await ctx.elicit(message, schema, timeout=self.timeout)
        return self.result_of(arguments, reply)

    def form_of(self, arguments: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
        """The question `arguments` ask: its message and its form's schema.

        Raises:
            ArgumentProblem: naming the argument to fix.
        """
        return read_message(arguments), build_schema(arguments.get("questions"))

    def result_of(self, arguments: Mapping[str, Any], reply: ElicitResult) -> ToolResult:
        """What the model reads for the person's reply: the answers as JSON, or the refusal."""
        if reply.action == "decline":
            return ToolResult.text(DECLINED_TEXT)
        if reply.action == "cancel":  # staff's reason, when an admin cancelled it with one
            return ToolResult.text(with_reason(CANCELLED_TEXT, reply.reason))
        return ToolResult.text(answers_text(reply.content or {}))


Ask = AskToolkit
"""The toolkit's earlier name, kept for `from ask_mcp import Ask` (not the Django model Ask)."""


def answers_text(answers: Mapping[str, Any]) -> str:
    """Answers as the model reads them: sorted keys, no whitespace, stable across calls."""
    return json.dumps(answers, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def read_message(arguments: Mapping[str, Any]) -> str:
    unknown = sorted(set(arguments) - {"message", "questions"})
    if unknown:
        raise ArgumentProblem(
            f"Unknown argument(s) {', '.join(map(repr, unknown))}; user_ask takes `message` "
            "and optional `questions`."
        )
    if "message" not in arguments:
        raise ArgumentProblem("`message` is missing: say what you need from the person and why.")
    message = arguments["message"]
    if not isinstance(message, str):
        raise ArgumentProblem(f"`message` must be a string, got {json_type(message)}.")
    if not message.strip():
        raise ArgumentProblem("`message` is empty: say what you need from the person and why.")
    return message


def build_schema(questions: Any) -> dict[str, Any]:
    """The requestedSchema for a list of questions (one `answer` field when there are none).

    Raises:
        ArgumentProblem: naming the question (index and name) and what to fix.
    """
    if questions is None or questions == []:
        return {
            "type": "object",
            "properties": {"answer": {"type": "string"}},
            "required": ["answer"],
        }
    if not isinstance(questions, list):
        raise ArgumentProblem(
            f"`questions` must be a list of question objects, got {json_type(questions)}."
        )
    properties: dict[str, Any] = {}
    required: list[str] = []
    for index, question in enumerate(questions):
        name, field, is_required = _field(index, question)
        if name in properties:
            raise ArgumentProblem(
                f"questions[{index}] ({name!r}): the name is already used by an earlier "
                "question; answers are keyed by name, so each needs its own."
            )
        properties[name] = field
        if is_required:
            required.append(name)
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema


# Complex: one branch per rule of a question's shape, each raising the error that names its field; read top down as the rules are documented.
def _field(index: int, question: Any) -> tuple[str, dict[str, Any], bool]:  # noqa: C901, PLR0912
    where = f"questions[{index}]"
    if not isinstance(question, dict):
        raise ArgumentProblem(f"{where} must be an object, got {json_type(question)}.")
    name = question.get("name")
    if "name" not in question or not isinstance(name, str) or not name.strip():
        raise ArgumentProblem(f"{where} has no `name`: give each question a non-empty string name.")
    where = f"{where} ({name!r})"
    unknown = sorted(set(question) - set(QUESTION_KEYS))
    if unknown:
        raise ArgumentProblem(
            f"{where} has unknown key(s) {', '.join(map(repr, unknown))}; the valid keys are "
            f"{', '.join(QUESTION_KEYS)}."
        )
    kind = question.get("type", "string")
    if kind not in QUESTION_TYPES:
        raise ArgumentProblem(
            f"{where}: type {kind!r} is not supported; use one of {', '.join(QUESTION_TYPES)}."
        )
    field: dict[str, Any] = {"type": kind}
    if "prompt" in question:
        prompt = question["prompt"]
        if not isinstance(prompt, str):
            raise ArgumentProblem(f"{where}: `prompt` must be a string, got {json_type(prompt)}.")
        field["description"] = prompt
    required = question.get("required", True)
    if not isinstance(required, bool):
        raise ArgumentProblem(
            f"{where}: `required` must be true or false, got {json_type(required)}."
        )
    multiple = question.get("multiple", False)
    if not isinstance(multiple, bool):
        raise ArgumentProblem(
            f"{where}: `multiple` must be true or false, got {json_type(multiple)}."
        )
    if "options" in question:
        options = question["options"]
        if kind != "string":
            raise ArgumentProblem(
                f"{where}: `options` only work on string questions; drop them or use type string."
            )
        if not isinstance(options, list) or not all(isinstance(o, str) for o in options):
            raise ArgumentProblem(f"{where}: `options` must be a list of strings.")
        if not options:
            raise ArgumentProblem(f"{where}: `options` is empty; list at least one choice.")
        if len(set(options)) != len(options):
            raise ArgumentProblem(f"{where}: `options` lists the same choice twice.")
        if multiple:
            field = {
                "type": "array",
                **_described(field),
                "items": {"type": "string", "enum": options},
            }
        else:
            field["enum"] = options
    elif multiple:
        raise ArgumentProblem(f"{where}: `multiple` needs `options` to choose from.")
    if "default" in question:
        field["default"] = _default(where, field, question["default"])
    return name, field, required


def _described(field: dict[str, Any]) -> dict[str, Any]:
    return {"description": field["description"]} if "description" in field else {}


def _default(where: str, field: Mapping[str, Any], value: Any) -> Any:
    kind = field["type"]
    if kind == "array":
        choices = field["items"]["enum"]
        if not isinstance(value, list) or not all(item in choices for item in value):
            raise ArgumentProblem(f"{where}: `default` must be a list of the options.")
        return value
    ok = {
        "string": isinstance(value, str),
        "number": isinstance(value, int | float) and not isinstance(value, bool),
        "integer": isinstance(value, int) and not isinstance(value, bool),
        "boolean": isinstance(value, bool),
    }[kind]
    if not ok:
        article = "an" if kind == "integer" else "a"
        raise ArgumentProblem(
            f"{where}: `default` must be {article} {kind}, got {json_type(value)}."
        )
    if isinstance(value, float) and not math.isfinite(value):
        raise ArgumentProblem(
            f"{where}: `default` must be a finite number, got {value}; give a number or none."
        )
    if "enum" in field and value not in field["enum"]:
        raise ArgumentProblem(f"{where}: `default` {value!r} is not one of the options.")
    return value
