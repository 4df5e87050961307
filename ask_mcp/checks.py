"""System checks for the `ASK_MCP` setting, the renamed environment variables, the channel layer the endpoint relies on, and a TLS proxy in front.

One small check per setting, composed by :func:`check_ask_mcp_settings`, as Django's admin
composes its `_check_<option>` methods; the shared `_must_be_*` helpers say what a value must
be, naming the key (and the `ASKSERVER_` variable when the environment set it), the value given
and the fix. Knows the settings only through :mod:`ask_mcp.conf` and the environment only
through :mod:`ask_mcp.ops.environment`, and the toolkits only through their registry.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any, Final
from urllib.parse import urlsplit

from django.apps import AppConfig
from django.conf import settings
from django.core.checks import CheckMessage, Error, Warning, register
from django.utils.module_loading import import_string

from ask_mcp import conf
from ask_mcp.ops import environment
from ask_mcp.toolkits import ToolkitConfigError, build_toolkit

Messages = list[CheckMessage]

INBOX_HOOKS: Final = frozenset({"ask_mcp.web.elicit.on_elicit", "ask_mcp.inbox.on_elicit"})
"""The ON_ELICIT paths that send questions to the browser inbox (the second is the old alias)."""
POSITIVE_INTEGERS: Final = (
    "ELICITATION_CAPACITY",
    "ELICITATION_PER_PRINCIPAL",
    "MAX_BODY_BYTES",
    "MAX_CONNECTIONS_PER_ADDRESS",
)
"""Keys whose value is a count of at least 1."""
POSITIVE_SECONDS: Final = (
    "ELICITATION_TTL",
    "HEADER_TIMEOUT_SECONDS",
    "KEEPALIVE_SECONDS",
    "SESSION_IDLE_SECONDS",
    "SWEEP_SECONDS",
    "DETACHED_GRACE_SECONDS",
    "REACH_SECONDS",
)
"""Keys whose value is a positive number of seconds."""
HOOKS: Final = ("ON_ELICIT", "OBSERVER", "ANSWER_URL")
"""Keys whose value is a dotted path to a factory (or the factory itself)."""


@register()
def check_ask_mcp_settings(
    app_configs: Sequence[AppConfig] | None = None, **kwargs: Any
) -> Messages:
    """Every check of this module, in the order the README's settings table lists the keys."""
    configured = conf.configured()
    if not isinstance(configured, Mapping):
        return [Error("ASK_MCP must be a dict.", id="ask_mcp.E001")]
    checks: list[Callable[[], Messages]] = [
        partial(_check_known_keys, configured),
        *(partial(_must_be_positive_integer, key) for key in POSITIVE_INTEGERS),
        *(partial(_must_be_positive_seconds, key) for key in POSITIVE_SECONDS),
        _check_share_against_capacity,
        _check_toolkits,
        *(partial(_must_be_importable, key) for key in HOOKS),
        _check_allowed_origins,
        _check_session_idle_against_ttl,
        _check_answer_retention_days,
        _check_ask_retention_days,
        _check_public_url,
        partial(_must_be_boolean, "EMAIL", "ask_mcp.E030"),
        _check_email_from,
        _check_email_links,
        _check_reminder_before_seconds,
        partial(_must_be_boolean, "ALLOW_PRIVATE_WEBHOOKS", "ask_mcp.E031"),
        _check_tasks,
        _check_inbox_has_a_layer,
        _check_channel_layer,
        _check_old_environment,
        _check_environment_types,
        _check_metrics,
        _check_database_url,
        _check_redis_url,
        _check_behind_a_proxy,
    ]
    return [message for check in checks for message in check()]


def _check_known_keys(configured: Mapping[str, Any]) -> Messages:
    unknown = sorted(set(configured) - set(conf.DEFAULTS))
    if not unknown:
        return []
    return [
        Error(
            f"ASK_MCP has unknown key(s): {', '.join(unknown)}.",
            hint=f"Valid keys: {', '.join(conf.DEFAULTS)}.",
            id="ask_mcp.E002",
        )
    ]


def named(key: str) -> str:
    """How a message names an ASK_MCP key: with its environment variable when that is set."""
    var = environment.BY_NAME.get(environment.PREFIX + key)
    if var is not None and environment.raw(var, os.environ) is not None:
        return f"{var.name} (ASK_MCP['{key}'])"
    return f"ASK_MCP['{key}']"


def _must_be_positive_integer(key: str) -> Messages:
    value = conf.get(key)
    if not isinstance(value, bool) and isinstance(value, int) and value >= 1:
        return []
    return [Error(f"{named(key)} must be a positive integer, got {value!r}.", id="ask_mcp.E003")]


