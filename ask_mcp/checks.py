"""System checks for the `ASK_MCP` setting and the channel layer the endpoint relies on.

One check per key, derived from its declared kind (:data:`KIND_CHECKS`, applied to each
:data:`ask_mcp.conf.SETTINGS` entry with the id the declaration names), then the checks that
weigh two keys or another setting against each other; :func:`check_ask_mcp_settings` composes
them, as Django's admin composes its `_check_<option>` methods. Every message names a key
through :func:`named`: `ASK_MCP['KEY']`, with its `ASKSERVER_` variable when the environment
set it. Knows the settings only through :mod:`ask_mcp.conf` and the toolkits only through their
registry.

The project's checks (its environment variables, a TLS proxy in front) are askserver's, in
:mod:`askserver.checks`: an embedding project never reads those variables.
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
from ask_mcp.conf import Setting
from ask_mcp.ops import environment
from ask_mcp.reach import push
from ask_mcp.toolkits import ToolkitConfigError, build_toolkit

Messages = list[CheckMessage]

INBOX_HOOK: Final = "ask_mcp.web.elicit.on_elicit"
"""The ON_ELICIT path that sends questions to the browser inbox."""
METRICS_TOKEN_MIN: Final = 16
"""Characters a metrics token needs at least: shorter ones are guessable in a night of tries."""
PUBLIC_URL_HINT: Final = (
    "Set ASKSERVER_PUBLIC_URL (ASK_MCP['PUBLIC_URL']) to the origin people open the inbox at, "
    "such as 'https://ask.example.com'."
)
"""The fix of E033 and E034."""
DJANGO_DEFAULT_FROM: Final = "webmaster@localhost"
"""Django's own DEFAULT_FROM_EMAIL: mail from it is refused or filed as spam by most servers."""


@register()
def check_ask_mcp_settings(
    app_configs: Sequence[AppConfig] | None = None, **kwargs: Any
) -> Messages:
    """Every check of this module: each key's, in the settings table's order, then the others."""
    configured = conf.configured()
    if not isinstance(configured, Mapping):
        return [Error("ASK_MCP must be a dict.", id="ask_mcp.E001")]
    checks: list[Callable[[], Messages]] = [
        partial(_check_known_keys, configured),
        *(partial(KIND_CHECKS[s.kind], s) for s in conf.SETTINGS if s.check is not None),
        _check_share_against_capacity,
        _check_session_idle_against_ttl,
        _check_answers_kept_shorter_than_asks,
        _check_email_from,
        _check_links_have_an_origin,
        _check_metrics_token,
        _check_push,
        _check_inbox_has_a_layer,
        _check_channel_layer,
    ]
    return [message for check in checks for message in check()]


def named(key: str) -> str:
    """How a message names an ASK_MCP key: with its environment variable when that is set."""
    var = conf.VARIABLE_OF.get(key)
    if var is not None and environment.raw(var, os.environ) is not None:
        return f"{var.name} (ASK_MCP['{key}'])"
    return f"ASK_MCP['{key}']"


def _check_known_keys(configured: Mapping[str, Any]) -> Messages:
    """Unknown keys (E002); a key's old name, still read for now (W004)."""
    messages: Messages = [
        Warning(
            f"ASK_MCP['{old}'] is the old name of ASK_MCP['{conf.OLD_KEYS[old]}']: it is read "
            f"until askserver {conf.OLD_KEYS_REMOVED_IN}, which stops reading it.",
            hint=f"Rename it to {conf.OLD_KEYS[old]} (in the environment: "
            f"{environment.PREFIX}{conf.OLD_KEYS[old]}).",
            id="ask_mcp.W004",
        )
        for old in sorted(set(configured) & set(conf.OLD_KEYS))
    ]
    unknown = sorted(set(configured) - set(conf.DEFAULTS) - set(conf.OLD_KEYS))
    if unknown:
        messages.append(
            Error(
                f"ASK_MCP has unknown key(s): {', '.join(unknown)}.",
                hint=f"Valid keys: {', '.join(conf.DEFAULTS)}.",
                id="ask_mcp.E002",
            )
        )
    return messages


# ------------------------------------------------------------ one check per key, by its kind


def _must_be(setting: Setting, what: str, value: Any, *, quote: bool = True) -> Messages:
    """The error of `setting`'s check: what the value must be, and (unless secret) what it is."""
    none = "None or " if setting.optional else ""
    got = f", got {value!r}" if quote else ""
    message = f"{named(setting.key)} must be {none}{what}{got}."
    return [Error(message, hint=setting.hint, id=setting.check)]


