"""System checks of the askserver project: the environment variables it reads, and a TLS proxy in front.

The library's checks (:mod:`ask_mcp.checks`) vet `ASK_MCP` in any project that embeds the app;
these vet what only askserver reads, so an embedding project never sees them. Registered from
:class:`askserver.apps.AskserverConfig`. Their ids keep the `ask_mcp.` prefix they were
published with: operators silence checks by id (SILENCED_SYSTEM_CHECKS).

The proxy checks are registered as Django registers its security checks (`Tags.security`,
their messages module constants as in django/core/checks/security/base.py), but not as
deployment checks: they fire only when SECURE_PROXY_SSL_HEADER says a proxy is in front, which
is itself the sign of a deployment, and askserver runs the checks at every start
(askserver/asgi.py) without `--deploy`, where an E070 must stop the server and a W070 must be
seen.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, Final
from urllib.parse import urlsplit

from django.apps import AppConfig
from django.conf import settings
from django.core.checks import CheckMessage, Error, Tags, Warning, register

from ask_mcp import conf
from ask_mcp.checks import named
from ask_mcp.ops import forwarded
from askserver import environment

Messages = list[CheckMessage]

W003_MESSAGE: Final = (
    "The environment variable {old} is set: it is read until askserver {removed}, which stops "
    "reading it."
)
W003_HINT: Final = "Rename it to {new} (askserver's variables all start with {prefix})."
E050_MESSAGE: Final = "The environment variable {problem}."
E050_HINT: Final = "Fix or unset {name}; the settings table says what it takes."
E054_MESSAGE: Final = (
    "{name} must be a postgres:// URL, got scheme {scheme!r}; askserver is serving SQLite "
    "meanwhile."
)
E054_HINT: Final = (
    "Use postgres://user:password@host:5432/name, or unset it for SQLite in ASKSERVER_VAR_DIR."
)
E055_MESSAGE: Final = "{name} must be a redis://, rediss:// or unix:// URL, got scheme {scheme!r}."
E055_HINT: Final = "Use redis://host:6379/0."
E056_MESSAGE: Final = "ASKSERVER_TRUSTED_PROXIES: {problem}."
E056_HINT: Final = (
    "List the proxies' addresses or networks, comma-separated: 127.0.0.1,10.0.0.0/8 "
    "(docs/deploy/security.md, Signing in)."
)

E070_MESSAGE: Final = (
    "{key} is on while SECURE_PROXY_SSL_HEADER (ASKSERVER_TRUST_FORWARDED_PROTO) says a proxy "
    "is in front: a proxy on this machine forwards every request from loopback, so anyone "
    "could call /mcp without a token."
)
E070_HINT: Final = (
    "Unset ASKSERVER_ALLOW_ANONYMOUS_LOOPBACK and give each client a token "
    "(manage.py createtoken <username>)."
)
W070: Final = Warning(
    "SECURE_PROXY_SSL_HEADER (ASKSERVER_TRUST_FORWARDED_PROTO) says people reach this server "
    "over https, but the session and CSRF cookies are not Secure: a browser also sends them over "
    "plain http, where anyone on the path reads them.",
    hint="Set ASKSERVER_SECURE_COOKIES=1 (SESSION_COOKIE_SECURE and CSRF_COOKIE_SECURE).",
    id="ask_mcp.W070",
)


@register()
def check_environment(app_configs: Sequence[AppConfig] | None = None, **kwargs: Any) -> Messages:
    """The variables askserver reads: old names still set (W003), text that is not of its
    variable's type (E050), a database URL (E054) or Redis URL (E055) of the wrong scheme, a
    trusted proxy that is not an address (E056)."""
    return [
        *_check_old_names(),
        *_check_types(),
        *_check_database_url(),
        *_check_redis_url(),
        *_check_trusted_proxies(),
    ]


def _check_old_names() -> Messages:
    return [
        Warning(
            W003_MESSAGE.format(old=old, removed=environment.OLD_NAMES_REMOVED_IN),
            hint=W003_HINT.format(new=new, prefix=environment.PREFIX),
            id="ask_mcp.W003",
        )
        for old, new in environment.old_names_in_use(os.environ)
    ]


def _check_types() -> Messages:
    """One message per variable whose text is not of its type (its default applies meanwhile)."""
    return [
        Error(
            E050_MESSAGE.format(problem=problem),
            hint=E050_HINT.format(name=name),
            id="ask_mcp.E050",
        )
        for name, problem in environment.problems(os.environ).items()
    ]


def _check_trusted_proxies() -> Messages:
    try:
        forwarded.networks(environment.get("TRUSTED_PROXIES", os.environ))
    except ValueError as exc:
        return [Error(E056_MESSAGE.format(problem=exc), hint=E056_HINT, id="ask_mcp.E056")]
    return []


def _check_database_url() -> Messages:
    return _check_scheme(
        "DATABASE_URL", environment.DATABASE_SCHEMES, E054_MESSAGE, E054_HINT, "ask_mcp.E054"
    )


def _check_redis_url() -> Messages:
    return _check_scheme(
        "REDIS_URL", environment.REDIS_SCHEMES, E055_MESSAGE, E055_HINT, "ask_mcp.E055"
    )


def _check_scheme(
    variable: str, schemes: Sequence[str], message: str, hint: str, check_id: str
) -> Messages:
    """The URL in `variable` (under whichever name is set) has one of `schemes`."""
    found = environment.raw(environment.variable(variable), os.environ)
    if found is None:
        return []
    name, url = found
    scheme = urlsplit(url).scheme
    if scheme in schemes:
        return []
    return [Error(message.format(name=name, scheme=scheme), hint=hint, id=check_id)]


@register(Tags.security)
def check_behind_a_tls_proxy(
    app_configs: Sequence[AppConfig] | None = None, **kwargs: Any
) -> Messages:
    """With the proxy's scheme trusted (a TLS proxy is in front), loopback must not mean "no
    token needed" (E070): a proxy on the same machine forwards every request from 127.0.0.1;
    and the cookies must be Secure (W070)."""
    if not settings.SECURE_PROXY_SSL_HEADER:
        return []
    messages: Messages = []
    if conf.get("ALLOW_ANONYMOUS_LOOPBACK") is True:
        message = E070_MESSAGE.format(key=named("ALLOW_ANONYMOUS_LOOPBACK"))
        messages.append(Error(message, hint=E070_HINT, id="ask_mcp.E070"))
    if not (settings.SESSION_COOKIE_SECURE and settings.CSRF_COOKIE_SECURE):
        messages.append(W070)
    return messages