def _must_be_positive_seconds(key: str) -> Messages:
    value = conf.get(key)
    if _is_positive_number(value):
        return []
    return [
        Error(
            f"{named(key)} must be a positive number of seconds, got {value!r}.",
            id="ask_mcp.E004",
        )
    ]


def _check_share_against_capacity() -> Messages:
    share, capacity = conf.get("ELICITATION_PER_PRINCIPAL"), conf.get("ELICITATION_CAPACITY")
    both = all(isinstance(v, int) and not isinstance(v, bool) for v in (share, capacity))
    # The default share (16) above a small capacity someone chose is simply the whole table.
    if not both or share <= capacity or "ELICITATION_PER_PRINCIPAL" not in conf.configured():
        return []
    return [
        Warning(
            f"ASK_MCP['ELICITATION_PER_PRINCIPAL'] ({share}) is larger than "
            f"ELICITATION_CAPACITY ({capacity}): one token can fill the whole table and refuse "
            "everyone else.",
            hint=f"Set it to at most {capacity}, such as {max(1, capacity // 4)}.",
            id="ask_mcp.W040",
        )
    ]


def _check_toolkits() -> Messages:
    toolkits = conf.get("TOOLKITS")
    if not isinstance(toolkits, Mapping):
        return [Error("ASK_MCP['TOOLKITS'] must be a dict of name -> settings.", id="ask_mcp.E005")]
    messages: Messages = []
    for name, options in toolkits.items():
        try:
            build_toolkit(name, options)
        except ToolkitConfigError as exc:
            messages.append(Error(f"ASK_MCP['TOOLKITS']: {exc}", id="ask_mcp.E006"))
    return messages


def _must_be_importable(key: str) -> Messages:
    path = conf.get(key)
    if not isinstance(path, str):
        return []
    try:
        import_string(path)
    except ImportError as exc:
        return [Error(f"ASK_MCP['{key}'] = {path!r} cannot be imported: {exc}", id="ask_mcp.E007")]
    return []


def _check_allowed_origins() -> Messages:
    origins = conf.get("ALLOWED_ORIGINS")
    if isinstance(origins, list | tuple) and all(isinstance(o, str) for o in origins):
        return []
    return [
        Error(
            "ASK_MCP['ALLOWED_ORIGINS'] must be a list of origins such as "
            "'https://app.example.com'.",
            id="ask_mcp.E008",
        )
    ]


def _check_session_idle_against_ttl() -> Messages:
    idle, ttl = conf.get("SESSION_IDLE_SECONDS"), conf.get("ELICITATION_TTL")
    if not (_is_positive_number(idle) and _is_positive_number(ttl) and idle < ttl):
        return []
    return [
        Warning(
            f"ASK_MCP['SESSION_IDLE_SECONDS'] ({idle}) is shorter than ELICITATION_TTL ({ttl}): "
            "an initialize-era session can expire while its client waits for a person.",
            id="ask_mcp.W002",
        )
    ]


def _check_answer_retention_days() -> Messages:
    days = conf.get("ANSWER_RETENTION_DAYS")
    if days is None or _is_positive_number(days):
        return []
    return [
        Error(
            f"{named('ANSWER_RETENTION_DAYS')} must be None or a positive number of days, "
            f"got {days!r}.",
            id="ask_mcp.E011",
        )
    ]


def _check_ask_retention_days() -> Messages:
    """ASK_RETENTION_DAYS is None or positive days (E080); an ANSWER_RETENTION_DAYS not shorter
    than it never clears an answer before its ask goes (W080)."""
    days, answers = conf.get("ASK_RETENTION_DAYS"), conf.get("ANSWER_RETENTION_DAYS")
    if days is None:
        return []
    if not _is_positive_number(days):
        return [
            Error(
                f"{named('ASK_RETENTION_DAYS')} must be None (keep every ask) or a positive "
                f"number of days, got {days!r}.",
                hint="Every ended ask, its history and its deliveries are deleted this many days "
                "after its expiry (90 by default).",
                id="ask_mcp.E080",
            )
        ]
    if _is_positive_number(answers) and answers >= days:
        return [
            Warning(
                f"{named('ANSWER_RETENTION_DAYS')} ({answers:g}) is not shorter than "
                f"{named('ASK_RETENTION_DAYS')} ({days:g}): answers are deleted with their ask "
                "before it would clear them.",
                hint="Set ANSWER_RETENTION_DAYS below ASK_RETENTION_DAYS to clear answers "
                "sooner, or unset it.",
                id="ask_mcp.W080",
            )
        ]
    return []