def _is_none_allowed(setting: Setting, value: Any) -> bool:
    return setting.optional and value is None


def _must_be_positive_integer(setting: Setting) -> Messages:
    value = conf.get(setting.key)
    if _is_none_allowed(setting, value) or _is_count(value):
        return []
    return _must_be(setting, "a positive integer", value)


def _must_be_positive_seconds(setting: Setting) -> Messages:
    value = conf.get(setting.key)
    if _is_none_allowed(setting, value) or _is_positive_number(value):
        return []
    return _must_be(setting, "a positive number of seconds", value)


def _must_be_positive_days(setting: Setting) -> Messages:
    value = conf.get(setting.key)
    if _is_none_allowed(setting, value) or _is_positive_number(value):
        return []
    return _must_be(setting, "a positive number of days", value)


def _must_be_boolean(setting: Setting) -> Messages:
    value = conf.get(setting.key)
    if isinstance(value, bool):
        return []
    return _must_be(setting, "True or False", value)


def _must_be_origins(setting: Setting) -> Messages:
    origins = conf.get(setting.key)
    if isinstance(origins, list | tuple) and all(isinstance(o, str) for o in origins):
        return []
    return _must_be(setting, "a list of origins such as 'https://app.example.com'", origins)


def _must_be_origin(setting: Setting) -> Messages:
    value = conf.get(setting.key)
    if value is None or _is_origin(value):
        return []
    return _must_be(setting, "an http(s) URL such as 'https://ask.example.com'", value)


def _must_be_secret_text(setting: Setting) -> Messages:
    value = conf.get(setting.key)
    if value is None or isinstance(value, str):
        return []
    return _must_be(setting, "a string", value, quote=False)  # a secret is never quoted


def _must_be_importable(setting: Setting) -> Messages:
    path = conf.get(setting.key)
    if not isinstance(path, str):
        return []  # None, or the factory itself
    try:
        import_string(path)
    except ImportError as exc:
        message = f"{named(setting.key)} = {path!r} cannot be imported: {exc}"
        return [Error(message, hint=setting.hint, id=setting.check)]
    return []


def _must_be_toolkits(setting: Setting) -> Messages:
    """A dict of toolkit name -> settings (E005), each of which builds (E006)."""
    toolkits = conf.get(setting.key)
    if not isinstance(toolkits, Mapping):
        return _must_be(setting, "a dict of name -> settings", toolkits)
    messages: Messages = []
    for name, options in toolkits.items():
        try:
            build_toolkit(name, options)
        except ToolkitConfigError as exc:
            messages.append(Error(f"{named(setting.key)}: {exc}", id="ask_mcp.E006"))
    return messages


def _is_not_checked(setting: Setting) -> Messages:
    return []


KIND_CHECKS: Final[Mapping[conf.Kind, Callable[[Setting], Messages]]] = {
    "text": _is_not_checked,
    "toolkits": _must_be_toolkits,
    "count": _must_be_positive_integer,
    "seconds": _must_be_positive_seconds,
    "days": _must_be_positive_days,
    "hook": _must_be_importable,
    "origins": _must_be_origins,
    "flag": _must_be_boolean,
    "origin": _must_be_origin,
    "token": _must_be_secret_text,
}
"""The check of each kind: it reports the id its key's declaration names."""


# ------------------------------------------------------------ keys weighed against each other


def _check_share_against_capacity() -> Messages:
    share, capacity = conf.get("ELICITATION_PER_PRINCIPAL"), conf.get("ELICITATION_CAPACITY")
    # The default share (16) above a small capacity someone chose is simply the whole table.
    if not (_is_integer(share) and _is_integer(capacity)) or share <= capacity:
        return []
    if "ELICITATION_PER_PRINCIPAL" not in conf.configured():
        return []
    return [
        Warning(
            f"{named('ELICITATION_PER_PRINCIPAL')} ({share}) is larger than "
            f"{named('ELICITATION_CAPACITY')} ({capacity}): one token can fill the whole table "
            "and refuse everyone else.",
            hint=f"Set it to at most {capacity}, such as {max(1, capacity // 4)}.",
            id="ask_mcp.W040",
        )
    ]


def _check_session_idle_against_ttl() -> Messages:
    idle, ttl = conf.get("SESSION_IDLE_SECONDS"), conf.get("ELICITATION_TTL")
    if not (_is_positive_number(idle) and _is_positive_number(ttl) and idle < ttl):
        return []
    return [
        Warning(
            f"{named('SESSION_IDLE_SECONDS')} ({idle}) is shorter than {named('ELICITATION_TTL')} "
            f"({ttl}): an initialize-era session can expire while its client waits for a person.",
            id="ask_mcp.W002",
        )
    ]


