"""askserver's environment variables: each one's name, type, default and meaning, how its text is read, and how it is shown masked.

Pure: it reads the mapping it is handed (`os.environ`), never Django's settings. The project's
settings build themselves from :func:`read`; the system checks report :func:`problems`, naming
the variable; `manage.py askserver_config` shows :func:`effective` values through :func:`shown`,
secrets masked. The README's settings table lists :data:`VARIABLES`, one row each.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal
from urllib.parse import urlsplit, urlunsplit

PREFIX: Final = "ASKSERVER_"
"""The one prefix of askserver's variables."""

Kind = Literal["text", "integer", "number", "flag", "list", "json", "url", "path", "choice"]

TRUE: Final = frozenset({"1", "true", "yes", "on"})
"""Flag values read as on (any case)."""
FALSE: Final = frozenset({"0", "false", "no", "off"})
"""Flag values read as off (any case)."""
DATABASE_SCHEMES: Final = ("postgres", "postgresql")
"""The schemes ASKSERVER_DATABASE_URL may have."""
REDIS_SCHEMES: Final = ("redis", "rediss", "unix")
"""The schemes ASKSERVER_REDIS_URL may have (those channels_redis connects to)."""
MASK: Final = "********"
"""What a secret's value is shown as."""


@dataclass(frozen=True, slots=True)
class Variable:
    """One environment variable: its name, how its text is read, its default and what it sets."""

    name: str
    kind: Kind
    default: Any
    """The value when unset (already typed); None means "not set" (see `default_text`)."""
    meaning: str
    key: str | None = None
    """The ASK_MCP key it sets, for the library's settings; None for the project's own."""
    secret: bool = False
    choices: tuple[str, ...] = ()
    also: tuple[str, ...] = ()
    """Other names read when this one is unset: a conventional one (DATABASE_URL), or an old
    name still read for one release."""
    default_text: str | None = None
    """The default as the README shows it, when the value alone would not say it."""
    optional: bool = False
    """A number that may also be `none` (unset)."""

    def shown_default(self) -> str:
        if self.default_text is not None:
            return self.default_text
        return render(self, self.default)


def _v(name: str, kind: Kind, default: Any, meaning: str, **more: Any) -> Variable:
    return Variable(PREFIX + name, kind, default, meaning, **more)


