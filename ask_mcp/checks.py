"""System checks for the `ASK_MCP` setting and the deployment pieces the endpoint relies on."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from django.apps import AppConfig
from django.conf import settings
from django.core.checks import CheckMessage, Error, Warning, register
from django.utils.module_loading import import_string

from ask_mcp import conf
from ask_mcp.toolkits import ToolkitConfigError, build_toolkit


@register()
def check_ask_mcp_settings(
    app_configs: Sequence[AppConfig] | None = None, **kwargs: Any
) -> list[CheckMessage]:
    configured = getattr(settings, "ASK_MCP", {})
    if not isinstance(configured, Mapping):
        return [Error("ASK_MCP must be a dict.", id="ask_mcp.E001")]
    messages: list[CheckMessage] = []
    unknown = sorted(set(configured) - set(conf.DEFAULTS))
    if unknown:
        messages.append(
            Error(
                f"ASK_MCP has unknown key(s): {', '.join(unknown)}.",
                hint=f"Valid keys: {', '.join(conf.DEFAULTS)}.",
                id="ask_mcp.E002",
            )
        )
    for key in ("ELICITATION_CAPACITY", "MAX_BODY_BYTES"):
        value = conf.get(key)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            messages.append(
                Error(
                    f"ASK_MCP['{key}'] must be a positive integer, got {value!r}.",
                    id="ask_mcp.E003",
                )
            )
    for key in ("ELICITATION_TTL", "KEEPALIVE_SECONDS", "SESSION_IDLE_SECONDS", "SWEEP_SECONDS"):
        value = conf.get(key)
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            messages.append(
                Error(
                    f"ASK_MCP['{key}'] must be a positive number of seconds, got {value!r}.",
                    id="ask_mcp.E004",
                )
            )
    toolkits = conf.get("TOOLKITS")
    if not isinstance(toolkits, Mapping):
        messages.append(
            Error("ASK_MCP['TOOLKITS'] must be a dict of name -> settings.", id="ask_mcp.E005")
        )
    else:
        for name, options in toolkits.items():
            try:
                build_toolkit(name, options)
            except ToolkitConfigError as exc:
                messages.append(Error(f"ASK_MCP['TOOLKITS']: {exc}", id="ask_mcp.E006"))
    for key in ("ON_ELICIT", "OBSERVER", "ANSWER_URL"):
        path = conf.get(key)
        if isinstance(path, str):
            try:
                import_string(path)
            except ImportError as exc:
                messages.append(
                    Error(
                        f"ASK_MCP['{key}'] = {path!r} cannot be imported: {exc}", id="ask_mcp.E007"
                    )
                )
    origins = conf.get("ALLOWED_ORIGINS")
    if not isinstance(origins, list | tuple) or not all(isinstance(o, str) for o in origins):
        messages.append(
            Error(
                "ASK_MCP['ALLOWED_ORIGINS'] must be a list of origins such as "
                "'https://app.example.com'.",
                id="ask_mcp.E008",
            )
        )
    idle, ttl = conf.get("SESSION_IDLE_SECONDS"), conf.get("ELICITATION_TTL")
    if isinstance(idle, int | float) and isinstance(ttl, int | float) and 0 < idle < ttl:
        messages.append(
            Warning(
                f"ASK_MCP['SESSION_IDLE_SECONDS'] ({idle}) is shorter than ELICITATION_TTL ({ttl}): "
                "an initialize-era session can expire while its client waits for a person.",
                id="ask_mcp.W002",
            )
        )
    days = conf.get("ANSWER_RETENTION_DAYS")
    if days is not None and (
        isinstance(days, bool) or not isinstance(days, int | float) or days <= 0
    ):
        messages.append(
            Error(
                f"ASK_MCP['ANSWER_RETENTION_DAYS'] must be None or a positive number of days, "
                f"got {days!r}.",
                id="ask_mcp.E011",
            )
        )
    public_url = conf.get("PUBLIC_URL")
    if public_url is not None and not _is_origin(public_url):
        messages.append(
            Error(
                f"ASK_MCP['PUBLIC_URL'] must be an http(s) URL such as 'https://ask.example.com', "
                f"got {public_url!r}.",
                id="ask_mcp.E009",
            )
        )
    has_layer = "default" in getattr(settings, "CHANNEL_LAYERS", {})
    if conf.get("ON_ELICIT") == "ask_mcp.web.elicit.on_elicit" and not has_layer:
        messages.append(
            Error(
                "ASK_MCP['ON_ELICIT'] sends questions to the browser inbox, which needs "
                "CHANNEL_LAYERS['default'] to wake the waiting call.",
                hint="Use channels.layers.InMemoryChannelLayer for one process.",
                id="ask_mcp.E010",
            )
        )
    if not has_layer:
        messages.append(
            Warning(
                "CHANNEL_LAYERS has no 'default' layer: browser answers and retries cannot reach "
                "a call held by another worker process.",
                hint="Use channels.layers.InMemoryChannelLayer for one process, channels_redis "
                "for several.",
                id="ask_mcp.W001",
            )
        )
    return messages


def _is_origin(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    parts = urlsplit(value)
    return parts.scheme in ("http", "https") and bool(parts.netloc)