def _check_answers_kept_shorter_than_asks() -> Messages:
    """An ANSWER_RETENTION_DAYS not shorter than ASK_RETENTION_DAYS never clears an answer
    before its ask goes."""
    days, answers = conf.get("ASK_RETENTION_DAYS"), conf.get("ANSWER_RETENTION_DAYS")
    if not (_is_positive_number(days) and _is_positive_number(answers) and answers >= days):
        return []
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


def _check_email_from() -> Messages:
    if conf.get("EMAIL") is not True or settings.DEFAULT_FROM_EMAIL != DJANGO_DEFAULT_FROM:
        return []
    return [
        Warning(
            f"{named('EMAIL')} is on but mail is sent from Django's default address "
            f"{DJANGO_DEFAULT_FROM!r}.",
            hint="Set DEFAULT_FROM_EMAIL (askserver: ASKSERVER_EMAIL_FROM) to an address your "
            "mail server may send from.",
            id="ask_mcp.W030",
        )
    ]


def _check_links_have_an_origin() -> Messages:
    """Mail (E033) and URL mode (E034) send people links, built from PUBLIC_URL alone: a
    request's Host header is the agent's to choose, and a poisoned one sent a teammate's mailed
    link to another local listener, which then held their session cookie (issue 28)."""
    if conf.get("PUBLIC_URL") is not None:
        return []
    messages: Messages = []
    if conf.get("EMAIL") is True:
        message = conf.public_url_needed(f"{named('EMAIL')} is on, but mail")
        messages.append(Error(message, hint=PUBLIC_URL_HINT, id="ask_mcp.E033"))
    if conf.get("ANSWER_URL") is not None:
        message = conf.public_url_needed(f"{named('ANSWER_URL')} is set, but URL mode")
        messages.append(Error(message, hint=PUBLIC_URL_HINT, id="ask_mcp.E034"))
    return messages


def _check_metrics_token() -> Messages:
    """With METRICS on, /metrics needs a token long enough not to be guessed (E053); a token
    that is not a string is E052, its own key's check."""
    metrics, token = conf.get("METRICS"), conf.get("METRICS_TOKEN")
    if metrics is not True or not (token is None or isinstance(token, str)):
        return []
    if token and len(token) >= METRICS_TOKEN_MIN:
        return []
    return [
        Error(
            f"{named('METRICS')} is on but {named('METRICS_TOKEN')} is "
            f"{'unset' if not token else 'shorter than 16 characters'}: /metrics would be "
            "open to anyone.",
            hint="Set ASKSERVER_METRICS_TOKEN to a long random string (python -c 'import "
            "secrets; print(secrets.token_urlsafe(32))') and give it to Prometheus as its "
            "bearer token.",
            id="ask_mcp.E053",
        )
    ]


def _check_push() -> Messages:
    """Web Push needs a contact the push services accept (E091) and a key that loads (E090)."""
    subject, key = conf.get("VAPID_SUBJECT"), conf.get("VAPID_PRIVATE_KEY")
    messages: Messages = []
    if subject is not None and not (
        isinstance(subject, str) and subject.startswith(("mailto:", "https://"))
    ):
        messages.append(
            Error(
                f"{named('VAPID_SUBJECT')} = {subject!r} is not a mailto: or https: URL: push "
                "services refuse pushes without a contact (RFC 8292).",
                hint="Set it to 'mailto:admin@example.com' or your site's https:// URL.",
                id="ask_mcp.E091",
            )
        )
    if isinstance(key, str) and key and (problem := push.key_problem(key)) is not None:
        messages.append(
            Error(
                f"{named('VAPID_PRIVATE_KEY')} cannot be read as a P-256 private key: {problem}.",
                hint="Give a base64url P-256 key (raw 32 bytes or DER), or leave it unset "
                "and askserver uses the key it generated into its data folder.",
                id="ask_mcp.E090",
            )
        )
    return messages


def _check_inbox_has_a_layer() -> Messages:
    if conf.get("ON_ELICIT") != INBOX_HOOK or _has_layer():
        return []
    return [
        Error(
            f"{named('ON_ELICIT')} sends questions to the browser inbox, which needs "
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


def _has_layer() -> bool:
    return "default" in getattr(settings, "CHANNEL_LAYERS", {})


def _is_integer(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, int)


def _is_count(value: Any) -> bool:
    return _is_integer(value) and value >= 1


def _is_positive_number(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, int | float) and value > 0


def _is_origin(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    parts = urlsplit(value)
    return parts.scheme in ("http", "https") and bool(parts.netloc)
