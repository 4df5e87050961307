"""askserver's environment variables: the project's own, and the one table of every variable askserver reads.

The project's variables (the data folder, the secret key, hosts and the proxy, the database and
Redis, logs, mail, sign-in) are declared here, one row each. The library's rows, one per
`ASK_MCP` key, are derived from the keys' declarations (:data:`ask_mcp.conf.VARIABLES`); this
table shows them with askserver's own defaults where askserver changes the library's
(:data:`ASK_MCP_DEFAULTS`, and mail following ASKSERVER_EMAIL_URL). How a variable's text is
read, and how it is shown masked, is the library's reusable reader
(:mod:`ask_mcp.ops.environment`), since the library's rows need it too.

The project's settings build themselves from :func:`get` and :func:`ask_mcp`;
:mod:`askserver.checks` reports :func:`problems` and :func:`old_names_in_use`, naming the
variable; `askserver_config` shows every row, secrets masked; :func:`settings_table` renders the
docs' settings table. Pure: it reads the mapping it is handed (`os.environ`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Final

from ask_mcp import conf
from ask_mcp.ops import environment as reader
from ask_mcp.ops.environment import MASK as MASK
from ask_mcp.ops.environment import PREFIX as PREFIX
from ask_mcp.ops.environment import Kind, Variable
from ask_mcp.ops.environment import mask_url as mask_url
from ask_mcp.ops.environment import raw as raw
from ask_mcp.ops.environment import read_one as read_one
from ask_mcp.ops.environment import shown as shown

DATABASE_SCHEMES: Final = ("postgres", "postgresql")
"""The schemes ASKSERVER_DATABASE_URL may have."""
REDIS_SCHEMES: Final = ("redis", "rediss", "unix")
"""The schemes ASKSERVER_REDIS_URL may have (those channels_redis connects to)."""
OLD_PREFIX: Final = "ASK_MCP_"
"""The prefix some variables had before; a row's `also` name with it (or an old `ASKSERVER_`
name, as ASKSERVER_ALLOW_PRIVATE_WEBHOOKS) is still read, until :data:`OLD_NAMES_REMOVED_IN`
removes it (ask_mcp.W003 names the new name meanwhile)."""
OLD_NAMES_REMOVED_IN: Final = "0.2.0"
"""The askserver version that stops reading the old `ASK_MCP_` names."""


def _v(name: str, kind: Kind, default: Any, meaning: str, **more: Any) -> Variable:
    return Variable(PREFIX + name, kind, default, meaning, **more)


PROJECT: Final[tuple[Variable, ...]] = (
    _v(
        "VAR_DIR",
        "path",
        None,
        "the data folder: the SQLite database and the generated secret key",
        default_text="`var/` beside `manage.py` in a checkout; `~/.local/share/askserver` when "
        "installed",
    ),
    _v(
        "SECRET_KEY",
        "text",
        None,
        "Django's SECRET_KEY (signs sessions and sealed requestState)",
        secret=True,
        default_text="generated once into `VAR_DIR/secret_key`",
    ),
    _v(
        "SECRET_KEY_FALLBACKS",
        "list",
        [],
        "comma-separated old keys that still open requestState "
        "([rotating the key](../deploy/security.md#rotating-the-secret-key))",
        secret=True,
    ),
    _v(
        "ALLOWED_HOSTS",
        "list",
        ["127.0.0.1", "localhost", "[::1]"],
        "comma-separated host names this server answers to",
    ),
    _v(
        "CSRF_TRUSTED_ORIGINS",
        "list",
        [],
        "comma-separated origins (`https://ask.example.com`) besides the request's own that may "
        "POST to the inbox and the admin and open the inbox's socket (Django's "
        "CSRF_TRUSTED_ORIGINS); needed only when the proxy changes `Host` "
        "([Running several workers](../deploy/workers.md))",
    ),
    _v(
        "TRUST_FORWARDED_PROTO",
        "flag",
        False,
        "take `X-Forwarded-Proto: https` from the proxy as the request's scheme (Django's "
        "SECURE_PROXY_SSL_HEADER); only behind a proxy that sets that header on every request",
    ),
    _v(
        "SECURE_COOKIES",
        "flag",
        False,
        "mark the session and CSRF cookies `Secure` (Django's SESSION_COOKIE_SECURE and "
        "CSRF_COOKIE_SECURE): browsers send them over https only",
    ),
    _v("DEBUG", "flag", False, "Django's DEBUG; never in production"),
    _v(
        "DATABASE_URL",
        "url",
        None,
        "`postgres://user:password@host:port/name`",
        also=("DATABASE_URL",),
        default_text="SQLite in `VAR_DIR/db.sqlite3`",
    ),
    _v(
        "REDIS_URL",
        "url",
        None,
        "`redis://host:port/db`: the channel layer for several workers",
        also=("ASK_MCP_REDIS_URL",),
        default_text="the in-memory channel layer (one process)",
    ),
    _v(
        "REDIS_PREFIX",
        "text",
        "askmcp",
        "the channel layer's key prefix in Redis",
        also=("ASK_MCP_REDIS_PREFIX",),
    ),
    _v(
        "LOG_LEVEL",
        "choice",
        "INFO",
        "level of the `ask_mcp` loggers",
        choices=("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"),
        also=("ASK_MCP_LOG_LEVEL",),
    ),
    _v(
        "LOG_FORMAT",
        "choice",
        "plain",
        "`plain` lines, or `json`: one JSON object per line",
        choices=("plain", "json"),
    ),
    _v(
        "EMAIL_URL",
        "url",
        None,
        "`smtp://host:port`, `smtp+tls://user:pass@host:port` or `smtps://…`: turns mail on "
        "([Reaching people](../answering/reach.md))",
        secret=True,
        default_text="none (no mail)",
    ),
    _v(
        "EMAIL_FROM",
        "text",
        None,
        "the sender of askserver's mail (Django's DEFAULT_FROM_EMAIL)",
        default_text="Django's default",
    ),
    _v(
        "LOGIN_FAILURE_LIMIT",
        "integer",
        10,
        "wrong passwords for one username from one address before that pair is locked out "
        "([Security](../deploy/security.md))",
    ),
    _v("LOGIN_COOLOFF_MINUTES", "number", 15, "how long a locked-out pair waits"),
    _v(
        "TRUSTED_PROXIES",
        "list",
        [],
        "comma-separated addresses or networks (`127.0.0.1`, `10.0.0.0/8`) of the proxies in "
        "front whose `X-Forwarded-For` names the client: the sign-in lockout counts by that "
        "address ([Security](../deploy/security.md#signing-in))",
        default_text="none: every request's own connection address counts",
    ),
)
"""The project's own variables, in the settings table's order (none sets an ASK_MCP key)."""

ASK_MCP_DEFAULTS: Final[Mapping[str, Any]] = {
    "ON_ELICIT": "ask_mcp.web.elicit.on_elicit",
    "OBSERVER": "ask_mcp.records.recorder.recorder",
}
"""askserver's defaults for the ASK_MCP keys whose library default (none) it changes: questions
for clients that cannot show forms go to the browser inbox, and every ask is recorded. EMAIL
is askserver's too: on when ASKSERVER_EMAIL_URL is set (:func:`ask_mcp`)."""


