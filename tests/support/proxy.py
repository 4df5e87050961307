"""A TCP proxy on loopback that a test can cut and restore: a service outage without touching the service.

Servers under test are pointed at the proxy's port instead of Redis or PostgreSQL. `cut()` closes
the listener and every open connection, so the service looks down (connections refused, open
ones reset); `restore()` listens on the same port again. The proxy runs its own event loop in a
thread, so it keeps forwarding whatever the test's loop is doing.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Coroutine, Iterator
from typing import Any, Final

import pytest

from tests.support.ports import free_port


class TcpProxy:
    """Forwards 127.0.0.1:`port` to `target` while it is up."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        # Reserve a port once; every restore listens on it again.
        self.port = free_port()
        self.connections = 0
        """Connections accepted since the proxy was made (shows a client reconnected)."""

    def _run[T](self, coroutine: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(timeout=10)

    def restore(self) -> None:
        """Listen again: new connections reach the service."""
        self._run(self._listen())

    def cut(self) -> None:
        """Stop listening and reset every open connection: the service is gone."""
        self._run(self._close())

    def close(self) -> None:
        self.cut()
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        # Aborted transports close their sockets on the loop's next turn; a stopped loop never
        # takes it, and the sockets were collected unclosed, warning in whatever test ran next.
        self._loop.run_until_complete(_settle())
        self._loop.close()

    @contextlib.contextmanager
    def outage(self) -> Iterator[None]:
        """The service is down inside the block and back after it."""
        self.cut()
        try:
            yield
        finally:
            self.restore()

    async def _listen(self) -> None:
        if self._server is None:
            self._server = await asyncio.start_server(
                self._accept, "127.0.0.1", self.port, reuse_address=True
            )

    async def _close(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.close()
        for writer in list(self._writers):
            writer.transport.abort()
        self._writers.clear()
        if server is not None:
            await server.wait_closed()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        # Tracked from the start: a cut while the upstream is being dialled must close this one
        # too (left open, its transport was collected later and warned in an unrelated test).
        self._writers.add(writer)
        try:
            upstream_reader, upstream_writer = await asyncio.open_connection(*self.target)
        except OSError:
            self._writers.discard(writer)
            writer.transport.abort()
            return
        if writer.transport.is_closing():  # cut meanwhile
            upstream_writer.transport.abort()
            return
        self._writers.add(upstream_writer)
        try:
            await asyncio.gather(_pipe(reader, upstream_writer), _pipe(upstream_reader, writer))
        finally:
            for each in (writer, upstream_writer):
                self._writers.discard(each)
                each.transport.abort()


async def _settle() -> None:
    """End what still runs on the proxy's loop and let every aborted transport close."""
    current = asyncio.current_task()
    tasks = [task for task in asyncio.all_tasks() if task is not current]
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    for _ in range(3):  # yields, not waits: the loop's turns that run connection_lost
        await asyncio.sleep(0)


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        writer.transport.abort()


HARNESS_SOCKETS: Final = pytest.mark.filterwarnings(
    r"ignore:Exception ignored in. <(function _SelectorTransport\.__del__|socket\.socket)"
    ":pytest.PytestUnraisableExceptionWarning"
)
"""For a module whose tests cut services through this proxy. It resets sockets on purpose (that
is the outage); a socket its own thread's loop aborted can be garbage-collected in the test
process before that loop closed it, which Python reports as an unraisable ResourceWarning
during whichever test runs then. It is the harness's socket, never a server's (the servers run
in their own processes)."""
