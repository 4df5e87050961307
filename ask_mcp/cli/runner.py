"""Serving an MCPServer through the askserver Django project: `--transport http`, and stdio with `--inbox`.

Both run daphne in this process on loopback, serving the project's ASGI application (the /mcp
endpoint, and the browser inbox once it is installed) with the given server's identity and
toolkits (see :func:`ask_mcp.runtime.serve_like`). With `--inbox` the same event loop also serves
stdio, so a question asked over stdio waits in this process's elicitation table and is
answered through the HTTP side: one process, one in-memory channel layer. stdout carries only
the protocol; every word for people goes to stderr.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import os
import sys
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from ask_mcp.server.app import MCPServer

logger = logging.getLogger("ask_mcp.cli.runner")

_running: set[asyncio.Task[None]] = set()

DEFAULT_SETTINGS: Final = "askserver.settings"


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def setup_django() -> None:
    """Configure Django with the project's settings (unless a project already did), and migrate.

    The database holds initialize-era sessions (and the inbox's asks); migrating an
    up-to-date database is quick and quiet.
    """
    # daphne installs its asyncio-backed Twisted reactor on import; it must come before anything
    # that imports twisted.internet.reactor.
    import daphne.server  # noqa: F401

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", DEFAULT_SETTINGS)
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", interactive=False, verbosity=0)


def serve(server: MCPServer, *, transport: str, host: str, port: int) -> None:
    """Serve until stopped: HTTP only (`transport="http"`), or stdio plus the inbox over HTTP."""
    setup_django()
    from django.conf import settings

    from ask_mcp import runtime

    runtime.serve_like(server)
    if is_loopback(host) and "ALLOW_ANONYMOUS_LOOPBACK" not in (settings.ASK_MCP or {}):
        # One person's command on their own machine: loopback callers need no token, as in the
        # quick start. A host other than loopback keeps the project's token requirement.
        settings.ASK_MCP = {**(settings.ASK_MCP or {}), "ALLOW_ANONYMOUS_LOOPBACK": True}
    if transport == "stdio":
        run_daphne(host, port, stdio=True)
    else:
        run_daphne(host, port, stdio=False)


def endpoint_description(host: str, port: int) -> str:
    """A Twisted server endpoint string for `host`:`port` (IPv6 literals escaped)."""
    bare = host.strip("[]")
    if ":" in bare:
        return f"tcp6:port={port}:interface={bare.replace(':', chr(92) + ':')}"
    return f"tcp:port={port}:interface={bare}"


def run_daphne(host: str, port: int, *, stdio: bool) -> None:
    """Run daphne with the project's ASGI app; with `stdio`, serve stdio on the same loop until EOF."""
    from daphne.server import Server
    from twisted.internet import reactor

    from askserver.asgi import application

    daphne = Server(
        application=application,
        endpoints=[endpoint_description(host, port)],
        # A question may wait for a person far longer than daphne's default HTTP timeout.
        http_timeout=None,
        signal_handlers=not stdio,
        verbosity=0,
    )
    failure: list[BaseException] = []

    def ready() -> None:
        bound_host, bound_port = daphne.listening_addresses[0]
        shown = f"[{bound_host}]" if ":" in bound_host else bound_host
        base_url = f"http://{shown}:{bound_port}"
        if not stdio:
            print(f"ask-mcp: serving MCP at {base_url}/mcp", file=sys.stderr, flush=True)
            return
        print(f"ask-mcp: inbox at {base_url}/", file=sys.stderr, flush=True)
        loop: Any = reactor._asyncioEventloop
        task = loop.create_task(_serve_stdio(base_url))
        _running.add(task)  # the loop keeps only a weak reference to a task
        task.add_done_callback(_running.discard)
        task.add_done_callback(lambda done: _stopped(done, daphne, failure))

    daphne.ready_callable = ready
    daphne.run()
    if failure:
        raise failure[0]
    if not daphne.listening_addresses:
        raise SystemExit(f"ask-mcp: could not listen on {host}:{port}")


async def _serve_stdio(base_url: str) -> None:
    from ask_mcp import runtime
    from ask_mcp.transports.stdio import serve_stdio

    await serve_stdio(runtime.get_server(), base_url=base_url)


def _stopped(task: asyncio.Task[None], daphne: Any, failure: list[BaseException]) -> None:
    if not task.cancelled() and (error := task.exception()) is not None:
        failure.append(error)
    daphne.stop()