def _as_askserver_sets_it(var: Variable) -> Variable:
    """A library row with the default askserver gives its key."""
    if var.key is not None and var.key in ASK_MCP_DEFAULTS:
        return replace(var, default=ASK_MCP_DEFAULTS[var.key])
    if var.key == "EMAIL":
        return replace(var, default_text="on when `ASKSERVER_EMAIL_URL` is set")
    return var


VARIABLES: Final[tuple[Variable, ...]] = (
    *PROJECT,
    *(_as_askserver_sets_it(var) for var in conf.VARIABLES),
)
"""Every variable askserver reads, in the settings table's order: the project's, then one per
ASK_MCP key."""

BY_NAME: Final[Mapping[str, Variable]] = {variable.name: variable for variable in VARIABLES}
"""The variables by name."""


def variable(name: str) -> Variable:
    """The variable called `name` (with or without the prefix)."""
    return BY_NAME[name if name.startswith(PREFIX) else PREFIX + name]


def read(environ: Mapping[str, str]) -> tuple[dict[str, Any], dict[str, str]]:
    """The typed values of the variables set in `environ`, and what is wrong with the others
    (see :func:`ask_mcp.ops.environment.read`)."""
    return reader.read(environ, VARIABLES)


def get(name: str, environ: Mapping[str, str]) -> Any:
    """One variable's typed value, or its default when it is unset or unreadable."""
    return read_one(variable(name), environ)


def problems(environ: Mapping[str, str]) -> dict[str, str]:
    """What is wrong with each variable whose text cannot be read as its type."""
    return read(environ)[1]


def ask_mcp(environ: Mapping[str, str]) -> dict[str, Any]:
    """askserver's `ASK_MCP`: its own defaults, mail on when ASKSERVER_EMAIL_URL is set, then
    every key the environment sets (ASKSERVER_ELICITATION_CAPACITY=128)."""
    return {
        **ASK_MCP_DEFAULTS,
        "EMAIL": bool(get("EMAIL_URL", environ)),
        **conf.from_environment(environ),
    }


def old_names_in_use(environ: Mapping[str, str]) -> list[tuple[str, str]]:
    """(old name, new name) for each variable's old name still set in `environ`."""
    return [
        (old, var.name)
        for var in VARIABLES
        for old in var.also
        if old.startswith((OLD_PREFIX, PREFIX)) and environ.get(old)
    ]


def settings_table() -> str:
    """The docs' settings table, rendered from the declarations: one row per variable."""
    rows = (*reader.TABLE_HEADER, *(reader.table_row(var) for var in VARIABLES))
    return "\n".join(rows) + "\n"
