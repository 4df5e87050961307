"""The one place the process's server is built from the settings: toolkits, the relay, sessions, the recorder.

It owns the composition (what :mod:`ask_mcp.conf` reads becomes an `Server` here), the
cache of what it built, and the background work that runs beside it (the sweeper, the reach task). Transports
and the web ask it for the server; the engine below never knows it exists. What it built is
rebuilt when `ASK_MCP`, `SECRET_KEY` or `CHANNEL_LAYERS` change, so tests under
`override_settings` never talk to a server built before the override.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Mapping
from typing import Any, Final

from channels.db import database_sync_to_async
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.signals import setting_changed
from django.dispatch import receiver
from django.utils.module_loading import import_string

from ask_mcp import conf
from ask_mcp.ops import metrics
from ask_mcp.reach.background import REACHER
from ask_mcp.records.events import ASKED, announce
from ask_mcp.records.sweeper import REVOCATIONS, SWEEPER, release_worker
from ask_mcp.records.tasks import TaskRows
from ask_mcp.server.asking.observers import ForwardingObserver
from ask_mcp.server.asking.table import REPLIED
from ask_mcp.server.context import Context
from ask_mcp.server.core import Server
from ask_mcp.server.ports import QuestionObserver
from ask_mcp.server.question import Ending, Question
from ask_mcp.server.request_state import derive_key
from ask_mcp.workers.relay import ChannelRelay
from ask_mcp.workers.sessions import LegacySessions

_template: Server | None = None
"""A server whose identity, limits, hooks and toolkits the process's server copies (see use_template)."""


def use_template(server: Server | None) -> None:
    """Make :func:`get_server` serve `server`'s name, tools and hooks (the CLI, `run("http")`).

    The server that answers is still built here, so it gets what only Django provides: the
    requestState keys from SECRET_KEY, the channel-layer relay, and the settings' ON_ELICIT
    and OBSERVER where `server` has none. None goes back to settings alone.
    """
    global _template
    _template = server
    _clear()


def template() -> Server | None:
    """The template :func:`use_template` was given, if any."""
    return _template


@functools.cache
def get_server() -> Server:
    """The process's Server, built once from settings (rebuilt when they change)."""
    return build_server()


@functools.cache
def get_sessions() -> LegacySessions:
    """The process's initialize-era sessions, sharing the server's relay."""
    server = get_server()
    relay = server.table.relay
    if not isinstance(relay, ChannelRelay):
        raise RuntimeError("initialize-era sessions need CHANNEL_LAYERS['default']")
    values = conf.values()
    sessions = LegacySessions(
        relay,
        idle_seconds=values.session_idle_seconds,
        per_principal=values.sessions_per_principal,
    )
    server.add_resource_listener(sessions.resource_updated)  # subscribed sessions hear of changes
    return sessions


def relay() -> ChannelRelay:
    """This process's relay (a bare one when the server was built without a channel layer)."""
    held = get_server().table.relay
    return held if isinstance(held, ChannelRelay) else ChannelRelay()


def build_server() -> Server:
    """A new server from the settings, or from the template :func:`use_template` was given.

    Either way it gets what only Django provides: requestState keys from SECRET_KEY (and its
    fallbacks), the channel-layer relay, and the settings' hooks where the template has none.
    """
    _links_have_an_origin()
    keys = [derive_key(settings.SECRET_KEY)]
    keys += [derive_key(key) for key in getattr(settings, "SECRET_KEY_FALLBACKS", [])]
    relay = ChannelRelay() if "default" in getattr(settings, "CHANNEL_LAYERS", {}) else None
    template = _template
    server = Server(**_identity(template), state_keys=keys, relay=relay)
    options = conf.values()
    server.tasks.store = TaskRows()
    server.tasks.ttl, server.tasks.retention = options.task_ttl, options.task_retention
    server.tasks.limit = options.task_limit
    server.tasks.on_ask = announce_task_ask
    if template is None:
        server.load_tools(conf.get("TOOLKITS"))
    else:
        for plugged, chosen in template.toolkits:
            server.plug(plugged, prefix=chosen)
    return server


def _links_have_an_origin() -> None:
    """Mail and URL mode send people links, built from PUBLIC_URL alone: without it they refuse
    to start, here too for a project that skips the system checks (E033, E034).

    Raises:
        ImproperlyConfigured: EMAIL is on or ANSWER_URL set, and PUBLIC_URL is not.
    """
    if conf.values().public_url:
        return
    if conf.values().email:
        raise ImproperlyConfigured(conf.public_url_needed("Mail (ASK_MCP['EMAIL'])"))
    if conf.get("ANSWER_URL") is not None:
        raise ImproperlyConfigured(conf.public_url_needed("URL mode (ASK_MCP['ANSWER_URL'])"))


async def announce_task_ask(question: Question, ctx: Context) -> None:
    """A task's new ask, as the web's on_elicit does a held call's: shown at once in every open
    inbox, and its people told (mail, webhooks; ask_mcp.reach). Before this, a task's question
    appeared only when a person loaded the inbox, and nobody was told of it."""
    await announce(ASKED, [question.id])
    try:  # planned and sent in the background: a notification problem never costs the question
        REACHER.start_soon(question.id, conf.values().public_url or "")
    except Exception:
        logger.exception("could not start the notifications of ask %s", question.id)


