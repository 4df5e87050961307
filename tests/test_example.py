"""examples/ask_server.py in a pseudo-terminal: a form-capable client gets the form over the wire,
another sends the question to the terminal, where a person types the answers."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp import Client

from tests.support.clients import Person, accept
from tests.support.ports import free_port
from tests.support.results import text_of

ROOT = Path(__file__).resolve().parents[1]


class Terminal:
    """The master side of a pty: what the program shows, and typing into it."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.screen = ""
        self._seen = 0
        self._changed = asyncio.Event()
        asyncio.get_running_loop().add_reader(fd, self._readable)

    def _readable(self) -> None:
        try:
            chunk = os.read(self.fd, 65536)
        except OSError:  # the program exited and closed the slave side
            chunk = b""
        if not chunk:
            asyncio.get_running_loop().remove_reader(self.fd)
        self.screen += chunk.decode("utf-8", errors="replace")
        self._changed.set()

    async def expect(self, text: str) -> str:
        """Wait until `text` appears after what was already expected; returns the screen up to it."""
        while (found := self.screen.find(text, self._seen)) < 0:
            self._changed.clear()
            await self._changed.wait()
        shown = self.screen[self._seen : found + len(text)]
        self._seen = found + len(text)
        return shown

    def type(self, line: str) -> None:
        os.write(self.fd, line.encode() + b"\n")

    def close(self) -> None:
        asyncio.get_running_loop().remove_reader(self.fd)
        os.close(self.fd)


@pytest.fixture
def example(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], int, int]]:
    master, slave = os.openpty()
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "examples/ask_server.py", f"--port={port}"],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        cwd=ROOT,
        env={
            **os.environ,
            "PYTHONPATH": str(ROOT),
            "DJANGO_SETTINGS_MODULE": "askserver.settings",
            "ASKSERVER_VAR_DIR": str(tmp_path / "var"),
        },
        start_new_session=True,
    )
    os.close(slave)
    try:
        yield process, master, port
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)


async def test_both_paths_side_by_side(
    example: tuple[subprocess.Popen[bytes], int, int],
) -> None:
    process, master, port = example
    terminal = Terminal(master)
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        async with asyncio.timeout(60):
            await terminal.expect(f"ask-mcp: serving MCP at {url}")
            async with Client(
                url, mode="2026-07-28", elicitation_callback=Person(accept(answer="over the wire"))
            ) as capable:
                wired = await capable.call_tool("user_ask", {"message": "Form?"})
            assert text_of(wired) == '{"answer":"over the wire"}'
            assert "Form?" not in terminal.screen

            async with Client(url, mode="2026-07-28") as plain:
                asking = asyncio.ensure_future(
                    plain.call_tool(
                        "user_ask",
                        {
                            "message": "I need two things.",
                            "questions": [
                                {"name": "color", "prompt": "Which?", "options": ["red", "blue"]},
                                {"name": "count", "type": "integer"},
                            ],
                        },
                    )
                )
                intro = await terminal.expect("color — Which? [red/blue]: ")
                assert "I need two things." in intro
                terminal.type("blue")
                await terminal.expect("count [integer]: ")
                terminal.type("three")
                await terminal.expect("type a whole number")
                await terminal.expect("count [integer]: ")
                terminal.type("3")
                result = await asking
            assert text_of(result) == '{"color":"blue","count":3}'
            await terminal.expect("(answer sent)")
    finally:
        terminal.close()
    assert process.poll() is None  # still serving
