"""The `ASK_MCP` setting, declared once and read lazily: each key's name, type, default and meaning, and the typed view.

Each key is declared once, as a field of :class:`AskSettings` carrying its :class:`Setting`:
the key is the field's name in capitals, the field's type is what the typed view holds, and the
:class:`Setting` says the key's kind, default and one line of meaning, and the id its check
reports. Everything else is derived from those fields: :data:`SETTINGS`, :data:`DEFAULTS`,
the typed view and each key's `ASKSERVER_` variable (:data:`VARIABLES`, read by
:func:`from_environment`) here, the check of each key's kind in :mod:`ask_mcp.checks`, and the
settings table from the variables.

A leaf: it imports nothing of ask_mcp but the pure reader of environment variables
(:mod:`ask_mcp.ops.environment`), and builds nothing (:mod:`ask_mcp.runtime` builds the server
from these values). Values are read when used, never at import, and the typed view is
cached until `setting_changed` says `ASK_MCP` changed, as channels' `layers.py` does for
`CHANNEL_LAYERS`. The engine and the protocol never import this module: they are handed their
values through constructors.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any, Final, Literal

from django.conf import settings
from django.core.signals import setting_changed
from django.dispatch import receiver

from ask_mcp.ops import environment

Kind = Literal[
    "text", "toolkits", "count", "seconds", "days", "hook", "origins", "flag", "origin", "token"
]
"""What a key's value is; the kind says how the environment spells it, how the checks vet it and
how the typed view converts it:

- `text`: a string, not checked;
- `toolkits`: toolkit name (or dotted path) -> its settings;
- `count`: a positive integer; `seconds`, `days`: a positive number of them;
- `hook`: a dotted path to a factory (or the factory itself), or None;
- `origins`: a list of origins; `origin`: an http(s) origin, or None;
- `flag`: True or False;
- `token`: a secret string, or None; never quoted in a message.
"""


@dataclass(frozen=True, slots=True)
class Setting:
    """One `ASK_MCP` key: its kind, default and meaning, and the id its check reports."""

    key: str
    kind: Kind
    default: Any
    meaning: str
    """One line, as the settings table shows it."""
    check: str | None = None
    """The id of the error its kind's check reports; None: the value is not checked."""
    hint: str | None = None
    """What that error adds after saying what the value must be."""
    optional: bool = False
    """A count or a number that may also be None (`none` in the environment)."""
    shown: str | None = None
    """The default as the settings table shows it, when the value alone would not say it."""
    old: str | None = None
    """The key's old name, still read (in `ASK_MCP` and as `ASKSERVER_<old>`) when the key is
    not given, until askserver :data:`OLD_KEYS_REMOVED_IN` (ask_mcp.W004 names the new one)."""


_SETTING: Final = "ask_mcp.setting"
OLD_KEYS_REMOVED_IN: Final = "0.2.0"
"""The version that stops reading a key's :attr:`Setting.old` name."""


def _key(kind: Kind, default: Any, meaning: str, **more: Any) -> Any:
    """A field of :class:`AskSettings` declaring its key (named by the field)."""
    return field(metadata={_SETTING: Setting("", kind, default, meaning, **more)})