def _identity(template: Server | None) -> dict[str, Any]:
    """Name, limits and hooks of the server to build: the template's, else the settings'."""
    if template is None:
        return {
            "name": conf.get("NAME"),
            "version": conf.get("VERSION"),
            "instructions": conf.get("INSTRUCTIONS") or None,
            "title": conf.get("TITLE"),
            "elicitation_capacity": conf.values().elicitation_capacity,
            "elicitation_share": conf.values().elicitation_per_principal,
            "elicitation_ttl": conf.values().elicitation_ttl,
            "on_elicit": _hook("ON_ELICIT"),
            "observer": metered(_hook("OBSERVER")),
            "answer_url": _hook("ANSWER_URL"),
        }
    table = template.table
    return {
        "name": template.name,
        "version": template.version,
        "instructions": template.instructions,
        "title": template.title,
        "elicitation_capacity": table.capacity,
        "elicitation_share": table.share,
        "elicitation_ttl": table.ttl,
        "on_elicit": table.on_elicit or _hook("ON_ELICIT"),
        "observer": metered(table.observer or _hook("OBSERVER")),
        "answer_url": table.answer_url or _hook("ANSWER_URL"),
    }


logger = logging.getLogger("ask_mcp.runtime")


class MeteredObserver(ForwardingObserver):
    """The configured observer, with every ask that ends counted in the metrics."""

    def ended(self, question: Question, status: Ending, answer: Mapping[str, Any] | None) -> None:
        waited = time.time() - question.created_at if status in REPLIED else None
        metrics.ask_ended(question.route, status, waited)
        super().ended(question, status, answer)


def metered(observer: QuestionObserver | None) -> QuestionObserver | None:
    """`observer` counted in the metrics when they are on; as it is otherwise."""
    if not metrics.enabled() or isinstance(observer, MeteredObserver):
        return observer
    return MeteredObserver(observer)


SAMPLE_SECONDS: Final = 5.0
"""How often each worker writes its gauges for a scrape of another worker (multiprocess mode);
Prometheus scrapes every 15 s by default, so a gauge is at most a third of that old."""


def _watch_gauges() -> None:
    """Point the per-worker gauges at this process's server (read when scraped or sampled)."""
    metrics.watch("waiting", lambda: get_server().table.waiting)
    metrics.watch("capacity", lambda: get_server().table.capacity)
    metrics.watch("queue", lambda: getattr(get_server().table.observer, "queued", 0))


async def _sample_forever() -> None:
    while True:
        metrics.sample()
        await asyncio.sleep(SAMPLE_SECONDS)  # a period, not a wait for an event: see SAMPLE_SECONDS


_started_in: asyncio.AbstractEventLoop | None = None
"""The event loop the background work was last started in."""


def start_background() -> None:
    """Start the work that runs beside the server in this event loop (once per loop): the sweeper,
    the revocation watch and the reach task (reminders, escalations, deliveries).

    Called from :func:`lifecycle` for every ASGI scope (daphne sends no lifespan events, so
    the first connection starts it; uvicorn's lifespan startup does so before any), and by
    the stdio side of `ask-mcp --inbox`, which shares daphne's loop. After the first call in a
    loop it costs one comparison: it runs for every request.
    """
    global _started_in
    loop = asyncio.get_running_loop()
    if loop is _started_in:
        return
    SWEEPER.ensure_running(relay, get_server().table.worker)
    REVOCATIONS.ensure_running(relay)
    REACHER.ensure_running()
    if metrics.enabled():
        _watch_gauges()
        if metrics.MULTIPROCESS:
            from ask_mcp.workers.loops import start_in_loop

            start_in_loop(_sample_forever(), name="ask_mcp metrics sampler")
    _started_in = loop


async def stop_gracefully() -> None:
    """A worker's shutdown (SIGTERM, a deploy) that loses no ask.

    New calls are refused with 503 (clients retry elsewhere or after the restart); parked calls
    are dropped and held calls' asks are left pending, held by nobody, so a retry or a call
    asking the same finishes them on any worker; the recorder writes everything it holds.
    The held streams themselves are ended by the server (daphne cancels its application
    instances; uvicorn after `--timeout-graceful-shutdown`). Idempotent.
    """
    server = get_server()
    table = server.table
    table.stopping = True
    cancelled = table.cancel_all()
    if cancelled:
        await asyncio.gather(*cancelled, return_exceptions=True)
    flush = getattr(table.observer, "flush", None)
    if flush is not None:
        try:
            await flush()
        except Exception:
            logger.exception("could not write every ask change before stopping")
    try:
        released = await database_sync_to_async(release_worker)(table.worker)
    except Exception:
        logger.exception("could not release this worker's asks before stopping")
    else:
        if released:
            logger.info("left %d ask(s) pending for the next worker", released)


def lifecycle(application: Any) -> Any:
    """`application`, with :func:`start_background` run before it serves anything.

    Answers ASGI lifespan events itself, so uvicorn starts the background work at startup
    and daphne (which sends none) on the first connection.
    """

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
            return
        start_background()
        await application(scope, receive, send)

    return app


async def _lifespan(receive: Any, send: Any) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            start_background()
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await stop_gracefully()
            await send({"type": "lifespan.shutdown.complete"})
            return


def _hook(key: str) -> Any:
    """A dotted path in settings names a factory; calling it gives the hook (or None)."""
    path = conf.get(key)
    if path is None:
        return None
    factory = import_string(path) if isinstance(path, str) else path
    return factory()


def _clear() -> None:
    get_server.cache_clear()
    get_sessions.cache_clear()


@receiver(setting_changed)
def _reset(*, setting: str, **kwargs: Any) -> None:
    if setting in ("ASK_MCP", "SECRET_KEY", "SECRET_KEY_FALLBACKS", "CHANNEL_LAYERS"):
        _clear()
