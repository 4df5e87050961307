"""The `ASK_MCP` setting, read lazily and typed: its keys, their defaults, and the renamed environment variables.

A leaf: it imports nothing of ask_mcp and builds nothing (:mod:`ask_mcp.runtime` builds the
server from these values). Values are read when used, never at import, and the typed view is
cached until `setting_changed` says `ASK_MCP` changed, as channels' `layers.py` does for
`CHANNEL_LAYERS`. The engine and the protocol never import this module: they are handed their
values through constructors.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from django.conf import settings
from django.core.signals import setting_changed
from django.dispatch import receiver

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
    "ELICITATION_PER_PRINCIPAL": 16,
    "ELICITATION_TTL": 600,
    "ON_ELICIT": None,
    "OBSERVER": None,
    "ANSWER_URL": None,
    "MAX_BODY_BYTES": 1024 * 1024,
    "HEADER_TIMEOUT_SECONDS": 20.0,
    "MAX_CONNECTIONS_PER_ADDRESS": 512,
    "ALLOWED_ORIGINS": [],
    "KEEPALIVE_SECONDS": 15.0,
    "SESSION_IDLE_SECONDS": 3600,
    "ALLOW_ANONYMOUS_LOOPBACK": False,
    "PUBLIC_URL": None,
    "SWEEP_SECONDS": 30.0,
    "DETACHED_GRACE_SECONDS": 600.0,
    "ANSWER_RETENTION_DAYS": None,
    # 90 days: a quarter, so the dashboard's 14 days and a quarterly look back at who was asked
    # what still find every ask, while questions nobody answered (and what they said) no longer
    # pile up for ever; None keeps every ask.
    "ASK_RETENTION_DAYS": 90,
    "EMAIL": False,
    "REMINDER_BEFORE_SECONDS": 300,
    "REACH_SECONDS": 5.0,
    "ALLOW_PRIVATE_WEBHOOKS": False,
    "METRICS": False,
    "METRICS_TOKEN": None,
    "TASK_TTL": 86_400,
    "TASK_RETENTION": 86_400,
    "TASK_LIMIT": 100,
}
"""Every key of `settings.ASK_MCP`, with its default. The README's settings table mirrors this."""

ENV_PREFIX: Final = "ASKSERVER_"
"""The one prefix of askserver's environment variables (conventional names such as DATABASE_URL
keep theirs)."""

RENAMED_ENVIRONMENT: Final[Mapping[str, str]] = {
    "ASK_MCP_REDIS_URL": "ASKSERVER_REDIS_URL",
    "ASK_MCP_REDIS_PREFIX": "ASKSERVER_REDIS_PREFIX",
    "ASK_MCP_LOG_LEVEL": "ASKSERVER_LOG_LEVEL",
}
"""Old environment variable -> its new name. The old names are read for one more release, and
the system check ask_mcp.W003 names the new one for each old name still set."""


def environ(name: str, default: str | None = None) -> str | None:
    """The environment variable `name` (an `ASKSERVER_` name), or its old `ASK_MCP_` name.

    The new name wins when both are set; an empty value counts as unset.
    """
    if value := os.environ.get(name):
        return value
    for old, new in RENAMED_ENVIRONMENT.items():
        if new == name and (value := os.environ.get(old)):
            return value
    return default


def old_environment_in_use() -> list[tuple[str, str]]:
    """(old name, new name) for each renamed environment variable that is still set."""
    return [(old, new) for old, new in RENAMED_ENVIRONMENT.items() if os.environ.get(old)]


def configured() -> Any:
    """`settings.ASK_MCP` as given (not yet checked: it may not even be a dict)."""
    return getattr(settings, "ASK_MCP", {}) or {}


def get(key: str) -> Any:
    """One `ASK_MCP` value as given, falling back to its default."""
    given = configured()
    # A dict first: an isinstance against the Mapping ABC cost a request more than the read.
    if type(given) is dict or isinstance(given, Mapping):
        return given.get(key, DEFAULTS[key])
    return DEFAULTS[key]


@dataclass(frozen=True, slots=True)
class AskSettings:
    """The `ASK_MCP` values the Django-side parts read, with their types.

    Built from :func:`get` once the system checks have vetted the values (the checks name a bad
    value and its fix; this view only converts numbers).
    """

    elicitation_capacity: int
    elicitation_per_principal: int
    elicitation_ttl: float
    max_body_bytes: int
    header_timeout_seconds: float
    max_connections_per_address: int
    allowed_origins: tuple[str, ...]
    keepalive_seconds: float
    session_idle_seconds: float
    allow_anonymous_loopback: bool
    public_url: str | None
    sweep_seconds: float
    answer_retention_days: float | None
    ask_retention_days: float | None
    detached_grace_seconds: float
    email: bool
    reminder_before_seconds: float | None
    reach_seconds: float
    allow_private_webhooks: bool
    metrics: bool
    metrics_token: str | None
    task_ttl: float
    task_retention: float
    task_limit: int


@functools.cache
def values() -> AskSettings:
    """The typed view of `ASK_MCP`, cached until the setting changes."""
    days = get("ANSWER_RETENTION_DAYS")
    ask_days = get("ASK_RETENTION_DAYS")
    reminder = get("REMINDER_BEFORE_SECONDS")
    return AskSettings(
        elicitation_capacity=int(get("ELICITATION_CAPACITY")),
        elicitation_per_principal=int(get("ELICITATION_PER_PRINCIPAL")),
        elicitation_ttl=float(get("ELICITATION_TTL")),
        max_body_bytes=int(get("MAX_BODY_BYTES")),
        header_timeout_seconds=float(get("HEADER_TIMEOUT_SECONDS")),
        max_connections_per_address=int(get("MAX_CONNECTIONS_PER_ADDRESS")),
        allowed_origins=tuple(get("ALLOWED_ORIGINS")),
        keepalive_seconds=float(get("KEEPALIVE_SECONDS")),
        session_idle_seconds=float(get("SESSION_IDLE_SECONDS")),
        allow_anonymous_loopback=bool(get("ALLOW_ANONYMOUS_LOOPBACK")),
        public_url=get("PUBLIC_URL"),
        sweep_seconds=float(get("SWEEP_SECONDS")),
        answer_retention_days=None if days is None else float(days),
        ask_retention_days=None if ask_days is None else float(ask_days),
        detached_grace_seconds=float(get("DETACHED_GRACE_SECONDS")),
        email=bool(get("EMAIL")),
        reminder_before_seconds=None if reminder is None else float(reminder),
        reach_seconds=float(get("REACH_SECONDS")),
        allow_private_webhooks=bool(get("ALLOW_PRIVATE_WEBHOOKS")),
        metrics=bool(get("METRICS")),
        metrics_token=get("METRICS_TOKEN") or None,
        task_ttl=float(get("TASK_TTL")),
        task_retention=float(get("TASK_RETENTION")),
        task_limit=int(get("TASK_LIMIT")),
    )


@receiver(setting_changed)
def _reset(*, setting: str, **kwargs: Any) -> None:
    if setting == "ASK_MCP":
        values.cache_clear()