@dataclass(frozen=True, slots=True)
class AskSettings:
    """The `ASK_MCP` keys, in the settings table's order, with their types: the one declaration.

    :func:`values` builds it from :func:`get` once the system checks have vetted the values (the
    checks name a bad value and its fix; this view only converts it to its field's type).
    """

    name: str = _key("text", "askserver", "`serverInfo.name`")
    title: str = _key("text", "askserver", "`serverInfo.title`")
    version: str = _key("text", "0.1.0", "`serverInfo.version`")
    instructions: str = _key(
        "text",
        "user_ask puts a question to the person you work for and waits for their answer. "
        "Ask only when you cannot proceed without them.",
        "`server/discover` instructions",
        shown="a sentence about `user_ask`",
    )
    toolkits: Mapping[str, Any] = _key(
        "toolkits",
        {"Ask": {}},
        'toolkits by name (or dotted path) with their settings, as JSON; `"prefix"` beside '
        "them renames the tools",
        check="ask_mcp.E005",
    )
    elicitation_capacity: int = _key(
        "count", 64, "questions that may wait at once", check="ask_mcp.E003"
    )
    elicitation_per_principal: int = _key(
        "count",
        16,
        "questions one token's user may have waiting at once (their fair share of the capacity)",
        check="ask_mcp.E003",
    )
    pending_asks_per_principal: int = _key(
        "count",
        100,
        "asks one token's user may have pending at once on every worker together, announced to "
        "people (inbox, URL and task asks: held, detached or in a task); a new ask past it is "
        "refused before anyone is told ([Security](../deploy/security.md))",
        check="ask_mcp.E003",
    )
    new_asks_per_minute: int = _key(
        "count",
        30,
        "new asks one token's user may have announced to people in any 60 seconds, on every "
        "worker together; asking the same again, a retry and a question the client shows "
        "itself are never counted",
        check="ask_mcp.E003",
    )
    elicitation_ttl: float = _key(
        "seconds", 600, "seconds any question waits at most", check="ask_mcp.E004"
    )
    on_elicit: object = _key(
        "hook",
        None,
        "dotted path of a factory returning the `on_elicit` hook (askserver's: the browser "
        "inbox; the library's default is none)",
        check="ask_mcp.E007",
    )
    observer: object = _key(
        "hook",
        None,
        "dotted path of a factory returning a question observer (askserver's: record every "
        "ask; the library's default is none)",
        check="ask_mcp.E007",
    )
    answer_url: object = _key(
        "hook",
        None,
        "dotted path of a factory returning `(question, ctx) -> URL` of the question's page in "
        "the inbox; enables URL-mode elicitation",
        check="ask_mcp.E007",
    )
    max_body_bytes: int = _key("count", 1024 * 1024, "largest request body", check="ask_mcp.E003")
    header_timeout_seconds: float = _key(
        "seconds",
        20.0,
        "under daphne: a connection whose request headers do not complete this soon gets 408",
        check="ask_mcp.E004",
    )
    # 20 s, as for headers: a body on loopback or a LAN arrives in well under a second; and at
    # least 16 KiB/s after that, so a 1 MiB body (MAX_BODY_BYTES) may take 20 + 64 s.
    body_timeout_seconds: float = _key(
        "seconds",
        20.0,
        "a request body must arrive within this many seconds of its headers, plus a second per "
        "`BODY_MIN_BYTES_PER_SECOND` bytes it sent, or it gets 408 (under daphne in its HTTP "
        "layer, under uvicorn in the application)",
        check="ask_mcp.E004",
    )
    body_min_bytes_per_second: int = _key(
        "count",
        16 * 1024,
        "the slowest a request body may arrive after its first `BODY_TIMEOUT_SECONDS`",
        check="ask_mcp.E003",
    )
    max_connections_per_address: int = _key(
        "count",
        512,
        "under daphne: connections one client address may hold at once (loopback counts as one); "
        "one more cuts that address's connection still sending its request longest, else gets "
        "503",
        check="ask_mcp.E003",
    )
    allowed_origins: tuple[str, ...] = _key(
        "origins",
        [],
        "comma-separated origins allowed besides same-origin requests",
        check="ask_mcp.E008",
    )
    keepalive_seconds: float = _key(
        "seconds",
        15.0,
        "quiet time before a held response turns into SSE and gets a keep-alive; also how often "
        "a browser question reports progress",
        check="ask_mcp.E004",
    )
    session_idle_seconds: float = _key(
        "seconds",
        3600,
        "an initialize-era session with no request for this long ends, cancelling its calls",
        check="ask_mcp.E004",
    )
    sessions_per_principal: int = _key(
        "count",
        32,
        "initialize-era sessions one token's user may hold on every worker together; opening "
        "one more ends their session idle longest",
        check="ask_mcp.E003",
    )
    allow_anonymous_loopback: bool = _key(
        "flag",
        False,
        "let requests from loopback addresses in without a token: for trying things out, never "
        "behind a proxy on the same machine ([Tokens](../answering/tokens.md))",
        check="ask_mcp.E012",
    )
    public_url: str | None = _key(
        "origin",
        None,
        "the server's public origin (`https://ask.example.com`): the only origin of the links "
        "people follow (mail, webhooks, URL mode, progress); mail, URL mode and webhooks need "
        "it, and a request whose `Host` names another port is refused (`make run` sets it; "
        "[Security](../deploy/security.md#the-servers-own-address))",
        check="ask_mcp.E009",
    )
    sweep_seconds: float = _key(
        "seconds",
        30.0,
        "how often the sweeper looks for asks left pending past their expiry",
        check="ask_mcp.E004",
    )
    detached_grace_seconds: float = _key(
        "seconds",
        600.0,
        "how long a browser ask stays answerable after its call's connection dropped, so a call "
        "asking the same can attach to it (never past its expiry; [Nothing lost]"
        "(../agents/nothing-lost.md))",
        check="ask_mcp.E004",
    )
    answer_retention_days: float | None = _key(
        "days",
        None,
        "delete answers this many days after they were given (the ask and its history stay "
        "until `ASK_RETENTION_DAYS`; an answer no call collected stays until "
        "`DETACHED_GRACE_SECONDS` past its ask's expiry); `none` keeps them",
        check="ask_mcp.E011",
        hint="None keeps every answer until its ask is deleted.",
        optional=True,
    )
    # 90 days: a quarter, so the dashboard's 14 days and a quarterly look back at who was asked
    # what still find every ask, while questions nobody answered (and what they said) no longer
    # pile up for ever; None keeps every ask.
    ask_retention_days: float | None = _key(
        "days",
        90,
        "delete every ended ask (answered, declined, cancelled, expired, withdrawn), its history "
        "and its deliveries this many days after its expiry, never while a task or an "
        "uncollected answer still needs it ([Audit and history](../answering/audit.md)); `none` "
        "keeps them",
        check="ask_mcp.E080",
        hint="None keeps every ask. Every ended ask, its history and its deliveries are deleted "
        "this many days after its expiry (90 by default).",
        optional=True,
    )
    # 10 s: long enough to see the card change and press Undo (Gmail's default undo is 5 s, its
    # longest 30 s), short enough that the agent hardly waits longer for a refusal.
    undo_seconds: float | None = _key(
        "seconds",
        10,
        "how long a refusal or a one-tap answer given in the inbox is held, with Undo on its card, "
        "before the agent is told (never past the ask's expiry; [The inbox](../answering/inbox.md)); "
        "`none` tells the agent at once",
        check="ask_mcp.E013",
        hint="None tells the agent at once, with no Undo.",
        optional=True,
    )
    email: bool = _key(
        "flag",
        False,
        "mail people about asks through Django's mail framework ([Reaching people]"
        "(../answering/reach.md))",
        check="ask_mcp.E030",
    )
    reminder_before_seconds: float | None = _key(
        "seconds",
        300,
        "how long before an ask's expiry a reminder goes out; `none`: no reminders",
        check="ask_mcp.E032",
        hint="None sends no reminders.",
        optional=True,
    )
    # 120 s: the 8 mails one person got in one second become 1 + 1 digest, and a new question
    # after a quiet spell still goes at once; reminders and urgent mails never wait for it.
    mail_digest_seconds: float | None = _key(
        "seconds",
        120,
        "after a mail to a person, what else falls due for them within this many seconds goes as "
        "one digest (each ask with its own link); a reminder never goes later than it is due and "
        "urgent mails go at once ([Reaching people](../answering/reach.md)); `none`: one mail each",
        check="ask_mcp.E035",
        hint="None sends every notification as its own mail.",
        optional=True,
    )
    escalation_min_seconds: float = _key(
        "seconds",
        60,
        "the shortest wait a team's escalation may set before offering an ask to its fallback "
        "(an escalation is for a question nobody answered, not a way to take every ask)",
        check="ask_mcp.E004",
    )
    reach_seconds: float = _key(
        "seconds",
        5.0,
        "how often each worker plans and sends notifications",
        check="ask_mcp.E004",
    )
    allow_private_targets: bool = _key(
        "flag",
        False,
        "let every outbound target (webhooks) be a loopback or private address (never a "
        "metadata or link-local one); `ALLOW_PRIVATE_WEBHOOKS`, its old name, is read until "
        "0.2.0",
        check="ask_mcp.E031",
        old="ALLOW_PRIVATE_WEBHOOKS",
    )
    vapid_private_key: str | None = _key(
        "token",
        None,
        "the VAPID key that signs Web Push (RFC 8292): a P-256 private key, base64url (raw or "
        "DER) ([Phones](../answering/phone.md))",
        check="ask_mcp.E090",
        shown="askserver: generated once into `VAR_DIR/vapid_private_key`",
    )
    vapid_subject: str | None = _key(
        "text",
        None,
        "the contact push services may write to about this server's pushes (`mailto:` or "
        "`https:`); Web Push is on when it and `VAPID_PRIVATE_KEY` are set",
        check="ask_mcp.E091",
        optional=True,
    )
    push_fallback_seconds: float = _key(
        "seconds",
        120.0,
        "a person none of whose devices acknowledges a push this soon is mailed the ask at once",
        check="ask_mcp.E004",
    )
    push_per_hour: int = _key(
        "count",
        12,
        "questions pushed to one person's devices in an hour at most; past it, one \"more "
        'questions are waiting" push per device and hour stands for the rest',
        check="ask_mcp.E003",
    )
    metrics: bool = _key(
        "flag",
        False,
        "serve Prometheus metrics at `/metrics` ([Operating](../deploy/operating.md))",
        check="ask_mcp.E051",
    )
    metrics_token: str | None = _key(
        "token",
        None,
        "the bearer token `/metrics` requires (its own: MCP tokens do not open it); needed when "
        "METRICS is on",
        check="ask_mcp.E052",
    )
    task_ttl: float = _key(
        "seconds",
        86_400,
        "seconds the ask of a `user_ask` task waits for its person ([tasks](../agents/tasks.md))",
        check="ask_mcp.E060",
        hint="A task's ask waits TASK_TTL; its result stays readable TASK_RETENTION more.",
    )
    task_retention: float = _key(
        "seconds",
        86_400,
        "seconds an ended task stays readable after `TASK_TTL`, then it is deleted",
        check="ask_mcp.E061",
        hint="A task's ask waits TASK_TTL; its result stays readable TASK_RETENTION more.",
    )
    task_limit: int = _key(
        "count",
        100,
        "open tasks one principal may hold at once",
        check="ask_mcp.E062",
        hint="It bounds the open tasks of one principal (100 by default).",
    )


