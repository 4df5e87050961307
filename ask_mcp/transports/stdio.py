"""The stdio transport: newline-delimited JSON-RPC on stdin and stdout, both eras, logs on stderr only.

Each line is one message. A request carrying modern `_meta` is served statelessly on the
2026-07-28 path (questions travel as multi round-trip requests); `initialize` opens the
connection's one initialize-era session, in which questions are server-initiated
`elicitation/create` requests written to stdout and the client's responses come back on
stdin. Requests run concurrently, so a response can arrive while its call waits; writes are
whole lines, never interleaved. A line that is not a usable message gets a JSON-RPC error and
the server keeps reading. End of input ends the server: calls still running are cancelled.
Nothing on stdio carries a credential: every request asks as ``Identity.ANONYMOUS``.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import secrets
import sys
from collections.abc import Awaitable, Callable
from typing import IO, Any, Final

from ask_mcp.ops.logs import PlainFormatter
from ask_mcp.protocol.era import MODERN, era_of
from ask_mcp.protocol.jsonrpc import (
    INVALID_REQUEST,
    JsonRpcError,
    MessageError,
    Request,
    RequestId,
    Response,
    encode,
    error_message,
    parse_message,
    result_message,
)
from ask_mcp.server.core import Server
from ask_mcp.server.eras.legacy import LegacySession
from ask_mcp.server.errors import CLIENT_CANCELLED
from ask_mcp.server.identity import Identity

logger = logging.getLogger("ask_mcp.transports.stdio")

MAX_LINE_BYTES: Final = 16 * 1024 * 1024
"""The longest line read; a longer one is answered with an error and skipped."""


class LineWriter:
    """Writes one message per line; a lock keeps concurrent calls' lines whole."""

    def __init__(self, write: Callable[[bytes], Awaitable[None]]) -> None:
        self._write = write
        self._lock = asyncio.Lock()

    async def send(self, message: dict[str, Any]) -> None:
        line = encode(message) + b"\n"
        async with self._lock:
            await self._write(line)


class StdioStream:
    """A request's notifications (and, in the initialize era, its pushed questions) on stdout."""

    allows_sse: Final = True
    """The back-channel is always open on stdio, as an SSE response is over HTTP."""
    closed: Final = False
    """Stdout stays open as long as the server runs."""

    def __init__(self, writer: LineWriter) -> None:
        self._writer = writer

    async def notify(self, message: dict[str, Any]) -> None:
        await self._writer.send(message)


class Responses:
    """The client's responses to our requests, matched by id (the initialize era's ResponseRouter)."""

    def __init__(self) -> None:
        self._waiting: dict[str, asyncio.Future[dict[str, Any]]] = {}

    def expect(self, request_id: str) -> asyncio.Future[dict[str, Any]]:
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting[request_id] = future
        return future

    def forget(self, request_id: str) -> None:
        self._waiting.pop(request_id, None)

    def deliver(self, response: Response) -> None:
        future = self._waiting.get(str(response.id))
        if future is None or future.done():
            logger.warning("response to unknown request id %r ignored", response.id)
            return
        message: dict[str, Any] = {"id": response.id}
        if response.error is not None:
            message["error"] = response.error
        else:
            message["result"] = response.result
        future.set_result(message)