VARIABLES: Final[tuple[Variable, ...]] = (
    # ------------------------------------------------------------ the project
    _v("VAR_DIR", "path", None, "the data folder: the SQLite database and the generated secret key",
       default_text="`var/` beside `manage.py` in a checkout; `~/.local/share/askserver` when installed"),
    _v("SECRET_KEY", "text", None, "Django's SECRET_KEY (signs sessions and sealed requestState)",
       secret=True, default_text="generated once into `VAR_DIR/secret_key`"),
    _v("SECRET_KEY_FALLBACKS", "list", [], "comma-separated old keys that still open requestState "
       "([rotating the key](#rotating-the-secret-key))", secret=True),
    _v("ALLOWED_HOSTS", "list", ["127.0.0.1", "localhost", "[::1]"],
       "comma-separated host names this server answers to"),
    _v("CSRF_TRUSTED_ORIGINS", "list", [], "comma-separated origins (`https://ask.example.com`) "
       "besides the request's own that may POST to the inbox and the admin and open the inbox's "
       "socket (Django's CSRF_TRUSTED_ORIGINS); needed only when the proxy changes `Host` "
       "([Running several workers](#running-several-workers))"),
    _v("TRUST_FORWARDED_PROTO", "flag", False, "take `X-Forwarded-Proto: https` from the proxy "
       "as the request's scheme (Django's SECURE_PROXY_SSL_HEADER); only behind a proxy that "
       "sets that header on every request"),
    _v("SECURE_COOKIES", "flag", False, "mark the session and CSRF cookies `Secure` (Django's "
       "SESSION_COOKIE_SECURE and CSRF_COOKIE_SECURE): browsers send them over https only"),
    _v("DEBUG", "flag", False, "Django's DEBUG; never in production"),
    _v("DATABASE_URL", "url", None, "`postgres://user:password@host:port/name`",
       also=("DATABASE_URL",), default_text="SQLite in `VAR_DIR/db.sqlite3`"),
    _v("REDIS_URL", "url", None, "`redis://host:port/db`: the channel layer for several workers",
       also=("ASK_MCP_REDIS_URL",), default_text="the in-memory channel layer (one process)"),
    _v("REDIS_PREFIX", "text", "askmcp", "the channel layer's key prefix in Redis",
       also=("ASK_MCP_REDIS_PREFIX",)),
    _v("LOG_LEVEL", "choice", "INFO", "level of the `ask_mcp` loggers",
       choices=("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"), also=("ASK_MCP_LOG_LEVEL",)),
    _v("LOG_FORMAT", "choice", "plain", "`plain` lines, or `json`: one JSON object per line",
       choices=("plain", "json")),
    _v("EMAIL_URL", "url", None, "`smtp://host:port`, `smtp+tls://user:pass@host:port` or "
       "`smtps://…`: turns mail on ([Reaching people](#reaching-people))", secret=True,
       default_text="none (no mail)"),
    _v("EMAIL_FROM", "text", None, "the sender of askserver's mail (Django's DEFAULT_FROM_EMAIL)",
       default_text="Django's default"),
    _v("LOGIN_FAILURE_LIMIT", "integer", 10, "wrong passwords for one username from one address "
       "before that pair is locked out ([Security](#security))"),
    _v("LOGIN_COOLOFF_MINUTES", "number", 15, "how long a locked-out pair waits"),
    # ------------------------------------------------------------ the library (ASK_MCP)
    _v("NAME", "text", "askserver", "`serverInfo.name`", key="NAME"),
    _v("TITLE", "text", "askserver", "`serverInfo.title`", key="TITLE"),
    _v("VERSION", "text", "0.1.0", "`serverInfo.version`", key="VERSION"),
    _v("INSTRUCTIONS", "text", None, "`server/discover` instructions", key="INSTRUCTIONS",
       default_text="a sentence about `user_ask`"),
    _v("TOOLKITS", "json", {"Ask": {}}, "toolkits by name (or dotted path) with their settings, "
       'as JSON; `"prefix"` beside them renames the tools', key="TOOLKITS"),
    _v("ELICITATION_CAPACITY", "integer", 64, "questions that may wait at once",
       key="ELICITATION_CAPACITY"),
    _v("ELICITATION_PER_PRINCIPAL", "integer", 16, "questions one token's user may have waiting "
       "at once (their fair share of the capacity)", key="ELICITATION_PER_PRINCIPAL"),
    _v("ELICITATION_TTL", "number", 600, "seconds any question waits at most",
       key="ELICITATION_TTL"),
    _v("ON_ELICIT", "text", "ask_mcp.web.elicit.on_elicit", "dotted path of a factory returning "
       "the `on_elicit` hook (askserver's: the browser inbox; the library's default is none)",
       key="ON_ELICIT"),
    _v("OBSERVER", "text", "ask_mcp.records.recorder.recorder", "dotted path of a factory "
       "returning a question observer (askserver's: record every ask; the library's default is "
       "none)", key="OBSERVER"),
    _v("ANSWER_URL", "text", None, "dotted path of a factory returning `(question, ctx) -> URL` "
       "of the question's page in the inbox; enables URL-mode elicitation", key="ANSWER_URL",
       default_text="none"),
    _v("MAX_BODY_BYTES", "integer", 1024 * 1024, "largest request body", key="MAX_BODY_BYTES"),
    _v("HEADER_TIMEOUT_SECONDS", "number", 20.0, "under daphne: a connection whose request "
       "headers do not complete this soon gets 408", key="HEADER_TIMEOUT_SECONDS"),
    _v("MAX_CONNECTIONS_PER_ADDRESS", "integer", 512, "under daphne: connections one client "
       "address may hold at once (loopback counts as one)", key="MAX_CONNECTIONS_PER_ADDRESS"),
    _v("ALLOWED_ORIGINS", "list", [], "comma-separated origins allowed besides same-origin "
       "requests", key="ALLOWED_ORIGINS"),
    _v("KEEPALIVE_SECONDS", "number", 15.0, "quiet time before a held response turns into SSE "
       "and gets a keep-alive; also how often a browser question reports progress",
       key="KEEPALIVE_SECONDS"),
    _v("SESSION_IDLE_SECONDS", "number", 3600, "an initialize-era session with no request for "
       "this long ends, cancelling its calls", key="SESSION_IDLE_SECONDS"),
    _v("ALLOW_ANONYMOUS_LOOPBACK", "flag", False, "let requests from loopback addresses in "
       "without a token: for trying things out, never behind a proxy on the same machine "
       "([Tokens](#tokens-and-who-may-answer))", key="ALLOW_ANONYMOUS_LOOPBACK"),
    _v("PUBLIC_URL", "url", None, "origin used in answer URLs (`https://ask.example.com`); the "
       "request's own origin otherwise", key="PUBLIC_URL", default_text="none"),
    _v("SWEEP_SECONDS", "number", 30.0, "how often the sweeper looks for asks left pending past "
       "their expiry", key="SWEEP_SECONDS"),
    _v("DETACHED_GRACE_SECONDS", "number", 600.0, "how long a browser ask stays answerable after "
       "its call's connection dropped, so a call asking the same can attach to it (never past "
       "its expiry; [Nothing lost](#nothing-lost-restarts-deploys-and-dropped-connections))",
       key="DETACHED_GRACE_SECONDS"),
    _v("ANSWER_RETENTION_DAYS", "number", None, "delete answers this many days after they were "
       "given (the ask and its history stay until `ASK_RETENTION_DAYS`; an answer no call "
       "collected stays until `DETACHED_GRACE_SECONDS` past its ask's expiry); `none` keeps "
       "them", key="ANSWER_RETENTION_DAYS",
       optional=True, default_text="none"),
    _v("ASK_RETENTION_DAYS", "number", 90, "delete every ended ask (answered, declined, "
       "cancelled, expired, withdrawn), its history and its deliveries this many days after its "
       "expiry, never while a task or an uncollected answer still needs it "
       "([Audit and history](#audit-and-history)); `none` keeps them", key="ASK_RETENTION_DAYS",
       optional=True),
    _v("EMAIL", "flag", False, "mail people about asks through Django's mail framework "
       "([Reaching people](#reaching-people))", key="EMAIL",
       default_text="on when `ASKSERVER_EMAIL_URL` is set"),
    _v("REMINDER_BEFORE_SECONDS", "number", 300, "how long before an ask's expiry a reminder "
       "goes out; `none`: no reminders", key="REMINDER_BEFORE_SECONDS", optional=True),
    _v("REACH_SECONDS", "number", 5.0, "how often each worker plans and sends notifications",
       key="REACH_SECONDS"),
    _v("ALLOW_PRIVATE_WEBHOOKS", "flag", False, "let webhooks target loopback and private "
       "addresses (never metadata or link-local ones)", key="ALLOW_PRIVATE_WEBHOOKS"),
    _v("METRICS", "flag", False, "serve Prometheus metrics at `/metrics` ([Operating]"
       "(#operating-it))", key="METRICS"),
    _v("METRICS_TOKEN", "text", None, "the bearer token `/metrics` requires (its own: MCP tokens "
       "do not open it); needed when METRICS is on", key="METRICS_TOKEN", secret=True,
       default_text="none"),
    _v("TASK_TTL", "number", 86_400, "seconds the ask of a `user_ask` task waits for its person "
       "([tasks](#waits-of-hours-tasks))", key="TASK_TTL"),
    _v("TASK_RETENTION", "number", 86_400, "seconds an ended task stays readable after "
       "`TASK_TTL`, then it is deleted", key="TASK_RETENTION"),
    _v("TASK_LIMIT", "integer", 100, "open tasks one principal may hold at once",
       key="TASK_LIMIT"),
)  # fmt: skip
"""Every variable, in the README table's order."""