SETTINGS: Final[tuple[Setting, ...]] = tuple(
    replace(spec.metadata[_SETTING], key=spec.name.upper()) for spec in fields(AskSettings)
)
"""Every `ASK_MCP` key's declaration, in the settings table's order."""

DEFAULTS: Final[Mapping[str, Any]] = {setting.key: setting.default for setting in SETTINGS}
"""Every key of `settings.ASK_MCP`, with its default."""

OLD_KEYS: Final[Mapping[str, str]] = {s.old: s.key for s in SETTINGS if s.old is not None}
"""Old key -> the key it is read as (until :data:`OLD_KEYS_REMOVED_IN`)."""
_OLD_OF: Final[Mapping[str, str]] = {new: old for old, new in OLD_KEYS.items()}
_UNSET: Final = object()


def configured() -> Any:
    """`settings.ASK_MCP` as given (not yet checked: it may not even be a dict)."""
    return getattr(settings, "ASK_MCP", {}) or {}


def get(key: str) -> Any:
    """One `ASK_MCP` value as given, falling back to its default."""
    given = configured()
    # A dict first: an isinstance against the Mapping ABC cost a request more than the read.
    if type(given) is dict or isinstance(given, Mapping):
        value = given.get(key, _UNSET)
        if value is _UNSET:
            old = _OLD_OF.get(key)
            value = given.get(old, DEFAULTS[key]) if old is not None else DEFAULTS[key]
        return value
    return DEFAULTS[key]