def _check_public_url() -> Messages:
    public_url = conf.get("PUBLIC_URL")
    if public_url is None or _is_origin(public_url):
        return []
    return [
        Error(
            f"{named('PUBLIC_URL')} must be an http(s) URL such as 'https://ask.example.com', "
            f"got {public_url!r}.",
            id="ask_mcp.E009",
        )
    ]


def _must_be_boolean(key: str, check_id: str) -> Messages:
    value = conf.get(key)
    if isinstance(value, bool):
        return []
    return [Error(f"ASK_MCP['{key}'] must be True or False, got {value!r}.", id=check_id)]


DJANGO_DEFAULT_FROM: Final = "webmaster@localhost"
"""Django's own DEFAULT_FROM_EMAIL: mail from it is refused or filed as spam by most servers."""


def _check_email_from() -> Messages:
    if conf.get("EMAIL") is not True or settings.DEFAULT_FROM_EMAIL != DJANGO_DEFAULT_FROM:
        return []
    return [
        Warning(
            f"ASK_MCP['EMAIL'] is on but mail is sent from Django's default address "
            f"{DJANGO_DEFAULT_FROM!r}.",
            hint="Set ASKSERVER_EMAIL_FROM (DEFAULT_FROM_EMAIL) to an address your mail server "
            "may send from.",
            id="ask_mcp.W030",
        )
    ]


def _check_email_links() -> Messages:
    if conf.get("EMAIL") is not True or conf.get("PUBLIC_URL") is not None:
        return []
    return [
        Warning(
            "ASK_MCP['EMAIL'] is on but PUBLIC_URL is not set: links in mail use the address "
            "the MCP client reached the server on, which a mailbox may not reach.",
            hint="Set ASK_MCP['PUBLIC_URL'] to the inbox's public origin, e.g. "
            "'https://ask.example.com'.",
            id="ask_mcp.W031",
        )
    ]


def _check_reminder_before_seconds() -> Messages:
    value = conf.get("REMINDER_BEFORE_SECONDS")
    if value is None or _is_positive_number(value):
        return []
    return [
        Error(
            f"ASK_MCP['REMINDER_BEFORE_SECONDS'] must be None (no reminders) or a positive "
            f"number of seconds, got {value!r}.",
            id="ask_mcp.E032",
        )
    ]


def _check_tasks() -> Messages:
    """TASK_TTL and TASK_RETENTION are positive seconds (E060, E061), TASK_LIMIT a count (E062)."""
    found: Messages = []
    for key, check_id in (("TASK_TTL", "ask_mcp.E060"), ("TASK_RETENTION", "ask_mcp.E061")):
        value = conf.get(key)
        if not _is_positive_number(value):
            found.append(
                Error(
                    f"ASK_MCP['{key}'] must be a positive number of seconds, got {value!r}.",
                    hint="A task's ask waits TASK_TTL; its result stays readable TASK_RETENTION more.",
                    id=check_id,
                )
            )
    limit = conf.get("TASK_LIMIT")
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        found.append(
            Error(
                f"ASK_MCP['TASK_LIMIT'] must be a positive integer, got {limit!r}.",
                hint="It bounds the open tasks of one principal (100 by default).",
                id="ask_mcp.E062",
            )
        )
    return found


def _check_inbox_has_a_layer() -> Messages:
    if conf.get("ON_ELICIT") not in INBOX_HOOKS or _has_layer():
        return []
    return [
        Error(
            "ASK_MCP['ON_ELICIT'] sends questions to the browser inbox, which needs "
            "CHANNEL_LAYERS['default'] to wake the waiting call.",
            hint="Use channels.layers.InMemoryChannelLayer for one process.",
            id="ask_mcp.E010",
        )
    ]


def _check_channel_layer() -> Messages:
    if _has_layer():
        return []
    return [
        Warning(
            "CHANNEL_LAYERS has no 'default' layer: browser answers and retries cannot reach "
            "a call held by another worker process.",
            hint="Use channels.layers.InMemoryChannelLayer for one process, channels_redis "
            "for several.",
            id="ask_mcp.W001",
        )
    ]


def _check_old_environment() -> Messages:
    return [
        Warning(
            f"The environment variable {old} is set: it is read for one more release only.",
            hint=f"Rename it to {new} (askserver's variables all start with {conf.ENV_PREFIX}).",
            id="ask_mcp.W003",
        )
        for old, new in conf.old_environment_in_use()
    ]