BY_NAME: Final[Mapping[str, Variable]] = {variable.name: variable for variable in VARIABLES}
"""The variables by name."""


def variable(name: str) -> Variable:
    """The variable called `name` (with or without the prefix)."""
    return BY_NAME[name if name.startswith(PREFIX) else PREFIX + name]


def raw(var: Variable, environ: Mapping[str, str]) -> tuple[str, str] | None:
    """(the name it was read from, its text) when `var` is set; an empty value counts as unset."""
    for name in (var.name, *var.also):
        if text := environ.get(name, ""):
            return name, text
    return None


# Complex: one branch per kind of variable (a closed vocabulary), each with its own message.
def parse(var: Variable, text: str) -> Any:  # noqa: C901, PLR0912
    """`text` read as `var`'s type.

    Raises:
        ValueError: the text is not of that type; the message says what it must be.
    """
    value = text.strip()
    if var.optional and value.lower() in ("", "none"):
        return None
    if var.kind == "integer":
        try:
            return int(value)
        except ValueError:
            raise ValueError(f"must be a whole number such as {var.default}") from None
    if var.kind == "number":
        try:
            return float(value)
        except ValueError:
            raise ValueError("must be a number such as 30 or 2.5") from None
    if var.kind == "flag":
        if value.lower() in TRUE:
            return True
        if value.lower() in FALSE:
            return False
        raise ValueError("must be 1 or 0 (true/false, yes/no, on/off)")
    if var.kind == "list":
        return [item.strip() for item in value.split(",") if item.strip()]
    if var.kind == "json":
        try:
            return json.loads(value)
        except json.JSONDecodeError as exc:
            raise ValueError(f"must be JSON ({exc.msg} at column {exc.colno})") from None
    if var.kind == "choice":
        for choice in var.choices:
            if value.lower() == choice.lower():
                return choice
        raise ValueError(f"must be one of {', '.join(var.choices)}")
    if var.kind == "url":
        parts = urlsplit(value)
        if not parts.scheme or not (parts.netloc or parts.path):
            raise ValueError("must be a URL such as scheme://host:port/path")
    return value