def _same(value: Any) -> Any:
    return value


TYPED: Final[Mapping[Kind, Callable[[Any], Any]]] = {
    "text": _same,
    "toolkits": _same,
    "count": int,
    "seconds": float,
    "days": float,
    "hook": _same,
    "origins": tuple,
    "flag": bool,
    "origin": _same,
    "token": lambda value: value or None,
}
"""How the typed view converts a vetted value of each kind (None stays None where allowed)."""


def typed(setting: Setting, value: Any) -> Any:
    """`value` of `setting` as its field in :class:`AskSettings` holds it."""
    if setting.optional and value is None:
        return None
    return TYPED[setting.kind](value)


ENVIRONMENT_KINDS: Final[Mapping[Kind, environment.Kind]] = {
    "text": "text",
    "toolkits": "json",
    "count": "integer",
    "seconds": "number",
    "days": "number",
    "hook": "text",
    "origins": "list",
    "flag": "flag",
    "origin": "url",
    "token": "text",
}
"""How the environment spells a value of each kind."""


def _variable(setting: Setting) -> environment.Variable:
    return environment.Variable(
        environment.PREFIX + setting.key,
        ENVIRONMENT_KINDS[setting.kind],
        setting.default,
        setting.meaning,
        key=setting.key,
        secret=setting.kind == "token",
        optional=setting.optional,
        default_text=setting.shown,
        also=(environment.PREFIX + setting.old,) if setting.old is not None else (),
    )