def _check_environment_types() -> Messages:
    """One message per variable whose text is not of its type (its default applies meanwhile)."""
    return [
        Error(
            f"The environment variable {problem}.",
            hint=f"Fix or unset {name}; the README's settings table says what it takes.",
            id="ask_mcp.E050",
        )
        for name, problem in environment.problems(os.environ).items()
    ]


METRICS_TOKEN_MIN: Final = 16
"""Characters a metrics token needs at least: shorter ones are guessable in a night of tries."""


def _check_metrics() -> Messages:
    metrics, token = conf.get("METRICS"), conf.get("METRICS_TOKEN")
    messages: Messages = []
    if not isinstance(metrics, bool):
        messages.append(
            Error(f"{named('METRICS')} must be True or False, got {metrics!r}.", id="ask_mcp.E051")
        )
    if token is not None and not isinstance(token, str):
        messages.append(Error(f"{named('METRICS_TOKEN')} must be a string.", id="ask_mcp.E052"))
    elif metrics is True and (not token or len(token) < METRICS_TOKEN_MIN):
        messages.append(
            Error(
                f"{named('METRICS')} is on but {named('METRICS_TOKEN')} is "
                f"{'unset' if not token else 'shorter than 16 characters'}: /metrics would be "
                "open to anyone.",
                hint="Set ASKSERVER_METRICS_TOKEN to a long random string (python -c 'import "
                "secrets; print(secrets.token_urlsafe(32))') and give it to Prometheus as its "
                "bearer token.",
                id="ask_mcp.E053",
            )
        )
    return messages


def _check_database_url() -> Messages:
    var = environment.variable("DATABASE_URL")
    found = environment.raw(var, os.environ)
    if found is None:
        return []
    name, url = found
    scheme = urlsplit(url).scheme
    if scheme in environment.DATABASE_SCHEMES:
        return []
    return [
        Error(
            f"{name} must be a postgres:// URL, got scheme {scheme!r}; askserver is serving "
            "SQLite meanwhile.",
            hint="Use postgres://user:password@host:5432/name, or unset it for SQLite in "
            "ASKSERVER_VAR_DIR.",
            id="ask_mcp.E054",
        )
    ]


def _check_redis_url() -> Messages:
    var = environment.variable("REDIS_URL")
    found = environment.raw(var, os.environ)
    if found is None:
        return []
    name, url = found
    scheme = urlsplit(url).scheme
    if scheme in environment.REDIS_SCHEMES:
        return []
    return [
        Error(
            f"{name} must be a redis://, rediss:// or unix:// URL, got scheme {scheme!r}.",
            hint="Use redis://host:6379/0.",
            id="ask_mcp.E055",
        )
    ]


def _check_behind_a_proxy() -> Messages:
    """With the proxy's scheme trusted (a TLS proxy is in front), cookies must be Secure (W070)
    and loopback must not mean "no token needed" (E070): a proxy on the same machine forwards
    every request from 127.0.0.1."""
    if not settings.SECURE_PROXY_SSL_HEADER:
        return []
    messages: Messages = []
    if conf.get("ALLOW_ANONYMOUS_LOOPBACK") is True:
        messages.append(
            Error(
                f"{named('ALLOW_ANONYMOUS_LOOPBACK')} is on while SECURE_PROXY_SSL_HEADER "
                "(ASKSERVER_TRUST_FORWARDED_PROTO) says a proxy is in front: a proxy on this "
                "machine forwards every request from loopback, so anyone could call /mcp "
                "without a token.",
                hint="Unset ASKSERVER_ALLOW_ANONYMOUS_LOOPBACK and give each client a token "
                "(manage.py createtoken <username>).",
                id="ask_mcp.E070",
            )
        )
    if not (settings.SESSION_COOKIE_SECURE and settings.CSRF_COOKIE_SECURE):
        messages.append(
            Warning(
                "SECURE_PROXY_SSL_HEADER (ASKSERVER_TRUST_FORWARDED_PROTO) says people reach "
                "this server over https, but the session and CSRF cookies are not Secure: a "
                "browser also sends them over plain http, where anyone on the path reads them.",
                hint="Set ASKSERVER_SECURE_COOKIES=1 (SESSION_COOKIE_SECURE and "
                "CSRF_COOKIE_SECURE).",
                id="ask_mcp.W070",
            )
        )
    return messages


def _has_layer() -> bool:
    return "default" in getattr(settings, "CHANNEL_LAYERS", {})


def _is_positive_number(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, int | float) and value > 0


def _is_origin(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    parts = urlsplit(value)
    return parts.scheme in ("http", "https") and bool(parts.netloc)
