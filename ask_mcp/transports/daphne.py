"""daphne in this process: serving an Server over HTTP (and stdio beside it), and the tuning askserver gives daphne, each change measured by bench/.

:func:`serve_http` runs daphne on loopback with the project's ASGI application (the /mcp
endpoint and the browser inbox) answering with a given server's identity and toolkits (see
:func:`ask_mcp.runtime.use_template`). With `stdio` the same event loop also serves stdio, so a
question asked over stdio waits in this process's elicitation table and is answered through the
HTTP side: one process, one in-memory channel layer. stdout carries only the protocol.


daphne serves HTTP through Twisted's `http.Request`, which does two things for every request
that an ASGI server does not need:

- It parses the Content-Type of every POST with the `email` package, to decode form fields into
  `request.args`. daphne hands the raw body to the application and never reads `args`. This
  was 13 % of a worker's CPU in the MRTR benchmark (`bench/`), more than the MCP handling.
- It formats a combined-log access line for every request and writes it to Twisted's log,
  where daphne's observers drop it (daphne writes its own access log, `--access-log`): 2.4 %.

:func:`tune_daphne` turns both off, and installs :mod:`ask_mcp.transports.guard`, which daphne
lacks: a body over the limit refused before it is read (declared) or as it passes the limit
(chunked), a deadline for headers, and a cap on connections per client address. It changes
nothing under uvicorn or any other server, and does nothing when daphne is not loaded
(importing daphne's server would install its reactor).
daphne's own access log (`--access-log`, or verbosity 1, as `make run` serves) goes through
logging, as `daphne.access` records at INFO, formatted like every other line (JSON ones with
ASKSERVER_LOG_FORMAT=json) and written by the log handler's thread, and it leaves out the
requests the application logs itself (/mcp: :mod:`ask_mcp.transports.access_log`'s line). Each
MCP request had two lines, both written on the event loop, daphne's to stdout
(docs/measurements/logging-measurements.md).

:func:`freeze_startup_objects` keeps the garbage collector's full passes off the objects every
process builds at startup, under any server.
"""

from __future__ import annotations

import asyncio
import gc
import ipaddress
import logging
import os
import sys
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from ask_mcp.server.core import Server

logger = logging.getLogger("ask_mcp.transports.daphne")

TUNED_MARK = "askserver_tuned"


def tune_daphne() -> bool:
    """Make this process's daphne skip Twisted's form parsing and access-log lines, and guard it.

    Call it before daphne accepts connections: the daphne command loads the ASGI application
    (askserver/asgi.py calls this) before it builds its HTTP factory. daphne's access lines
    become `daphne.access` log records, but for requests the application logs itself.
    Returns whether daphne is tuned.
    """
    if "daphne.server" not in sys.modules:
        return False
    from daphne import http_protocol, server

    if getattr(http_protocol.WebRequest, TUNED_MARK, False):
        return True

    from ask_mcp.transports import guard

    class WebRequest(http_protocol.WebRequest):  # type: ignore[misc]
        """daphne's request, without Twisted's decoding of form fields it never reads, counting
        its body against the guard's limit as it arrives."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            kwargs.setdefault("parsePOSTFormSubmission", False)
            super().__init__(*args, **kwargs)

        def handleContentChunk(self, data: bytes) -> None:
            if self.channel.count_body(len(data)):
                super().handleContentChunk(data)

    class HTTPFactory(http_protocol.HTTPFactory):  # type: ignore[misc]
        """daphne's factory: without Twisted's access-log line that nothing shows, with the
        guard's channel, and counting connections per client address."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.addresses = guard.AddressCount()

        def protocol(self) -> Any:
            return guard.guarded_channel_protocol()

        def buildProtocol(self, addr: Any) -> Any:
            return self.addresses.admit(addr, super().buildProtocol(addr))

        def log(self, request: Any) -> None:
            return None

    setattr(WebRequest, TUNED_MARK, True)
    # daphne looks both names up when it builds its factory and each connection's protocol.
    http_protocol.WebRequest = WebRequest
    server.HTTPFactory = HTTPFactory
    _access_log_through_logging()
    return True


def _access_log_through_logging() -> None:
    """daphne's access lines as `daphne.access` log records (then formatted like every other),
    none for a request the application logs itself."""
    from daphne import access

    from ask_mcp.transports.access_log import SELF_LOGGED

    access_logger = logging.getLogger("daphne.access")
    # INFO unless the project's LOGGING sets its level (askserver's sets ASKSERVER_LOG_LEVEL).
    if access_logger.level == logging.NOTSET:
        access_logger.setLevel(logging.INFO)
    logged_by_daphne = access.AccessLogGenerator.__call__

    def call(self: Any, protocol: str, action: str, details: dict[str, Any]) -> None:
        if protocol == "http" and details["path"].partition("?")[0] in SELF_LOGGED:
            return  # its line is the application's: one line per request
        if access_logger.isEnabledFor(logging.INFO):
            logged_by_daphne(self, protocol, action, details)

    def write_entry(
        self: Any,
        host: str,
        date: Any,
        request: str,
        status: int | None = None,
        length: int | None = None,
        ident: str | None = None,
        user: str | None = None,
    ) -> None:
        access_logger.info(
            '%s "%s" %s %s',
            host,
            request,
            status or "-",
            length or "-",
            extra={"client": host, "request": request, "status": status, "bytes": length},
        )

    access.AccessLogGenerator.__call__ = call
    access.AccessLogGenerator.write_entry = write_entry