VARIABLES: Final[tuple[environment.Variable, ...]] = tuple(_variable(s) for s in SETTINGS)
"""Each key's environment variable (`ASKSERVER_` and the key), in the settings table's order."""

VARIABLE_OF: Final[Mapping[str, environment.Variable]] = {
    setting.key: variable for setting, variable in zip(SETTINGS, VARIABLES, strict=True)
}
"""Each key's environment variable, by key."""


def from_environment(environ: Mapping[str, str]) -> dict[str, Any]:
    """The `ASK_MCP` keys `environ` sets, readable values only (a project's settings merge them
    into `ASK_MCP`; a value that cannot be read is left to its default and a check)."""
    found, _ = environment.read(environ, VARIABLES)
    return {key: found[var.name] for key, var in VARIABLE_OF.items() if var.name in found}


def public_url_needed(what: str) -> str:
    """Why `what` (mail, URL mode, a webhook) cannot work without PUBLIC_URL, and the fix."""
    return (
        f"{what} needs ASK_MCP['PUBLIC_URL'] (ASKSERVER_PUBLIC_URL), the origin people reach "
        "this server at, such as 'https://ask.example.com': the links people follow are built "
        "from it alone, never from a request's Host header (`make run` sets it)."
    )


@functools.cache
def values() -> AskSettings:
    """The typed view of `ASK_MCP`, cached until the setting changes."""
    return AskSettings(**{s.key.lower(): typed(s, get(s.key)) for s in SETTINGS})


@receiver(setting_changed)
def _reset(*, setting: str, **kwargs: Any) -> None:
    if setting == "ASK_MCP":
        values.cache_clear()
