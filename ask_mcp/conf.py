"""The `ASK_MCP` setting: its keys and defaults, read when used (never at import), and the server built from it."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from django.conf import settings
from django.core.signals import setting_changed
from django.dispatch import receiver
from django.utils.module_loading import import_string

from ask_mcp.server.app import MCPServer
from ask_mcp.server.state import derive_key
from ask_mcp.toolkits import build_toolkit
from ask_mcp.workers.relay import ChannelRelay
from ask_mcp.workers.sessions import LegacySessions

if TYPE_CHECKING:
    from ask_mcp.workers.sessions import LegacySessions

DEFAULTS: Final[Mapping[str, Any]] = {
    "NAME": "askserver",
    "TITLE": "askserver",
    "VERSION": "0.1.0",
    "INSTRUCTIONS": (
        "user_ask puts a question to the person you work for and waits for their answer. "
        "Ask only when you cannot proceed without them."
    ),
    "TOOLKITS": {"Ask": {}},
    "ELICITATION_CAPACITY": 64,
    "ELICITATION_TTL": 600,
    "ON_ELICIT": None,
    "OBSERVER": None,
    "ANSWER_URL": None,
    "MAX_BODY_BYTES": 1024 * 1024,
    "ALLOWED_ORIGINS": [],
    "KEEPALIVE_SECONDS": 15.0,
    "SESSION_IDLE_SECONDS": 3600,
    "ALLOW_ANONYMOUS_LOOPBACK": False,
    "PUBLIC_URL": None,
    "SWEEP_SECONDS": 30.0,
    "ANSWER_RETENTION_DAYS": None,
}
"""Every key of `settings.ASK_MCP`, with its default. The README's settings table mirrors this."""


_template: MCPServer | None = None
"""A server whose identity, limits, hooks and toolkits the process's server copies (see serve_like)."""


def serve_like(server: MCPServer | None) -> None:
    """Make :func:`get_server` serve `server`'s name, tools and hooks (the CLI, `run("http")`).

    The server that answers is still built here, so it gets what only Django provides: the
    requestState keys from SECRET_KEY, the channel-layer relay, and the settings' ON_ELICIT
    and OBSERVER where `server` has none. None goes back to settings alone.
    """
    global _template
    _template = server
    get_server.cache_clear()
    get_sessions.cache_clear()


def get(key: str) -> Any:
    """One `ASK_MCP` value, falling back to its default."""
    configured: Mapping[str, Any] = getattr(settings, "ASK_MCP", {}) or {}
    return configured.get(key, DEFAULTS[key])


@functools.cache
def get_server() -> MCPServer:
    """The process's MCPServer, built once from settings (rebuilt if `ASK_MCP` changes)."""
    return build_server()


@functools.cache
def get_sessions() -> LegacySessions:
    """The process's initialize-era sessions, sharing the server's relay."""
    from ask_mcp.workers.sessions import (
        LegacySessions,  # imports models: only once the app registry is ready
    )

    server = get_server()
    relay = server.table.relay
    if not isinstance(relay, ChannelRelay):
        raise RuntimeError("initialize-era sessions need CHANNEL_LAYERS['default']")
    sessions = LegacySessions(relay, idle_seconds=float(get("SESSION_IDLE_SECONDS")))
    server.add_resource_listener(sessions.resource_updated)  # subscribed sessions hear of changes
    return sessions


def build_server() -> MCPServer:
    keys = [derive_key(settings.SECRET_KEY)]
    keys += [derive_key(key) for key in getattr(settings, "SECRET_KEY_FALLBACKS", [])]
    relay = ChannelRelay() if "default" in getattr(settings, "CHANNEL_LAYERS", {}) else None
    template = _template
    if template is not None:
        table = template.table
        server = MCPServer(
            name=template.name,
            version=template.version,
            instructions=template.instructions,
            title=template.title,
            elicitation_capacity=table.capacity,
            elicitation_ttl=table.ttl,
            state_keys=keys,
            on_elicit=table.on_elicit or _hook("ON_ELICIT"),
            observer=table.observer or _hook("OBSERVER"),
            relay=relay,
            answer_url=table.answer_url or _hook("ANSWER_URL"),
        )
        for plugged, chosen in template.toolkits:
            server.plug(plugged, prefix=chosen)
        return server
    server = MCPServer(
        name=get("NAME"),
        version=get("VERSION"),
        instructions=get("INSTRUCTIONS") or None,
        title=get("TITLE"),
        elicitation_capacity=get("ELICITATION_CAPACITY"),
        elicitation_ttl=float(get("ELICITATION_TTL")),
        state_keys=keys,
        on_elicit=_hook("ON_ELICIT"),
        observer=_hook("OBSERVER"),
        relay=relay,
        answer_url=_hook("ANSWER_URL"),
    )
    for name, options in get("TOOLKITS").items():
        toolkit, prefix = build_toolkit(name, options)
        if prefix is None:
            server.plug(toolkit)
        else:
            server.plug(toolkit, prefix=prefix)
    return server


def _hook(key: str) -> Any:
    """A dotted path in settings names a factory; calling it gives the hook (or None)."""
    path = get(key)
    if path is None:
        return None
    factory = import_string(path) if isinstance(path, str) else path
    return factory()


@receiver(setting_changed)
def _reset(*, setting: str, **kwargs: Any) -> None:
    if setting in ("ASK_MCP", "SECRET_KEY", "SECRET_KEY_FALLBACKS"):
        get_server.cache_clear()
        get_sessions.cache_clear()