def read(environ: Mapping[str, str]) -> tuple[dict[str, Any], dict[str, str]]:
    """The typed values of the variables set in `environ`, and what is wrong with the others.

    Returns (value by variable name, problem by variable name); a variable with a problem has
    no value, so its default applies until the system check's message is acted on.
    """
    values: dict[str, Any] = {}
    wrong: dict[str, str] = {}
    for var in VARIABLES:
        found = raw(var, environ)
        if found is None:
            continue
        name, text = found
        try:
            values[var.name] = parse(var, text)
        except ValueError as exc:
            wrong[var.name] = f"{name}={text if not var.secret else MASK!s} {exc}"
    return values, wrong


def get(name: str, environ: Mapping[str, str]) -> Any:
    """One variable's typed value, or its default when it is unset or unreadable."""
    var = variable(name)
    return read_one(var, environ)


def read_one(var: Variable, environ: Mapping[str, str]) -> Any:
    found = raw(var, environ)
    if found is None:
        return var.default
    try:
        return parse(var, found[1])
    except ValueError:
        return var.default


def ask_mcp_overrides(environ: Mapping[str, str]) -> dict[str, Any]:
    """The ASK_MCP keys the environment sets (readable values only)."""
    values, _ = read(environ)
    return {var.key: values[var.name] for var in VARIABLES if var.key and var.name in values}


def problems(environ: Mapping[str, str]) -> dict[str, str]:
    """What is wrong with each variable whose text cannot be read as its type."""
    return read(environ)[1]


def render(var: Variable, value: Any) -> str:
    """A value as a person reads it (a list comma-separated, JSON compact, none for None)."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, list | tuple):
        return ",".join(str(item) for item in value)
    if isinstance(value, dict):
        return json.dumps(value, separators=(",", ":"))
    return str(value)


def shown(var: Variable, value: Any) -> str:
    """A value as `askserver_config` prints it: secrets masked, a URL's password masked."""
    if value is None or (var.secret and not value):
        return "none"
    if var.secret:
        return MASK
    text = render(var, value)
    if var.kind == "url":
        return mask_url(text)
    return text


def mask_url(url: str) -> str:
    """`url` with its password (if any) replaced by the mask."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    user = parts.username or ""
    return urlunsplit(parts._replace(netloc=f"{user}:{MASK}@{host}"))