class StdioConnection:
    """One client on one pair of pipes: the era it chose, its calls in flight, its responses."""

    def __init__(self, server: Server, writer: LineWriter, *, base_url: str | None = None):
        self.server = server
        self.writer = writer
        self.base_url = base_url
        self.session: LegacySession | None = None
        self.responses = Responses()
        self.calls: dict[RequestId, asyncio.Task[None]] = {}

    async def receive(self, line: bytes) -> None:
        """Handle one input line; requests are started and not awaited."""
        if not line.strip():
            return
        try:
            message = parse_message(line)
        except MessageError as exc:
            await self.writer.send(error_message(exc.request_id, exc.error))
            return
        if isinstance(message, Response):
            self.responses.deliver(message)
            return
        if message.is_notification:
            self._notified(message)
            return
        assert message.id is not None
        if message.id in self.calls:
            error = JsonRpcError(
                INVALID_REQUEST, f"Invalid request: id {message.id!r} is already in use"
            )
            await self.writer.send(error_message(message.id, error))
            return
        task = asyncio.ensure_future(self._answer(message))
        self.calls[message.id] = task
        task.add_done_callback(functools.partial(self._finished, message.id))

    def _finished(self, request_id: RequestId, task: asyncio.Task[None]) -> None:
        self.calls.pop(request_id, None)

    def _notified(self, message: Request) -> None:
        if message.method == "notifications/cancelled":
            call = self.calls.get(message.params.get("requestId"))  # type: ignore[arg-type]
            if call is not None:
                call.cancel(CLIENT_CANCELLED)

    async def _answer(self, request: Request) -> None:
        reply = await self._dispatch(request)
        if reply is not None:
            await self.writer.send(reply)

    async def _dispatch(self, request: Request) -> dict[str, Any] | None:
        stream = StdioStream(self.writer)
        if era_of(request) == MODERN:
            return await self.server.handle_modern(
                request, headers=None, who=Identity.ANONYMOUS, stream=stream, base_url=self.base_url
            )
        if request.method == "initialize":
            return self._initialize(request)
        if self.session is not None:
            try:
                return await self.server.handle_legacy(
                    request,
                    session=self.session,
                    stream=stream,
                    responses=self.responses,
                    base_url=self.base_url,
                    who=Identity.ANONYMOUS,
                )
            except asyncio.CancelledError:
                return None  # notifications/cancelled: the initialize era sends no reply
        # Neither era: the modern path names what is missing from `_meta`.
        return await self.server.handle_modern(
            request, headers=None, who=Identity.ANONYMOUS, stream=stream
        )

    def _initialize(self, request: Request) -> dict[str, Any]:
        assert request.id is not None
        try:
            result, version, capabilities, client_info = self.server.initialize(request)
        except JsonRpcError as exc:
            return error_message(request.id, exc)
        self.session = LegacySession(
            id=f"stdio-{secrets.token_hex(8)}",
            protocol_version=version,
            capabilities=capabilities,
            client_info=client_info,
        )
        return result_message(request.id, result)

    async def close(self) -> None:
        """Cancel what still runs (end of input): nobody is left to read the answers."""
        calls = list(self.calls.values())
        for call in calls:
            call.cancel()
        for call in calls:
            with contextlib.suppress(asyncio.CancelledError):
                await call
        self.server.table.cancel_all()


async def serve(
    server: Server,
    reader: asyncio.StreamReader,
    write: Callable[[bytes], Awaitable[None]],
    *,
    base_url: str | None = None,
) -> None:
    """Serve one client until `reader` reaches end of input."""
    connection = StdioConnection(server, LineWriter(write), base_url=base_url)
    try:
        while True:
            try:
                line = await reader.readuntil(b"\n")
            except asyncio.IncompleteReadError as exc:
                line = exc.partial  # the last line may lack its newline
                if line.strip():
                    await connection.receive(line)
                return
            except asyncio.LimitOverrunError as exc:
                await _skip_long_line(reader, exc.consumed)
                error = JsonRpcError(
                    INVALID_REQUEST,
                    f"Invalid request: the line is longer than {MAX_LINE_BYTES} bytes",
                )
                await connection.writer.send(error_message(None, error))
                continue
            await connection.receive(line)
    finally:
        await connection.close()


async def _skip_long_line(reader: asyncio.StreamReader, consumed: int) -> None:
    await reader.readexactly(consumed)
    while True:
        try:
            await reader.readuntil(b"\n")
            return
        except asyncio.LimitOverrunError as exc:
            await reader.readexactly(exc.consumed)
        except asyncio.IncompleteReadError:
            return


async def serve_stdio(server: Server, *, base_url: str | None = None) -> None:
    """Serve `server` on this process's stdin and stdout until end of input.

    While serving, `sys.stdout` points at stderr: a stray print() from a tool must not
    corrupt the protocol stream.
    """
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=MAX_LINE_BYTES)
    stdin = os.fdopen(os.dup(sys.stdin.fileno()), "rb", buffering=0)
    stdout = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    try:
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), stdin)
    except ValueError:  # a regular file: reads never block, a thread can feed the reader
        loop.run_in_executor(None, _feed_from_file, loop, reader, stdin)
    write = _pipe_writer(stdout)
    saved = sys.stdout
    sys.stdout = sys.stderr
    try:
        await serve(server, reader, write, base_url=base_url)
    finally:
        sys.stdout = saved
        stdout.close()


def _pipe_writer(stdout: IO[bytes]) -> Callable[[bytes], Awaitable[None]]:
    async def write(data: bytes) -> None:
        # Lines are small and the client reads continuously: a blocking write keeps them whole
        # and in order without a writer task.
        stdout.write(data)
        stdout.flush()

    return write


def _feed_from_file(
    loop: asyncio.AbstractEventLoop, reader: asyncio.StreamReader, source: IO[bytes]
) -> None:
    while chunk := source.read(65536):
        loop.call_soon_threadsafe(reader.feed_data, chunk)
    loop.call_soon_threadsafe(reader.feed_eof)


def configure_logging(level: int = logging.INFO) -> None:
    """Send every log record to stderr: stdout belongs to the protocol."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(PlainFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.WARNING)
    logging.getLogger("ask_mcp").setLevel(level)


def run_stdio(server: Server) -> None:
    """`Server.run()`: serve stdio until end of input, logging to stderr."""
    configure_logging()
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve_stdio(server))