def freeze_startup_objects() -> None:
    """Leave the objects built at startup (Django, the apps, the server) out of every collection.

    Python's full collections traversed all of them: under the MRTR benchmark a worker paused
    for 64 ms (median; 97 ms at worst) about once a second, the long tail of the round
    latency. These objects live as long as the process, so the collector gains nothing by
    looking at them; after `gc.freeze()` the same collections took 11 ms.
    """
    gc.freeze()


_running: set[asyncio.Task[None]] = set()

DEFAULT_SETTINGS: Final = "askserver.settings"
"""The settings module used when DJANGO_SETTINGS_MODULE names none (the embedded default)."""
DEFAULT_PREPARE: Final = "askserver.var.prepare_var_dir"
"""What the embedded default runs before its settings load (its data folder and secret key, as
its own entry points do). Named, as the settings are, so ask_mcp never imports askserver."""


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def setup_django() -> None:
    """Configure Django with the project's settings (unless a project already did), and migrate.

    With the embedded default's settings, its data folder is prepared first, as its own entry
    points do (:data:`DEFAULT_PREPARE`).

    The database holds initialize-era sessions (and the inbox's asks); migrating an
    up-to-date database is quick and quiet.
    """
    # daphne installs its asyncio-backed Twisted reactor on import; it must come before anything
    # that imports twisted.internet.reactor.
    import daphne.server  # noqa: F401
    import django
    from django.core.management import call_command
    from django.utils.module_loading import import_string

    if os.environ.setdefault("DJANGO_SETTINGS_MODULE", DEFAULT_SETTINGS) == DEFAULT_SETTINGS:
        import_string(DEFAULT_PREPARE)()

    django.setup()
    call_command("migrate", interactive=False, verbosity=0)


def serve_http(server: Server, *, host: str, port: int, stdio: bool = False) -> None:
    """Serve `server` over HTTP until stopped; with `stdio`, also on stdin/stdout until EOF.

    The HTTP side is the project's ASGI application (settings.ASGI_APPLICATION, or
    :func:`ask_mcp.routing.build_application`) answering with `server`'s identity and tools.
    """
    setup_django()
    from django.conf import settings

    from ask_mcp import conf, runtime

    runtime.use_template(server)
    if port:  # known before the checks run (URL mode and mail need it); port 0: once bound
        shown = f"[{host.strip('[]')}]" if ":" in host else host
        own_address(f"http://{shown}:{port}")
    if is_loopback(host) and "ALLOW_ANONYMOUS_LOOPBACK" not in (settings.ASK_MCP or {}):
        # One person's command on their own machine: loopback callers need no token, as in the
        # quick start. A host other than loopback keeps the project's token requirement.
        settings.ASK_MCP = {**(settings.ASK_MCP or {}), "ALLOW_ANONYMOUS_LOOPBACK": True}
    conf.values.cache_clear()
    run_daphne(host, port, stdio=stdio)


def own_address(base_url: str) -> None:
    """Make the address daphne listens on PUBLIC_URL unless one is set, as `make run` does:
    the links people follow (URL mode, progress, mail) come from PUBLIC_URL alone."""
    from django.conf import settings

    from ask_mcp import conf, runtime

    if conf.values().public_url is None:
        settings.ASK_MCP = {**(settings.ASK_MCP or {}), "PUBLIC_URL": base_url}
        conf.values.cache_clear()
        runtime.use_template(runtime.template())


def endpoint_description(host: str, port: int) -> str:
    """A Twisted server endpoint string for `host`:`port` (IPv6 literals escaped)."""
    bare = host.strip("[]")
    if ":" in bare:
        return f"tcp6:port={port}:interface={bare.replace(':', chr(92) + ':')}"
    return f"tcp:port={port}:interface={bare}"


def run_daphne(host: str, port: int, *, stdio: bool) -> None:
    """Run daphne with the project's ASGI app; with `stdio`, serve stdio on the same loop until EOF."""
    from daphne.server import Server as Daphne
    from twisted.internet import reactor

    application = load_application()

    daphne = Daphne(
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
        own_address(base_url)
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


def load_application() -> Any:
    """The ASGI application to serve: the project's `ASGI_APPLICATION`, as Channels names it.

    A project that embeds ask_mcp so serves its own application (its asgi.py calls
    :func:`ask_mcp.routing.build_application`, or mounts its pattern lists).

    Raises:
        ImproperlyConfigured: the setting is missing.
    """
    from django.conf import settings
    from django.core.exceptions import ImproperlyConfigured
    from django.utils.module_loading import import_string

    path = getattr(settings, "ASGI_APPLICATION", None)
    if not path:
        raise ImproperlyConfigured(
            "ask-mcp serves the project's ASGI application: set ASGI_APPLICATION = "
            "'<project>.asgi.application', whose asgi.py returns "
            "ask_mcp.routing.build_application(get_asgi_application())"
        )
    return import_string(path)


async def _serve_stdio(base_url: str) -> None:
    from ask_mcp import runtime
    from ask_mcp.transports.stdio import serve_stdio

    runtime.start_background()
    await serve_stdio(runtime.get_server(), base_url=base_url)


def _stopped(task: asyncio.Task[None], daphne: Any, failure: list[BaseException]) -> None:
    if not task.cancelled() and (error := task.exception()) is not None:
        failure.append(error)
    daphne.stop()
