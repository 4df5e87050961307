"""An `on_elicit` that asks in the terminal the server runs in: one field per prompt, answers typed back.

For a server whose clients cannot show forms, run from a terminal someone watches (see
examples/ask_server.py). Questions are asked one at a time; each field is prompted with its
description, type and options, and re-prompted until the typed value fits. `:decline` or
`:cancel` at any prompt refuses; end of input cancels. Only for HTTP servers: a stdio server
has spent its stdin and stdout on the protocol. Pure asyncio: no Django.
"""

from __future__ import annotations

import asyncio
import math
import os
import sys
from collections.abc import Mapping
from typing import IO, Any, Final

from ask_mcp.protocol.forms import ElicitResult, field_errors, option_values
from ask_mcp.server.context import Context
from ask_mcp.server.question import Question

DECLINE: Final = ":decline"
CANCEL: Final = ":cancel"
TRUE_WORDS: Final = frozenset({"y", "yes", "true", "1"})
FALSE_WORDS: Final = frozenset({"n", "no", "false", "0"})


class TerminalLines:
    """Lines typed on a file descriptor, read without blocking the event loop."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._buffer = b""
        self._lines: asyncio.Queue[bytes | None] = asyncio.Queue()
        self._reading = False

    def _start(self) -> None:
        if not self._reading:
            self._reading = True
            asyncio.get_running_loop().add_reader(self.fd, self._readable)

    def _readable(self) -> None:
        try:
            chunk = os.read(self.fd, 4096)
        except OSError:
            chunk = b""
        if not chunk:
            asyncio.get_running_loop().remove_reader(self.fd)
            self._lines.put_nowait(None)
            return
        self._buffer += chunk
        while b"\n" in self._buffer:
            line, _, self._buffer = self._buffer.partition(b"\n")
            self._lines.put_nowait(line.rstrip(b"\r"))

    async def readline(self) -> str:
        """The next line, without its newline.

        Raises:
            EOFError: the terminal closed.
        """
        self._start()
        line = await self._lines.get()
        if line is None:
            self._lines.put_nowait(None)  # every later read sees the end too
            raise EOFError
        return line.decode("utf-8", errors="replace")


class TerminalPrompt:
    """The `on_elicit` hook: `MCPServer(..., on_elicit=TerminalPrompt())`."""

    def __init__(self, fd: int | None = None, output: IO[str] | None = None) -> None:
        self._fd = fd
        self._output = output
        self._lines: TerminalLines | None = None
        self._lock = asyncio.Lock()

    async def __call__(self, question: Question, ctx: Context) -> ElicitResult:
        async with self._lock:  # one question at a time: a person reads one prompt at once
            if self._lines is None:
                self._lines = TerminalLines(sys.stdin.fileno() if self._fd is None else self._fd)
            try:
                return await self._ask(question, self._lines)
            except EOFError:
                self._say("(input closed: the question is cancelled)")
                return ElicitResult("cancel")

    async def _ask(self, question: Question, lines: TerminalLines) -> ElicitResult:
        asker = question.client_name or "a client"
        self._say(f"\n── {question.tool} asks (for {asker}) ──")
        self._say(question.message)
        self._say(f"(Type each answer and press Enter; {DECLINE} or {CANCEL} to refuse.)")
        schema = question.schema
        required = set(schema.get("required", ()))
        content: dict[str, Any] = {}
        for name, field in schema["properties"].items():
            while True:
                self._say(_prompt(name, field, name in required), end="")
                typed = (await lines.readline()).strip()
                if typed == DECLINE:
                    return ElicitResult("decline")
                if typed == CANCEL:
                    return ElicitResult("cancel")
                if not typed:
                    if "default" in field:
                        content[name] = field["default"]
                        break
                    if name not in required:
                        break
                    self._say("  an answer is required here")
                    continue
                value, problem = _read_value(field, typed)
                if problem is None:
                    problems = field_errors(field, value)
                    problem = "; ".join(problems) if problems else None
                if problem is None:
                    content[name] = value
                    break
                self._say(f"  {problem}")
        self._say("(answer sent)")
        return ElicitResult("accept", content)

    def _say(self, text: str, end: str = "\n") -> None:
        output = self._output or sys.stdout
        output.write(text + end)
        output.flush()


def _prompt(name: str, field: Mapping[str, Any], required: bool) -> str:
    label = field.get("title") or name
    description = field.get("description")
    text = f"{label}" + (f" — {description}" if description else "")
    options = option_values(field)
    kind = field.get("type")
    if options:
        joined = "/".join(options)
        text += f" [{joined}{', several separated by commas' if kind == 'array' else ''}]"
    elif kind == "boolean":
        text += " [y/n]"
    elif kind in ("number", "integer"):
        text += f" [{kind}]"
    if "default" in field:
        text += f" (default {field['default']})"
    elif not required:
        text += " (optional)"
    return text + ": "


def _read_value(field: Mapping[str, Any], typed: str) -> tuple[Any, str | None]:
    kind = field.get("type")
    if kind == "boolean":
        word = typed.lower()
        if word in TRUE_WORDS:
            return True, None
        if word in FALSE_WORDS:
            return False, None
        return None, "answer y or n"
    if kind == "integer":
        try:
            return int(typed), None
        except ValueError:
            return None, "type a whole number"
    if kind == "number":
        try:
            number = float(typed)
        except ValueError:
            return None, "type a number"
        if not math.isfinite(number):  # "inf", "nan", "1e999": no JSON carries them
            return None, "type a finite number"
        return (int(number) if number.is_integer() and "." not in typed else number), None
    if kind == "array":
        return [part.strip() for part in typed.split(",") if part.strip()], None
    return typed, None
